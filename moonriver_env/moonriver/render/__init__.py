"""Renderers for the table: text (engine.text), SVG (the play page) and an RGB image of it
(``render.image``, which needs the 'images' extra, imported where it is used)."""

from moonriver_env.engine.text import cell_key, ranch_text, table_text
from moonriver_env.moonriver.render.svg import table_svg

__all__ = ["cell_key", "ranch_text", "table_svg", "table_text"]
