"""Moon River: the reference engine (``rules``), the compiled core (``core``), the environments,
batched games (``batch``), search, OpenSpiel and rendering. See docs/design.md."""
