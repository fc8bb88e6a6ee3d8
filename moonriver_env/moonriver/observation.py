"""ObservationEncoder: the table as one flat float32 vector of named views, viewer first.

docs/observation.md is generated from this module (``ObservationEncoder.markdown``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from moonriver_env.common.view import LazyObservation as LazyObservation  # its old home
from moonriver_env.common.view import View, ViewSpec, bounded_store, layout
from moonriver_env.moonriver.rules.actions import HAND_SLOTS, MAX_CIRCLES, SALOON_SLOTS
from moonriver_env.moonriver.rules.components import (
    COLUMN_SIZE,
    NUM_COWS,
    Face,
    PartnerKind,
    Terrain,
)
from moonriver_env.moonriver.rules.data import GameData
from moonriver_env.moonriver.rules.grid import COLS, HOMESTEAD, MAX_ROWS, NUM_CELLS, usable_cells
from moonriver_env.moonriver.rules.phase import Phase
from moonriver_env.moonriver.rules.scenarios import SCENARIOS

if TYPE_CHECKING:  # the reference engine's game (the contract) and its ranches, which it reads
    from moonriver_env.moonriver.contract import MoonRiverGame as Game
    from moonriver_env.moonriver.rules.ranch import Ranch

MAX_PLAYERS = 4
NUM_ROUNDS = 24  # rounds of a game with the standard 96-plot box
SCORE_SCALE = 100.0  # running scores are divided by this
NUMBER_SCALE = 25.0  # plot numbers (backs) are divided by this

# Ranch plane channels, in order.
RANCH_CHANNELS: tuple[str, ...] = (
    *(f"terrain_{t.name.lower()}" for t in Terrain),
    "nugget", "beaver", "corn", "skull_symbol", "circle_symbol",
    "cows",
    *(f"partner_{k.name.lower()}" for k in PartnerKind),
    "bridge", "homestead", "free",
    "pending",
)
NUM_RANCH_CHANNELS = len(RANCH_CHANNELS)
_CH = {name: i for i, name in enumerate(RANCH_CHANNELS)}
_COWBOY_FACE = int(Face.COWBOY)
_GAME_OVER, _DROUGHT = Phase.GAME_OVER, Phase.DROUGHT  # module lookups beat enum lookups

# Features of one plot (in a reserve slot or a column position).
PLOT_FEATURES: tuple[str, ...] = (
    "present", *(f"terrain_{t.name.lower()}" for t in Terrain),
    "nugget", "beaver", "corn", "cow_symbols", "skull", "circle", "number",
)
NUM_PLOT_FEATURES = len(PLOT_FEATURES)
SPECIALISTS = tuple(k for k in PartnerKind if k != PartnerKind.COWBOY)

_CONTEXT = ("forced", "emptying", "last_round", "builds_done", "builds_allowed",
            "cowboy_moves_left", "circle_first", "circle_second", "bonus_tiles_left")
MAX_BOARDS = 5  # places in the board one-hot: the boards of the data file, in its order
_GAME = ("round", "box", "pile", "cow_supply", "players_2", "players_3", "players_4",
         "base", *(f"scenario_{s}" for s in SCENARIOS))


_SPECS: tuple[ViewSpec, ...] = (
    ("ranches", (MAX_PLAYERS, NUM_RANCH_CHANNELS, MAX_ROWS, COLS),
     "per player (viewer first): " + ", ".join(RANCH_CHANNELS)),
    ("reserves", (MAX_PLAYERS, HAND_SLOTS, NUM_PLOT_FEATURES),
     "per player, per slot (reserve then plot in hand): " + ", ".join(PLOT_FEATURES)),
    ("columns", (2, COLUMN_SIZE, NUM_PLOT_FEATURES),
     "active then pending column, by position (0 nearest the box): plot features"),
    ("column_owners", (2, COLUMN_SIZE, MAX_PLAYERS),
     "active then pending column, by position: relative player whose ranchero stands there"),
    ("reserve_size", (MAX_PLAYERS,), "reserve capacity of each player's board / 4"),
    ("boards", (MAX_PLAYERS, MAX_BOARDS), "board one-hot, by its place in the boards file "
     "(default file: camp, mary, wesley, calamity, big_jo; a board after the fifth: zeros)"),
    ("saloon", (SALOON_SLOTS, len(SPECIALISTS)),
     "specialist face of the partner in each slot: "
     + ", ".join(k.name.lower() for k in SPECIALISTS)),
    ("pile", (len(SPECIALISTS),), "partner tokens left in the pile, by specialist / 5"),
    ("phase", (len(Phase),), "current decision one-hot: "
     + ", ".join(p.name.lower() for p in Phase)),
    ("acting", (MAX_PLAYERS,), "relative player to act (one-hot)"),
    ("context", (len(_CONTEXT),), ", ".join(_CONTEXT)),
    ("scores", (MAX_PLAYERS,), f"running score of each player / {SCORE_SCALE:.0f}"),
    ("turn_order", (MAX_PLAYERS, COLUMN_SIZE),
     "for each relative player, which positions of the active column it plays"),
    ("game", (len(_GAME),), ", ".join(_GAME)),
)


VIEWS = layout(_SPECS)
OBSERVATION_SIZE = VIEWS["game"].stop
# Offsets and index tables of the hot path (ObservationEncoder.encode).
_RANCH_SIZE = NUM_RANCH_CHANNELS * NUM_CELLS
_PENDING_ROW = _CH["pending"] * NUM_CELLS
(_O_RESERVES, _O_COLUMN_OWNERS, _O_SALOON, _O_PILE, _O_PHASE, _O_ACTING, _O_CONTEXT,
 _O_SCORES, _O_TURN_ORDER, _O_GAME) = (VIEWS[v].start for v in (
    "reserves", "column_owners", "saloon", "pile", "phase", "acting", "context", "scores",
    "turn_order", "game"))
_NONE = tuple([-1] * k for k in range(MAX_PLAYERS * HAND_SLOTS + 1))  # empty plot rows
# Positions of the numbers written at the end of encode: pile, context, game[:4], scores.
_G = {name: i for i, name in enumerate(_GAME)}  # places in the "game" view
_NUMBERS = np.array([*range(_O_PILE, _O_PILE + len(SPECIALISTS)),
                     *range(_O_CONTEXT, _O_CONTEXT + len(_CONTEXT)),
                     *range(_O_GAME, _O_GAME + _G["players_2"]),  # the numbers before the one-hots
                     *range(_O_SCORES, _O_SCORES + MAX_PLAYERS)], dtype=np.intp)
# The game view's one-hots whose product names the variant: players (2-4) x mode (base, the
# four scenarios), 15 codes in that order (a network's ``variant_film`` reads them).
PLAYERS_ONEHOT = slice(_O_GAME + _G["players_2"], _O_GAME + _G["players_4"] + 1)
MODE_ONEHOT = slice(_O_GAME + _G["base"], _O_GAME + len(_GAME))
NUM_VARIANT_CODES = (PLAYERS_ONEHOT.stop - PLAYERS_ONEHOT.start) * (
    MODE_ONEHOT.stop - MODE_ONEHOT.start)


def variant_code(obs: Any) -> Any:
    """Each row's variant code (B, 15): the players times the mode one-hot (numpy or torch)."""
    return (obs[:, PLAYERS_ONEHOT, None] * obs[:, None, MODE_ONEHOT]).reshape(len(obs), -1)

