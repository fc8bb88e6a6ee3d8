"""The whole table as one SVG document: the picture of the play page and of the rgb_array image.

Clickable elements carry a ``data-key`` (absolute player ids): ``col:active|pending:<pos>``,
``hand:<p>:<slot>``, ``cell:<p>:<r>:<c>``, ``saloon:<s>``, ``bonus:<tile>:<face>``.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

import moonriver_env.moonriver.render.style as S
from moonriver_env.moonriver.contract import MoonRiverGame
from moonriver_env.moonriver.rules import PartnerKind, Terrain
from moonriver_env.moonriver.rules.components import PlotKind
from moonriver_env.moonriver.rules.grid import COLS, HOMESTEAD

CELL = 44  # pixels per ranch cell (a plot is drawn CELL - 2 wide)
PAD = 12
PANEL_W = COLS * CELL + 48
TOP = 40  # below the status line
COLUMN_ROW_H = CELL + 24


class _Svg:
    """A list of SVG fragments with small helpers."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def add(self, fragment: str) -> None:
        self.parts.append(fragment)

    def rect(self, x: float, y: float, w: float, h: float, fill: str, stroke: str = "none",
             width: float = 1.0, rx: float = 0, extra: str = "") -> None:
        self.add(f'<rect x="{x:g}" y="{y:g}" width="{w:g}" height="{h:g}" rx="{rx:g}" '
                 f'fill="{fill}" stroke="{stroke}" stroke-width="{width:g}"{extra}/>')

    def circle(self, cx: float, cy: float, r: float, fill: str, stroke: str = "none",
               width: float = 1.0, extra: str = "") -> None:
        self.add(f'<circle cx="{cx:g}" cy="{cy:g}" r="{r:g}" fill="{fill}" stroke="{stroke}" '
                 f'stroke-width="{width:g}"{extra}/>')

    def text(self, x: float, y: float, s: str, size: float = 11, fill: str = S.INK,
             weight: str = "normal", anchor: str = "start") -> None:
        self.add(f'<text x="{x:g}" y="{y:g}" font-size="{size:g}" fill="{fill}" '
                 f'font-weight="{weight}" text-anchor="{anchor}">{escape(s)}</text>')

    def open(self, key: str | None, title: str | None = None) -> None:
        attr = f' data-key="{key}" class="k"' if key else ""
        self.add(f"<g{attr}>")
        if title:
            self.add(f"<title>{escape(title)}</title>")

    def close(self) -> None:
        self.add("</g>")


# ------------------------------------------------------------------ symbols
def _nugget(d: _Svg, x: float, y: float) -> None:
    fill, line = S.NUGGET
    d.add(f'<polygon points="{x:g},{y - 5:g} {x + 4.5:g},{y:g} {x:g},{y + 5:g} {x - 4.5:g},{y:g}" '
          f'fill="{fill}" stroke="{line}" stroke-width="1"/>')


def _beaver(d: _Svg, x: float, y: float) -> None:
    d.circle(x, y, 4.5, S.BEAVER[0], S.BEAVER[1])


def _corn(d: _Svg, x: float, y: float) -> None:
    d.add(f'<ellipse cx="{x:g}" cy="{y:g}" rx="2.6" ry="5" fill="{S.CORN[0]}" '
          f'stroke="{S.CORN[1]}" stroke-width="1"/>')


def _cow_symbol(d: _Svg, x: float, y: float) -> None:
    """A printed cow symbol (cows placed when the plot is built): small hollow oval."""
    d.add(f'<ellipse cx="{x:g}" cy="{y:g}" rx="4" ry="3" fill="none" stroke="{S.INK}" '
          f'stroke-width="1.2" stroke-dasharray="2,1"/>')


