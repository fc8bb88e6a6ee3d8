"""Readable text views of a ranch and of the whole table; ``cell_key()`` reads a cell's letters."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .components import PARTNER_LETTERS, TERRAIN_LETTERS, Face, PartnerKind, Terrain
from .grid import COLS, HOMESTEAD

if TYPE_CHECKING:
    from moonriver_env.moonriver.contract import MoonRiverGame, RanchView


def cell_key() -> str:
    """The key to the ranch cells of ``ranch_text`` and ``table_text``, a few lines to print."""
    forest, cowboy = Terrain.FOREST, PartnerKind.COWBOY
    example = (f"{TERRAIN_LETTERS[forest]}1{PARTNER_LETTERS[cowboy]} = "
               f"{forest.name.lower()}, 1 cow, {cowboy.name.lower()}")
    terrains = ", ".join(f"{letter} {terrain.name.lower()}"
                         for terrain, letter in TERRAIN_LETTERS.items())
    partners = ", ".join(f"{letter} {kind.name.lower().replace('_', ' ')}"
                         for kind, letter in PARTNER_LETTERS.items())
    return (f"key: a cell reads terrain, cows, partner ({example}; '.' = none)\n"
            f"  terrain: {terrains}\n"
            f"  partner: {partners}\n"
            "  ' . ' empty cell, ' = ' empty bridge, ### homestead; row 0 is next to the river")


def cell_text(ranch: RanchView, cell: int, specialists: Sequence[PartnerKind]) -> str:
    """Three-character view of one cell."""
    if cell == HOMESTEAD:
        return "###"
    t = int(ranch.terrain[cell])
    if t < 0:
        return " = " if ranch.bridge[cell] else " . "
    cows = int(ranch.cows[cell])
    token = int(ranch.partner[cell])
    partner = "."
    if token >= 0:
        kind = PartnerKind.COWBOY if ranch.face[cell] == Face.COWBOY else specialists[token]
        partner = PARTNER_LETTERS[kind]
    return f"{TERRAIN_LETTERS[Terrain(t)]}{cows if cows else '.'}{partner}"


def ranch_text(ranch: RanchView, specialists: Sequence[PartnerKind] = ()) -> str:
    """The ranch grid as text, river on top."""
    lines = ["     " + "   ".join(str(c) for c in range(COLS)), "   ~~~~~~~~~~~~~~~~~~~~~ river"]
    for r in range(ranch.rows):
        cells = " ".join(cell_text(ranch, r * COLS + c, specialists) for c in range(COLS))
        lines.append(f"{r:>2} {cells}")
    return "\n".join(lines)


def plot_text(game: MoonRiverGame, plot: int) -> str:
    """Short description of a plot of the box, e.g. 'meadow (1 cow, circle) #22'."""
    kind = game.data.kinds[int(game.data.plot_kind[plot])]
    return f"{kind.describe()} #{kind.number}"


def table_text(game: MoonRiverGame) -> str:
    """The whole table: round, phase, columns, saloon, supplies and every ranch with reserve."""
    data = game.data
    head = f"Round {game.round}{' (last)' if game.last_round else ''} - phase {game.phase.name}"
    if not game.is_over:
        head += f" - player {game.current_player} to act"
    lines = [head]
    if game.scenario is not None:
        from .scenarios import SCENARIOS
        lines.append(f"Scenario {game.scenario}: {SCENARIOS[game.scenario].name}")
    for label, col, owner in (("active column", game.active, game.active_owner),
                              ("pending column", game.pending, game.pending_owner)):
        if col is None:
            lines.append(f"{label}: none")
            continue
        parts = []
        for pos, plot in enumerate(col):
            who = f"P{owner[pos]}" if owner[pos] >= 0 else "--"
            parts.append(f"[{pos}] {who} " + (plot_text(game, plot) if plot >= 0 else "(taken)"))
        lines.append(f"{label}: " + " | ".join(parts))
    saloon = (f"[{s}] " + (data.partner_specialists[token].name.lower() if token >= 0 else "empty")
              for s, token in enumerate(game.saloon))
    lines.append("saloon: " + " ".join(saloon))
    lines.append(f"box: {len(game.box)} plots - partner pile: {len(game.pile)} - cow supply: "
                 f"{game.supply} - removed: {len(game.removed)} - discarded: "
                 f"{len(game.discarded)}")
    scores = game.running_scores()
    for p, ranch in enumerate(game.ranches):
        marker = " <" if p == game.current_player else ""
        lines.append("")
        lines.append(f"Player {p} ({game.board_names[p]} board, reserve {ranch.capacity}) "
                     f"score {scores[p].total}{marker}")
        lines.append(ranch_text(ranch, data.partner_specialists))
        held = ", ".join(f"{i}: {plot_text(game, plot)}" for i, plot in enumerate(ranch.hand))
        lines.append(f"   reserve: {held or 'empty'}")
    return "\n".join(lines)
