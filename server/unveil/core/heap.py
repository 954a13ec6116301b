"""Free heap memory given back to the system (glibc's ``malloc_trim(3)``, through :mod:`ctypes`).

glibc keeps freed memory for reuse: after a process drops many objects its resident set stays
at its high-water mark. :func:`trim` returns the free pages at the top of the heap and inside
each arena. The language server trims when idle (:mod:`unveil.lsp.memory`); ``unveil check``
trims before it forks its pool (:func:`unveil.cli.analyze_paths`), so that the workers do not
inherit, as resident pages, what the parent has just freed (every file's bytes).

On any other C library (musl, macOS, Windows) :func:`glibc` is ``None`` and :func:`trim` does
nothing.
"""

from __future__ import annotations

import os


def glibc():
    """glibc's handle (``ctypes.CDLL``), or ``None`` on any other C library."""
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return None
    except (AttributeError, ValueError, OSError):  # no confstr (Windows), or not glibc
        return None
    try:
        import ctypes

        return ctypes.CDLL(None)
    except OSError:
        return None


def trim(libc=None) -> bool:
    """``malloc_trim(0)`` through ``libc`` (default :func:`glibc`); ``True`` when memory was
    released, ``False`` when none was or there is no glibc. Releases the interpreter lock while
    glibc works (a :mod:`ctypes` call). Never raises."""
    libc = glibc() if libc is None else libc
    if libc is None:
        return False
    try:
        return bool(libc.malloc_trim(0))
    except (AttributeError, OSError):
        return False