def _cow(d: _Svg, x: float, y: float) -> None:
    """A cow standing on the ranch: white oval with a black patch."""
    d.add(f'<ellipse cx="{x + 1:g}" cy="{y:g}" rx="4.6" ry="3.6" fill="#ffffff" stroke="#111" '
          f'stroke-width="1.2"/>')
    d.add(f'<ellipse cx="{x - 3.6:g}" cy="{y - 1.8:g}" rx="2.1" ry="1.8" fill="#ffffff" '
          f'stroke="#111" stroke-width="1.1"/>')
    d.circle(x + 2.4, y - 0.6, 1.4, "#111")
    d.circle(x + 0.2, y + 1.4, 0.9, "#111")


def _skull(d: _Svg, x: float, y: float) -> None:
    d.circle(x, y, 5, S.SKULL, "#3d0000")
    d.add(f'<path d="M{x - 2.5:g},{y - 2.5:g} L{x + 2.5:g},{y + 2.5:g} M{x + 2.5:g},{y - 2.5:g} '
          f'L{x - 2.5:g},{y + 2.5:g}" stroke="#fff" stroke-width="1.5"/>')


def _circle_symbol(d: _Svg, x: float, y: float) -> None:
    d.circle(x, y, 5, "none", S.INK, 1.8)


def _badge(d: _Svg, x: float, y: float, kind: PartnerKind, cowboy_face: bool,
           size: float = 15) -> None:
    """A partner token: square badge for a specialist face, round for the Cowboy face."""
    colour = S.PARTNER_COLOURS[kind]
    if cowboy_face:
        d.circle(x + size / 2, y + size / 2, size / 2, colour, "#fff", 1.2)
    else:
        d.rect(x, y, size, size, colour, "#fff", 1.2, rx=2)
    d.text(x + size / 2, y + size / 2 + size * 0.3, S.PARTNER_BADGE[kind], size * 0.7, "#fff",
           "bold", "middle")


def _ranchero(d: _Svg, x: float, y: float, player: int) -> None:
    d.circle(x, y, 9, S.PLAYER_COLOURS[player], "#fff", 1.5)
    d.text(x, y + 4, str(player), 11, "#fff", "bold", "middle")


def _plot(d: _Svg, kind: PlotKind, x: float, y: float, cows: int = 0,
          partner: tuple[PartnerKind, bool] | None = None) -> None:
    """One plot: terrain colour, resources and printed symbols, standing cows, partner."""
    s = CELL - 2
    d.rect(x, y, s, s, S.TERRAIN_COLOURS[Terrain(kind.terrain)], "#5a5348", 0.8, rx=3)
    top = ([_nugget] * kind.nugget + [_beaver] * kind.beaver + [_corn] * kind.corn
           + [_cow_symbol] * kind.cows)
    for i, draw in enumerate(top[:4]):
        draw(d, x + 7 + 9.5 * i, y + 8)
    if kind.skull:
        _skull(d, x + s - 7, y + 8)
    if kind.circle:
        _circle_symbol(d, x + s - 8, y + s - 8)
    if cows:
        if cows <= 3:
            for i in range(cows):
                _cow(d, x + 10 + 13 * i, y + s / 2 + 2)
        else:
            _cow(d, x + 10, y + s / 2 + 2)
            d.text(x + 17, y + s / 2 + 6, f"x{cows}", 11, "#111", "bold")
    if partner is not None:
        _badge(d, x + 2, y + s - 17, partner[0], partner[1])


def _plot_title(kind: PlotKind, cows: int = 0, partner: str = "") -> str:
    bits = [kind.describe()]
    if cows:
        bits.append(f"{cows} cow{'s' if cows > 1 else ''} standing")
    if partner:
        bits.append(f"partner: {partner}")
    return ", ".join(bits)


def _slot(d: _Svg, x: float, y: float) -> None:
    d.rect(x, y, CELL - 2, CELL - 2, "none", "#b5ae9f", 1, rx=3, extra=' stroke-dasharray="4,3"')


