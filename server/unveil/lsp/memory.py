"""The language server's resident memory: fewer malloc arenas, and free memory given back when idle.

A long-lived server analyses many versions of many documents; each analysis allocates and frees
a few times the document's size in temporary objects. glibc's allocator keeps what is freed for
reuse, spread over one arena per thread that ever allocated (up to eight per CPU), so the
server's RSS stays at the high-water mark of every thread's peaks. Two glibc calls
(``mallopt(3)``, ``malloc_trim(3)``; through :mod:`ctypes`) bound that:

* :func:`limit_arenas` (``M_ARENA_MAX``), called before the server starts its threads: its
  threads take turns on the interpreter lock anyway, so they gain nothing from arenas of their
  own. Measured with ``benchmarks/bench.py`` (RSS with 52 files open): 219 → 196 MiB with one
  arena, 201 MiB with two; typing latency unchanged.
* :func:`trim` (``malloc_trim(0)``: free pages at the top of the heap and inside each arena go
  back to the system), called by the server after a second without analysis once at least
  :data:`TRIM_AFTER_BYTES` of text were analysed since the last trim, and after a workspace
  scan (:class:`IdleTrimmer`), after a full collection (:func:`collect_and_trim`).
* :func:`fewer_collections`: the collector's thresholds :data:`GC_THRESHOLD`, so that typing
  does not pay for full collections that find next to nothing (an analysis frees its objects
  by reference counting: ten edits of the 294 KB benchmark file leave about 1,300 objects in
  cycles, 0.3 MB), while what cycles there are go at the idle trim.
* :func:`pause_collections` / :func:`resume_collections`: no collection at all while the server
  starts (imports, the warm-up analysis, the first documents' analyses: hundreds of thousands
  of objects that live as long as the server, about 17,000 in cycles), one full collection
  after the first diagnostics are out, then every object alive frozen (``gc.freeze``: never
  traversed again).

On any other C library (musl, macOS, Windows) both do nothing and return ``False``.
"""

from __future__ import annotations

import threading
from functools import lru_cache

from unveil.core import heap, scope

M_ARENA_MAX = -8
"""``mallopt`` parameter number of ``M_ARENA_MAX`` (glibc ``malloc.h``)."""

TRIM_AFTER_BYTES = 1_000_000
"""Code points of analysed text (all versions, all documents) after which an idle server trims."""


@lru_cache(maxsize=1)
def _glibc():
    """glibc's handle, or ``None`` on any other C library (:func:`unveil.core.heap.glibc`)."""
    return heap.glibc()


def limit_arenas(n: int = 1) -> bool:
    """Let glibc's allocator use at most ``n`` arenas; ``True`` when it accepted."""
    libc = _glibc()
    if libc is None:
        return False
    try:
        return bool(libc.mallopt(M_ARENA_MAX, n))
    except (AttributeError, OSError):
        return False


GC_THRESHOLD = scope.GC_THRESHOLD
"""The language server's collector thresholds, the command line's
(:data:`unveil.core.scope.GC_THRESHOLD`, where they are measured)."""


def fewer_collections() -> None:
    """Set :data:`GC_THRESHOLD` (process-wide: the language server's entry point calls it)."""
    import gc

    gc.set_threshold(*GC_THRESHOLD)


_resume_lock = threading.Lock()
_paused = False


def pause_collections() -> None:
    """Turn the cyclic collector off until :func:`resume_collections` (the server's entry point
    calls it first thing). The imports of a starting server (``lsprotocol``'s classes, the
    checks, the rules) make hundreds of thousands of objects that all live as long as the
    server, and each collection meanwhile traverses all of them again."""
    import gc

    global _paused
    with _resume_lock:
        _paused = True
        gc.disable()


def resume_collections() -> bool:
    """After :func:`pause_collections`: one full collection (what start-up left in cycles), every
    object still alive moved to the permanent generation (``gc.freeze``), and the collector on
    again with :data:`GC_THRESHOLD`. The server calls it once its first diagnostics are out,
    before loading the tokenizer (:meth:`unveil.lsp.server.UnveilServer.watch_tokenizer`), and
    at the latest :data:`RESUME_AFTER_S` after start. Idempotent; ``True`` when this call
    resumed. The first documents' analyses and caches are frozen with the rest: frozen objects
    in a reference cycle would never be freed once dropped, and these hold none (0 of 63,163
    objects for the 294 KB corpus file after four versions, measured;
    ``tests/unit/test_lsp_memory.py`` keeps it so), so reference counting frees them."""
    import gc

    global _paused
    with _resume_lock:
        if not _paused:
            return False
        _paused = False
        gc.collect()
        gc.freeze()
        gc.set_threshold(*GC_THRESHOLD)
        gc.enable()
    return True


RESUME_AFTER_S = 10.0
"""Seconds after start after which the server resumes collections even if it never published
diagnostics (a client that opens nothing)."""


def collect_and_trim() -> bool:
    """A full collection (the cycles typing left behind: with :data:`GC_THRESHOLD` the collector
    rarely reaches the oldest generation by itself), then :func:`trim`. Returns :func:`trim`'s
    answer."""
    import gc

    gc.collect()
    return trim()


def trim() -> bool:
    """Give free heap memory back to the system; ``True`` when some was released
    (:func:`unveil.core.heap.trim`)."""
    libc = _glibc()
    return False if libc is None else heap.trim(libc)


class IdleTrimmer:
    """Counts analysed text (:meth:`analysed`) and, once :data:`TRIM_AFTER_BYTES` have gone by,
    trims in ``executor`` after ``idle_s`` seconds in which no analysis finished and ``busy()``
    (more analysis pending) is false. Runs on the server's event loop."""

    def __init__(self, loop, executor, busy, idle_s: float = 1.0) -> None:
        self.loop, self.executor, self.busy, self.idle_s = loop, executor, busy, idle_s
        self.pending = 0
        self.trims = 0
        self._timer = None

    def analysed(self, size: int) -> None:
        """An analysis of ``size`` code points finished: (re)start the idle timer when due."""
        self.pending += size
        if self.pending < TRIM_AFTER_BYTES:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self.loop.call_later(self.idle_s, self._fire)

    def soon(self) -> None:
        """Trim after the next idle period whatever was counted (e.g. a workspace scan ended)."""
        self.analysed(TRIM_AFTER_BYTES)

    def _fire(self) -> None:
        self._timer = None
        try:
            busy = self.busy()
        except Exception:  # noqa: BLE001 - counted as busy: try again later
            busy = True
        if busy:
            self._timer = self.loop.call_later(self.idle_s, self._fire)
            return
        self.pending = 0
        self.trims += 1
        self.loop.run_in_executor(self.executor, collect_and_trim)