_REL = {n: tuple(tuple((v + i) % n for i in range(n)) for v in range(n)) for n in (2, 3, 4)}
_TO_REL = {n: tuple(tuple((p - v) % n for p in range(n)) for v in range(n)) for n in (2, 3, 4)}


def board_ids(data: GameData, names: Sequence[str]) -> list[int]:
    """Each named board's place in the board one-hot (-1, all zeros: after the file's fifth)."""
    order = list(data.boards)
    return [i if i < MAX_BOARDS else -1 for i in map(order.index, names)]
BASE_CACHE_SIZE = 256  # game-long base vectors (per setup and viewer), board cell tables
PART_CACHE_SIZE = 4096  # seat and partner parts of observations (under 1 kB each)


class _Tables:
    """Lookup tables of one set of game data, in the shapes the encoder reads."""

    def __init__(self, data: GameData) -> None:
        self.data = data  # held so that id(data) stays unique while cached
        kinds = len(data.kinds)
        # Plot features per plot id (reserve slots and column positions).
        table = np.zeros((kinds, NUM_PLOT_FEATURES), dtype=np.float32)
        table[:, 0] = 1.0
        table[np.arange(kinds), 1 + data.terrain] = 1.0
        table[:, 7:14] = np.stack([data.nugget, data.beaver, data.corn, data.cows, data.skull,
                                   data.circle, data.number / NUMBER_SCALE], axis=1)
        # One row per plot id, and a last row of zeros for plot id -1 (no plot).
        self.plot_features = np.concatenate([table[data.plot_kind],
                                             np.zeros((1, NUM_PLOT_FEATURES), np.float32)])
        # Column k + 1: the ranch channels a plot of kind k sets (terrain .. circle_symbol)
        # and -1 on 'free' (the cell is built); column 0, an empty cell, is all zeros.
        planes = np.zeros((NUM_RANCH_CHANNELS, kinds + 1), dtype=np.float32)
        planes[data.terrain, np.arange(1, kinds + 1)] = 1.0
        for name, column in (("nugget", data.nugget), ("beaver", data.beaver),
                             ("corn", data.corn), ("skull_symbol", data.skull),
                             ("circle_symbol", data.circle)):
            planes[_CH[name], 1:] = column
        planes[_CH["free"], 1:] = -1.0
        self.kind_planes = planes
        self.cell_base = np.arange(NUM_CELLS, dtype=np.intp) * (kinds + 1) + 1  # + kind id
        self.token_channel = [_CH["partner_cowboy"] + int(k) for k in data.partner_specialists]
        self.saloon_index = [int(k) - 1 for k in data.partner_specialists]  # in SPECIALISTS
        self.num_plots = data.num_plots
        self.num_partners = data.num_partners


