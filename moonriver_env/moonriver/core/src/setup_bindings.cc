// Python bindings of the set-up (in the private module moonriver_env.moonriver.core._core):
// numpy's generator in the core (Pcg64) and the plan a config makes of a set-up (SetupPlan),
// which draws set-ups from seeds and sets games up. The public API is
// moonriver_env.moonriver.core (Game(config, seed), rng.py).
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bindings.h"
#include "game.h"
#include "int_args.h"
#include "numpy_random.h"

namespace nb = nanobind;
using namespace moonriver;

void bind_setup(nb::module_& m) {
  nb::class_<Pcg64>(m, "Pcg64",
                    "numpy's PCG64 with the Generator draws the engine makes, draw for draw.")
      .def(
          "__init__",
          [](Pcg64* self, const std::vector<PyInt>& seed_words) {
            new (self) Pcg64(args<std::uint32_t>(seed_words, "seed_words"));
          },
          nb::arg("seed_words"),
          "PCG64 seeded as numpy.random.default_rng(seed) (the seed's little-endian 32-bit "
          "words).")
      .def_prop_rw(
          "state",
          [](const Pcg64& b) {
            return nb::typed<nb::tuple, int, int, int, int, bool, int>(nb::make_tuple(
                static_cast<std::uint64_t>(b.state >> 64), static_cast<std::uint64_t>(b.state),
                static_cast<std::uint64_t>(b.inc >> 64), static_cast<std::uint64_t>(b.inc),
                b.has_uint32, b.uinteger));
          },
          [](Pcg64& b, std::tuple<PyInt, PyInt, PyInt, PyInt, bool, PyInt> s) {
            const auto word = [&s](const PyInt& x, int i) {
              return arg<std::uint64_t>(x, "state[" + std::to_string(i) + "]");
            };
            const std::uint64_t w[4] = {word(std::get<0>(s), 0), word(std::get<1>(s), 1),
                                        word(std::get<2>(s), 2), word(std::get<3>(s), 3)};
            const std::uint32_t uinteger = arg<std::uint32_t>(std::get<5>(s), "state[5]");
            b.state = (static_cast<Pcg64::u128>(w[0]) << 64) | w[1];
            b.inc = (static_cast<Pcg64::u128>(w[2]) << 64) | w[3];
            b.has_uint32 = std::get<4>(s);
            b.uinteger = uinteger;
          },
          "(state high, state low, inc high, inc low, has_uint32, uinteger): "
          "bit_generator.state's numbers, 128-bit ones split in two.")
      .def("next_uint32", &Pcg64::next_uint32)
      .def("next_uint64", &Pcg64::next_uint64)
      .def(
          "integers",
          [](Pcg64& b, PyInt low_arg, PyInt high_arg) {
            const std::int64_t low = arg<std::int64_t>(low_arg, "low");
            const std::int64_t high = arg<std::int64_t>(high_arg, "high");
            if (high <= low || high - low > 0xFFFFFFFFLL)
              throw nb::value_error("integers: high must exceed low by 1 to 2**32 - 1");
            return integers(b, low, high);
          },
          nb::arg("low"), nb::arg("high"), "Generator.integers(low, high) (high excluded).")
      .def(
          "permutation",
          [](Pcg64& b, PyInt n_arg) {
            const int n = arg<int>(n_arg, "n");
            return permutation(b, n < 0 ? 0 : n);
          },
          nb::arg("n"), "Generator.permutation(n) as a list.")
      .def(
          "shuffle",
          [](Pcg64& b, const std::vector<PyInt>& items_arg) {
            std::vector<std::int64_t> items = args<std::int64_t>(items_arg, "items");
            shuffle(b, items);
            return items;
          },
          nb::arg("items"), "Generator.shuffle of a list: the shuffled copy.");

  nb::class_<PlanAndTables>(
      m, "SetupPlan", "What a config fixes of a set-up; the seed draws the rest, as the engine.")
      .def(
          "__init__",
          [](PlanAndTables* self, std::shared_ptr<const Tables> tables, PyInt num_players,
             bool auto_forced, PyInt scenario, bool draw_scenario, PyInt scenario_low,
             PyInt scenario_high, const std::vector<PyInt>& capacity,
             const std::vector<PyInt>& bridges, const std::vector<PyInt>& board_ids,
             bool draw_boards) {
            SetupPlan plan = make_plan(
                *tables, arg<int>(num_players, "num_players"), auto_forced,
                arg<int>(scenario, "scenario"), draw_scenario,
                arg<int>(scenario_low, "scenario_low"), arg<int>(scenario_high, "scenario_high"),
                args<int>(capacity, "capacity"), args<Cells>(bridges, "bridges"),
                args<int>(board_ids, "board_ids"), draw_boards);
            new (self) PlanAndTables{std::move(tables), std::move(plan)};
          },
          nb::arg("tables"), nb::arg("num_players"), nb::arg("auto_forced"), nb::arg("scenario"),
          nb::arg("draw_scenario"), nb::arg("scenario_low"), nb::arg("scenario_high"),
          nb::arg("capacity"), nb::arg("bridges"), nb::arg("board_ids"), nb::arg("draw_boards"),
          "Boards are columns (capacity, bridge cells, board id): one per seat, or the legend "
          "pool by name when draw_boards.")
      .def(
          "draw",
          [](const PlanAndTables& p, const std::vector<PyInt>& seed_words) {
            const Setup s = draw_setup(p.plan, args<std::uint32_t>(seed_words, "seed_words"));
            using Ints = nb::typed<nb::list, int>;
            return nb::typed<nb::tuple, int, Ints, Ints, Ints, Ints>(
                nb::make_tuple(s.scenario, s.board_indices, s.box, s.pile, s.setup_order));
          },
          nb::arg("seed_words"),
          "The set-up's draws from the seed (its 32-bit words): (scenario, each seat's board "
          "index, box, pile, setup order).")
      .def(
          "game",
          [](const PlanAndTables& p, const std::vector<PyInt>& seed_words,
             const std::optional<std::vector<PyInt>>& box_arg,
             const std::optional<std::vector<PyInt>>& pile_arg) {
            const std::vector<std::uint32_t> seed = args<std::uint32_t>(seed_words, "seed_words");
            std::optional<std::vector<int>> box, pile;
            if (box_arg) box = args<int>(*box_arg, "box");
            if (pile_arg) pile = args<int>(*pile_arg, "pile");
            Setup s = draw_setup(p.plan, seed);
            for (auto [given, drawn] : {std::pair{&box, &s.box}, std::pair{&pile, &s.pile}}) {
              if (!*given) continue;
              if ((*given)->size() != drawn->size())
                throw nb::value_error("game: a given box or pile keeps the drawn one's size");
              *drawn = std::move(**given);
            }
            return Game(p.tables, s);
          },
          nb::arg("seed_words"), nb::arg("box") = nb::none(), nb::arg("pile") = nb::none(),
          "The game set up from the seed's words (it keeps its scenario, boards and setup "
          "order); ``box``/``pile``, when given, replace the drawn orders (chosen draws).");
}
