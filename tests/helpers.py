"""Scenario builders for rule tests: put chosen plots on a ranch and in a reserve, then decide.

These reach into engine internals on purpose (a test sets up positions the rules would take
many turns to reach); the rules under test then run through the public ``apply``.
"""

from __future__ import annotations

import signal
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from moonriver_env.moonriver.rules import Game, GameConfig, PartnerKind, Phase
from moonriver_env.moonriver.rules.grid import COLS, NUM_CELLS
from moonriver_env.moonriver.rules.text import ranch_text

# Seconds a test lets a subprocess run before calling it hung. A guard against a hang, not a
# budget: the work itself is capped by counts (games, iterations), so a slow machine finishes
# it, only later.
HANG_GUARD = 900


def ctrl_c_as_in_a_terminal() -> None:
    """A ``Popen`` ``preexec_fn``: the child takes SIGINT as a terminal's child does, even when
    the suite itself runs with SIGINT ignored (a background job of a non-interactive shell,
    whose children would otherwise ignore the Ctrl-C a test sends)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def kind_id(game: Game, label: str) -> int:
    """Kind id of a plot kind by its manifest label ('1'..'25')."""
    for i, k in enumerate(game.data.kinds):
        if k.label == label:
            return i
    raise KeyError(label)


def take_plot(game: Game, label: str) -> int:
    """Take a plot of the given kind out of the box (or, failing that, the removed pile)."""
    kid = kind_id(game, label)
    for pool in (game.box, game.removed):
        for i, plot in enumerate(pool):
            if game.data.plot_kind[plot] == kid:
                return pool.pop(i)
    raise LookupError(f"no plot of kind {label} left in the box")


def new_game(num_players: int = 4, mode: str = "base", seed: int = 0, **kw) -> Game:
    """A game advanced through setup to the first player's first build decision point."""
    game = Game(GameConfig(num_players=num_players, mode=mode, **kw), seed=seed)
    while game.phase == Phase.SETUP:
        game.apply(int(game.legal_action_ids()[0]))
    return game


def clear_ranch(game: Game, player: int) -> None:
    """Empty a player's ranch (cows back to the supply, plots back to the box)."""
    old = game.ranches[player]
    game.supply += int(old.cows.sum())
    for plot in old.plot[old.plot >= 0].tolist():
        game.box.append(plot)
    fresh = type(old)(old.rows, old.board)
    fresh.hand = old.hand
    game.ranches[player] = fresh


def put(game: Game, player: int, row: int, col: int, label: str, cows: int = 0) -> None:
    """Place a plot of a kind directly on a ranch (no rules), with ``cows`` cows on it."""
    ranch = game.ranches[player]
    plot = take_plot(game, label)
    kid = kind_id(game, label)
    ranch.place(row * COLS + col, plot, kid, int(game.data.terrain[kid]))
    ranch.add_cows(row * COLS + col, cows)  # a fresh plot: no cows yet
    game.supply -= cows


def set_hand(game: Game, player: int, labels: list[str]) -> None:
    """Replace a player's reserve (and hand) with plots of the given kinds."""
    ranch = game.ranches[player]
    game.box.extend(ranch.hand)
    ranch.hand = [take_plot(game, label) for label in labels]


def start_expansion(game: Game, player: int | None = None) -> None:
    """Restart the current turn's expansion for ``player`` with their current reserve."""
    if player is not None:
        game.player = player
    ranch = game.ranches[game.player]
    game._reset_turn_context()
    game.forced = ranch.in_hand
    game.builds_allowed = 2 if len(ranch.hand) >= 4 else 1
    game._mask = None
    game._to_expansion()


def view(game: Game, player: int) -> str:
    """The ranch of a player as text (see moonriver_env.moonriver.rules.text)."""
    return ranch_text(game.ranches[player], game.data.partner_specialists)


def cows_at(game: Game, player: int) -> dict[tuple[int, int], int]:
    """{(row, col): cows} of a ranch, for cells holding cows."""
    cows = game.ranches[player].cows
    return {divmod(c, COLS): int(cows[c]) for c in range(NUM_CELLS) if cows[c]}


def random_aec_play(env, rng: np.random.Generator, max_steps: int = 10**6) -> list[int]:
    """Random masked play of either game's AEC env through agent_iter; the actions taken."""
    actions = []
    for _ in env.agent_iter(max_steps):
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        action = int(legal[rng.integers(legal.size)])
        actions.append(action)
        env.step(action)
    return actions


def check_gym_env(env) -> None:
    """Gymnasium's and SB3's env checkers on a single-agent env (either game)."""
    import warnings

    from gymnasium.utils.env_checker import check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    check_env(env)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sb3_check_env(env)


def random_playout(game: Game, rng: np.random.Generator) -> None:
    """Finish a game with uniformly random legal decisions."""
    while not game.is_over:
        ids = game.legal_action_ids()
        game.apply(int(ids[rng.integers(ids.size)]))


def grid(text: str) -> str:
    """A ranch text grid with runs of blanks folded, so expected grids read naturally."""
    return "\n".join(" ".join(line.split()) for line in textwrap.dedent(text).strip().splitlines())


def ranch_grid(game: Game, player: int, rows: int | None = None) -> str:
    """The rows of a ranch view (header and river line dropped), blanks folded."""
    lines = view(game, player).splitlines()[2:]
    return grid("\n".join(lines[:rows]))


def fresh(game: Game, labels: list[str], player: int | None = None) -> int:
    """Empty a ranch and give it plots (start the expansion separately)."""
    p = game.player if player is None else player
    clear_ranch(game, p)
    set_hand(game, p, labels)
    return p


def stock_saloon(game: Game, kinds: list[PartnerKind | None]) -> list[int]:
    """Fill the saloon with tokens of the given specialist kinds (None leaves a slot empty)."""
    pool = [t for t in game.saloon if t >= 0] + list(game.pile)
    saloon = []
    for kind in kinds:
        if kind is None:
            saloon.append(-1)
            continue
        token = next(t for t in pool if game.data.partner_specialists[t] == kind)
        pool.remove(token)
        saloon.append(token)
    game.saloon = saloon
    game.pile = pool
    return list(saloon)


def variant_manifest(tmp_path, kind: str, **changes: str) -> str:
    """A copy of the shipped plots manifest with some columns of one kind changed; its path."""
    import csv

    from moonriver_env.moonriver.rules.data import default_path

    with open(default_path("plots.csv"), newline="") as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:
        if row["kind"] == kind:
            row.update(changes)
    path = tmp_path / "plots.csv"
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return str(path)


_OPENED: list[str] | None = None  # paths opened while watching (see watching_opens)


def _audit(event: str, args: tuple) -> None:
    if _OPENED is not None and event == "open" and args and isinstance(args[0], (str, Path)):
        _OPENED.append(str(args[0]))


sys.addaudithook(_audit)  # audit hooks stay for the process; this one only records


@contextmanager
def watching_opens() -> Iterator[list[str]]:
    """The paths any code of this process opens inside the block."""
    global _OPENED
    _OPENED = []
    try:
        yield _OPENED
    finally:
        _OPENED = None



def advance_agents(client, gid: str, moves: int = 3) -> None:
    """Ask the play server for ``moves`` agent moves of game ``gid``; each is made."""
    for _ in range(moves):
        state = client.get(f"/api/games/{gid}").json()
        r = client.post(f"/api/games/{gid}/advance", json={"decision": state["decision"]})
        assert r.status_code == 200, r.text
    assert client.get(f"/api/games/{gid}").json()["decision"] >= moves
