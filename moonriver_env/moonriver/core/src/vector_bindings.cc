// Python bindings of the batched games (in the private module moonriver_env.moonriver.core._core,
// beside the game, so a batch's game is handed out as a core Game); the public API is
// moonriver_env.moonriver.batch.games.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "bindings.h"
#include "int_args.h"
#include "ndarrays.h"
#include "observation.h"
#include "vector.h"

namespace nb = nanobind;
using namespace moonriver;

namespace {

using Obs2 = nb::ndarray<nb::ndim<2>, nb::c_contig, nb::device::cpu>;  // float32 or uint8
// An observation array argument, named in the stubs as either kind (nanobind names an Obs2 a
// bare NDArray); outputs() takes it as an Obs2 (never a copy) and checks its kind.
using ObsArg = nb::typed<nb::object, std::variant<Out2<float>, Out2<std::uint8_t>>>;

// The batch (its games set up from a SetupPlan over the plan's tables).
struct Batch {
  VectorGames games;
};

// Game ``g``'s index (an IndexError when the batch has no such game).
int game_of(const Batch& b, const PyInt& g) {
  const int i = arg<int>(g, "g");
  if (i < 0 || i >= b.games.num_games()) throw nb::index_error("game index out of range");
  return i;
}

// A worker thread count (below 1: one thread).
int threads_of(const PyInt& threads) { return arg<int>(threads, "threads"); }

// Whether ``arg`` is an observation array of the batch's kind, taken into ``obs``: float32
// (N, 4934) or, compact, uint8 (N, 4940).
bool observations_fit(const Batch& b, const nb::object& arg, Obs2& obs) {
  const bool compact = b.games.compact();
  return nb::try_cast(arg, obs, false) &&
         obs.shape(0) == static_cast<std::size_t>(b.games.num_games()) &&
         obs.shape(1) == static_cast<std::size_t>(compact ? COMPACT_SIZE : OBSERVATION_SIZE) &&
         obs.dtype() == (compact ? nb::dtype<std::uint8_t>() : nb::dtype<float>());
}

// Check the output arrays' shapes and the observations' dtype (the others' dtypes and every
// layout are checked by their types).
// The arrays stay alive as the call's arguments: the pointers stay valid through the call.
VectorOutputs outputs(const Batch& b, Out1<std::int32_t> player, const ObsArg& obs_arg,
                      Out2<std::int8_t> mask, Out2<float> rewards, Out1<std::uint8_t> done,
                      const std::optional<ObsArg>& final_arg) {
  const std::size_t n = b.games.num_games();
  const std::size_t p = b.games.num_players();
  Obs2 obs, final_obs;
  if (player.shape(0) != n || !observations_fit(b, obs_arg, obs) || mask.shape(0) != n ||
      mask.shape(1) != NUM_ACTIONS || rewards.shape(0) != n || rewards.shape(1) != p ||
      done.shape(0) != n || (final_arg && !observations_fit(b, *final_arg, final_obs)))
    throw nb::value_error(
        b.games.compact() ? "output arrays: player (N,), obs (N, 4940) uint8, mask (N, 2710), "
                            "rewards (N, players), done (N,), final_obs (N, 4940) uint8 or None"
                          : "output arrays: player (N,), obs (N, 4934) float32, mask (N, 2710), "
                            "rewards (N, players), done (N,), final_obs (N, 4934) float32 or None");
  return VectorOutputs{player.data(),  obs.data(),  mask.data(),
                       rewards.data(), done.data(), final_arg ? final_obs.data() : nullptr};
}

}  // namespace

