"""One module per LSP feature, each a thin layer over :mod:`unveil.core` with a
``register(server)`` function (esbonio style)."""