# ------------------------------------------------------------------ table parts
def _columns(d: _Svg, game: MoonRiverGame) -> None:
    for i, (name, col, owner) in enumerate((("active", game.active, game.active_owner),
                                            ("pending", game.pending, game.pending_owner))):
        y = TOP + i * COLUMN_ROW_H
        d.text(PAD, y + 16, name, 12, S.INK, "bold")
        d.text(PAD, y + 30, "column", 12, S.INK, "bold")
        d.text(PAD, y + 43, "(box side first)", 9, S.MUTED)
        for pos in range(4):
            x = PAD + 104 + pos * (CELL + 12)
            plot = -1 if col is None else col[pos]
            if plot >= 0:
                kind = game.data.kinds[int(game.data.plot_kind[plot])]
                d.open(f"col:{name}:{pos}", f"{name} column position {pos}: {_plot_title(kind)}")
                _plot(d, kind, x, y)
            else:
                d.open(f"col:{name}:{pos}")
                _slot(d, x, y)
            d.close()
            d.text(x + CELL / 2 - 1, y + CELL + 10, str(pos), 9, S.MUTED, anchor="middle")
            if owner[pos] >= 0:  # bottom left: a column plot has no cows or partner there
                _ranchero(d, x + 10, y + CELL - 12, owner[pos])


def _saloon(d: _Svg, game: MoonRiverGame, x0: float) -> None:
    d.text(x0, TOP + 12, "saloon", 12, S.INK, "bold")
    for s, token in enumerate(game.saloon):
        x = x0 + s * 76
        y = TOP + 18
        if token >= 0:
            kind = game.data.partner_specialists[token]
            d.open(f"saloon:{s}", f"saloon slot {s}: {S.PARTNER_NAMES[kind]} (Cowboy on the back)")
            d.rect(x, y, 70, 40, "#ffffff", "#b5ae9f", 1, rx=4)
            _badge(d, x + 4, y + 4, kind, False, 18)
            d.text(x + 26, y + 17, f"#{s}", 9, S.MUTED)
            d.text(x + 35, y + 34, S.PARTNER_NAMES[kind], 9.5, S.INK, "bold", "middle")
        else:
            d.open(f"saloon:{s}")
            d.rect(x, y, 70, 40, "none", "#b5ae9f", 1, rx=4, extra=' stroke-dasharray="4,3"')
            d.text(x + 35, y + 25, "empty", 9.5, S.MUTED, anchor="middle")
        d.close()


def _counts(d: _Svg, game: MoonRiverGame, x0: float) -> None:
    y = TOP + COLUMN_ROW_H + 12
    d.text(x0, y, f"box: {len(game.box)} plots   partner pile: {len(game.pile)}   "
                  f"cow supply: {game.supply}", 11.5, S.INK)
    d.text(x0, y + 17, f"removed: {len(game.removed)}   discarded: {len(game.discarded)}", 11.5,
           S.INK)


def _bonus_tiles(d: _Svg, game: MoonRiverGame, x0: float) -> None:
    y = TOP + COLUMN_ROW_H
    d.text(x0, y + 12, "bonus tiles (row 9)", 11, S.INK, "bold")
    for t in range(2):
        x = x0 + t * (2 * CELL + 14)
        d.text(x, y + 26, "AB"[t], 10, S.MUTED, "bold")
        for f in range(2):
            fx = x + 10 + f * CELL
            if game.bonus_tiles[t]:
                kind = game.data.kinds[game.data.bonus_kind(t, f)]
                d.open(f"bonus:{t}:{f}", f"bonus tile {'AB'[t]} face {f}: {kind.describe()}")
                _plot(d, kind, fx, y + 18)
            else:
                d.open(None)
                _slot(d, fx, y + 18)
            d.close()


