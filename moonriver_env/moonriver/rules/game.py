"""The whole game of Moon River: phases, legal actions, apply, chance, clone.

See docs/design.md (decision points, ``auto_forced``) and docs/rules.md.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, cast

import numpy as np

import moonriver_env.moonriver.rules.actions as A
from moonriver_env.common.errors import IllegalActionError as IllegalActionError  # re-exported
from moonriver_env.common.game_base import RecordedGame
from moonriver_env.common.validate import game_seed
from moonriver_env.common.view import bounded_store, choice_mask, no_moves

from .actions import Action, ActionCodec
from .components import COLUMN_SIZE, NUM_COWS, Face, PartnerKind, Terrain
from .config import GameConfig
from .data import GameData
from .grid import COLS, DIRECTIONS, NUM_CELLS, NUM_PLACEMENTS, PLACE_SECOND, step
from .phase import Context, Phase
from .ranch import Ranch
from .scenarios import SCENARIOS
from .scoring import ScoreBreakdown, score_memo, score_tracked

if TYPE_CHECKING:
    from moonriver_env.moonriver.contract import MoonRiverGame

SALOON_SLOTS = A.SALOON_SLOTS
_ENCODERS = threading.local()  # Game.observe's ObservationEncoder, one per thread, made on use
BONUS_ROW = 9  # 2-player game: reaching the 10th row earns a bonus tile


# Hot-path aliases: module globals are cheaper to reach than Enum class attributes.
_SETUP, _BUILD, _SELECT, _GAME_OVER = Phase.SETUP, Phase.BUILD, Phase.SELECT, Phase.GAME_OVER
_CORNFIELD = int(Terrain.CORNFIELD)
_COWBOY = int(PartnerKind.COWBOY)
_ROW_BYTES = (NUM_PLACEMENTS + 7) // 8
_SPARSE_BUILDS = 40  # up to this many legal builds, bits are set one by one
# _BYTE_BITS[b]: the 8 bits of byte b, least significant first (bitset -> mask rows).
_BYTE_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1,
                           bitorder="little").astype(np.int8)
# _PAIR_PREFIX[h]: the build slot pairs within h held plots (a prefix of A.PAIRS).
_PAIR_PREFIX = tuple(tuple(p for p in A.PAIRS if max(p) < h) for h in range(A.HAND_SLOTS + 1))
assert all(A.PAIRS[:len(p)] == p for p in _PAIR_PREFIX)
# _STEPS[rows][cell]: (direction, neighbour) pairs inside a ranch of that many rows.
_STEPS = {rows: tuple(tuple((d, n) for d in range(4) if (n := step(c, d, rows)) >= 0)
                      for c in range(NUM_CELLS)) for rows in (5, 10)}


_SCORE_MEMO_SIZE = 20_000  # entries (~1 kB each) per set of data tables


NO_MOVES = no_moves(A.NUM_ACTIONS)  # the mask of a player not to act


class SetupDraws(TypedDict):
    """The setup's random draws: scenario, board names, box and pile order, seat order."""

    scenario: int | None
    boards: tuple[str, ...]
    box: list[int]
    pile: list[int]
    setup_order: list[int]


def board_pool(config: GameConfig, data: GameData) -> tuple[str, ...]:
    """The boards ``config``'s set-up deals: one per seat, or the legend pool to draw from."""
    if config.mode != "legends":
        return (next(k for k, b in data.boards.items() if b.side == "camp"),) * config.num_players
    if config.boards is None:
        return tuple(sorted(k for k, b in data.boards.items() if b.side == "legend"))
    return tuple(config.boards)


def setup_draws(config: GameConfig, data: GameData, rng: np.random.Generator) -> SetupDraws:
    """The setup's random draws from ``rng``, in order: scenario, boards, box, pile, seats."""
    n, legends = config.num_players, config.mode == "legends"
    scenario, names = config.scenario, board_pool(config, data)
    if legends and scenario is None:
        scenario = int(rng.integers(min(SCENARIOS), max(SCENARIOS) + 1))
    if legends and config.boards is None:
        names = tuple(names[i] for i in rng.permutation(len(names))[:n])
    box = rng.permutation(data.num_plots).tolist()
    pile = rng.permutation(data.num_partners).tolist()
    first = rng.permutation(n).tolist()
    order = [first[0], first[1], first[1], first[0]] if n == 2 else first
    return {"scenario": scenario, "boards": names, "box": box, "pile": pile,
            "setup_order": order}


