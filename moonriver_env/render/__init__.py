"""Renderers for the table: text (engine.text) and an RGB image (``table_image``)."""

from moonriver_env.engine.text import ranch_text, table_text
from moonriver_env.render.image import table_image

__all__ = ["ranch_text", "table_image", "table_text"]
