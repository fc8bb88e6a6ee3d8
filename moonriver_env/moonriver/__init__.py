"""Moon River, one package: ``rules`` (the readable reference engine, Python + numpy),
``core`` (the compiled core, C++17, decision for decision the same game), ``backend`` (one
name picks either), ``contract`` (what both offer), ``observation`` and ``actions``,
``aec_env`` and ``gym_env`` (PettingZoo and Gymnasium), ``batch`` (many games a call),
``search`` (the batched network search), ``openspiel`` (the OpenSpiel game) and ``render``."""
