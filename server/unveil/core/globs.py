"""Globs of the ``exclude`` settings: wcmatch flags and why a glob can never match.

Pure (no unveil imports), so configuration checking and discovery share it without an import
circle.
"""

from __future__ import annotations

import re

GLOB_FLAGS = None
"""wcmatch flags for ``exclude`` globs (set on first use: GLOBSTAR | BRACE | DOTGLOB | FORCEUNIX)."""


def glob_flags() -> int:
    global GLOB_FLAGS
    if GLOB_FLAGS is None:
        from wcmatch import glob

        GLOB_FLAGS = glob.GLOBSTAR | glob.BRACE | glob.DOTGLOB | glob.FORCEUNIX
    return GLOB_FLAGS


def glob_problem(pattern: str) -> str | None:
    """Why the exclude glob ``pattern`` can never match a path below its base folder, or
    ``None`` when it can: empty, absolute, climbing out with ``..``, a Windows separator, or
    rejected by wcmatch (e.g. an unbalanced ``[``)."""
    from wcmatch import glob

    p = str(pattern)
    if not p.strip().strip("/"):
        return "is empty"
    if p.startswith("/") or re.match(r"[A-Za-z]:[\\/]", p):
        return "is absolute (globs are relative to the configuration's folder)"
    if ".." in p.replace("\\", "/").split("/"):
        return "climbs out of the configuration's folder with '..'"
    if "\\" in p:
        return "uses '\\' (write folder separators as '/')"
    try:
        glob.translate(p, flags=glob_flags())
    except Exception as exc:  # noqa: BLE001 - wcmatch raises several types for bad patterns
        return f"is not a valid glob ({exc})"
    return None
