// Python bindings of the search inside the core over one game (methods of _core.Game, added
// to the class game_bindings.cc registers): random playouts and rollouts, determinized copies,
// Greedy's ranking, IS-MCTS. The public API is moonriver_env.moonriver.core.Game's methods.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/vector.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "bindings.h"
#include "game.h"
#include "int_args.h"
#include "ndarrays.h"
#include "numpy_random.h"
#include "playout.h"
#include "search.h"

namespace nb = nanobind;
using namespace moonriver;

namespace {

// A seed: any int in [0, 2**64).
std::uint64_t seed_of(const PyInt& seed) { return arg<std::uint64_t>(seed, "seed"); }

// A count of games, decisions or simulations: an int in [0, 2**31).
int count_of(const PyInt& count, const char* name) { return arg<int>(count, name, 0, INT_MAX); }

// Refuse (ValueError) a state that is not over yet has no legal decision: every search and
// playout draws among the legal ids (the byte state's checks refuse such a state already).
void check_decision(const Game& g, const char* who) {
  if (!g.is_over() && g.num_legal() == 0)
    throw nb::value_error(
        (std::string(who) + ": the state is not over and has no legal decision").c_str());
}

// The number of ``ids``, each of which must be an action id legal now (int64 in: no id is
// narrowed to another before the check).
int checked_legal(const Game& g, In1<std::int64_t> ids, const char* who) {
  const std::size_t m = ids.shape(0);
  if (m > NUM_ACTIONS) throw nb::value_error((std::string(who) + ": at most 2710 ids").c_str());
  for (std::size_t i = 0; i < m; ++i) {
    const std::int64_t id = ids.data()[i];
    if (id < 0 || id >= NUM_ACTIONS || !g.is_legal(static_cast<int>(id)))
      throw nb::value_error(
          (std::string(who) + ": every id must be legal now (got " + std::to_string(id) + ")")
              .c_str());
  }
  return static_cast<int>(m);
}

}  // namespace

