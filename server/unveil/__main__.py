"""``python -m unveil`` is the same as the ``unveil`` command: both run :func:`main`."""

import gc


def main() -> int:
    """The ``unveil`` command (``[project.scripts]``): :func:`unveil.cli.console_main` with the
    cyclic collector off while ``unveil.cli`` and what it imports load: their objects all live
    until the process exits, and the collections meanwhile traversed them again and again (about
    6 ms of a 0.3 s ``unveil check`` of one file, measured paired). ``console_main`` turns it back
    on with those objects frozen (``serve``: once the first diagnostics are out,
    :func:`unveil.lsp.memory.resume_collections`)."""
    gc.disable()
    from unveil.cli import console_main

    return console_main()


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
