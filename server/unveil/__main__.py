"""``python -m unveil`` is the same as the ``unveil`` command."""

from unveil.cli import console_main

if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(console_main())
