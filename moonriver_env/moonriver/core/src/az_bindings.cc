// Python bindings of the batched search with network-valued leaves (_core.AzSearch, in the
// private module moonriver_env.moonriver.core._core; the network it runs is network_bindings.cc's
// AzNet); the public API is moonriver_env.moonriver.search.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "az_net.h"
#include "az_search.h"
#include "bindings.h"
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

nb::object roots(AzSearch& s, nb::object shape_weight) {
  double weight = 0.0;
  const bool with_prior = !shape_weight.is_none();
  if (with_prior && (!nb::try_cast(shape_weight, weight) || !std::isfinite(weight)))
    throw nb::value_error("shape_weight must be a finite number or None");
  InUse guard(s);
  const std::size_t rows = static_cast<std::size_t>(s.num_games());
  auto* obs = fresh<float>(rows * OBSERVATION_SIZE);
  auto* mask = fresh<std::int8_t>(rows * NUM_ACTIONS);
  auto* prior = with_prior ? fresh<float>(rows * NUM_ACTIONS) : nullptr;
  {
    nb::gil_scoped_release release;
    s.write_roots(obs, mask, weight, prior);
  }
  nb::object priors = with_prior ? nb::object(owned(prior, rows, NUM_ACTIONS)) : nb::none();
  return nb::make_tuple(owned(obs, rows, OBSERVATION_SIZE), owned(mask, rows, NUM_ACTIONS), priors);
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

nb::typed<nb::tuple, Array1<std::int64_t>, Array2<float>, Array2<float>, Array2<std::int32_t>,
          Array1<std::uint8_t>>
result(AzSearch& s) {
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

}  // namespace

void bind_az_search(nb::module_& m) {
  nb::class_<AzSearch>(
      m, "AzSearch",
      "One search per game, leaves valued in batches (moonriver_env.moonriver.search).")
      .def(
          "__init__",
          [](AzSearch* self, nb::typed<nb::list, Game> games, const std::vector<PyInt>& indices,
             PyInt simulations, PyInt seed, bool gumbel, PyInt max_considered, double c_visit,
             double c_scale, double c_puct, double gumbel_scale, PyInt threads, double time_limit,
             bool timers, double rollout_weight, PyInt rollout_depth, double rollout_temperature) {
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
            p.timers = timers;
            p.rollout_weight = rollout_weight;
            p.rollout_depth = arg<int>(rollout_depth, "rollout_depth", 0, INT_MAX);
            p.rollout_temperature = rollout_temperature;
            new (self) AzSearch(roots, args<std::int64_t>(indices, "indices"), p);
          },
          nb::arg("games"), nb::arg("indices"), nb::arg("simulations"), nb::arg("seed"),
          nb::arg("gumbel"), nb::arg("max_considered"), nb::arg("c_visit"), nb::arg("c_scale"),
          nb::arg("c_puct"), nb::arg("gumbel_scale"), nb::arg("threads"),
          nb::arg("time_limit") = 0.0, nb::arg("timers") = false, nb::arg("rollout_weight") = 0.0,
          nb::arg("rollout_depth") = 0, nb::arg("rollout_temperature") = 10.0,
          "``time_limit`` > 0: seconds from here after which each game's search stops at the "
          "next step (after >= 1 simulation), its result the search so far; ``timers``: time "
          "each phase (phase_seconds); ``rollout_weight`` > 0: leaf values mixed with a random "
          "playout's (AzParams).")
      .def_prop_ro("num_games", &AzSearch::num_games)
      .def("finished", &AzSearch::finished)
      .def("leaves", &leaves,
           "(observation, mask, seat, game, num_players) of the pending leaves, or None when "
           "every search is finished.")
      .def("leaf_priors", &leaf_priors, nb::arg("shape_weight"),
           "Greedy's value + shape_weight x tie-break at each pending leaf's legal ids (rows "
           "of 2710 float32; all 0 for a forced decision).")
      .def("roots", &roots, nb::arg("shape_weight").none(),
           "(observation, mask, prior) of each game's root by its player to move; prior: "
           "Greedy's value + shape_weight x tie-break at the legal ids (None: no prior).")
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
            if (net.one_value())
              throw nb::value_error(
                  "the search values leaves by seat: this network has one value (a PPO "
                  "RanchNet's), not one per seat");
            InUse guard(s);
            nb::gil_scoped_release release;
            return s.run(net, shape_weight);
          },
          nb::arg("net"), nb::arg("shape_weight"),
          "Run every search to its end, each leaf valued by ``net`` in the core; the number of "
          "leaves valued.")
      .def(
          "phase_seconds",
          [](const AzSearch& s) {
            const std::vector<double> seconds = s.phase_seconds();
            nb::dict out;
            for (int k = 0; k < AZ_NUM_PHASES; ++k) out[AZ_PHASE_NAMES[k]] = seconds[k];
            return nb::typed<nb::dict, nb::str, float>(out);
          },
          "Seconds in each phase (select, determinize, apply, observe, prior, network, backup) "
          "so far, summed over the games; zeros unless made with ``timers``.")
      .def("result", &result, "(action, policy, root_value, visits, searched) per game.");
}
