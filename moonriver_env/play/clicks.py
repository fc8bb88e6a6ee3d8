"""Legal actions as click paths (the ``data-key`` elements a person clicks, in order) over the
table SVG (see render.svg)."""

from __future__ import annotations

from moonriver_env.moonriver.contract import MoonRiverGame
from moonriver_env.moonriver.rules import Phase
from moonriver_env.moonriver.rules import actions as A
from moonriver_env.moonriver.rules.grid import COLS, DIRECTIONS

Path = tuple[str, ...]


def _cell(player: int, cell: int) -> str:
    return f"cell:{player}:{cell // COLS}:{cell % COLS}"


def action_paths(game: MoonRiverGame, action_id: int) -> list[Path]:
    """The click paths that choose a legal action of the current player."""
    # Build and Discard take their plots in either order, so every orientation is reachable.
    action = A.ACTIONS[action_id]
    p = game.current_player
    if isinstance(action, A.Select):
        column = "active" if game.phase == Phase.SETUP else "pending"
        return [(f"col:{column}:{action.position}",)]
    if isinstance(action, A.Build):
        (r1, c1), (r2, c2) = action.cells
        ka, kb = f"hand:{p}:{action.slot_a}", f"hand:{p}:{action.slot_b}"
        ca, cb = f"cell:{p}:{r1}:{c1}", f"cell:{p}:{r2}:{c2}"
        return [(ka, kb, ca, cb), (kb, ka, cb, ca)]
    if isinstance(action, A.Pass):
        return [("btn:pass",)]
    if isinstance(action, A.Discard):
        ka, kb = f"hand:{p}:{action.slot_a}", f"hand:{p}:{action.slot_b}"
        return [(ka, kb), (kb, ka)]
    if isinstance(action, A.Recruit):
        circle = game.circles[action.circle]
        return [(f"saloon:{action.saloon_slot}", f"btn:face:{action.face}", _cell(p, circle))]
    if isinstance(action, A.CowboyMove):
        dr, dc = DIRECTIONS[action.direction]
        return [(f"cell:{p}:{action.row}:{action.col}",
                 f"cell:{p}:{action.row + dr}:{action.col + dc}")]
    if isinstance(action, A.Drought):
        return [(f"cell:{p}:{action.row}:{action.col}",)]
    if isinstance(action, A.Desperado):
        q = (p + action.opponent) % game.num_players
        return [(f"hand:{p}:{action.my_slot}", f"hand:{q}:{action.their_slot}")]
    if isinstance(action, A.Thief):
        q = (p + action.opponent) % game.num_players
        return [(f"cell:{q}:{action.row}:{action.col}",)]
    if isinstance(action, A.Bonus):
        return [(f"bonus:{action.tile}:{action.face}", f"cell:{p}:{action.row}:{action.col}")]
    raise ValueError(f"no click path for action {action_id}")


def button_labels(game: MoonRiverGame) -> dict[str, str]:
    """Labels of the buttons the current decision may need."""
    pass_label = {Phase.BUILD: "Pass: build nothing more", Phase.COWBOY: "Stop moving cows",
                  Phase.DESPERADO: "Pass: no swap", Phase.THIEF: "Pass: steal nothing"}
    return {"btn:pass": pass_label.get(game.phase, "Pass"),
            "btn:face:0": "Keep the specialist face", "btn:face:1": "Turn to the cowboy face"}


def move_keys(game: MoonRiverGame, action_id: int) -> list[str]:
    """Table elements a move touches, computed before it is applied (see :func:`moved_keys`)."""
    action = A.ACTIONS[action_id]
    path = action_paths(game, action_id)[0]
    keys = [k for k in path if not k.startswith(("btn:", "bonus:"))]
    if isinstance(action, (A.Build, A.Discard)):
        keys = [k for k in keys if not k.startswith("hand:")]
    if isinstance(action, A.Thief) and game.effect_cell >= 0:
        keys.append(_cell(game.current_player, game.effect_cell))
    return keys


def moved_keys(keys: list[str], round_before: int, game: MoonRiverGame) -> list[str]:
    """``move_keys`` as they read after the move: a new round turns pending into active."""
    if game.round == round_before:
        return keys
    return [k.replace("col:pending:", "col:active:") for k in keys
            if not k.startswith("col:active:")]
