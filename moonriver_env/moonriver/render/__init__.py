"""Renderers for the table: text, SVG (the play page) and ``render.image`` (the 'images' extra)."""

from moonriver_env.moonriver.render.svg import table_svg
from moonriver_env.moonriver.rules.text import cell_key, ranch_text, table_text

__all__ = ["cell_key", "ranch_text", "table_svg", "table_text"]