void bind_vector(nb::module_& m) {
  m.attr("SEAT_LEARNER") = int(SEAT_LEARNER);
  m.attr("SEAT_RANDOM") = int(SEAT_RANDOM);
  m.attr("SEAT_GREEDY") = int(SEAT_GREEDY);
  m.attr("SEAT_NETWORK") = int(SEAT_NETWORK);
  m.attr("SEAT_MCTS") = int(SEAT_MCTS);
  m.attr("MAX_MCTS_SIMULATIONS") = MAX_MCTS_SIMULATIONS;
  m.attr("COMPACT_SIZE") = COMPACT_SIZE;

  nb::class_<Batch>(m, "Batch", "N games stepped together; built-in seats play in the core.")
      .def(
          "__init__",
          [](Batch* self, PyInt num_games, const std::vector<PyInt>& seats, PyInt reward_mode,
             PyInt agent_seed, bool autoreset, const PlanAndTables& plan, bool compact) {
            const int n = arg<int>(num_games, "num_games");
            std::vector<int> kinds = args<int>(seats, "seats");
            const int mode = arg<int>(reward_mode, "reward_mode");
            const std::uint64_t seed = arg<std::uint64_t>(agent_seed, "agent_seed");
            try {
              new (self) Batch{VectorGames(n, std::move(kinds), mode, seed, plan.tables, plan.plan,
                                           autoreset, compact)};
            } catch (const std::invalid_argument& e) {
              throw nb::value_error(e.what());
            }
          },
          nb::arg("num_games"), nb::arg("seats"), nb::arg("reward_mode"), nb::arg("agent_seed"),
          nb::arg("autoreset"), nb::arg("plan"), nb::arg("compact") = false,
          "N games whose episodes are set up from ``plan`` (a SetupPlan) and their seeds; "
          "``compact``: observations as uint8 rows of COMPACT_SIZE (else float32).")
      .def_prop_ro("compact", [](const Batch& b) { return b.games.compact(); })
      .def_prop_ro("num_games", [](const Batch& b) { return b.games.num_games(); })
      .def(
          "begin",
          [](Batch& b, PyInt g_arg, const std::vector<PyInt>& base_words, PyInt k_arg,
             PyInt stride_arg) {
            const int g = game_of(b, g_arg);
            std::vector<std::uint32_t> base = args<std::uint32_t>(base_words, "base_words");
            const std::int64_t k = arg<std::int64_t>(k_arg, "k", 0, INT64_MAX);
            const std::uint64_t stride = arg<std::uint64_t>(stride_arg, "stride");
            if (base.empty()) throw nb::value_error("begin: base_words holds at least one word");
            b.games.begin(g, std::move(base), k, stride);
          },
          nb::arg("g"), nb::arg("base_words"), nb::arg("k"), nb::arg("stride"),
          "Start game g at episode k of its series: set up in the core from base + stride * k "
          "(base as the seed's 32-bit words); with autoreset, later episodes follow there.")
      .def(
          "episode", [](const Batch& b, PyInt g) { return b.games.episode(game_of(b, g)); },
          nb::arg("g"), "The episode game g plays now.")
      .def(
          "set_seats",
          [](Batch& b, PyInt g_arg, const std::vector<PyInt>& kinds_arg) {
            const int g = game_of(b, g_arg);
            const std::vector<int> kinds = args<int>(kinds_arg, "kinds");
            try {
              b.games.set_seats(g, kinds);
            } catch (const std::invalid_argument& e) {
              throw nb::value_error(e.what());
            }
          },
          nb::arg("g"), nb::arg("kinds"),
          "Set game g's seat kinds (one per player, at least one SEAT_LEARNER).")
      .def(
          "greedy_prior",
          [](Batch& b, In1<std::int64_t> games, double shape_weight, Out2<float> out,
             PyInt threads_arg) {
            const int threads = threads_of(threads_arg);
            const std::size_t k = games.shape(0);
            if (!std::isfinite(shape_weight)) throw nb::value_error("shape_weight must be finite");
            if (k > static_cast<std::size_t>(std::numeric_limits<int>::max()))
              throw nb::value_error("greedy_prior: too many games listed");
            if (out.shape(0) < k || out.shape(1) != NUM_ACTIONS)
              throw nb::value_error("out: one row of 2710 float32 per listed game");
            const std::int64_t* rows = games.data();
            float* data = out.data();
            try {
              nb::gil_scoped_release release;
              b.games.greedy_prior(rows, static_cast<int>(k), shape_weight, data, threads);
            } catch (const std::invalid_argument& e) {
              throw nb::value_error(e.what());
            }
          },
          nb::arg("games").noconvert(), nb::arg("shape_weight"), nb::arg("out").noconvert(),
          nb::arg("threads"),
          "Greedy's value + shape_weight x tie-break of each legal action of the listed games "
          "(0 elsewhere; all 0 for a forced decision) into the rows of ``out``.")
      .def(
          "game", [](const Batch& b, PyInt g) { return Game(b.games.game(game_of(b, g))); },
          nb::arg("g"), "A copy of game g's current game (a Game).")
      .def(
          "start",
          [](Batch& b, Out1<std::int32_t> player, ObsArg obs, Out2<std::int8_t> mask,
             Out2<float> rewards, Out1<std::uint8_t> done, std::optional<ObsArg> final_obs,
             PyInt threads_arg) {
            const int threads = threads_of(threads_arg);
            const VectorOutputs out = outputs(b, player, obs, mask, rewards, done, final_obs);
            nb::gil_scoped_release release;
            b.games.start(out, threads);
          },
          nb::arg("player").noconvert(), nb::arg("obs").noconvert(), nb::arg("mask").noconvert(),
          nb::arg("rewards").noconvert(), nb::arg("done").noconvert(),
          nb::arg("final_obs").noconvert().none(), nb::arg("threads"),
          "Play built-in seats until a learner decides in every game; write the outputs.")
      .def(
          "step",
          [](Batch& b, In1<std::int64_t> actions, Out1<std::int32_t> player, ObsArg obs,
             Out2<std::int8_t> mask, Out2<float> rewards, Out1<std::uint8_t> done,
             std::optional<ObsArg> final_obs, PyInt threads_arg) {
            const int threads = threads_of(threads_arg);
            if (actions.shape(0) != static_cast<std::size_t>(b.games.num_games()))
              throw nb::value_error("one action per game");
            const VectorOutputs out = outputs(b, player, obs, mask, rewards, done, final_obs);
            const std::int64_t* a = actions.data();
            nb::gil_scoped_release release;
            const int bad = b.games.first_illegal(a);
            if (bad >= 0) return bad;
            b.games.step(a, out, threads);
            return -1;
          },
          nb::arg("actions").noconvert(), nb::arg("player").noconvert(), nb::arg("obs").noconvert(),
          nb::arg("mask").noconvert(), nb::arg("rewards").noconvert(), nb::arg("done").noconvert(),
          nb::arg("final_obs").noconvert().none(), nb::arg("threads"),
          "Apply one learner decision per game; returns -1, or the index of the first game "
          "whose action is not legal (then nothing changed).")
      .def(
          "step_network",
          [](Batch& b, In1<std::int64_t> games, In1<std::int64_t> actions,
             Out1<std::int32_t> player, ObsArg obs, Out2<std::int8_t> mask, Out2<float> rewards,
             Out1<std::uint8_t> done, std::optional<ObsArg> final_obs, PyInt threads_arg) {
            const int threads = threads_of(threads_arg);
            const std::size_t k = games.shape(0);
            if (actions.shape(0) != k)
              throw nb::value_error("step_network: one action per listed game");
            if (k > static_cast<std::size_t>(b.games.num_games()))
              throw nb::value_error("step_network: more games listed than the batch holds");
            const VectorOutputs out = outputs(b, player, obs, mask, rewards, done, final_obs);
            const std::int64_t* rows = games.data();
            const std::int64_t* a = actions.data();
            try {
              nb::gil_scoped_release release;
              b.games.step_network(rows, a, static_cast<int>(k), out, threads);
            } catch (const std::invalid_argument& e) {
              throw nb::value_error(e.what());
            }
          },
          nb::arg("games").noconvert(), nb::arg("actions").noconvert(),
          nb::arg("player").noconvert(), nb::arg("obs").noconvert(), nb::arg("mask").noconvert(),
          nb::arg("rewards").noconvert(), nb::arg("done").noconvert(),
          nb::arg("final_obs").noconvert().none(), nb::arg("threads"),
          "Apply the listed games' network-seat decisions (each game waiting on a SEAT_NETWORK "
          "seat) and play on within the learner step; only their rows change.")
      .def(
          "random_actions",
          [](Batch& b, Out1<std::int64_t> out, PyInt threads_arg) {
            const int threads = threads_of(threads_arg);
            if (out.shape(0) != static_cast<std::size_t>(b.games.num_games()))
              throw nb::value_error("out: one int64 entry per game");
            std::int64_t* data = out.data();
            nb::gil_scoped_release release;
            b.games.random_actions(data, threads);
          },
          nb::arg("out").noconvert(), nb::arg("threads") = PyInt{nb::int_(1)},
          "Write one uniform random legal id per game into ``out`` (split over ``threads``).")
      .def_prop_ro(
          "builtin_decisions", [](const Batch& b) { return b.games.builtin_decisions(); },
          "Decisions made by built-in seats inside the core so far.");
}
