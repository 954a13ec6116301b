"""Command line (STUB — owned by the CLI work): ``unveil serve|check|cost``."""

from __future__ import annotations

import sys


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "serve":
        from unveil.lsp.server import run

        return run(argv[1:])
    print("usage: unveil serve|check|cost", file=sys.stderr)
    return 2
