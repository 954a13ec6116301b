"""What the checks of one analysis share, and nothing longer: per-text data (the model view, the
pattern rules' document state, the decoded payloads) that several checks of one
:func:`unveil.core.analyze.analyze` call build from the same text, kept for that call only.

Before, each of these was kept in a module-level table of "the last few texts" (by identity), so
a long-running process (the language server) held the last six versions of whatever it had
analysed: about 20 MiB per version of the 294 KB corpus file (its model view's offset map alone
is one Python ``int`` per code point), 185 MiB after thirty edits of it. Now the table lives as
long as the analysis that filled it.

Shape: a ``dict`` per analysis, in a :class:`contextvars.ContextVar`, so analyses on different
threads (the server's workers) and nested ones (an ``@import`` analysed inside its importer's
analysis) each see their own. Outside any :func:`analysis` block, :func:`table` is ``None`` and
callers compute without caching (same results, nothing kept).
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Callable, Iterator, TypeVar

T = TypeVar("T")

GC_THRESHOLD = (10_000, 10, 10)
"""The collector's thresholds for a process that analyses (CPython's default is
``(700, 10, 10)``): an analysis allocates millions of short-lived objects and frees them by
reference counting, few of them in cycles. Set by the command line (``unveil.cli.console_main``)
and the language server (``unveil.lsp.memory.fewer_collections``, which also collects in full
when idle). Measured on this machine: ``--no-cache --jobs 1`` over the 3.4 MB awesome-cursorrules
folder of the corpus, 19.1 s and 194 MiB with the default, 15.9 s and 201 MiB with this, 17.5 s
and 217 MiB with ``(50_000, 20, 100)``; through the language server, 34 edits of the 294 KB
benchmark file (a wrapper counting the collector's passes through ``gc.callbacks``), 1,216
young, 110 middle and 9 full passes, about 0.6 s, with the default (the full ones about 30 ms
each: ten such edits leave about 0.3 MB in cycles), 54, 5 and none, about 0.2 s, with this."""

_CURRENT: ContextVar[dict | None] = ContextVar("unveil_analysis_scope", default=None)


_DOCUMENT = " document cache"  # not a kind: kinds are plain names
_PAUSE = " pause"
_MEMOS = " memos"


@contextmanager
def analysis(document_cache=None, pause: Callable[[], object] | None = None) -> Iterator[dict]:
    """Open a fresh table for the checks run inside the block; it is dropped on exit (the
    enclosing block's table, if any, is current again). ``document_cache``: the analysed
    document's :class:`unveil.core.incremental.DocumentCache` (the language server's, kept
    across versions), which :func:`document_cache` then returns to code that has no context
    object (the command judges). ``pause``: called at every :func:`checkpoint` inside the block
    (a nested block without one inherits it)."""
    outer = _CURRENT.get()
    if pause is None and outer is not None:
        pause = outer.get(_PAUSE)
    new: dict = {} if document_cache is None else {_DOCUMENT: document_cache}
    if pause is not None:
        new[_PAUSE] = pause
    token = _CURRENT.set(new)
    try:
        yield _CURRENT.get()  # type: ignore[misc]
    finally:
        _CURRENT.reset(token)


def table() -> dict | None:
    """The current analysis' table, or ``None`` outside :func:`analysis`."""
    return _CURRENT.get()


def checkpoint() -> None:
    """A point between two units of a long check (a pattern rule, a sentence) where the current
    analysis may wait: calls its ``pause`` (see :func:`analysis`), if any. The language server's
    background analyses of files on disk wait there while an open document is analysed, so a
    keystroke does not share the interpreter with them (:mod:`unveil.lsp.features.workspace`).
    Waiting changes no result; never raises (a failing ``pause`` is ignored)."""
    t = _CURRENT.get()
    if t is not None:
        p = t.get(_PAUSE)
        if p is not None:
            try:
                p()
            except Exception:  # noqa: BLE001 - a pause is advisory
                pass


def memo(name: object) -> dict | None:
    """The memo called ``name``: the open document's being analysed (kept in its
    :class:`unveil.core.incremental.DocumentCache`, so it goes with it, and serves the next
    version), else the current analysis' (dropped when it returns: it serves the units a file
    repeats); ``None`` outside an analysis (the step computes without keeping anything).

    The steps that memoise a unit of text (a line, a sentence, a line break: the table in
    ``docs/architecture.md``) pay off across versions only for an open document, which finds
    most units again. Kept for the whole process, they held every unit of every file analysed:
    over every sixth benign corpus file in one process, 114 MB peak RSS and 13.9 s of CPU with
    process-wide memos, 78 MB and 13.3 s with none. A server with many files open keeps the
    units of the few documents it keeps caches for."""
    t = _CURRENT.get()
    if t is None:
        return None
    cache = t.get(_DOCUMENT)
    memos = cache.memos if cache is not None else t.setdefault(_MEMOS, {})
    got = memos.get(name)
    if got is None:
        got = memos[name] = {}
    return got


def keep(memo: dict, key: object, value: object, most: int) -> None:
    """``memo[key] = value``, the memo emptied first when it holds ``most`` entries."""
    if len(memo) >= most:
        memo.clear()
    memo[key] = value


def document_cache():
    """The current analysis' document cache (see :func:`analysis`), or ``None`` (the CLI, or
    outside an analysis)."""
    t = _CURRENT.get()
    return None if t is None else t.get(_DOCUMENT)


def shared(kind: str, text: str, extra: object, build: Callable[[], T], keep: int | None = None) -> T:
    """``build()``, computed once per (``kind``, identity of ``text``, ``extra``) in the current
    analysis (``extra`` is compared by identity or value, as a dict key). ``text`` itself is kept
    in the entry, so its identity cannot be reused for another string while the entry lives.
    ``keep``: at most this many entries of ``kind`` are kept, the oldest dropped first (the
    decoded payloads of one document can be many: each payload's state is shared by the checks
    that rescan it right after one another, not for the whole analysis). Outside an analysis,
    ``build()`` every time."""
    t = _CURRENT.get()
    if t is None:
        return build()
    entries = t.get(kind)
    if entries is None:
        entries = t[kind] = {}
    key = (id(text), extra)
    got = entries.get(key)
    if got is not None and got[0] is text:
        return got[1]
    value = build()
    entries[key] = (text, value)
    if keep is not None and len(entries) > keep:
        del entries[next(iter(entries))]
    return value


LOWERED_SHARE_MAX = 1_000_000
"""Code points above which :func:`lowered` lowercases anew at each call instead of keeping the
copy for the whole analysis (a 10 MB file's copy raised its peak memory by about 19 MiB)."""


def lowered(text: str) -> str:
    """``text.lower()``, computed once per string in the current analysis (the decoders' triggers,
    their ``data:`` search and the prose candidates each lowered the whole text); a text over
    :data:`LOWERED_SHARE_MAX` code points is lowercased at each call and not kept."""
    from unveil.core import folding

    if len(text) > LOWERED_SHARE_MAX:
        return folding.lower(text)
    return shared("lower", text, None, text.lower)


def ascii_bytes(text: str) -> bytes:
    """``text.encode("ascii", "replace")``: one byte per code point, every non-ASCII one a ``?``
    (the decoders' and the Unicode check's character-class scans map these bytes with
    ``bytes.translate``). Computed once per string in the current analysis (four passes each
    encoded the text: about a millisecond each on a 294 KB file with non-ASCII text); a text
    over :data:`LOWERED_SHARE_MAX` code points is encoded at each call and not kept, but inside
    :func:`ascii_kept` for it."""
    if len(text) > LOWERED_SHARE_MAX:
        kept = _ASCII_KEPT.get()
        if kept is not None and kept[0] is text:
            if kept[1] is None:
                kept[1] = text.encode("ascii", "replace")
            return kept[1]
        return text.encode("ascii", "replace")
    return shared("ascii", text, None, lambda: text.encode("ascii", "replace"))


_ASCII_KEPT: ContextVar[list | None] = ContextVar("unveil_ascii_kept", default=None)


@contextmanager
def ascii_kept(text: str) -> Iterator[None]:
    """Within the block, :func:`ascii_bytes` of ``text`` is encoded once and kept, whatever its
    length (the decoders of one text each encoded a long one anew: up to four 10 MB copies
    alive together for a padded 10 MB file); dropped at the block's end. Blocks do not nest: an inner
    one for another text replaces the outer one until it ends."""
    token = _ASCII_KEPT.set([text, None])
    try:
        yield
    finally:
        _ASCII_KEPT.reset(token)
