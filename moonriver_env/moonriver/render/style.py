"""The table's look, shared by the play page and the rgb_array image: colours, badges, words."""

from __future__ import annotations

from collections.abc import Sequence

from moonriver_env.moonriver.contract import MoonRiverGame
from moonriver_env.moonriver.rules import Face, PartnerKind, Phase, Terrain
from moonriver_env.moonriver.rules.components import PARTNER_LETTERS
from moonriver_env.moonriver.rules.scenarios import SCENARIOS

FONT = "DejaVu Sans, Liberation Sans, Arial, sans-serif"
BACKGROUND = "#faf7f0"
INK = "#222222"
MUTED = "#6b6459"
EMPTY = "#e4e0d5"
RIVER = "#4a86c8"
BRIDGE = "#1d5fa8"
HOMESTEAD = "#6e4f37"

TERRAIN_COLOURS = {
    Terrain.DESERT: "#ecd08c", Terrain.CANYON: "#c4683f", Terrain.MEADOW: "#a3d572",
    Terrain.FOREST: "#2f7d3f", Terrain.CORNFIELD: "#f4de4c", Terrain.FARM: "#e8a0c4",
}
# Resource symbols differ in shape and colour: a gold diamond, a brown disc, a green ear.
NUGGET = ("#ffcc00", "#7a5a00")  # fill, outline
BEAVER = ("#9a5b2e", "#f3e2c4")  # light rim: beavers sit on dark forest
CORN = ("#2e8b3a", "#0f3d16")
SKULL = "#8b1a1a"

PLAYER_COLOURS = ("#d0312d", "#2d62c8", "#8e44ad", "#e67e22")

PARTNER_COLOURS = {
    PartnerKind.COWBOY: "#1f4e8c", PartnerKind.DESPERADO: "#3a3a3a",
    PartnerKind.CATTLE_THIEF: "#9c2f6f", PartnerKind.GOLD_DIGGER: "#b8860b",
    PartnerKind.TRAPPER: "#7b4a22", PartnerKind.FARMER: "#2e7d32",
}
PARTNER_BADGE = {kind: letter.upper() for kind, letter in PARTNER_LETTERS.items()}
PARTNER_NAMES = {kind: kind.name.lower().replace("_", " ") for kind in PartnerKind}


def partner_shown(game: MoonRiverGame, token: int, face: int) -> PartnerKind:
    """What a placed partner token shows: the Cowboy face or its specialist."""
    return PartnerKind.COWBOY if face == Face.COWBOY else game.data.partner_specialists[token]


def player_label(game: MoonRiverGame, player: int,
                 names: Sequence[str | None] | None = None) -> str:
    """'P1 (greedy)' or 'P1'."""
    if names and player < len(names) and names[player]:
        return f"P{player} ({names[player]})"
    return f"P{player}"


_DECISIONS = {  # phases whose decision reads the same every time
    Phase.SETUP: "place a ranchero on a plot of the first column",
    Phase.SELECT: "select a plot of the pending column for the next round",
    Phase.DISCARD: "no domino fits: discard two plots",
    Phase.DROUGHT: "drought: choose the cow that leaves this territory",
    Phase.RECRUIT: "recruit: a saloon partner, its face, then the circle it goes on",
    Phase.DESPERADO: "desperado: swap one of your reserve plots with an opponent's, or pass",
    Phase.THIEF: "cattle thief: steal an unprotected cow, or pass",
    Phase.BONUS: "bonus tile: choose a tile face, then the cell it goes on",
}


def decision_text(game: MoonRiverGame) -> str:
    """What the current player has to decide, in words."""
    if game.is_over:
        return "game over"
    ph = game.phase
    if ph == Phase.BUILD:
        if game.emptying:
            return "end of game: build from the reserve while a domino fits"
        if game.forced and game.builds_done == 0:
            return "reserve over-full: build a domino (forced)"
        nth = "a second" if game.builds_done else "a"
        return f"build {nth} domino (two plots, then where each goes) or pass"
    if ph == Phase.COWBOY:
        return (f"cowboy: move a cow one step ({game.cowboy_moves_left} moves left) "
                "or stop")
    return _DECISIONS.get(ph, ph.name.lower())


def status_text(game: MoonRiverGame, names: Sequence[str | None] | None = None) -> str:
    """One line: round, scenario, who decides what."""
    head = "Setup" if game.round == 0 else f"Round {game.round}"
    if game.last_round:
        head += " (last)"
    if game.scenario is not None:
        head += f" · scenario {game.scenario} {SCENARIOS[game.scenario].name}"
    if game.is_over:
        winners = ", ".join(player_label(game, p, names) for p in game.winners())
        return f"{head} · game over · winner{'s' if len(game.winners()) > 1 else ''}: {winners}"
    return f"{head} · {player_label(game, game.current_player, names)}: {decision_text(game)}"