def _ranch(d: _Svg, game: MoonRiverGame, p: int, x0: float, y0: float, height: float,
           names: Sequence[str | None] | None, score) -> None:
    ranch = game.ranches[p]
    current = p == game.current_player
    colour = S.PLAYER_COLOURS[p]
    d.rect(x0, y0, PANEL_W - 8, height, "#ffffff", colour if current else "#d8d2c4",
           3.5 if current else 1, rx=6)
    d.rect(x0 + 8, y0 + 8, 12, 12, colour, rx=2)
    title = f"{S.player_label(game, p, names)} · {game.board_names[p].replace('_', ' ')}"
    d.text(x0 + 25, y0 + 19, title, 12.5, S.INK, "bold")
    if current:
        d.text(x0 + PANEL_W - 16, y0 + 19, "to act", 11, colour, "bold", "end")
    d.text(x0 + 8, y0 + 36, f"score {score.total}", 12, S.INK, "bold")
    d.text(x0 + PANEL_W - 16, y0 + 36, f"terr {score.territories} · res {score.resources} · "
           f"partn {score.partners} · scen {score.scenario}", 9.5, S.MUTED, anchor="end")
    gx, gy = x0 + (PANEL_W - 8 - COLS * CELL) / 2 + 1, y0 + 54
    d.rect(gx, gy - 11, COLS * CELL - 2, 8, S.RIVER, rx=3)
    specialists = game.data.partner_specialists
    for r in range(ranch.rows):
        for c in range(COLS):
            cell = r * COLS + c
            x, y = gx + c * CELL, gy + r * CELL
            kind_id = int(ranch.kind[cell])
            key = f"cell:{p}:{r}:{c}"
            if cell == HOMESTEAD:
                d.open(None, "homestead (never built on)")
                d.rect(x, y, CELL - 2, CELL - 2, S.HOMESTEAD, rx=3)
                m = x + CELL / 2 - 1
                d.add(f'<polygon points="{m - 11:g},{y + 21:g} {m:g},{y + 10:g} {m + 11:g},'
                      f'{y + 21:g} {m + 8:g},{y + 21:g} {m + 8:g},{y + 32:g} {m - 8:g},'
                      f'{y + 32:g} {m - 8:g},{y + 21:g}" fill="#f3e6d3"/>')
            elif kind_id < 0:
                d.open(key, f"({r},{c}) empty{' bridge' if ranch.bridge[cell] else ''}")
                d.rect(x, y, CELL - 2, CELL - 2, S.EMPTY, "#cfc9ba", 1, rx=3)
            else:
                token = int(ranch.partner[cell])
                partner = None
                name = ""
                if token >= 0:
                    shown = S.partner_shown(game, token, int(ranch.face[cell]))
                    partner = (shown, shown == PartnerKind.COWBOY)
                    name = S.PARTNER_NAMES[shown]
                    if shown == PartnerKind.COWBOY:
                        name += f" (back: {S.PARTNER_NAMES[specialists[token]]})"
                kind = game.data.kinds[kind_id]
                cows = int(ranch.cows[cell])
                d.open(key, f"({r},{c}) {_plot_title(kind, cows, name)}")
                _plot(d, kind, x, y, cows, partner)
            if ranch.bridge[cell] and kind_id < 0:  # an open bridge: two planks
                d.add(f'<path d="M{x + 8:g},{y + 3:g} v{CELL - 8:g} M{x + CELL - 10:g},{y + 3:g} '
                      f'v{CELL - 8:g}" stroke="{S.BRIDGE}" stroke-width="3.5"/>')
            elif ranch.bridge[cell]:  # built over: a blue bar on the river side
                d.rect(x + 3, y - 1, CELL - 8, 4, S.BRIDGE, rx=1.5)
            d.close()
    ry = gy + ranch.rows * CELL + 4
    d.text(gx, ry + 10, f"reserve ({ranch.capacity} slots)", 10, S.MUTED)
    for i in range(max(ranch.capacity, len(ranch.hand))):
        x = gx + i * CELL
        if i < len(ranch.hand):
            kind = game.data.kinds[int(game.data.plot_kind[ranch.hand[i]])]
            d.open(f"hand:{p}:{i}", f"slot {i}: {_plot_title(kind)}")
            _plot(d, kind, x, ry + 15)
            d.close()
            if i >= ranch.capacity:
                d.text(x + CELL / 2 - 1, ry + CELL + 23, "in hand", 9, S.INK, "bold", "middle")
        else:
            _slot(d, x, ry + 15)