void bind_search(nb::module_& m) {
  // The class bind_game made: its search methods sit beside the state's.
  nb::borrow<nb::class_<Game>>(m.attr("Game"))
      .def(
          "random_playouts",
          [](const Game& g, PyInt count_arg, PyInt seed_arg) {
            const int count = count_of(count_arg, "count");
            const std::uint64_t seed = seed_of(seed_arg);
            check_decision(g, "random_playouts");
            nb::gil_scoped_release release;
            return random_playouts(g, count, seed);
          },
          nb::arg("count"), nb::arg("seed"),
          "Play ``count`` uniform random games to the end from copies of this state; "
          "returns the final totals, count x players, flat.")
      .def(
          "random_rollout",
          [](Game& g, PyInt depth_arg, PyInt seed) {
            const int depth = count_of(depth_arg, "depth");
            SplitMix64 rng(seed_of(seed));
            check_decision(g, "random_rollout");
            nb::gil_scoped_release release;
            return random_rollout(g, depth, rng);
          },
          nb::arg("depth"), nb::arg("seed"),
          "Play up to ``depth`` random legal decisions in place; returns how many were played.")
      .def(
          "one_ply_margins",
          [](const Game& g, PyInt player_arg, In1<std::int64_t> ids) {
            const int player = arg<int>(player_arg, "player");
            const int m = checked_legal(g, ids, "one_ply_margins");
            if (player < 0 || player >= g.num_players())
              throw nb::value_error("one_ply_margins: player out of range");
            auto* data = new std::int64_t[m > 0 ? m : 1];
            const std::int64_t* in = ids.data();
            {
              nb::gil_scoped_release release;
              one_ply_margins(g, player, in, m, data);
            }
            return owning<std::int64_t, nb::ndim<1>>(data, {std::size_t(m)});
          },
          nb::arg("player"), nb::arg("ids").noconvert(),
          "Margin change of ``player`` after each id (all legal), played on copies.")
      .def(
          "determinize_numpy",
          [](Game& g, nb::capsule bit_generator) {
            // raises (ValueError) for a capsule that is not a numpy bit generator's
            NumpyBits bits{static_cast<NumpyBitgen*>(bit_generator.data("BitGenerator"))};
            shuffle(bits, g.box_in_place());
            shuffle(bits, g.pile_in_place());
          },
          nb::arg("bit_generator"),
          "Reshuffle the box, then the pile, as numpy's Generator.shuffle does over the bit "
          "generator behind ``bit_generator`` (its ``capsule``; the caller holds its lock).")
      .def(
          "determinized_clone",
          [](const Game& g, PyInt seed) {
            Game copy(g);
            SplitMix64 rng(seed_of(seed));
            determinize(copy, rng);
            return copy;
          },
          nb::arg("seed"),
          "A copy with the box and pile reshuffled by the core's generator seeded with ``seed``.")
      .def(
          "determinized_clones",
          [](const Game& g, PyInt count_arg, PyInt seed_arg) {
            const int count = count_of(count_arg, "count");
            const std::uint64_t seed = seed_of(seed_arg);
            nb::gil_scoped_release release;
            std::int64_t checksum = 0;
            SplitMix64 rng(seed);
            Game copy(g);
            for (int i = 0; i < count; ++i) {
              search_copy(copy, g, rng);
              if (!copy.box().empty()) checksum += copy.box().back();
            }
            return checksum;
          },
          nb::arg("count"), nb::arg("seed"),
          "Make ``count`` determinized copies inside the core as each MCTS simulation makes "
          "its own (search_copy: reused storage, the reshuffle done lazily at each draw; a "
          "benchmark's loop); returns a checksum.")
      .def(
          "greedy_ties",
          [](const Game& g) {
            std::vector<std::int64_t> ties;
            int m;
            {
              nb::gil_scoped_release release;
              m = greedy_ties(g, ties);
            }
            return nb::typed<nb::tuple, int, nb::typed<nb::list, int>>(nb::make_tuple(m, ties));
          },
          "(number of legal ids, Greedy's best legal ids ascending) in one call.")
      .def(
          "greedy_values",
          [](const Game& g, In1<std::int64_t> ids) {
            if (g.is_over()) throw nb::value_error("greedy_values: the game is over");
            const int m = checked_legal(g, ids, "greedy_values");
            auto* value = new double[m > 0 ? m : 1];
            auto* shape = new std::int64_t[m > 0 ? m : 1];
            const std::int64_t* in = ids.data();
            {
              nb::gil_scoped_release release;
              greedy_values(g, in, m, value, shape);
            }
            return nb::typed<nb::tuple, Array1<double>, Array1<std::int64_t>>(
                nb::make_tuple(owning<double, nb::ndim<1>>(value, {std::size_t(m)}),
                               owning<std::int64_t, nb::ndim<1>>(shape, {std::size_t(m)})));
          },
          nb::arg("ids").noconvert(), "Greedy's (values, tie-breaks) of the legal ``ids``.")
      .def(
          "mcts_search",
          [](const Game& g, PyInt simulations, double seconds, PyInt rollout_depth,
             double exploration, double value_scale, PyInt seed_arg, double time_limit) {
            if (g.is_over()) throw nb::value_error("mcts_search: the game is over");
            check_decision(g, "mcts_search");
            MctsParams params;
            params.simulations = arg<int>(simulations, "simulations", 1, INT_MAX);
            params.seconds = seconds;
            params.rollout_depth = arg<int>(rollout_depth, "rollout_depth", 0, INT_MAX);
            const std::uint64_t seed = seed_of(seed_arg);
            params.exploration = exploration;
            params.value_scale = value_scale;
            params.time_limit = time_limit;
            check_params(params);
            MctsResult r;
            {
              nb::gil_scoped_release release;
              r = mcts_search(g, params, seed);
            }
            using Ints = nb::typed<nb::list, int>;
            return nb::typed<nb::tuple, Ints, Ints, int>(
                nb::make_tuple(r.actions, r.visits, r.simulations));
          },
          nb::arg("simulations"), nb::arg("seconds"), nb::arg("rollout_depth"),
          nb::arg("exploration"), nb::arg("value_scale"), nb::arg("seed"),
          nb::arg("time_limit") = 0.0,
          "IS-MCTS from this state: (root actions, their visits, simulations run); "
          "``time_limit`` > 0: stop after that many seconds (>= 1 simulation), the tree so far.")
      .def(
          "random_play_counts",
          [](const Game& g, PyInt count_arg, PyInt seed_arg) {
            const int count = count_of(count_arg, "count");
            const std::uint64_t seed = seed_of(seed_arg);
            check_decision(g, "random_play_counts");
            nb::gil_scoped_release release;
            return random_play_counts(g, count, seed);
          },
          nb::arg("count"), nb::arg("seed"),
          "Play ``count`` random games from copies; returns (games, decisions).");
}
