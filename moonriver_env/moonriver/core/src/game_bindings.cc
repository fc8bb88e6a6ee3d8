// Python bindings of one game (in the private module moonriver_env.moonriver.core._core): the
// data tables, the game's state, legality, play, observation, snapshot and bytes. The public
// contract is moonriver_env.moonriver.core.Game, a thin Python class over these.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstddef>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "bindings.h"
#include "game.h"
#include "int_args.h"
#include "ndarrays.h"
#include "observation.h"

namespace nb = nanobind;
using namespace moonriver;

namespace {

using Mask = nb::ndarray<std::int8_t, nb::shape<NUM_ACTIONS>, nb::c_contig, nb::device::cpu>;
// Python values as the stub names them.
using IntList = nb::typed<nb::list, int>;
using ScoreTuple = nb::typed<nb::tuple, int, int, int, int, int, int>;

std::shared_ptr<const Tables> tables_of(In1<std::int64_t> kinds_flat, PyInt num_box_kinds,
                                        In1<std::int64_t> plot_kind, In1<std::int64_t> specialist) {
  return make_tables(kinds_flat.data(), kinds_flat.shape(0),
                     arg<int>(num_box_kinds, "num_box_kinds"), plot_kind.data(), plot_kind.shape(0),
                     specialist.data(), specialist.shape(0));
}

// Each seat's index in the plan's boards, or None when the game was handed its boards.
std::optional<std::vector<int>> board_indices(const Game& g) {
  std::vector<int> out;
  for (int p = 0; p < g.num_players(); ++p) out.push_back(g.board_index(p));
  if (out.empty() || out[0] < 0) return std::nullopt;
  return out;
}

ScoreTuple score_tuple(const Score& s) {
  return ScoreTuple(nb::make_tuple(s.territories, s.resources, s.partners, s.scenario,
                                   s.largest_territory, s.cows));
}

template <std::size_t N, typename T>
IntList to_list(const std::array<T, N>& a, int count = N) {
  IntList out;
  for (int i = 0; i < count; ++i) out.append(static_cast<int>(a[i]));
  return out;
}

template <typename T>
IntList to_list(const std::vector<T>& v) {
  IntList out;
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
  return owning<std::int16_t>(data, {7, NUM_CELLS});
}

// The public state as plain Python values (records, text views, the ranch views).
nb::typed<nb::dict, nb::str, nb::any> snapshot(const Game& g) {
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

nb::typed<nb::dict, nb::str, int> state_layout() {
  nb::typed<nb::dict, nb::str, int> d;
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

void bind_game(nb::module_& m) {
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
      .def_prop_ro("setup_order", &Game::setup_order,
                   "The seats in the order they place their first plots (2 players: four).")
      .def_prop_ro("board_indices", &board_indices,
                   "Each seat's board as its index in the SetupPlan's boards it was set up "
                   "from (setup_plan_of's names); None for a game handed its boards (made "
                   "with them, or deserialized: the bytes name no plan).")
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
            return owning<const std::int8_t, nb::shape<NUM_ACTIONS>>(data, {NUM_ACTIONS});
          },
          "The int8 legal mask as a new read-only array (no consumer can make it writable).")
      .def(
          "legal_ids",
          [](const Game& g) {
            std::int64_t buf[NUM_ACTIONS];
            const int m = g.legal_ids(buf);
            auto* data = new std::int64_t[m > 0 ? m : 1];
            std::memcpy(data, buf, sizeof(std::int64_t) * m);
            return owning<std::int64_t, nb::ndim<1>>(data, {std::size_t(m)});
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
             nb::typed<nb::list, ScoreTuple> out;
             for (int p = 0; p < g.num_players(); ++p) out.append(score_tuple(g.running_score(p)));
             return out;
           })
      .def("winners", &Game::winners)
      .def("history", [](const Game& g) { return to_list(g.history()); })
      .def("snapshot", &snapshot)
      .def(
          "hidden",
          [](const Game& g) {
            return nb::typed<nb::tuple, IntList, IntList>(
                nb::make_tuple(to_list(g.box()), to_list(g.pile())));
          },
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
          nb::arg("tables"), nb::arg("state"));
}