def _legend(d: _Svg, y0: float, width: float) -> float:
    """Draw the legend from y0; returns its height."""
    d.text(PAD, y0 + 14, "Legend", 12, S.INK, "bold")
    items: list[tuple[str, object]] = [(t.name.lower(), ("swatch", colour))
                                       for t, colour in S.TERRAIN_COLOURS.items()]
    items += [("nugget (1 pt)", _nugget), ("beaver (1 pt)", _beaver), ("corn (1 pt)", _corn),
              ("printed cow symbol", _cow_symbol), ("cow on the ranch", _cow),
              ("skull: drought", _skull), ("circle: recruit", _circle_symbol)]
    items += [(S.PARTNER_NAMES[kind], ("badge", kind)) for kind in PartnerKind]
    items += [("square: specialist face", ("badge", PartnerKind.TRAPPER)),
              ("round: cowboy face", ("round", PartnerKind.COWBOY)),
              ("bridge (open / built)", "bridge"), ("homestead", "home"),
              ("river (row 0 side)", "river"),
              ("ranchero of P0", "ranchero")]
    x, y = PAD + 60, y0 + 4
    step = 150
    for label, icon in items:
        if x + step > width:
            x, y = PAD + 60, y + 22
        cx, cy = x + 8, y + 10
        if isinstance(icon, tuple) and icon[0] == "swatch":
            d.rect(x, y + 2, 16, 16, icon[1], "#5a5348", 0.8, rx=2)
        elif isinstance(icon, tuple):
            _badge(d, x, y + 2, icon[1], icon[0] == "round", 16)
        elif icon == "bridge":
            d.rect(x, y + 2, 16, 16, S.EMPTY, "#cfc9ba", rx=2)
            d.add(f'<path d="M{x + 4:g},{y + 3:g} v14 M{x + 12:g},{y + 3:g} v14" '
                  f'stroke="{S.BRIDGE}" stroke-width="3"/>')
        elif icon == "river":
            d.rect(x, y + 6, 16, 8, S.RIVER, rx=3)
        elif icon == "home":
            d.rect(x, y + 2, 16, 16, S.HOMESTEAD, rx=2)
        elif icon == "ranchero":
            _ranchero(d, cx, cy, 0)
        else:
            assert callable(icon)  # a symbol's drawing function
            icon(d, cx, cy)
        d.text(x + 22, y + 14, label, 10.5, S.INK)
        x += step
    return y - y0 + 28


def table_svg(game: MoonRiverGame, names: Sequence[str | None] | None = None,
              legend: bool = True) -> str:
    """The whole table as an SVG document (``names``: optional name per player id)."""
    rows = game.ranches[0].rows
    width = max(PAD + game.num_players * PANEL_W + PAD, 1000 if game.num_players == 2 else 970)
    d = _Svg()
    d.text(PAD, 24, S.status_text(game, names), 15, S.INK, "bold")
    _columns(d, game)
    saloon_x = PAD + 104 + 4 * (CELL + 12) + 14
    _saloon(d, game, saloon_x)
    _counts(d, game, saloon_x)
    if game.num_players == 2:
        _bonus_tiles(d, game, saloon_x + 5 * 76 + 10)
    y0 = TOP + 2 * COLUMN_ROW_H + 10
    panel_h = 54 + rows * CELL + CELL + 30
    scores = game.running_scores()
    for p in range(game.num_players):
        _ranch(d, game, p, PAD + p * PANEL_W, y0, panel_h, names, scores[p])
    height: float = y0 + panel_h + 10
    if legend:
        height += _legend(d, height, width) + 6
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height:g}" '
            f'viewBox="0 0 {width} {height:g}" font-family="{S.FONT}">'
            f'<rect width="100%" height="100%" fill="{S.BACKGROUND}"/>')
    return head + "".join(d.parts) + "</svg>"
