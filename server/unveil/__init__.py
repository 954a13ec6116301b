"""unveil: reveal hidden instructions in AI agent markdown and show its token cost.

The package is split in two layers:

* :mod:`unveil.core` — the pure analysis core (no LSP imports). Text in, findings and a token
  report out, all positions in code-point offsets.
* :mod:`unveil.lsp` — a thin pygls 2.x adapter over the core; :mod:`unveil.cli` and
  :mod:`unveil.reporters` are the command-line adapters.
"""

__version__ = "0.1.0"