class ObservationEncoder:
    """Builds observations for any viewer of any game into a preallocated buffer."""

    def __init__(self) -> None:
        self.views: dict[str, View] = dict(VIEWS)
        self.size = OBSERVATION_SIZE
        self._offsets = {name: v.start for name, v in self.views.items()}
        self._static: dict[int, _Tables] = {}
        self._bases: dict[tuple[object, ...], np.ndarray] = {}
        self._cell_tables: dict[tuple[object, ...], tuple[object, np.ndarray]] = {}
        self._last_game: tuple[Game, _Tables, dict[int, np.ndarray]] | None = None
        self._seat_parts: dict[tuple[object, ...], np.ndarray] = {}
        self._partner_parts: dict[tuple[object, ...], tuple[np.ndarray, tuple[float, ...]]] = {}

    def view(self, obs: np.ndarray, name: str) -> np.ndarray:
        """The named view of an observation vector, reshaped."""
        v = self.views[name]
        return obs[..., v.start:v.stop].reshape(*obs.shape[:-1], *v.shape)

    def _tables(self, game: Game) -> _Tables:
        """Per-kind and per-plot lookup tables of a game's data (keeps the data alive)."""
        tables = self._static.get(id(game.data))
        if tables is None:
            tables = self._static[id(game.data)] = _Tables(game.data)
        return tables

    def _base(self, game: Game, viewer: int, tables: _Tables) -> np.ndarray:
        """The vector after the players' ranch planes as a whole game fixes it (sizes, boards)."""
        n = len(game.ranches)
        key = (id(tables.data), n, game.scenario, game.board_names, viewer)
        base = self._bases.get(key)
        if base is None:
            base = np.zeros(self.size, dtype=np.float32)
            o = self._offsets
            ids = board_ids(game.data, game.board_names)
            for i in range(n):
                p = (viewer + i) % n
                base[o["reserve_size"] + i] = game.ranches[p].capacity / 4.0
                if ids[p] >= 0:  # a board after the file's fifth has no place
                    base[o["boards"] + MAX_BOARDS * i + ids[p]] = 1.0
            g0 = o["game"]
            base[g0 + _G[f"players_{n}"]] = 1.0
            base[g0 + _G[f"scenario_{game.scenario}" if game.scenario else "base"]] = 1.0
            base = bounded_store(self._bases, key, base[_RANCH_SIZE * n:], BASE_CACHE_SIZE)
        return base

    def _ranch_entry(self, game: Game, player: int, tables: _Tables,
                     key: tuple[object, ...]) -> tuple[np.ndarray, float]:
        """Compute and keep in ``derived[key]`` one ranch's (flat planes, score / SCORE_SCALE)."""
        ranch = cast("Ranch", game.ranches[player])
        # One gather: column (cell, kind + 1) of the board's table is that cell's channels.
        planes = self._cell_table(ranch, tables).take(tables.cell_base + ranch.kind, axis=1)
        planes[_CH["cows"]] = ranch.cows
        if ranch.partner_cells:
            faces, tokens = ranch.face.tolist(), ranch.partner.tolist()
            for cell in ranch.partner_cells:
                channel = (_CH["partner_cowboy"] if faces[cell] == _COWBOY_FACE
                           else tables.token_channel[tokens[cell]])
                planes[channel, cell] = 1.0
        entry = ranch.derived[key] = (planes.ravel(),
                                      game.running_score(player).total / SCORE_SCALE)
        return entry

    def _cell_table(self, ranch: Ranch, tables: _Tables) -> np.ndarray:
        """(C, cells x (kinds + 1)) channels of every cell of a board holding every kind."""
        # Column cell * (kinds + 1) + kind + 1: the empty board's cell plus a plot of that kind.
        key = (id(tables), id(ranch.board), ranch.rows)
        cached = self._cell_tables.get(key)
        if cached is not None and cached[0] is ranch.board:  # the same board, not a reused id
            return cached[1]
        template = np.zeros((NUM_RANCH_CHANNELS, NUM_CELLS), dtype=np.float32)
        template[_CH["bridge"]] = ranch.bridge
        template[_CH["homestead"], HOMESTEAD] = 1.0
        template[_CH["free"]] = usable_cells(ranch.rows)
        table = template[:, :, None] + tables.kind_planes[:, None, :]
        table = table.reshape(NUM_RANCH_CHANNELS, -1)
        return bounded_store(self._cell_tables, key, (ranch.board, table), BASE_CACHE_SIZE)[1]

    def encode(self, game: Game, viewer: int, out: np.ndarray | None = None) -> np.ndarray:
        """Write the observation of ``viewer`` into ``out`` (allocated if None) and return it."""
        # Hot path (each numpy call costs ~1 us): ranch planes and scores come from each ranch's
        # ``derived`` dict, joined with the game-long rest in one concatenation.
        last = self._last_game  # (game, tables, base per viewer) of the game encoded last
        if last is None or last[0] is not game:
            last = self._last_game = (game, self._tables(game), {})
        tables = last[1]
        base = last[2].get(viewer)
        if base is None:
            base = last[2][viewer] = self._base(game, viewer, tables)
        n = len(game.ranches)
        rel = _REL[n][viewer]  # relative index -> player id
        to_rel = _TO_REL[n][viewer]  # player id -> relative index
        ranches = cast("Sequence[Ranch]", game.ranches)
        planes: list[np.ndarray] = []
        scores = [0.0] * MAX_PLAYERS
        plots: list[int] = []  # plot id (-1: none) of each row of the reserves+columns block
        key = ("observation", game.scenario)
        for i, p in enumerate(rel):
            ranch = ranches[p]
            entry = cast("tuple[np.ndarray, float] | None", ranch.derived.get(key))
            if entry is None:
                entry = self._ranch_entry(game, p, tables, key)
            planes.append(entry[0])
            scores[i] = entry[1]
            hand = ranch.hand
            plots += hand
            plots += _NONE[HAND_SLOTS - len(hand)]
        planes.append(base)
        out = np.concatenate(planes, out=out)
        plots += _NONE[HAND_SLOTS * (MAX_PLAYERS - n)]
        plots += game.active or _NONE[COLUMN_SIZE]
        plots += game.pending or _NONE[COLUMN_SIZE]
        tables.plot_features.take(plots, axis=0, out=out[_O_RESERVES:_O_COLUMN_OWNERS]
                                  .reshape(-1, NUM_PLOT_FEATURES))

        out[_O_PHASE + game.phase] = 1.0
        if game.phase == _GAME_OVER:
            for p, score in enumerate(game.scores()):
                scores[to_rel[p]] = score.total / SCORE_SCALE
        else:
            a = to_rel[game.player]
            out[_O_ACTING + a] = 1.0
            pending = _RANCH_SIZE * a + _PENDING_ROW
            for cell in (*game.circles, game.effect_cell,
                         game.skulls[0] if game.phase == _DROUGHT else -1):
                if cell >= 0:
                    out[pending + cell] = 1.0
        # Who stands where and the turn order take few distinct values (cached for good);
        # saloon and pile change a few times a round (cached while they last). Both are kept
        # as index arrays, which numpy takes without parsing a list.
        seats = (viewer, n, game.active is None, game.pending is None,
                 tuple(game.active_owner), tuple(game.pending_owner), tuple(game.order))
        seat_ones = self._seat_parts.get(seats)
        if seat_ones is None:
            seat_ones = self._seat_part(game, viewer, seats)
        out[seat_ones] = 1.0
        partners = (id(tables), tuple(game.saloon), tuple(game.pile))
        partner_part = self._partner_parts.get(partners)
        if partner_part is None:
            partner_part = self._partner_part(game, tables, partners)
        out[partner_part[0]] = 1.0

        circles = game.circles
        out[_NUMBERS] = [
            *partner_part[1],
            1.0 if game.forced else 0.0, 1.0 if game.emptying else 0.0,
            1.0 if game.last_round else 0.0, game.builds_done / 2.0,
            game.builds_allowed / 2.0, game.cowboy_moves_left / 3.0,
            1.0 if circles[0] >= 0 else 0.0, 1.0 if circles[MAX_CIRCLES - 1] >= 0 else 0.0,
            sum(game.bonus_tiles) / 2.0,
            game.round / NUM_ROUNDS, len(game.box) / tables.num_plots,
            len(game.pile) / tables.num_partners, game.supply / NUM_COWS,
            *scores]
        return out

    def _seat_part(self, game: Game, viewer: int, key: tuple[object, ...]) -> np.ndarray:
        """Indices of the ones of the column owners and turn order seen by ``viewer``."""
        to_rel = _TO_REL[len(game.ranches)][viewer]
        ones = []
        for c, (col, owner) in enumerate(((game.active, game.active_owner),
                                          (game.pending, game.pending_owner))):
            if col is not None:
                at = _O_COLUMN_OWNERS + c * COLUMN_SIZE * MAX_PLAYERS
                ones += [at + pos * MAX_PLAYERS + to_rel[who]
                         for pos, who in enumerate(owner) if who >= 0]
        active_owner = game.active_owner
        ones += [_O_TURN_ORDER + to_rel[active_owner[pos]] * COLUMN_SIZE + pos
                 for pos in game.order if active_owner[pos] >= 0]
        return bounded_store(self._seat_parts, key, np.array(ones, dtype=np.intp), PART_CACHE_SIZE)

    def _partner_part(self, game: Game, tables: _Tables,
                      key: tuple[object, ...]) -> tuple[np.ndarray, tuple[float, ...]]:
        """Indices of the saloon's ones, and the pile counts / 5, for ``key``."""
        saloon_index = tables.saloon_index
        ones = [_O_SALOON + s * len(SPECIALISTS) + saloon_index[token]
                for s, token in enumerate(game.saloon) if token >= 0]
        left = [0] * len(SPECIALISTS)
        for token in game.pile:
            left[saloon_index[token]] += 1
        part = (np.array(ones, dtype=np.intp), tuple(k / 5.0 for k in left))
        return bounded_store(self._partner_parts, key, part, PART_CACHE_SIZE)

    def markdown(self) -> str:
        """docs/observation.md: every view with its slice, shape and meaning."""
        lines = [
            "# Observation",
            "",
            "Generated by `python -m moonriver_env observation-doc` from "
            "`moonriver_env.moonriver.observation`; do not edit by hand.",
            "",
            f"`observation` is a float32 vector of length {self.size} for every variant, "
            "made of the named views below (`env.observation_views`, or "
            "`ObservationEncoder().view(obs, name)` to slice and reshape). Players are "
            "relative to the viewer: index 0 is the viewer, 1 the next player id, and so on; "
            "absent players are zeros. Ranch planes are indexed [player, channel, row, col] "
            "with row 0 next to the river. The order of the plot box and of the partner pile "
            "never appears. Every value lies in the space's bounds [0, 64] for any data files "
            "the engine accepts (the data-file limits of `moonriver_env.moonriver.rules.data` keep "
            "counts such as partner tokens per specialist / 5 and rounds / 24 below 64).",
            "",
            "| view | slice | shape | contents |",
            "|---|---|---|---|",
        ]
        for view in self.views.values():
            shape = " x ".join(map(str, view.shape))
            lines.append(f"| `{view.name}` | {view.start}:{view.stop} | {shape} | {view.doc} |")
        lines += ["", "Ranch channels:", ""]
        lines += [f"{i}. `{name}`" for i, name in enumerate(RANCH_CHANNELS)]
        lines += ["", "`pending` marks, for the player to act, the cells of unresolved circles, "
                  "the skull being resolved and the partner whose effect is resolving.",
                  "", "`action_mask` is int8 over the action enumeration (docs/actions.md): "
                  "1 for each legal action of the agent to act, all zeros for every other "
                  "agent and once the game is over (the single-agent Gymnasium env shows all "
                  "ones once its episode is over: the step after it is a reset, which ignores "
                  "the action)."]
        return "\n".join(lines + list(_COMPACT_DOC)) + "\n"


