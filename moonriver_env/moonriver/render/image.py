"""The table as an RGB image: the play page's SVG (``render.svg``) rasterised with resvg."""

from __future__ import annotations

import io
from functools import lru_cache

import numpy as np
from PIL import Image

from moonriver_env.common.cli import require
from moonriver_env.moonriver.contract import MoonRiverGame
from moonriver_env.moonriver.render.svg import table_svg


@lru_cache(maxsize=2)  # render() is often called again on an unchanged table
def _raster(svg: str) -> np.ndarray:
    require("resvg_py", what="render_mode='rgb_array'")  # the 'images' extra, named if missing
    import resvg_py

    png = resvg_py.svg_to_bytes(svg_string=svg, background="#ffffff")
    with Image.open(io.BytesIO(bytes(png))) as image:
        rgb = np.asarray(image.convert("RGB"), dtype=np.uint8).copy()
    rgb.flags.writeable = False
    return rgb


def svg_to_rgb(svg: str) -> np.ndarray:
    """Rasterise an SVG document to an H x W x 3 uint8 array (white under transparency)."""
    return _raster(svg).copy()


def table_image(game: MoonRiverGame, names: list[str] | None = None) -> np.ndarray:
    """The table, legend included, as an H x W x 3 uint8 array (the play page's picture)."""
    return svg_to_rgb(table_svg(game, names))