def action_id(action: Action | int) -> int:
    """The id of ``action`` (an id or a structured action); anything else: IllegalActionError."""
    if isinstance(action, tuple):
        try:
            return ActionCodec.encode(action)
        except ValueError as err:
            raise IllegalActionError(repr(action), f"{err} (see "
                                     "moonriver_env.moonriver.rules.actions)") from None
    if isinstance(action, (int, np.integer)) and not isinstance(action, bool):
        if 0 <= action < A.NUM_ACTIONS:
            return int(action)
        raise IllegalActionError(action, f"action ids run from 0 to {A.NUM_ACTIONS - 1}")
    raise IllegalActionError(repr(action), "an action is an int id or a structured action "
                             "such as Build(...) or Pass()")


def why_illegal(game: MoonRiverGame, aid: int) -> str:
    """Why action id ``aid`` is not legal in ``game`` (either engine's) now, in words."""
    action = A.ACTIONS[aid]
    seg = ActionCodec.segment_of(aid)
    phase = game.phase.name.lower()
    if game.phase == Phase.GAME_OVER:
        return "the game is over"
    wanted = "select" if game.phase == Phase.SETUP else phase  # each phase names its segment
    if seg == "pass":
        if game.phase == Phase.BUILD:
            return ("the reserve is over-full: at least one domino must be built"
                    if not game.emptying else "at game end the reserve must be emptied "
                    "while a domino fits")
        return f"passing is not possible in phase {phase}"
    if seg != wanted:
        return f"phase is {phase}: a {wanted} action is expected, not a {seg} action"
    hand = game.ranches[game.player].hand
    if (isinstance(action, (A.Build, A.Discard))
            and max(action.slot_a, action.slot_b) >= len(hand)):
        return f"only slots 0..{len(hand) - 1} hold plots"
    if isinstance(action, A.Build):
        ranch = game.ranches[game.player]
        (r1, c1), (r2, c2) = action.cells
        for r, c in ((r1, c1), (r2, c2)):
            if not (0 <= r < ranch.rows and 0 <= c < COLS):
                return f"cell ({r},{c}) is off the {ranch.rows}x{COLS} ranch"
            if not ranch.empty[r * COLS + c]:
                what = "the homestead" if (r, c) == (0, 2) else "already built"
                return f"cell ({r},{c}) is {what}"
        return ("the domino does not connect: no bridge cell and no plot of matching "
                "terrain next to it")
    if isinstance(action, A.Select):
        return f"position {action.position} of the column is taken or empty"
    return f"not among the legal {wanted} actions"


def win_returns(game: MoonRiverGame) -> list[float]:
    """Final rewards (moonriver_v0's "win"): +1 each winner, -1 the others; 0 before the end."""
    if not game.is_over:
        return [0.0] * game.num_players
    winners = set(game.winners())
    return [1.0 if p in winners else -1.0 for p in range(game.num_players)]


class HiddenStacks(Protocol):
    """The hidden stacks of a game: the plot box and the partner pile (drawn from the end)."""

    box: list[int]
    pile: list[int]


def put_next_draws(hidden: HiddenStacks, source: str, items: Sequence[int]) -> None:
    """Make ``items`` the next draws from ``hidden``'s "box" or "pile", first drawn first."""
    stack = {"box": hidden.box, "pile": hidden.pile}.get(source)
    if stack is None:
        raise ValueError(f"draws come from 'box' (plots) or 'pile' (partners), "
                         f"not {source!r:.40}")
    held = set(stack)
    wanted = [i for i in items if type(i) is int or isinstance(i, np.integer)]
    if len(wanted) != len(items) or len(set(wanted)) != len(wanted) or \
            not held.issuperset(wanted):
        raise ValueError(f"the next draws from the {source} must be distinct ids it holds "
                         f"(now {sorted(held)}), got {list(items)!r:.120}")
    for item in reversed(wanted):  # draws pop from the end
        stack.remove(item)
        stack.append(int(item))


