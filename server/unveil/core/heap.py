"""Free heap memory given back to the system (glibc's ``malloc_trim(3)``, through :mod:`ctypes`).

glibc keeps freed memory for reuse: after a process drops many objects its resident set stays
at its high-water mark. :func:`trim` returns the free pages at the top of the heap and inside
each arena. The language server trims when idle (:mod:`unveil.lsp.memory`); ``unveil check``
trims before it forks its pool (:func:`unveil.cli.analyze_paths`), so that the workers do not
inherit, as resident pages, what the parent has just freed (every file's bytes).

:func:`map_large_blocks` (``mallopt(3)``) keeps large blocks out of the heap for the rest of a
process that analyses a big text.

On any other C library (musl, macOS, Windows) :func:`glibc` is ``None`` and :func:`trim` and
:func:`map_large_blocks` do nothing.
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


M_MMAP_THRESHOLD = -3
"""``mallopt`` parameter number of the mapping threshold (glibc's ``malloc.h``)."""

MAP_FROM = 128 * 1024
"""Bytes from which :func:`map_large_blocks` has glibc map a block on its own: glibc's own
starting threshold (mallopt(3))."""

_mapped_large = False


def map_large_blocks(libc=None) -> bool:
    """``mallopt(M_MMAP_THRESHOLD, MAP_FROM)`` through ``libc`` (default :func:`glibc`), once per
    process: from then on a block of :data:`MAP_FROM` bytes or more is mapped on its own and
    unmapped when freed. glibc starts there too, but raises its threshold (up to 32 MiB on 64-bit
    systems) each time such a block is freed (mallopt(3), "M_MMAP_THRESHOLD": dynamic
    adjustment), after which the copies an analysis of a big file makes and drops check after
    check (20 MB each for a 10 MB file held in two bytes a code point) come from the heap and
    leave it fragmented at its high-water mark: the padded 10 MB ``AGENTS.md`` peaked at 334 MiB
    in-process with the adjustment and 299 MiB without (``benchmarks/profile.md``, session 24).
    Called by :func:`unveil.core.analyze.analyze` for a text of
    :data:`unveil.core.analyze.BIG_TEXT` code points or more. ``True`` when set (now or before),
    ``False`` without glibc. Never raises."""
    global _mapped_large
    if _mapped_large:
        return True
    libc = glibc() if libc is None else libc
    if libc is None:
        return False
    try:
        _mapped_large = bool(libc.mallopt(M_MMAP_THRESHOLD, MAP_FROM))
    except (AttributeError, OSError):
        return False
    return _mapped_large
