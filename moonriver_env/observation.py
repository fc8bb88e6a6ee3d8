"""ObservationEncoder: the table as one flat float32 vector made of named views.

Players appear relative to the viewer: index 0 is the viewer, 1 the next player id, and so on
(the same offsets as the actions' ``opponent``); seats beyond the number of players are zero.
The vector has the same length D for every variant. ``views`` maps each name to
``(start, stop, shape)`` so that, e.g., ``obs[start:stop].reshape(shape)`` gives the ranch
planes as a (4, C, 10, 5) tensor for a CNN. The order of the plot box and of the partner pile
never appears; their remaining counts do. docs/observation.md is generated from this module.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from moonriver_env.engine import NUM_ACTIONS, Face, Game, PartnerKind, Phase, Terrain
from moonriver_env.engine.actions import HAND_SLOTS, MAX_CIRCLES, SALOON_SLOTS
from moonriver_env.engine.config import SCENARIOS
from moonriver_env.engine.game import COLUMN_SIZE, NUM_COWS
from moonriver_env.engine.grid import COLS, HOMESTEAD, MAX_ROWS, NUM_CELLS, usable_cells

MAX_PLAYERS = 4
NUM_ROUNDS = 24  # rounds of a game with the standard 96-plot box
SCORE_SCALE = 100.0  # running scores are divided by this
# Ranch planes cached per encoder (~4.4 kB each): consecutive observations mostly share
# ranches, so a small cache gets the hits without growing with the length of a run.
PLANE_CACHE_SIZE = 2048
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

# Features of one plot (in a reserve slot or a column position).
PLOT_FEATURES: tuple[str, ...] = (
    "present", *(f"terrain_{t.name.lower()}" for t in Terrain),
    "nugget", "beaver", "corn", "cow_symbols", "skull", "circle", "number",
)
NUM_PLOT_FEATURES = len(PLOT_FEATURES)
SPECIALISTS = tuple(k for k in PartnerKind if k != PartnerKind.COWBOY)

_CONTEXT = ("forced", "emptying", "last_round", "builds_done", "builds_allowed",
            "cowboy_moves_left", "circle_first", "circle_second", "bonus_tiles_left")
_GAME = ("round", "box", "pile", "cow_supply", "players_2", "players_3", "players_4",
         "base", *(f"scenario_{s}" for s in SCENARIOS))


@dataclass(frozen=True)
class View:
    """One named slice of the observation vector."""

    name: str
    start: int
    stop: int
    shape: tuple[int, ...]
    doc: str


def _plot_table(game: Game) -> np.ndarray:
    """Features of every plot kind (rows) as PLOT_FEATURES (columns)."""
    data = game.data
    n = len(data.kinds)
    table = np.zeros((n, NUM_PLOT_FEATURES), dtype=np.float32)
    table[:, 0] = 1.0
    table[np.arange(n), 1 + data.terrain] = 1.0
    table[:, 7] = data.nugget
    table[:, 8] = data.beaver
    table[:, 9] = data.corn
    table[:, 10] = data.cows
    table[:, 11] = data.skull
    table[:, 12] = data.circle
    table[:, 13] = data.number / NUMBER_SCALE
    return table


class ObservationEncoder:
    """Builds observations for any viewer of any game into a preallocated buffer."""

    def __init__(self) -> None:
        specs = [
            ("ranches", (MAX_PLAYERS, NUM_RANCH_CHANNELS, MAX_ROWS, COLS),
             "per player (viewer first): " + ", ".join(RANCH_CHANNELS)),
            ("reserves", (MAX_PLAYERS, HAND_SLOTS, NUM_PLOT_FEATURES),
             "per player, per slot (reserve then plot in hand): " + ", ".join(PLOT_FEATURES)),
            ("columns", (2, COLUMN_SIZE, NUM_PLOT_FEATURES),
             "active then pending column, by position (0 nearest the box): plot features"),
            ("column_owners", (2, COLUMN_SIZE, MAX_PLAYERS),
             "active then pending column, by position: relative player whose ranchero "
             "stands there"),
            ("reserve_size", (MAX_PLAYERS,), "reserve capacity of each player's board / 4"),
            ("boards", (MAX_PLAYERS, 5), "board one-hot: camp, mary, wesley, calamity, big_jo"),
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
        ]
        self.views: dict[str, View] = {}
        start = 0
        for name, shape, doc in specs:
            stop = start + int(np.prod(shape))
            self.views[name] = View(name, start, stop, shape, doc)
            start = stop
        self.size = start
        self._offsets = {name: v.start for name, v in self.views.items()}
        self._plane_cache: dict[tuple, np.ndarray] = {}
        self._static: dict[int, tuple] = {}
        self._templates: dict[tuple, np.ndarray] = {}

    def view(self, obs: np.ndarray, name: str) -> np.ndarray:
        """The named view of an observation vector, reshaped."""
        v = self.views[name]
        return obs[..., v.start:v.stop].reshape(*obs.shape[:-1], *v.shape)

    def _tables(self, game: Game) -> tuple:
        key = id(game.data)
        if key not in self._static:
            data = game.data
            boards = {"camp": 0, "mary": 1, "wesley": 2, "calamity": 3, "big_jo": 4}
            # Per kind: the ranch channels a plot of that kind sets (terrain .. circle_symbol).
            kind_planes = np.zeros((len(data.kinds), NUM_RANCH_CHANNELS), dtype=np.float32)
            kind_planes[np.arange(len(data.kinds)), data.terrain] = 1.0
            for name, column in (("nugget", data.nugget), ("beaver", data.beaver),
                                 ("corn", data.corn), ("skull_symbol", data.skull),
                                 ("circle_symbol", data.circle)):
                kind_planes[:, _CH[name]] = column
            kind_planes[:, _CH["free"]] = -1.0
            token_channel = np.array([_CH["partner_cowboy"] + int(k)
                                      for k in data.partner_specialists], dtype=np.intp)
            plot_features = _plot_table(game)[data.plot_kind]  # one row per plot id
            self._static[key] = (data, plot_features, boards, kind_planes, token_channel)
        return self._static[key]

    def _ranch_planes(self, game: Game, ranch) -> np.ndarray:
        """(C, 50) planes of one ranch, cached on its contents."""
        key = (ranch.cells.tobytes(), ranch.board.name, ranch.rows)
        planes = self._plane_cache.get(key)
        if planes is not None:
            return planes
        _, _, _, kind_planes, token_channel = self._tables(game)
        planes = self._template(ranch).copy()
        placed = np.flatnonzero(ranch.kind >= 0)
        # kind_planes rows hold the plot's channels and -1 on 'free' (the cell is built).
        planes[:, placed] += kind_planes[ranch.kind[placed]].T
        planes[_CH["cows"]] = ranch.cows
        with_partner = np.flatnonzero(ranch.partner >= 0)
        if with_partner.size:
            channel = np.where(ranch.face[with_partner] == _COWBOY_FACE, _CH["partner_cowboy"],
                               token_channel[ranch.partner[with_partner]])
            planes[channel, with_partner] = 1.0
        if len(self._plane_cache) >= PLANE_CACHE_SIZE:
            self._plane_cache.clear()
        self._plane_cache[key] = planes
        return planes

    def _template(self, ranch) -> np.ndarray:
        """Planes of the empty ranch of a board: bridges, homestead, free usable cells."""
        key = (ranch.board.name, ranch.rows, ranch.bridge.tobytes())
        template = self._templates.get(key)
        if template is None:
            template = np.zeros((NUM_RANCH_CHANNELS, NUM_CELLS), dtype=np.float32)
            template[_CH["bridge"]] = ranch.bridge
            template[_CH["homestead"], HOMESTEAD] = 1.0
            template[_CH["free"]] = usable_cells(ranch.rows)
            self._templates[key] = template
        return template

    def encode(self, game: Game, viewer: int, out: np.ndarray | None = None) -> np.ndarray:
        """Write the observation of ``viewer`` into ``out`` (allocated if None) and return it."""
        if out is None:
            out = np.zeros(self.size, dtype=np.float32)
        else:
            out.fill(0.0)
        data, plot_features, board_ids, _, _ = self._tables(game)
        o = self._offsets
        n = game.num_players
        rel = [(viewer + i) % n for i in range(n)]  # relative index -> player id
        to_rel = {p: i for i, p in enumerate(rel)}
        idx: list[int] = []  # scalar writes, applied at once at the end
        val: list[float] = []
        plot_rows: list[int] = []  # rows of the reserves+columns block ...
        plots: list[int] = []  # ... and the plot ids to describe there

        ranches = out[o["ranches"]:o["reserves"]].reshape(MAX_PLAYERS, -1)
        scores = game.running_scores()
        for i, p in enumerate(rel):
            ranch = game.ranches[p]
            ranches[i] = self._ranch_planes(game, ranch).ravel()
            plot_rows += range(i * HAND_SLOTS, i * HAND_SLOTS + len(ranch.hand))
            plots += ranch.hand
            idx += (o["reserve_size"] + i, o["boards"] + 5 * i + board_ids.get(
                game.board_names[p], 0), o["scores"] + i)
            val += (ranch.capacity / 4.0, 1.0, scores[p].total / SCORE_SCALE)

        actor = game.current_player
        if actor >= 0:
            a = to_rel[actor]
            pending = (o["ranches"] + (a * NUM_RANCH_CHANNELS + _CH["pending"]) * NUM_CELLS)
            for cell in (*game.circles, game.effect_cell,
                         game.skulls[0] if game.phase == Phase.DROUGHT else -1):
                if cell >= 0:
                    idx.append(pending + cell)
                    val.append(1.0)
            idx.append(o["acting"] + a)
            val.append(1.0)

        first_column_row = MAX_PLAYERS * HAND_SLOTS
        for c, (col, owner) in enumerate(((game.active, game.active_owner),
                                          (game.pending, game.pending_owner))):
            if col is None:
                continue
            for pos in range(COLUMN_SIZE):
                if col[pos] >= 0:
                    plot_rows.append(first_column_row + c * COLUMN_SIZE + pos)
                    plots.append(col[pos])
                if owner[pos] >= 0:
                    idx.append(o["column_owners"] + (c * COLUMN_SIZE + pos) * MAX_PLAYERS
                               + to_rel[owner[pos]])
                    val.append(1.0)
        if plots:
            block = out[o["reserves"]:o["column_owners"]].reshape(-1, NUM_PLOT_FEATURES)
            block[plot_rows] = plot_features[plots]

        specialists = data.partner_specialists
        for s, token in enumerate(game.saloon):
            if token >= 0:
                idx.append(o["saloon"] + s * len(SPECIALISTS) + specialists[token] - 1)
                val.append(1.0)
        left = [0] * len(SPECIALISTS)
        for token in game.pile:
            left[specialists[token] - 1] += 1
        idx += range(o["pile"], o["pile"] + len(SPECIALISTS))
        val += (k / 5.0 for k in left)

        for pos in game.order:
            owner = game.active_owner[pos]
            if owner >= 0:
                idx.append(o["turn_order"] + to_rel[owner] * COLUMN_SIZE + pos)
                val.append(1.0)
        g0 = o["game"]
        idx += (o["phase"] + int(game.phase), *range(o["context"], o["context"] + len(_CONTEXT)),
                g0, g0 + 1, g0 + 2, g0 + 3, g0 + 2 + n, g0 + 7 + (game.scenario or 0))
        val += (1.0, game.forced, game.emptying, game.last_round, game.builds_done / 2.0,
                game.builds_allowed / 2.0, game.cowboy_moves_left / 3.0,
                game.circles[0] >= 0, game.circles[MAX_CIRCLES - 1] >= 0,
                sum(game.bonus_tiles) / 2.0,
                game.round / NUM_ROUNDS, len(game.box) / data.num_plots,
                len(game.pile) / data.num_partners, game.supply / NUM_COWS, 1.0, 1.0)
        out[idx] = val
        return out

    def markdown(self) -> str:
        """docs/observation.md: every view with its slice, shape and meaning."""
        lines = [
            "# Observation",
            "",
            "Generated by `python -m moonriver_env observation-doc` from "
            "`moonriver_env.observation`; do not edit by hand.",
            "",
            f"`observation` is a float32 vector of length {self.size} for every variant, "
            "made of the named views below (`env.observation_views`, or "
            "`ObservationEncoder().view(obs, name)` to slice and reshape). Players are "
            "relative to the viewer: index 0 is the viewer, 1 the next player id, and so on; "
            "absent players are zeros. Ranch planes are indexed [player, channel, row, col] "
            "with row 0 next to the river. The order of the plot box and of the partner pile "
            "never appears.",
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
                  "agent and once the game is over."]
        return "\n".join(lines) + "\n"


class LazyObservation(Mapping):
    """``{"observation", "action_mask"}`` of a player, the vector encoded only when read.

    Handed to agents that may not need the vector (random, greedy, search), so they do not
    pay for encoding it.
    """

    def __init__(self, encoder: ObservationEncoder, game: Game, player: int) -> None:
        self._encoder, self._game, self._player = encoder, game, player
        self._mask = game.legal_mask() if game.current_player == player else None
        self._vector: np.ndarray | None = None

    def __getitem__(self, key: str) -> np.ndarray:
        if key == "action_mask":
            if self._mask is None:
                self._mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
            return self._mask
        if key == "observation":
            if self._vector is None:
                self._vector = self._encoder.encode(self._game, self._player)
            return self._vector
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(("observation", "action_mask"))

    def __len__(self) -> int:
        return 2
