"""Renderers for the table: text (engine.text), SVG (the play page) and an RGB image of it
(``render.image``, which needs the 'images' extra, imported where it is used)."""

from moonriver_env.moonriver.render.svg import table_svg
from moonriver_env.moonriver.rules.text import cell_key, ranch_text, table_text

__all__ = ["cell_key", "ranch_text", "table_svg", "table_text"]
