"""Draw a Circles table as an RGB image with Pillow (only ``rgb_array`` rendering imports it)."""

from __future__ import annotations

import math

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from .config import ITEMS, Space
from .game import CirclesGame, Entry, coins
from .text import SPACE_LABELS

WIDTH, HEIGHT = 640, 400
RING_CENTRE = (200, 205)
RING_RADIUS = 150
SPACE_RADIUS = 22
BACKGROUND = (250, 247, 240)
INK = (30, 30, 30)
MARBLE = (30, 90, 200)
SPACE_COLOURS = {
    Space.RANCH: (150, 90, 50), Space.GOLD: (245, 200, 40), Space.SHOP: (170, 200, 230),
    Space.MONEY_BAG: (140, 200, 120), Space.MINE: (120, 120, 120), Space.DIG: (200, 160, 110),
    Space.CUP: (230, 170, 200), Space.BANK: (90, 160, 150), Space.THIEF: (200, 70, 60),
    Space.SALOON: (180, 120, 200),
}
COIN_COLOURS = {"R": (200, 30, 60), "G": (240, 190, 30), "S": (190, 190, 200)}
PLAYER_COLOURS = ((220, 60, 60), (60, 120, 220), (60, 170, 80), (230, 160, 30),
                  (150, 80, 190))


def _font() -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    return ImageFont.load_default()


def _space_xy(index: int, ring: int) -> tuple[float, float]:
    """Centre of ring space ``index`` (0 at the top, clockwise)."""
    angle = 2 * math.pi * index / ring - math.pi / 2
    return (RING_CENTRE[0] + RING_RADIUS * math.cos(angle),
            RING_CENTRE[1] + RING_RADIUS * math.sin(angle))


def _ring(draw: ImageDraw.ImageDraw, game: CirclesGame) -> None:
    ring = game.config.ring_size
    cx, cy = RING_CENTRE
    draw.ellipse([cx - RING_RADIUS, cy - RING_RADIUS, cx + RING_RADIUS, cy + RING_RADIUS],
                 outline=(200, 190, 170), width=3)
    for i, space in enumerate(game.spaces):
        x, y = _space_xy(i, ring)
        r = SPACE_RADIUS
        draw.ellipse([x - r, y - r, x + r, y + r], fill=SPACE_COLOURS[space], outline=INK)
        draw.text((x - 6, y - 9), SPACE_LABELS[space], fill=INK, font=_font())
        draw.text((x - 4, y + 2), str(i), fill=INK, font=_font())
    x, y = _space_xy(game.marble, ring)
    draw.ellipse([x + 8, y - 22, x + 22, y - 8], fill=MARBLE, outline=(255, 255, 255), width=2)
    mine = " ".join(str(v) if v else "-" for v in game.mine_cells)
    silver, gold, ruby, stone = game.bag
    centre = [
        f"turn {game.turns + 1}/{game.config.max_turns}" if not game.is_over
        else f"over: {game.end_reason}",
        "shop " + " ".join(f"{item[0].upper()}{n}" for item, n in zip(ITEMS, game.shop,
                                                                     strict=True)),
        f"mine {mine}",
        f"cup {game.cup_value} ({game.cup_filled} slots)",
        f"bag {silver}S {gold}G {ruby}R {stone}x",
    ]
    if game.die:
        centre.append(f"thief die {game.die}")
    for k, line in enumerate(centre):
        draw.text((cx - 62, cy - 45 + 14 * k), line, fill=INK, font=_font())


def _purse(draw: ImageDraw.ImageDraw, game: CirclesGame, p: int, x0: int, y0: int) -> None:
    colour = PLAYER_COLOURS[p % len(PLAYER_COLOURS)]
    active = p == game.current_player
    draw.rectangle([x0, y0, x0 + 250, y0 + 64], outline=INK if active else (200, 196, 186),
                   width=3 if active else 1, fill=(255, 255, 255))
    draw.rectangle([x0 + 6, y0 + 6, x0 + 18, y0 + 18], fill=colour, outline=INK)
    label = f"P{p}  money {game.money[p]}  deposit {game.deposit[p]}"
    if game.is_over and p in game.winners():
        label += "  WINNER"
    elif p == game.owner and not game.is_over:
        label += "  (turn)"
    draw.text((x0 + 24, y0 + 6), label, fill=INK, font=_font())
    x = x0 + 8
    for letter, count in zip("RGS", coins(game.money[p]), strict=True):
        for _ in range(count):
            draw.ellipse([x, y0 + 26, x + 14, y0 + 40], fill=COIN_COLOURS[letter], outline=INK)
            draw.text((x + 4, y0 + 28), letter, fill=INK, font=_font())
            x += 17
    items = "  ".join(f"{item}s {game.items[p][i]}" for i, item in enumerate(ITEMS))
    if game.entry[p] != Entry.NONE:
        items += f"  bet: {game.entry[p].name.lower()}"
    draw.text((x0 + 8, y0 + 46), items, fill=INK, font=_font())


def table_image(game: CirclesGame) -> np.ndarray:
    """The table as an H x W x 3 uint8 array: ring and marble left, purses right."""
    image = Image.new("RGB", (WIDTH, HEIGHT), BACKGROUND)
    draw = ImageDraw.Draw(image)
    status = (f"Circles: Far West  {game.phase.name}"
              + (f" by P{game.current_player}" if not game.is_over else ""))
    draw.text((10, 6), status, fill=INK, font=_font())
    _ring(draw, game)
    for p in range(game.num_players):
        _purse(draw, game, p, 380, 24 + p * 74)
    return np.asarray(image, dtype=np.uint8).copy()
