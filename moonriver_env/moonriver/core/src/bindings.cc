// Python bindings of the core (the private module moonriver_env.moonriver.core._core: the game, its
// set-up, search, playouts and, from vector_bindings.cc, the batch); the public contract is
// moonriver_env.moonriver.core.Game, a thin Python class over these.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <climits>
#include <cstddef>
#include <cstring>
#include <string>

#include "az_bindings.h"
#include "game.h"
#include "int_args.h"
#include "ndarrays.h"
#include "numpy_random.h"
#include "observation.h"
#include "playout.h"
#include "search.h"
#include "vector_bindings.h"

namespace nb = nanobind;
using namespace moonriver;

namespace {

using Mask = nb::ndarray<std::int8_t, nb::shape<NUM_ACTIONS>, nb::c_contig, nb::device::cpu>;

std::shared_ptr<const Tables> tables_of(In1<std::int64_t> kinds_flat, PyInt num_box_kinds,
                                        In1<std::int64_t> plot_kind, In1<std::int64_t> specialist) {
  return make_tables(kinds_flat.data(), kinds_flat.shape(0),
                     arg<int>(num_box_kinds, "num_box_kinds"), plot_kind.data(), plot_kind.shape(0),
                     specialist.data(), specialist.shape(0));
}

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

nb::tuple score_tuple(const Score& s) {
  return nb::make_tuple(s.territories, s.resources, s.partners, s.scenario, s.largest_territory,
                        s.cows);
}

template <std::size_t N, typename T>
nb::list to_list(const std::array<T, N>& a, int count = N) {
  nb::list out;
  for (int i = 0; i < count; ++i) out.append(static_cast<int>(a[i]));
  return out;
}

template <typename T>
nb::list to_list(const std::vector<T>& v) {
  nb::list out;
  for (const T& x : v) out.append(static_cast<int>(x));
  return out;
}

nb::ndarray<nb::numpy, std::int16_t> ranch_array(const Ranch& r) {
  // rows: kind, cows, partner, face, plot, terrain, label
  auto* data = new std::int16_t[7 * NUM_CELLS];
  for (int c = 0; c < NUM_CELLS; ++c) {
    data[c] = r.kind[c];
    data[NUM_CELLS + c] = r.cows[c];
    data[2 * NUM_CELLS + c] = r.partner[c];
    data[3 * NUM_CELLS + c] = r.face[c];
    data[4 * NUM_CELLS + c] = r.plot[c];
    data[5 * NUM_CELLS + c] = r.terrain[c];
    data[6 * NUM_CELLS + c] = r.label[c];
  }
  nb::capsule owner(data, [](void* p) noexcept { delete[] static_cast<std::int16_t*>(p); });
  return nb::ndarray<nb::numpy, std::int16_t>(data, {7, NUM_CELLS}, owner);
}

// The public state as plain Python values (records, text views, the ranch views).
nb::dict snapshot(const Game& g) {
  const Fixed& f = g.state();
  nb::dict d;
  d["phase"] = f.phase;
  d["player"] = f.player;
  d["round"] = f.round;
  d["last_round"] = f.last_round;
  d["emptying"] = f.emptying;
  d["forced"] = f.forced;
  d["builds_done"] = f.builds_done;
  d["builds_allowed"] = f.builds_allowed;
  d["skulls"] = to_list(f.skulls, f.skulls_len);
  d["circles"] = to_list(f.circles);
  d["effect_cell"] = f.effect_cell;
  d["cowboy_moves_left"] = f.cowboy_moves_left;
  d["supply"] = f.supply;
  d["saloon"] = to_list(f.saloon);
  d["bonus_tiles"] = nb::make_tuple(f.bonus_tiles[0], f.bonus_tiles[1]);
  d["active"] = f.has_active ? nb::object(to_list(f.active)) : nb::none();
  d["pending"] = f.has_pending ? nb::object(to_list(f.pending)) : nb::none();
  d["active_owner"] = to_list(f.active_owner);
  d["pending_owner"] = to_list(f.pending_owner);
  d["order"] = to_list(f.order, f.order_len);
  d["turn_index"] = f.turn_index;
  d["empty_order"] = to_list(f.empty_order, f.empty_len);
  d["setup_order"] = to_list(f.setup_order, f.setup_len);
  d["recruited_this_round"] = f.recruited_this_round;
  d["box"] = to_list(g.box());
  d["pile"] = to_list(g.pile());
  d["removed"] = to_list(g.removed());
  d["discarded"] = to_list(g.discarded());
  nb::list ranches;
  for (int p = 0; p < f.n; ++p) {
    const Ranch& r = f.ranches[p];
    nb::dict rd;
    rd["cells"] = ranch_array(r);
    rd["hand"] = to_list(r.hand, r.hand_size);
    rd["bonus_taken"] = r.bonus_taken;
    rd["capacity"] = r.capacity;
    rd["rows"] = r.rows;
    ranches.append(rd);
  }
  d["ranches"] = ranches;
  return d;
}

nb::dict state_layout() {
  nb::dict d;
  const std::size_t at = Game::STATE_FIXED_AT;
  d["fixed"] = at;
  d["fixed_size"] = sizeof(Fixed);
  d["n"] = at + offsetof(Fixed, n);
  d["rows"] = at + offsetof(Fixed, rows);
  d["scenario"] = at + offsetof(Fixed, scenario);
  d["auto_forced"] = at + offsetof(Fixed, auto_forced);
  d["ranches"] = at + offsetof(Fixed, ranches);
  d["supply"] = at + offsetof(Fixed, supply);
  d["saloon"] = at + offsetof(Fixed, saloon);
  d["active"] = at + offsetof(Fixed, active);
  d["pending"] = at + offsetof(Fixed, pending);
  d["has_active"] = at + offsetof(Fixed, has_active);
  d["active_owner"] = at + offsetof(Fixed, active_owner);
  d["pending_owner"] = at + offsetof(Fixed, pending_owner);
  d["order"] = at + offsetof(Fixed, order);
  d["order_len"] = at + offsetof(Fixed, order_len);
  d["turn_index"] = at + offsetof(Fixed, turn_index);
  d["empty_order"] = at + offsetof(Fixed, empty_order);
  d["empty_len"] = at + offsetof(Fixed, empty_len);
  d["skulls"] = at + offsetof(Fixed, skulls);
  d["skulls_len"] = at + offsetof(Fixed, skulls_len);
  d["circles"] = at + offsetof(Fixed, circles);
  d["effect_cell"] = at + offsetof(Fixed, effect_cell);
  d["choices"] = at + offsetof(Fixed, choices);
  d["choices_len"] = at + offsetof(Fixed, choices_len);
  d["player"] = at + offsetof(Fixed, player);
  d["phase"] = at + offsetof(Fixed, phase);
  d["ranch_size"] = sizeof(Ranch);
  d["ranch.capacity"] = offsetof(Ranch, capacity);
  d["ranch.kind"] = offsetof(Ranch, kind);
  d["ranch.cows"] = offsetof(Ranch, cows);
  d["ranch.plot"] = offsetof(Ranch, plot);
  d["ranch.label"] = offsetof(Ranch, label);
  d["ranch.hand"] = offsetof(Ranch, hand);
  d["ranch.hand_size"] = offsetof(Ranch, hand_size);
  d["ranch.bonus_taken"] = offsetof(Ranch, bonus_taken);
  return d;
}

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "Moon River's compiled rules (private: use moonriver_env.moonriver.core).";
  m.attr("NUM_ACTIONS") = NUM_ACTIONS;
  m.attr("OBSERVATION_SIZE") = OBSERVATION_SIZE;
  m.attr("PASS_ID") = PASS_ID;