class Game(RecordedGame):
    """A game of Moon River. See the module docstring and docs/ for the contract."""

    RECORD_MODULE = "moonriver_env.moonriver.rules.record"  # docs/game-record.md
    TEXT_MODULE = "moonriver_env.moonriver.rules.text"

    def __init__(self, config: GameConfig | None = None, seed: int | None = None,
                 first_draws: Mapping[str, Sequence[int]] | None = None) -> None:
        self.config = config if config is not None else GameConfig()
        self.seed = game_seed(seed)
        self.rng = np.random.default_rng(self.seed)
        self._read_tables()
        self._history: list[dict[str, Any]] = []
        self.chosen_draws = False  # set_next_draws was used: the record replays its draws
        self._setup(first_draws)

    def _read_tables(self) -> None:
        """The config's data tables, and plain Python copies of them for the hot path."""
        data = self.data = self.config.data
        self._plot_terrain: list[int] = data.terrain[data.plot_kind].tolist()
        self._plot_number: list[int] = data.number[data.plot_kind].tolist()
        # (terrain, cows, skull, circle) per kind id
        self._kind_symbols: list[tuple[int, int, bool, bool]] = list(zip(
            data.terrain.tolist(), data.cows.tolist(), data.skull.tolist(), data.circle.tolist(),
            strict=True))
        # Specialist kind of each partner token, plus a last entry for 'no partner' (index -1).
        self._token_kind = [*map(int, data.partner_specialists), _COWBOY]

    # ------------------------------------------------------------------ setup
    def _setup(self, first_draws: Mapping[str, Sequence[int]] | None = None) -> None:
        cfg, data = self.config, self.data
        n = cfg.num_players
        draws = setup_draws(cfg, data, self.rng)
        self.scenario = draws["scenario"]
        self.board_names = draws["boards"]
        self.ranches = [Ranch(cfg.rows, data.boards[name]) for name in self.board_names]
        self._shared = 0  # bit p: ranch p is shared with a clone (see _ranch)
        self.supply = NUM_COWS
        self.box: list[int] = draws["box"]
        self.pile: list[int] = draws["pile"]
        for source, items in (first_draws or {}).items():  # explicit chance: see set_next_draws
            self.set_next_draws(source, items)
        self.saloon = [-1] * SALOON_SLOTS
        self.removed: list[int] = []  # 3-player column leftovers
        self.discarded: list[int] = []  # forced and end-game discards
        self.bonus_tiles = [True, True] if n == 2 else [False, False]
        self.setup_order = draws["setup_order"]
        self._chance("setup", scenario=self.scenario, boards=list(self.board_names),
                     setup_order=list(self.setup_order))
        self._refill_saloon()
        self.active = self._draw_column()
        self.active_owner = [-1] * COLUMN_SIZE
        self.pending: list[int] | None = None
        self.pending_owner = [-1] * COLUMN_SIZE
        self.round = 0  # 0 during setup, then 1, 2, ...
        self.last_round = False
        self.recruited_this_round = False
        self.order: list[int] = []  # column positions in turn order this round
        self.turn_index = 0
        self.emptying = False
        self.empty_order: list[int] = []
        self._reset_turn_context()
        self.player = self.setup_order[0]
        self._setup_index = 0
        self._mask: np.ndarray | None = None
        self._build_legal: list[int] | None = None
        self._enter(Phase.SETUP, self._column_choices(self.active, self.active_owner))
        self._settle()

    def _reset_turn_context(self) -> None:
        self.forced = False
        self.builds_done = 0
        self.builds_allowed = 0
        self.skulls: list[int] = []
        self.circles = [-1, -1]
        self.effect_cell = -1
        self.cowboy_moves_left = 0
        self._choices: list[int] = []  # legal action ids of a non-build phase

    def _draw_column(self) -> list[int] | None:
        if len(self.box) < COLUMN_SIZE:
            return None
        drawn = [self.box.pop() for _ in range(COLUMN_SIZE)]
        drawn.sort(key=self._plot_number.__getitem__)  # stable: equal numbers keep the draw order
        self._chance("column", plots=list(drawn))
        return drawn

    def _refill_saloon(self) -> None:
        filled = []
        for s in range(SALOON_SLOTS):
            if self.saloon[s] < 0 and self.pile:
                self.saloon[s] = self.pile.pop()
                filled.append([s, self.saloon[s]])
        if filled:
            self._chance("saloon", filled=filled)

    # ------------------------------------------------------------- public API
    @property
    def num_players(self) -> int:
        """Number of players."""
        return self.config.num_players

    @property
    def current_player(self) -> int:
        """The player to decide now (-1 once the game is over)."""
        return -1 if self.phase == _GAME_OVER else self.player

    @property
    def is_over(self) -> bool:
        """True once the game has ended and been scored."""
        return self.phase == _GAME_OVER

    def context(self) -> Context:
        """The pending context of the current decision."""
        return Context(self.phase, self.current_player, self.round, self.last_round,
                       self.emptying, self.forced, self.builds_done, self.builds_allowed,
                       (self.circles[0], self.circles[1]),
                       self.skulls[0] if self.phase == Phase.DROUGHT else -1,
                       self.effect_cell, self.cowboy_moves_left)

    def legal_mask(self) -> np.ndarray:
        """Read-only int8 mask over the action enumeration (zeros when over; may be shared)."""
        if self._mask is None:
            self._mask = self._compute_mask()
        return self._mask

    def legal_action_ids(self) -> np.ndarray:
        """Ids of the legal actions, ascending."""
        return np.flatnonzero(self.legal_mask())

    def legal_actions(self) -> list[Action]:
        """Structured legal actions for the current player."""
        return [A.ACTIONS[i] for i in self.legal_action_ids().tolist()]

    def apply(self, action: Action | int) -> None:
        """Play one decision; raises IllegalActionError (state unchanged) if it is not legal."""
        self._play(action_id(action), None)
        self._settle()

    def _play(self, aid: int, decision: dict[str, Any] | None) -> None:
        """Record the decision (before the chance events it causes), then carry it out."""
        if not self.legal_mask()[aid]:
            raise IllegalActionError(A.ACTIONS[aid].text(), why_illegal(self, aid),
                                     [a.text() for a in self.legal_actions()])
        if decision is None:
            decision = {"type": "decision", "player": self.player, "action": aid}
        self._history.append(decision)
        self._mask = None
        self._build_legal = None
        self._dispatch(aid)

    def _settle(self) -> None:
        """With auto_forced, play every decision that has a single legal action."""
        while self.config.auto_forced and self.phase != _GAME_OVER:
            aid = self._only_action()
            if aid < 0:
                return
            self._play(aid, {"type": "decision", "player": self.player, "action": aid,
                             "auto": True})

    def _only_action(self) -> int:
        """The id of the single legal action, or -1 when there are several."""
        if self.phase != _BUILD:
            return self._choices[0] if len(self._choices) == 1 else -1
        rows = self._domino_rows()
        builds = sum(r.bit_count() for r in rows)
        can_pass = not self.emptying and not (self.forced and self.builds_done == 0)
        if builds + can_pass != 1:
            return -1
        if can_pass:
            return A.PASS_ID
        q = next(i for i, r in enumerate(rows) if r)
        return A.BUILD0 + q * NUM_PLACEMENTS + rows[q].bit_length() - 1

    # ------------------------------------------------------------ legality
    def _domino_rows(self) -> list[int]:
        """Legal placements (bit k) per build slot pair, for the pairs within the hand (cached)."""
        if self._build_legal is None:
            ranch = self.ranches[self.player]
            terr = self._plot_terrain
            held = [terr[p] for p in ranch.hand]
            free, bridged = ranch.free, ranch.bridged
            first = {t: free & (bridged | ranch.first_adj[t]) for t in held}
            second = {t: free & ranch.second_adj[t] for t in held}
            self._build_legal = [first[held[a]] | second[held[b]]
                                 for a, b in _PAIR_PREFIX[min(len(held), A.HAND_SLOTS)]]
        return self._build_legal

    def _can_build(self, hand: list[int]) -> bool:
        """Whether some pair of held plots fits somewhere (two or more plots held)."""
        # Every held plot is the first of some pair and the second of another: the union of
        # all pair rows is one OR over the held terrains.
        ranch = self.ranches[self.player]
        terr = self._plot_terrain
        reach = ranch.bridged
        for t in {terr[p] for p in hand}:
            reach |= ranch.first_adj[t] | ranch.second_adj[t]
        return (ranch.free & reach) != 0

    def _compute_mask(self) -> np.ndarray:
        ph = self.phase
        if ph != _BUILD:  # positions to select, cells to move to, ...: shared read-only masks
            return choice_mask(A.NUM_ACTIONS, tuple(self._choices))
        mask = np.zeros(A.NUM_ACTIONS, dtype=np.int8)
        rows = self._domino_rows()
        if sum(r.bit_count() for r in rows) <= _SPARSE_BUILDS:
            ids = []  # few legal builds (the usual case): gather their ids, set them at once
            base = A.BUILD0
            for r in rows:
                while r:
                    low = r & -r
                    ids.append(base + low.bit_length() - 1)
                    r ^= low
                base += NUM_PLACEMENTS
            mask[ids] = 1
        else:
            raw = b"".join([r.to_bytes(_ROW_BYTES, "little") for r in rows])
            bits = _BYTE_BITS[np.frombuffer(raw, dtype=np.uint8)].reshape(len(rows), -1)
            end = A.BUILD0 + len(rows) * NUM_PLACEMENTS
            mask[A.BUILD0:end].reshape(len(rows), -1)[:] = bits[:, :NUM_PLACEMENTS]
        if not self.emptying and not (self.forced and self.builds_done == 0):
            mask[A.PASS_ID] = 1
        return np.frombuffer(mask.tobytes(), dtype=np.int8)  # immutable bytes: never writable

    def _enter(self, phase: Phase, choices: list[int]) -> None:
        """Move to a non-build decision whose legal action ids are ``choices``."""
        self.phase = phase
        self._choices = choices

    def _column_choices(self, column: list[int] | None, owner: list[int]) -> list[int]:
        assert column is not None
        return [A.SELECT0 + p for p in range(COLUMN_SIZE) if owner[p] < 0 and column[p] >= 0]

    def _cowboy_moves(self) -> list[int]:
        ranch = self.ranches[self.player]
        terr = ranch.terrain.tolist()
        steps = _STEPS[ranch.rows]
        return [A.COWBOY0 + cell * 4 + d for cell in np.flatnonzero(ranch.cows).tolist()
                for d, n in steps[cell] if terr[n] >= 0 and terr[n] != _CORNFIELD]

    def _opponents(self) -> list[tuple[int, int]]:
        n = self.num_players
        return [(o, (self.player + o) % n) for o in range(1, n)]

    def _desperado_swaps(self) -> list[int]:
        mine = len(self.ranches[self.player].hand)
        return [A.DESPERADO0 + (i * A.MAX_OPPONENTS + o - 1) * A.HAND_SLOTS + j
                for o, q in self._opponents() for i in range(mine)
                for j in range(len(self.ranches[q].hand))]

    def _thefts(self) -> list[int]:
        if self.ranches[self.player].terrain[self.effect_cell] == _CORNFIELD:
            return []
        out = []
        for o, q in self._opponents():
            victim = self.ranches[q]
            cows = np.flatnonzero(victim.cows).tolist()
            if cows:
                guarded = victim.protected()
                out += [A.THIEF0 + (o - 1) * NUM_CELLS + c for c in cows if not guarded[c]]
        return out

    def _bonus_placements(self) -> list[int]:
        ranch = self.ranches[self.player]
        out = []
        for t in range(2):
            if self.bonus_tiles[t]:
                for f in range(2):
                    bits = ranch.single_bits(int(self.data.terrain[self.data.bonus_kind(t, f)]))
                    base = A.BONUS0 + (t * 2 + f) * NUM_CELLS
                    out += [base + c for c in range(NUM_CELLS) if bits >> c & 1]
        return out

    # ----------------------------------------------------------- transitions
    def _dispatch(self, aid: int) -> None:
        ph = self.phase
        if ph == _SETUP:
            self._do_setup(aid - A.SELECT0)
        elif ph == _SELECT:
            self.pending_owner[aid - A.SELECT0] = self.player
            self._end_turn()
        elif aid == A.PASS_ID:
            if ph == _BUILD:
                self._finish_expansion()
            else:
                self._end_effect()
        elif ph == _BUILD:
            q, k = divmod(aid - A.BUILD0, NUM_CELLS * 2)
            self._build(*A.PAIRS[q], k // 2, int(PLACE_SECOND[k]))
        elif ph == Phase.DISCARD:
            a, b = A.UNORDERED_PAIRS[aid - A.DISCARD0]
            hand = self._ranch(self.player).hand
            self.discarded += [hand[a], hand[b]]
            del hand[b], hand[a]
            self._finish_expansion()
        elif ph == Phase.DROUGHT:
            self._ranch(self.player).add_cows(aid - A.DROUGHT0, -1)
            self.supply += 1
            self.skulls.pop(0)
            self._resolve()
        elif ph == Phase.RECRUIT:
            s, rest = divmod(aid - A.RECRUIT0, 4)
            self._recruit(s, *divmod(rest, 2))
        elif ph == Phase.COWBOY:
            cell, d = divmod(aid - A.COWBOY0, 4)
            ranch = self._ranch(self.player)
            ranch.add_cows(cell, -1)
            ranch.add_cows(cell + DIRECTIONS[d][0] * COLS + DIRECTIONS[d][1], 1)
            self.cowboy_moves_left -= 1
            moves = self._cowboy_moves() if self.cowboy_moves_left else []
            if moves:
                self._choices = [*moves, A.PASS_ID]
            else:
                self._end_effect()
        elif ph == Phase.DESPERADO:
            i, rest = divmod(aid - A.DESPERADO0, A.MAX_OPPONENTS * A.HAND_SLOTS)
            o, j = divmod(rest, A.HAND_SLOTS)
            mine = self._ranch(self.player).hand
            theirs = self._ranch((self.player + o + 1) % self.num_players).hand
            mine[i], theirs[j] = theirs[j], mine[i]
            self._end_effect()
        elif ph == Phase.THIEF:
            o, cell = divmod(aid - A.THIEF0, NUM_CELLS)
            self._ranch((self.player + o + 1) % self.num_players).add_cows(cell, -1)
            self._ranch(self.player).add_cows(self.effect_cell, 1)
            self._end_effect()
        elif ph == Phase.BONUS:
            tf, cell = divmod(aid - A.BONUS0, NUM_CELLS)
            self._place_bonus(tf // 2, tf % 2, cell)

    def _do_setup(self, pos: int) -> None:
        self.active_owner[pos] = self.player
        self._setup_index += 1
        if self._setup_index < len(self.setup_order):
            self.player = self.setup_order[self._setup_index]
            self._choices = self._column_choices(self.active, self.active_owner)
            return
        assert self.active is not None  # set-up always draws a full column
        for pos, plot in enumerate(self.active):  # 3 players: the unchosen plot leaves
            if self.active_owner[pos] < 0 and plot >= 0:
                self.removed.append(plot)
                self.active[pos] = -1
        self.pending = self._draw_column()
        self._start_round()

    def _start_round(self) -> None:
        self.round += 1
        self.recruited_this_round = False
        self.order = [pos for pos in range(COLUMN_SIZE) if self.active_owner[pos] >= 0]
        self.turn_index = 0
        self._start_turn()

    def _start_turn(self) -> None:
        pos = self.order[self.turn_index]
        self.player = self.active_owner[pos]
        ranch = self._ranch(self.player)
        assert self.active is not None  # a turn takes a plot of the round's column
        ranch.hand.append(self.active[pos])
        self.active[pos] = -1
        self._reset_turn_context()
        self.forced = ranch.in_hand
        self.builds_allowed = 2 if len(ranch.hand) >= 4 else 1
        self._to_expansion()

    def _to_expansion(self) -> None:
        """Offer the next build, or move on when no build is possible or allowed."""
        self.phase = _BUILD
        self._build_legal = None
        hand = self.ranches[self.player].hand
        can = len(hand) >= 2 and self._can_build(hand)
        if self.emptying:
            if can:
                return
            self.discarded += hand
            self._ranch(self.player).hand.clear()
            self._next_emptying()
            return
        if self.builds_done < self.builds_allowed and len(hand) >= 2:
            if self.forced and self.builds_done == 0:
                if not can:
                    self._enter(Phase.DISCARD, [A.DISCARD0 + i for i, (_, b) in
                                                enumerate(A.UNORDERED_PAIRS) if b < len(hand)])
                return
            if can:
                return
        self._finish_expansion()

    def _finish_expansion(self) -> None:
        self._build_legal = None
        if self.last_round:
            self._end_turn()
        else:
            self._enter(Phase.SELECT, self._column_choices(self.pending, self.pending_owner))

    def _build(self, a: int, b: int, cell_a: int, cell_b: int) -> None:
        ranch = self._ranch(self.player)
        plot_a, plot_b = ranch.hand[a], ranch.hand[b]
        for i in sorted((a, b), reverse=True):
            del ranch.hand[i]
        self.builds_done += 1
        self._put(ranch, cell_a, plot_a, int(self.data.plot_kind[plot_a]), 0)
        self._put(ranch, cell_b, plot_b, int(self.data.plot_kind[plot_b]), 1)
        self._resolve()

    def _put(self, ranch: Ranch, cell: int, plot: int, kind: int, circle_index: int) -> None:
        """Place one plot, add its cows, and queue its skull and circle."""
        terrain, cows, skull, circle = self._kind_symbols[kind]
        ranch.place(cell, plot, kind, terrain)
        if cows:
            cows = min(cows, self.supply)
            ranch.add_cows(cell, cows)  # the cell was empty
            self.supply -= cows
        # Skulls resolve after every cow of the domino: both plots are put before _resolve().
        if skull:
            self.skulls.append(cell)
        if circle:
            self.circles[circle_index] = cell

    def _resolve(self) -> None:
        """Resolve pending symbols (skulls, then circles), the bonus tile, then expand again."""
        ranch = self.ranches[self.player]
        while self.skulls:
            cows = ranch.cows
            herd = sorted(c for c in ranch.territory(self.skulls[0]) if cows[c] > 0)
            if herd:
                self._enter(Phase.DROUGHT, [A.DROUGHT0 + c for c in herd])
                return
            self.skulls.pop(0)
        if self.circles[0] >= 0 or self.circles[1] >= 0:
            if any(s >= 0 for s in self.saloon):
                self._enter(Phase.RECRUIT, [
                    A.RECRUIT0 + (s * 2 + f) * 2 + c for s in range(SALOON_SLOTS)
                    if self.saloon[s] >= 0 for f in range(2) for c in range(A.MAX_CIRCLES)
                    if self.circles[c] >= 0])
                return
            self.circles = [-1, -1]
        if (self.num_players == 2 and not ranch.bonus_taken and any(self.bonus_tiles)
                and ranch.reach >= BONUS_ROW):
            places = self._bonus_placements()
            if places:
                self._enter(Phase.BONUS, places)
                return
            lost = self.bonus_tiles.index(True)  # cannot be placed: the tile leaves the game
            self.bonus_tiles[lost] = False
            self._ranch(self.player).bonus_taken = True
            self._chance("bonus_lost", player=self.player, tile=lost)
        self._to_expansion()

    def _recruit(self, slot: int, face: int, circle: int) -> None:
        ranch = self._ranch(self.player)
        token = self.saloon[slot]
        self.saloon[slot] = -1
        self.recruited_this_round = True
        cell = self.circles[circle]
        self.circles[circle] = -1
        ranch.set_partner(cell, token, face)
        kind = (PartnerKind.COWBOY if face == Face.COWBOY
                else self.data.partner_specialists[token])
        self.effect_cell = cell
        effect = {PartnerKind.COWBOY: (Phase.COWBOY, self._cowboy_moves),
                  PartnerKind.DESPERADO: (Phase.DESPERADO, self._desperado_swaps),
                  PartnerKind.CATTLE_THIEF: (Phase.THIEF, self._thefts)}.get(kind)
        if effect is not None:
            self.cowboy_moves_left = A.COWBOY_MOVES if kind == PartnerKind.COWBOY else 0
            options = effect[1]()
            if options:  # every immediate effect may be declined
                self._enter(effect[0], [*options, A.PASS_ID])
                return
        self._end_effect()

    def _end_effect(self) -> None:
        """The partner's effect is over (or declined): resolve what the domino still holds."""
        self.effect_cell = -1
        self.cowboy_moves_left = 0
        self._resolve()

    def _place_bonus(self, tile: int, face: int, cell: int) -> None:
        ranch = self._ranch(self.player)
        self.bonus_tiles[tile] = False
        ranch.bonus_taken = True
        self._put(ranch, cell, -2 - tile, self.data.bonus_kind(tile, face), 0)
        self._resolve()

    def _end_turn(self) -> None:
        self.turn_index += 1
        if self.turn_index < len(self.order):
            self._start_turn()
        else:
            self._end_round()

    def _end_round(self) -> None:
        assert self.active is not None  # a round is played on a drawn column
        for pos, plot in enumerate(self.active):
            if plot >= 0:
                self.removed.append(plot)
                self.active[pos] = -1
        if self.last_round:
            self._refill_saloon()  # the end of every round refills, the last one included
            self.empty_order = list(dict.fromkeys(self.active_owner[pos] for pos in self.order))
            self.emptying = True
            self.turn_index = 0
            self._start_emptying()
            return
        assert self.pending is not None
        self.active, self.active_owner = self.pending, self.pending_owner
        self.pending_owner = [-1] * COLUMN_SIZE
        self.pending = self._draw_column()
        self._refill_saloon()
        if self.pending is None:
            self.last_round = True
        self._start_round()

    def _start_emptying(self) -> None:
        self.player = self.empty_order[self.turn_index]
        self._reset_turn_context()
        self._to_expansion()

    def _next_emptying(self) -> None:
        self.turn_index += 1
        if self.turn_index < len(self.empty_order):
            self._start_emptying()
        else:
            self._finish_game()

    def _finish_game(self) -> None:
        for p in range(self.num_players):  # overpopulation: at most one cow per plot
            self.supply += self._ranch(p).cap_cows()
        self.phase = Phase.GAME_OVER
        self._reset_turn_context()
        self._final = [self._score(p, overpopulated=False) for p in range(self.num_players)]

    # --------------------------------------------------------------- scoring
    def _score(self, player: int, overpopulated: bool) -> ScoreBreakdown:
        ranch = self.ranches[player]
        key = ("score", self.scenario, overpopulated)
        score = cast("ScoreBreakdown | None", ranch.derived.get(key))  # kept till the ranch changes
        if score is None:
            # Scores depend only on the ranch contents (and the data tables, which own the
            # memo): shared by every game, clone and determinization playing with these tables.
            memo = score_memo(self.data)
            contents = (self.scenario, overpopulated, ranch.cells.tobytes())
            score = memo.get(contents)
            if score is None:
                new = score_tracked(ranch, self.data, self.scenario, self._token_kind,
                                    cap_cows=overpopulated)
                score = bounded_store(memo, contents, new, _SCORE_MEMO_SIZE)
            ranch.derived[key] = score
        return score

    def running_scores(self) -> list[ScoreBreakdown]:
        """What each player would score if the game ended now (overpopulation applied)."""
        if self.is_over:
            return list(self._final)
        return [self._score(p, overpopulated=True) for p in range(self.num_players)]

    def running_score(self, player: int) -> ScoreBreakdown:
        """One player's entry of :meth:`running_scores`."""
        if self.is_over:
            return self._final[player]
        return self._score(player, overpopulated=True)

    def scores(self) -> list[ScoreBreakdown]:
        """Final scores with breakdown, per player; the game must be over."""
        if not self.is_over:
            raise RuntimeError("the game is not over; use running_scores() for scores so far")
        return list(self._final)

    def winners(self) -> list[int]:
        """Winning players after tie-breaks (largest territory, then most cows; else shared)."""
        board = self.scores() if self.is_over else self.running_scores()
        keys = [(s.total, s.largest_territory, s.cows) for s in board]
        best = max(keys)
        return [p for p, k in enumerate(keys) if k == best]

    def returns(self) -> list[float]:
        """moonriver_v0's "win" rewards: +1 each winner, -1 the others; 0 before the end."""
        return win_returns(self)

    def observe(self, player: int, out: np.ndarray | None = None) -> np.ndarray:
        """The observation of ``player`` (docs/observation.md), written into ``out`` when given."""
        encoder = getattr(_ENCODERS, "encoder", None)
        if encoder is None:  # one per thread: its caches are not shared between threads
            from moonriver_env.moonriver.observation import ObservationEncoder

            encoder = _ENCODERS.encoder = ObservationEncoder()
        return encoder.encode(self, player, out)

    # ------------------------------------------------------- search support
    def clone(self) -> Game:
        """An independent copy of the full state (lists and arrays copied, not deep-copied)."""
        g = Game.__new__(Game)
        d = self.__dict__
        g.__dict__.update(d)
        # The engine draws from its generator only during setup (later chance is the already
        # shuffled box and pile), so a clone may share it; pickle and deepcopy copy it.
        # Ranches are copied on write: both games share them until one side changes one.
        g.ranches = list(self.ranches)
        self._shared = g._shared = (1 << len(self.ranches)) - 1
        for name in ("box", "pile", "saloon", "removed", "discarded", "bonus_tiles", "active",
                     "active_owner", "pending_owner", "order", "empty_order", "skulls",
                     "circles", "_choices", "_history"):
            setattr(g, name, list(d[name]))
        g.pending = None if self.pending is None else list(self.pending)
        return g

    def _ranch(self, player: int) -> Ranch:
        """The player's ranch, ready to change (copied first while a clone shares it)."""
        if self._shared >> player & 1:
            self._shared &= ~(1 << player)
            self.ranches[player] = self.ranches[player].clone()
        return self.ranches[player]

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        for name in ("data", "_plot_terrain", "_plot_number", "_kind_symbols", "_token_kind",
                     "_mask", "_build_legal", "_shared"):
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._read_tables()
        self._mask = None
        self._build_legal = None
        # Copies made together (one pickle of several games) may share ranches: copy on write.
        self._shared = (1 << len(self.ranches)) - 1

    def set_next_draws(self, source: str, items: Sequence[int]) -> None:
        """Make ``items`` the next draws from ``source`` ("box": plot ids, "pile": partner ids)."""
        # The seed alone no longer rebuilds the game: its record replays the chosen draws
        # from its chance events (docs/game-record.md).
        put_next_draws(self, source, items)
        self.chosen_draws = True

    def determinize(self, rng: np.random.Generator) -> None:
        """Reshuffle what is hidden (order of the plot box and partner pile) in place."""
        rng.shuffle(self.box)
        rng.shuffle(self.pile)

    # ----------------------------------------------------------------- views
    @property
    def history(self) -> list[dict[str, Any]]:
        """Decisions and chance events so far, in order (a deep copy)."""
        return copy.deepcopy(self._history)
