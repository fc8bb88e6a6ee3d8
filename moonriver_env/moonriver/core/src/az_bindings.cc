// Python bindings of the batched search with network-valued leaves (_core.AzSearch) and the
// network evaluated in C++ (_core.AzNet); the public API is moonriver_env.moonriver.search.
#include "az_bindings.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "az_net.h"
#include "az_search.h"
#include "int_args.h"
#include "ndarrays.h"
#include "observation.h"

namespace nb = nanobind;
using namespace moonriver;

namespace {

// Marks a search in use while a call runs without the GIL: set and tested with the GIL held,
// so a second Python thread entering the same search is refused instead of racing it.
class InUse {
 public:
  explicit InUse(AzSearch& s) : s_(s) {
    if (s_.busy) throw nb::value_error("search: already in use by another thread");
    s_.busy = true;
  }
  ~InUse() { s_.busy = false; }
  InUse(const InUse&) = delete;
  InUse& operator=(const InUse&) = delete;

 private:
  AzSearch& s_;
};

template <typename T>
T* fresh(std::size_t n) {
  return new T[n > 0 ? n : 1]();
}

nb::object leaves(AzSearch& s) {
  InUse guard(s);
  int m;
  {
    nb::gil_scoped_release release;
    m = s.prepare();
  }
  if (m == 0) return nb::none();
  const std::size_t rows = static_cast<std::size_t>(m);
  auto* obs = fresh<float>(rows * OBSERVATION_SIZE);
  auto* mask = fresh<std::int8_t>(rows * NUM_ACTIONS);
  auto* seat = fresh<std::int32_t>(rows);
  auto* game = fresh<std::int32_t>(rows);
  auto* players = fresh<std::int32_t>(rows);
  {
    nb::gil_scoped_release release;
    s.write_leaves(obs, mask, seat, game, players);
  }
  return nb::make_tuple(owned(obs, rows, OBSERVATION_SIZE), owned(mask, rows, NUM_ACTIONS),
                        owned(seat, rows, 0), owned(game, rows, 0), owned(players, rows, 0));
}

nb::object leaf_priors(AzSearch& s, double shape_weight) {
  if (!std::isfinite(shape_weight)) throw nb::value_error("shape_weight must be finite");
  InUse guard(s);
  const std::size_t rows = static_cast<std::size_t>(s.num_pending());
  auto* prior = fresh<float>(rows * NUM_ACTIONS);
  {
    nb::gil_scoped_release release;
    s.write_priors(shape_weight, prior);
  }
  return owned(prior, rows, NUM_ACTIONS);
}

void evaluate(AzSearch& s, In2<float> logits, In2<float> values) {
  InUse guard(s);
  const std::size_t m = static_cast<std::size_t>(s.num_pending());
  if (logits.shape(0) != m || logits.shape(1) != NUM_ACTIONS || values.shape(0) != m ||
      values.shape(1) != MAX_PLAYERS)
    throw nb::value_error(("evaluate: policy_logits must be (" + std::to_string(m) +
                           ", 2710) and values (" + std::to_string(m) + ", 4) float32")
                              .c_str());
  const float* l = logits.data();
  const float* v = values.data();
  nb::gil_scoped_release release;
  s.evaluate(l, v, static_cast<int>(m));
}

nb::tuple result(AzSearch& s) {
  InUse guard(s);
  const std::size_t g = static_cast<std::size_t>(s.num_games());
  auto* action = fresh<std::int64_t>(g);
  auto* policy = fresh<float>(g * NUM_ACTIONS);
  auto* value = fresh<float>(g * MAX_PLAYERS);
  auto* visits = fresh<std::int32_t>(g * NUM_ACTIONS);
  auto* searched = fresh<std::uint8_t>(g);
  try {
    nb::gil_scoped_release release;
    s.result(action, policy, value, visits, searched);
  } catch (...) {
    delete[] action, delete[] policy, delete[] value, delete[] visits, delete[] searched;
    throw;
  }
  return nb::make_tuple(owned(action, g, 0), owned(policy, g, NUM_ACTIONS),
                        owned(value, g, MAX_PLAYERS), owned(visits, g, NUM_ACTIONS),
                        owned(searched, g, 0));
}

// A network from a dict of float32 arrays (C order) and the ids' score index.
void make_net(AzNet* self, nb::dict arrays, In1<std::int64_t> index) {
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
nb::tuple net_evaluate(const AzNet& net, In2<float> obs, In2<std::int8_t> mask,
                       In1<std::int32_t> players, nb::object prior) {
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
      net.evaluate(obs.data() + i * OBSERVATION_SIZE,
                   net.uses_prior() ? priors.data() + i * NUM_ACTIONS : nullptr, ids.data(), m,
                   players(i), legal.data(), shares + i * MAX_PLAYERS);
      float* out = logits + i * NUM_ACTIONS;
      std::fill(out, out + NUM_ACTIONS, -1e9f);
      for (int k = 0; k < m; ++k) out[ids[k]] = legal[k];
    }
  }
  return nb::make_tuple(owned(logits, b, NUM_ACTIONS), owned(shares, b, MAX_PLAYERS));
}

}  // namespace

