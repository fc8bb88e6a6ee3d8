"""Draw the whole table as an RGB image with Pillow: columns, saloon, every ranch and reserve."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from moonriver_env.engine import Face, Game, PartnerKind, Terrain
from moonriver_env.engine.components import PARTNER_LETTERS
from moonriver_env.engine.grid import COLS, HOMESTEAD

CELL = 30  # pixels per ranch cell
PAD = 10
TERRAIN_COLOURS = {
    Terrain.DESERT: (233, 201, 140), Terrain.CANYON: (196, 110, 70),
    Terrain.MEADOW: (150, 205, 110), Terrain.FOREST: (40, 120, 60),
    Terrain.CORNFIELD: (245, 225, 60), Terrain.FARM: (215, 140, 170),
}
BACKGROUND = (250, 247, 240)
EMPTY = (225, 222, 212)
RIVER = (70, 130, 200)
HOMESTEAD_COLOUR = (110, 80, 55)
INK = (30, 30, 30)
SYMBOL_COLOURS = {"nugget": (255, 200, 0), "beaver": (120, 70, 30), "corn": (250, 160, 0)}


def _font() -> ImageFont.ImageFont:
    return ImageFont.load_default()


def _plot(draw: ImageDraw.ImageDraw, game: Game, kind_id: int, x: int, y: int,
          cows: int = -1, partner: str = "") -> None:
    """One plot square at (x, y): terrain colour, resource dots, cows, skull/circle, partner."""
    kind = game.data.kinds[kind_id]
    draw.rectangle([x, y, x + CELL - 2, y + CELL - 2], fill=TERRAIN_COLOURS[Terrain(kind.terrain)],
                   outline=INK)
    dots = (["nugget"] * kind.nugget + ["beaver"] * kind.beaver + ["corn"] * kind.corn)
    for i, name in enumerate(dots[:4]):
        cx = x + 4 + 6 * i
        draw.rectangle([cx, y + 3, cx + 4, y + 7], fill=SYMBOL_COLOURS[name], outline=INK)
    if kind.skull:
        draw.text((x + CELL - 10, y + 1), "x", fill=INK, font=_font())
    if kind.circle:
        draw.ellipse([x + CELL - 11, y + CELL - 12, x + CELL - 4, y + CELL - 5], outline=INK)
    shown = kind.cows if cows < 0 else cows
    for i in range(min(shown, 4)):
        cx = x + 4 + 6 * i
        fill = (255, 255, 255) if cows >= 0 else (200, 200, 200)  # symbols paler than cows
        draw.ellipse([cx, y + 13, cx + 5, y + 18], fill=fill, outline=INK)
    if partner:
        draw.rectangle([x + 2, y + CELL - 12, x + 11, y + CELL - 3], fill=(255, 255, 255),
                       outline=INK)
        draw.text((x + 4, y + CELL - 13), partner, fill=INK, font=_font())


def _ranch(draw: ImageDraw.ImageDraw, game: Game, p: int, x0: int, y0: int) -> None:
    ranch = game.ranches[p]
    specialists = game.data.partner_specialists
    score = game.running_scores()[p].total
    marker = " *" if p == game.current_player else ""
    draw.text((x0, y0), f"P{p} {game.board_names[p]} {score} pts{marker}", fill=INK,
              font=_font())
    top = y0 + 16
    draw.rectangle([x0, top, x0 + COLS * CELL - 2, top + 6], fill=RIVER)
    top += 10
    for r in range(ranch.rows):
        for c in range(COLS):
            cell = r * COLS + c
            x, y = x0 + c * CELL, top + r * CELL
            kind = int(ranch.kind[cell])
            if cell == HOMESTEAD:
                draw.rectangle([x, y, x + CELL - 2, y + CELL - 2], fill=HOMESTEAD_COLOUR)
            elif kind < 0:
                outline = RIVER if ranch.bridge[cell] else (200, 196, 186)
                draw.rectangle([x, y, x + CELL - 2, y + CELL - 2], fill=EMPTY, outline=outline,
                               width=3 if ranch.bridge[cell] else 1)
            else:
                token = int(ranch.partner[cell])
                letter = ""
                if token >= 0:
                    shown = (PartnerKind.COWBOY if ranch.face[cell] == Face.COWBOY
                             else specialists[token])
                    letter = PARTNER_LETTERS[shown]
                _plot(draw, game, kind, x, y, cows=int(ranch.cows[cell]), partner=letter)
    y = top + ranch.rows * CELL + 4
    draw.text((x0, y), "reserve", fill=INK, font=_font())
    for i, plot in enumerate(ranch.hand):
        _plot(draw, game, int(game.data.plot_kind[plot]), x0 + i * CELL, y + 12)


def table_image(game: Game) -> np.ndarray:
    """The table as an H x W x 3 uint8 array."""
    n = game.num_players
    rows = game.ranches[0].rows
    ranch_w = COLS * CELL + 2 * PAD
    width = max(n * ranch_w, 4 * CELL + 6 * CELL + 3 * PAD) + PAD
    header = 3 * (CELL + 16) + 20
    height = header + rows * CELL + 26 + CELL + 30
    image = Image.new("RGB", (width, height), BACKGROUND)
    draw = ImageDraw.Draw(image)
    status = f"Round {game.round}{' (last)' if game.last_round else ''}  {game.phase.name}"
    if game.scenario is not None:
        status += f"  scenario {game.scenario}"
    status += f"  box {len(game.box)}  pile {len(game.pile)}  cows {game.supply}"
    draw.text((PAD, 4), status, fill=INK, font=_font())
    y = 20
    for label, col, owner in (("active", game.active, game.active_owner),
                              ("pending", game.pending, game.pending_owner)):
        draw.text((PAD, y + 8), label, fill=INK, font=_font())
        for pos in range(4):
            x = PAD + 60 + pos * (CELL + 14)
            if col is not None and col[pos] >= 0:
                _plot(draw, game, int(game.data.plot_kind[col[pos]]), x, y)
            else:
                draw.rectangle([x, y, x + CELL - 2, y + CELL - 2], outline=(200, 196, 186))
            if owner[pos] >= 0:
                draw.text((x + CELL, y + 8), f"P{owner[pos]}", fill=INK, font=_font())
        y += CELL + 16
    draw.text((PAD, y + 8), "saloon", fill=INK, font=_font())
    for s, token in enumerate(game.saloon):
        x = PAD + 60 + s * (CELL + 4)
        draw.rectangle([x, y, x + CELL - 2, y + CELL - 2], fill=(255, 255, 255), outline=INK)
        if token >= 0:
            letter = PARTNER_LETTERS[game.data.partner_specialists[token]]
            draw.text((x + 11, y + 9), letter, fill=INK, font=_font())
    y = header
    for p in range(n):
        _ranch(draw, game, p, PAD + p * ranch_w, y)
    return np.asarray(image, dtype=np.uint8).copy()