  m.attr("STATE_FORMAT") = Game::STATE_FORMAT;
  m.def("state_layout", &state_layout,
        "Byte offsets in a serialized state (tests that craft states): 'fixed' (where the fixed "
        "part starts), its fields by name, 'ranch_size' and 'ranch.<field>' within a ranch.");

  nb::class_<Tables>(m, "Tables", "The data tables of one set of data files.")
      .def_prop_ro("num_plots", &Tables::num_plots)
      .def_prop_ro("num_partners", &Tables::num_partners);
  m.def("make_tables", &tables_of, nb::arg("kinds"), nb::arg("num_box_kinds"), nb::arg("plot_kind"),
        nb::arg("specialist"),
        "Tables from the kind rows (terrain, nugget, beaver, corn, cows, skull, circle, "
        "number), plot kinds and partner specialists.");

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
            return nb::make_tuple(static_cast<std::uint64_t>(b.state >> 64),
                                  static_cast<std::uint64_t>(b.state),
                                  static_cast<std::uint64_t>(b.inc >> 64),
                                  static_cast<std::uint64_t>(b.inc), b.has_uint32, b.uinteger);
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
            std::vector<int> boards;
            const Setup s =
                draw_setup(p.plan, args<std::uint32_t>(seed_words, "seed_words"), &boards);
            return nb::make_tuple(s.scenario, boards, s.box, s.pile, s.setup_order);
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
            std::vector<int> boards;
            Setup s = draw_setup(p.plan, seed, &boards);
            for (auto [given, drawn] : {std::pair{&box, &s.box}, std::pair{&pile, &s.pile}}) {
              if (!*given) continue;
              if ((*given)->size() != drawn->size())
                throw nb::value_error("game: a given box or pile keeps the drawn one's size");
              *drawn = std::move(**given);
            }
            const std::vector<int> order = s.setup_order;
            return nb::make_tuple(Game(p.tables, s), s.scenario, boards, order);
          },
          nb::arg("seed_words"), nb::arg("box") = nb::none(), nb::arg("pile") = nb::none(),
          "(game, scenario, each seat's board index, setup order): the game set up from the "
          "seed's words; ``box``/``pile``, when given, replace the drawn orders (chosen "
          "draws).");

  nb::class_<Game>(m, "Game", "One game's state (a value: copy() is a full copy).")
      .def(
          "__init__",
          [](Game* self, std::shared_ptr<const Tables> tables, PyInt num_players, PyInt scenario,
             bool auto_forced, const std::vector<PyInt>& capacity,
             const std::vector<PyInt>& bridges, const std::vector<PyInt>& box,
             const std::vector<PyInt>& pile, const std::vector<PyInt>& setup_order,
             const std::vector<PyInt>& board_ids) {
            const Setup s{arg<int>(num_players, "num_players"),
                          arg<int>(scenario, "scenario"),
                          auto_forced,
                          args<int>(capacity, "capacity"),
                          args<Cells>(bridges, "bridges"),
                          args<int>(box, "box"),
                          args<int>(pile, "pile"),
                          args<int>(setup_order, "setup_order"),
                          args<int>(board_ids, "board_ids")};
            new (self) Game(std::move(tables), s);
          },
          nb::arg("tables"), nb::arg("num_players"), nb::arg("scenario"), nb::arg("auto_forced"),
          nb::arg("capacity"), nb::arg("bridges"), nb::arg("box"), nb::arg("pile"),
          nb::arg("setup_order"), nb::arg("board_ids"))
      .def(
          "copy", [](const Game& g) { return Game(g); }, "An independent copy.")
      .def_prop_ro("num_players", &Game::num_players)
      .def_prop_ro("phase", &Game::phase)
      .def_prop_ro("current_player", &Game::current_player)
      .def_prop_ro("player", [](const Game& g) { return g.state().player; })
      .def_prop_ro("is_over", &Game::is_over)
      .def_prop_ro("round", [](const Game& g) { return g.state().round; })
      .def_prop_ro("scenario", [](const Game& g) { return g.state().scenario; })
      .def_prop_ro("history_size", [](const Game& g) { return g.history().size(); })
      .def(
          "is_legal",
          [](const Game& g, PyInt action) { return g.is_legal(arg<int>(action, "action")); },
          nb::arg("action"))
      .def("num_legal", &Game::num_legal)
      .def(
          "legal_mask", [](const Game& g, Mask out) { g.legal_mask(out.data()); },
          nb::arg("out").noconvert(), "Write the int8 legal mask into ``out`` (2710 entries).")
      .def(
          "frozen_mask",
          [](const Game& g) {
            auto* data = new std::int8_t[NUM_ACTIONS];
            g.legal_mask(data);
            nb::capsule owner(data,
                              [](void* p) noexcept { delete[] static_cast<std::int8_t*>(p); });
            return nb::ndarray<nb::numpy, const std::int8_t, nb::shape<NUM_ACTIONS>>(
                data, {std::size_t(NUM_ACTIONS)}, owner);
          },
          "The int8 legal mask as a new read-only array (no consumer can make it writable).")
      .def(
          "legal_ids",
          [](const Game& g) {
            std::int64_t buf[NUM_ACTIONS];
            const int m = g.legal_ids(buf);
            auto* data = new std::int64_t[m > 0 ? m : 1];
            std::memcpy(data, buf, sizeof(std::int64_t) * m);
            nb::capsule owner(data,
                              [](void* p) noexcept { delete[] static_cast<std::int64_t*>(p); });
            return nb::ndarray<nb::numpy, std::int64_t, nb::ndim<1>>(data, {std::size_t(m)}, owner);
          },
          "Legal ids, ascending (a new int64 array).")
      .def(
          "apply", [](Game& g, PyInt action) { return g.apply(arg<int>(action, "action")); },
          nb::arg("action"), "Play a decision; False (state unchanged) if it is not legal.")
      .def(
          "observe",
          [](const Game& g, PyInt viewer_arg, nb::handle out) {
            const int viewer = arg<int>(viewer_arg, "viewer");
            if (viewer < 0 || viewer >= g.num_players())
              throw nb::value_error("viewer out of range");
            // The buffer protocol (not DLPack): a fraction of the cost per call, with the same
            // refusals (writable, C-contiguous, 1-d, native float32, 4934 entries; never a
            // copy). The GIL stays held while the core writes: the buffer cannot change.
            Py_buffer view;
            if (PyObject_GetBuffer(out.ptr(), &view,
                                   PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) {
              PyErr_Clear();
              throw nb::type_error("out must be a writable C-contiguous float32 array");
            }
            const bool ok =
                view.ndim == 1 && view.itemsize == 4 && view.format != nullptr &&
                (std::strcmp(view.format, "f") == 0 || std::strcmp(view.format, "<f") == 0 ||
                 std::strcmp(view.format, "=f") == 0) &&
                view.len == static_cast<Py_ssize_t>(sizeof(float)) * OBSERVATION_SIZE;
            if (ok) observe(g, viewer, static_cast<float*>(view.buf));
            PyBuffer_Release(&view);
            if (!ok) throw nb::type_error("out must be a float32 array of 4934 entries");
          },
          nb::arg("viewer"), nb::arg("out"),
          "Write ``viewer``'s observation into ``out`` (float32, 4934 entries).")
      .def("running_scores",
           [](const Game& g) {
             nb::list out;
             for (int p = 0; p < g.num_players(); ++p) out.append(score_tuple(g.running_score(p)));
             return out;
           })
      .def("winners", &Game::winners)
      .def("history", [](const Game& g) { return to_list(g.history()); })
      .def("snapshot", &snapshot)
      .def(
          "hidden",
          [](const Game& g) { return nb::make_tuple(to_list(g.box()), to_list(g.pile())); },
          "(box, pile) as lists, the next draw last.")
      .def(
          "set_hidden",
          [](Game& g, const std::vector<PyInt>& box, const std::vector<PyInt>& pile) {
            if (box.size() != g.box().size() || pile.size() != g.pile().size())
              throw nb::value_error("set_hidden keeps the box and pile sizes");
            g.set_hidden(args<int>(box, "box"), args<int>(pile, "pile"));
          },
          nb::arg("box"), nb::arg("pile"))
      .def("serialize",
           [](const Game& g) {
             const std::string s = g.serialize();
             return nb::bytes(s.data(), s.size());
           })
      .def_static(
          "deserialize",
          [](std::shared_ptr<const Tables> tables, nb::bytes b) {
            return Game::deserialize(std::move(tables), std::string(b.c_str(), b.size()));
          },
          nb::arg("tables"), nb::arg("state"))
      .def(
          "random_playouts",
          [](const Game& g, PyInt count_arg, PyInt seed_arg) {
            const int count = count_of(count_arg, "count");
            const std::uint64_t seed = seed_of(seed_arg);
            check_decision(g, "random_playouts");
            std::vector<double> totals;
            {
              nb::gil_scoped_release release;
              totals = random_playouts(g, count, seed);
            }
            return totals;
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
            nb::capsule owner(data,
                              [](void* p) noexcept { delete[] static_cast<std::int64_t*>(p); });
            return nb::ndarray<nb::numpy, std::int64_t, nb::ndim<1>>(data, {std::size_t(m)}, owner);
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
            std::int64_t checksum = 0;
            {
              nb::gil_scoped_release release;
              SplitMix64 rng(seed);
              Game copy(g);
              for (int i = 0; i < count; ++i) {
                search_copy(copy, g, rng);
                if (!copy.box().empty()) checksum += copy.box().back();
              }
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
            return nb::make_tuple(m, ties);
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
            nb::capsule vo(value, [](void* p) noexcept { delete[] static_cast<double*>(p); });
            nb::capsule so(shape, [](void* p) noexcept { delete[] static_cast<std::int64_t*>(p); });
            return nb::make_tuple(
                nb::ndarray<nb::numpy, double, nb::ndim<1>>(value, {std::size_t(m)}, vo),
                nb::ndarray<nb::numpy, std::int64_t, nb::ndim<1>>(shape, {std::size_t(m)}, so));
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
            return nb::make_tuple(r.actions, r.visits, r.simulations);
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
            std::pair<std::int64_t, std::int64_t> r;
            {
              nb::gil_scoped_release release;
              r = random_play_counts(g, count, seed);
            }
            return r;
          },
          nb::arg("count"), nb::arg("seed"),
          "Play ``count`` random games from copies; returns (games, decisions).");
  bind_az_search(m);
  bind_vector(m);
}