# The compact observation (moonriver_env.moonriver.batch, written by the core's batch).
_COMPACT_DOC = (
    "", "## Compact observation", "",
    '`BatchedGames(..., observation="compact")` and `MoonRiverVectorEnv(..., '
    'observation="compact")` give each observation as uint8 of length 4940 instead '
    "(observation_space `Box(0, 255, (4940,), uint8)`), written by the core directly: a "
    "quarter of the float32 row's bytes. Entries 0:4934 hold the values above at the same "
    "places as raw integers: one-hots and counts as they are, each scaled value its numerator; "
    "`free`'s -1 (a built cell off the ranch's usable rows) is 255. Then 4934:4938: each "
    "relative player's score's high byte (its low byte is at its `scores` place); 4938: the "
    "game's plots, 4939: its partner tokens (the box and pile fractions' denominators).", "",
    "| float32 value | = compact / |", "|---|---|",
    "| `reserves`, `columns`: number | 25 |",
    "| `reserve_size` | 4 |",
    "| `pile` | 5 |",
    "| `context`: builds_done, builds_allowed, bonus_tiles_left | 2 |",
    "| `context`: cowboy_moves_left | 3 |",
    "| `scores` (low byte + 256 x high byte) | 100 |",
    "| `game`: round | 24 |",
    "| `game`: box | entry 4938 |",
    "| `game`: pile | entry 4939 |",
    "| `game`: cow_supply | 32 |",
    "| everything else | 1 |", "",
    "Each float32 value is the float64 quotient rounded once to float32, as the core computes "
    "it, so `moonriver_env.moonriver.batch.expand_observation(compact)` gives the "
    "float32 observation back bit for bit (tests/core/test_compact_observation.py checks "
    "every variant). Data files with a plot number, a box or a partner pile above 255 are "
    "refused for the compact observation (a ValueError names the value); the float32 "
    "observation takes them.",
)
