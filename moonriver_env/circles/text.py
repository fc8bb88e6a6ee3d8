"""Readable text view of a Circles table, for tests, debugging and terminals."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .config import ITEMS, Space
from .game import ContestStage, Entry, Phase, coins

if TYPE_CHECKING:
    from .game import CirclesGame

SPACE_LABELS = {Space.RANCH: "RA", Space.GOLD: "GO", Space.SHOP: "SH", Space.MONEY_BAG: "MB",
                Space.MINE: "MI", Space.DIG: "DI", Space.CUP: "CU", Space.BANK: "BA",
                Space.THIEF: "TH", Space.SALOON: "SA"}


def ring_text(game: CirclesGame) -> str:
    """The ring clockwise from index 0, one label per space, ``(o)`` after the marble's."""
    cells = [f"{SPACE_LABELS[s]}{'(o)' if i == game.marble else ''}"
             for i, s in enumerate(game.spaces)]
    return " ".join(cells)


def table_text(game: CirclesGame) -> str:
    """The whole table: status, ring, purses and items, shop, mine, cup, bag, bet."""
    if game.is_over:
        status = (f"GAME OVER ({game.end_reason}) after {game.turns} turns, winners: "
                  f"{game.winners()}")
    else:
        status = (f"turn {game.turns + 1}/{game.config.max_turns}  owner P{game.owner}  "
                  f"{game.phase.name} by P{game.current_player}")
        if game.die:
            status += f"  thief die {game.die}"
    lines = [status, f"ring  {ring_text(game)}  (marble at {game.marble}: {game.space.name})"]
    for p in range(game.num_players):
        r, g, s = coins(game.money[p])
        mark = "*" if p == game.current_player else " "
        items = "  ".join(f"{item}s {game.items[p][i]}" for i, item in enumerate(ITEMS))
        line = (f"{mark}P{p}  money {game.money[p]:>2} ({r}R {g}G {s}S)  deposit "
                f"{game.deposit[p]:>2}  {items}")
        if game.stage != ContestStage.NONE and game.entry[p] != Entry.NONE:
            line += f"  bet: {game.entry[p].name.lower()}"
            if game.entry[p] == Entry.STAKED:
                line += f" stake {game.stake[p]}"
                if game.score[p] >= 0:
                    line += f" score {game.score[p]}"
        lines.append(line)
    shop = ", ".join(f"{item}s {n}" for item, n in zip(ITEMS, game.shop, strict=True))
    mine = " | ".join(str(v) if v else "-" for v in game.mine_cells)
    silver, gold, ruby, stone = game.bag
    lines.append(f"shop {shop}   mine {mine}   cup {game.cup_filled} slot(s) "
                 f"({game.cup_value})   bag {silver}S {gold}G {ruby}R {stone} stones")
    if game.phase == Phase.CONTEST_THROW:
        lines.append(f"saloon bet: {game.stage.name.lower()} round, throwing: "
                     + " ".join(f"P{q}" for q in game.group))
    return "\n".join(lines)