void bind_az_search(nb::module_& m) {
  nb::class_<AzSearch>(
      m, "AzSearch",
      "One search per game, leaves valued in batches (moonriver_env.moonriver.search).")
      .def(
          "__init__",
          [](AzSearch* self, nb::list games, const std::vector<PyInt>& indices, PyInt simulations,
             PyInt seed, bool gumbel, PyInt max_considered, double c_visit, double c_scale,
             double c_puct, double gumbel_scale, PyInt threads, double time_limit) {
            std::vector<const Game*> roots;
            for (nb::handle g : games) roots.push_back(&nb::cast<const Game&>(g));
            AzParams p;
            p.simulations = arg<int>(simulations, "simulations", 1, INT_MAX);
            p.seed = arg<std::uint64_t>(seed, "seed");
            p.gumbel = gumbel;
            p.max_considered = arg<int>(max_considered, "max_considered", 1, INT_MAX);
            p.c_visit = c_visit;
            p.c_scale = c_scale;
            p.c_puct = c_puct;
            p.gumbel_scale = gumbel_scale;
            p.threads = arg<int>(threads, "threads", 1, INT_MAX);
            p.time_limit = time_limit;
            new (self) AzSearch(roots, args<std::int64_t>(indices, "indices"), p);
          },
          nb::arg("games"), nb::arg("indices"), nb::arg("simulations"), nb::arg("seed"),
          nb::arg("gumbel"), nb::arg("max_considered"), nb::arg("c_visit"), nb::arg("c_scale"),
          nb::arg("c_puct"), nb::arg("gumbel_scale"), nb::arg("threads"),
          nb::arg("time_limit") = 0.0,
          "``time_limit`` > 0: seconds from here after which each game's search stops at the "
          "next step (after >= 1 simulation), its result the search so far.")
      .def_prop_ro("num_games", &AzSearch::num_games)
      .def("finished", &AzSearch::finished)
      .def("leaves", &leaves,
           "(observation, mask, seat, game, num_players) of the pending leaves, or None when "
           "every search is finished.")
      .def("leaf_priors", &leaf_priors, nb::arg("shape_weight"),
           "Greedy's value + shape_weight x tie-break at each pending leaf's legal ids (rows "
           "of 2710 float32; all 0 for a forced decision).")
      .def("evaluate", &evaluate, nb::arg("policy_logits").noconvert(),
           nb::arg("values").noconvert(), "Expand the pending leaves and back up their values.")
      .def(
          "leaf_state",
          [](const AzSearch& s, PyInt index) {
            Game copy(s.leaf_state(arg<int>(index, "index")));
            copy.set_lazy_reshuffle(nullptr);  // the copy draws its stored order
            return copy;
          },
          nb::arg("index"), "A copy of the ``index``-th pending leaf's state.")
      .def(
          "run",
          [](AzSearch& s, const AzNet& net, double shape_weight) {
            if (!std::isfinite(shape_weight)) throw nb::value_error("shape_weight must be finite");
            InUse guard(s);
            nb::gil_scoped_release release;
            return s.run(net, shape_weight);
          },
          nb::arg("net"), nb::arg("shape_weight"),
          "Run every search to its end, each leaf valued by ``net`` in the core; the number of "
          "leaves valued.")
      .def("result", &result, "(action, policy, root_value, visits, searched) per game.");
  nb::class_<AzNet>(m, "AzNet", "The search recipe's network, evaluated in C++ (agents/az.py).")
      .def("__init__", &make_net, nb::arg("arrays"), nb::arg("index").noconvert())
      .def_prop_ro("uses_prior", &AzNet::uses_prior)
      .def("evaluate", &net_evaluate, nb::arg("observation"), nb::arg("mask").noconvert(),
           nb::arg("num_players").noconvert(), nb::arg("prior") = nb::none(),
           "(logits (B, 2710), win shares by relative seat (B, 4)) of B states.");
}
