// Python bindings of the search recipe's network evaluated in C++ (_core.AzNet, in the private
// module moonriver_env.moonriver.core._core), which the batched search values its leaves with;
// the public API is moonriver_env.agents.az.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "az_net.h"
#include "bindings.h"
#include "ndarrays.h"
#include "observation.h"

namespace nb = nanobind;
using namespace moonriver;

namespace {

// A network from a dict of float32 arrays (C order) and the ids' score index.
void make_net(AzNet* self, nb::typed<nb::dict, nb::str, nb::any> arrays, In1<std::int64_t> index) {
  using Array = nb::ndarray<const float, nb::c_contig, nb::device::cpu>;
  std::map<std::string, NetArray> named;
  const nb::list items = arrays.items();  // owned pairs: a conversion cannot free them
  for (nb::handle item : items) {
    const nb::handle key = item[0], value = item[1];
    std::string name;
    if (!nb::try_cast(key, name)) throw nb::value_error("network: array names must be strings");
    Array a;
    if (!nb::try_cast(value, a))
      throw nb::value_error(("network: " + name + " must be an array of numbers").c_str());
    NetArray& out = named[name];
    out.data.assign(a.data(), a.data() + a.size());
    for (std::size_t d = 0; d < a.ndim(); ++d) out.shape.push_back(a.shape(d));
  }
  new (self) AzNet(named, std::vector<std::int64_t>(index.data(), index.data() + index.size()));
}

// Logits (B x 2710, MASKED off the legal ids) and win shares by relative seat (B x 4).
nb::typed<nb::tuple, Array2<float>, Array2<float>> net_evaluate(const AzNet& net, In2<float> obs,
                                                                In2<std::int8_t> mask,
                                                                In1<std::int32_t> players,
                                                                nb::object prior) {
  const std::size_t b = obs.shape(0);
  if (obs.shape(1) != OBSERVATION_SIZE || mask.shape(0) != b || mask.shape(1) != NUM_ACTIONS ||
      players.shape(0) != b)
    throw nb::value_error(("network: expected observation (B, " + std::to_string(OBSERVATION_SIZE) +
                           "), mask (B, " + std::to_string(NUM_ACTIONS) +
                           ") and num_players (B,) for B = " + std::to_string(b))
                              .c_str());
  In2<float> priors;
  if (net.uses_prior()) {
    if (prior.is_none() || !nb::try_cast(prior, priors) || priors.shape(0) != b ||
        priors.shape(1) != NUM_ACTIONS)
      throw nb::value_error(
          "network: this network adds the greedy prior: pass prior= as "
          "float32 (B, 2710)");
  }
  for (std::size_t i = 0; i < b; ++i)
    if (players(i) < 2 || players(i) > MAX_PLAYERS)
      throw nb::value_error("network: num_players must be 2 to 4");
  auto* logits = fresh<float>(b * NUM_ACTIONS);
  auto* shares = fresh<float>(b * MAX_PLAYERS);
  {
    nb::gil_scoped_release release;
    std::vector<std::int64_t> ids(NUM_ACTIONS);
    std::vector<float> legal(NUM_ACTIONS);
    for (std::size_t i = 0; i < b; ++i) {
      const std::int8_t* row = mask.data() + i * NUM_ACTIONS;
      int m = 0;
      for (int a = 0; a < NUM_ACTIONS; ++a)
        if (row[a]) ids[m++] = a;
      net.evaluate_dense(obs.data() + i * OBSERVATION_SIZE,
                         net.uses_prior() ? priors.data() + i * NUM_ACTIONS : nullptr, ids.data(),
                         m, players(i), legal.data(), shares + i * MAX_PLAYERS);
      float* out = logits + i * NUM_ACTIONS;
      std::fill(out, out + NUM_ACTIONS, -1e9f);
      for (int k = 0; k < m; ++k) out[ids[k]] = legal[k];
    }
  }
  return nb::make_tuple(owned(logits, b, NUM_ACTIONS), owned(shares, b, MAX_PLAYERS));
}

}  // namespace

void bind_network(nb::module_& m) {
  nb::class_<AzNet>(m, "AzNet",
                    "The search recipe's network (or a PPO RanchNet: one value), evaluated in C++ "
                    "(agents/az.py).")
      .def("__init__", &make_net, nb::arg("arrays"), nb::arg("index").noconvert())
      .def_prop_ro("uses_prior", &AzNet::uses_prior)
      .def_prop_ro("one_value", &AzNet::one_value,
                   "Whether the value head has one output (a PPO RanchNet's): evaluate's "
                   "second array then holds it in column 0, zeros after.")
      .def("evaluate", &net_evaluate, nb::arg("observation"), nb::arg("mask").noconvert(),
           nb::arg("num_players").noconvert(), nb::arg("prior") = nb::none(),
           "(logits (B, 2710), win shares by relative seat (B, 4)) of B states (one_value: the "
           "value in column 0, zeros after).");
}
