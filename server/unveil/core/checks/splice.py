"""A pattern's matches in the next version of an edited text, spliced from its matches in the
previous version: the matches before and after the edit are reused (those after it shifted by
the change in length) and only a stretch around the edit is searched again.

The language server re-analyses an open document on every keystroke; a one-character edit leaves
almost every match of every pattern where it was. :func:`splice` gives exactly what one
``finditer`` over the new text gives, for a pattern whose searches read a bounded stretch:

* an attempt to match at position ``x`` reads nothing outside ``[x - lb - 1, x + reach)``
  (``lb``: the lookbehind reach, :func:`~unveil.core.checks.pattern_analysis.lookbehind_reach`,
  plus one code point for ``\\b``, ``\\B`` and ``^``; ``reach``: the most a match reads from its
  start, lookaheads included, from :func:`~unveil.core.checks.pattern_analysis.match_width`);
* ``finditer`` tries positions in order and, after a match ``[s, e)``, goes on at ``e``; an
  attempt's outcome depends only on its position and the text it reads (no state is carried
  from one match to the next when no match is empty: a spliced list with an empty match is
  given up).

With ``A`` the previous text, ``B`` the new one, ``P`` the length of their common prefix and
``S`` of their common suffix (:func:`text_delta`), ``d = len(B) - len(A)``:

1. every attempt at ``x <= P - reach`` reads only the common prefix, so ``A``'s matches starting
   there are ``B``'s, and ``B``'s scan is then where ``A``'s was, past the last of them;
2. ``B`` is searched from there to ``T = len(B) - S + lb + 1``, the first position whose
   attempt reads only the common suffix (a search of ``[y, T)`` with ``endpos = T - 1 + reach``,
   which cuts nothing a match starting before ``T`` reads);
3. from ``B``'s cursor ``y >= T`` on, every attempt is ``A``'s at ``y - d``: when no match of
   ``A`` covers ``z = y - d`` strictly inside (``s < z < e``), ``A``'s scan tried ``z`` too, so
   ``B``'s remaining matches are ``A``'s from ``z`` on, shifted by ``d``. When one does,
   ``B`` is searched on to that match's end (shifted) and step 3 is taken again.

The previous version need not be the last one: only the delta between the two texts matters.
``tests/unit/test_splice.py`` compares spliced and fresh
matches over generated texts, edits and patterns.

Offsets are code points of the texts given.
"""

from __future__ import annotations

import time
from bisect import bisect_left, bisect_right
from typing import Callable, Iterable, NamedTuple

from unveil.core import folding
from unveil.core.checks.literal_index import records as _records

Record = tuple[int, int, int, int]
"""``(start, end, hit start, hit end)`` of one match (:func:`unveil.core.checks.literal_index.records`)."""


class TextDelta(NamedTuple):
    """How a new text differs from an old one: ``old[:prefix] == new[:prefix]`` and the last
    ``suffix`` code points of both are equal, ``prefix + suffix <= min(old_len, new_len)``."""

    old_len: int
    new_len: int
    prefix: int
    suffix: int


_BLOCK = 4096
"""Code points compared at a time when looking for the first difference."""


def around_edit(delta: TextDelta, longest: int) -> tuple[int, int]:
    """``[lo, hi)`` of the new text: every occurrence of a string of at most ``longest`` code
    points that overlaps the changed stretch ``[prefix, new_len - suffix)`` (or, for a
    deletion, crosses where it was) lies inside it; any other occurrence lies in the common
    prefix or suffix, where the old text had it too."""
    lo, hi = delta.prefix, delta.new_len - delta.suffix
    return max(0, lo - longest + 1), min(delta.new_len, hi + longest - 1)


def carried_absent(old: dict[str, bool], text: str, delta: TextDelta) -> dict[str, bool]:
    """For each string ``old`` maps to ``False`` (absent from the previous text): whether it occurs
    in ``text``, the new text that ``delta`` (:func:`text_delta`) relates to it. An occurrence in
    ``text`` lies inside the common prefix or the common suffix, where it occurred in the
    previous text too, or it overlaps the changed stretch ``[prefix, new_len - suffix)``: so a
    string absent before is looked for only around that stretch (its length minus one code point
    on either side), not in the whole text. Strings ``old`` maps to ``True`` are left out (an
    occurrence may have been edited away: the caller looks them up). Empty strings are left out."""
    find = text.find
    return {lit: find(lit, *around_edit(delta, len(lit))) >= 0 for lit, was in old.items() if not was and lit}


def common_prefix(a: str, b: str, limit: int | None = None) -> int:
    """Length of the longest common prefix of ``a`` and ``b`` (at most ``limit``): whole blocks
    compared first, then a binary search inside the first block that differs. O(prefix)
    in C-level comparisons."""
    n = min(len(a), len(b)) if limit is None else min(len(a), len(b), limit)
    i = 0
    while i + _BLOCK <= n and b.startswith(a[i : i + _BLOCK], i):
        i += _BLOCK
    lo, hi = i, min(i + _BLOCK, n)
    while lo < hi:  # a[i:lo] == b[i:lo]; the first difference is before hi
        mid = (lo + hi + 1) // 2
        if b.startswith(a[lo:mid], lo):
            lo = mid
        else:
            hi = mid - 1
    return lo


def common_suffix(a: str, b: str, limit: int | None = None) -> int:
    """Length of the longest common suffix of ``a`` and ``b`` (at most ``limit``)."""
    la, lb = len(a), len(b)
    n = min(la, lb) if limit is None else min(la, lb, limit)
    i = 0
    while i + _BLOCK <= n and b.endswith(a[la - i - _BLOCK : la - i], 0, lb - i):
        i += _BLOCK
    lo, hi = i, min(i + _BLOCK, n)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if b.endswith(a[la - mid : la - lo], 0, lb - lo):
            lo = mid
        else:
            hi = mid - 1
    return lo


def text_delta(old: str, new: str) -> TextDelta:
    """The :class:`TextDelta` of ``new`` against ``old``."""
    if old is new or old == new:
        n = len(new)
        return TextDelta(n, n, n, 0)
    p = common_prefix(old, new)
    s = common_suffix(old, new, min(len(old), len(new)) - p)
    return TextDelta(len(old), len(new), p, s)


CASEFOLD_REUSE_MIN = 4096
"""Code points from which :func:`casefolded` builds on the last version's case folding."""


def casefold_from(prev: tuple[str, str] | None, text: str) -> str:
    """``text.casefold()``, from ``prev`` = ``(old_text, old_text.casefold())``: the folding of
    the common prefix and suffix reused and only the stretch between them folded. Exact because
    ``str.casefold`` folds each code point alone (full case folding, CaseFolding.txt, has no
    context: unlike ``str.lower``, which lowers a final capital sigma by what surrounds it), so
    the folding of a concatenation is the concatenation of the foldings. Without ``prev``, or
    when the old folding changed the text's length (its offsets no longer match), the whole
    text is folded."""
    if prev is None or len(prev[1]) != len(prev[0]):
        return folding.casefold(text)
    old, old_folded = prev
    d = text_delta(old, text)
    return (
        old_folded[: d.prefix] + text[d.prefix : d.new_len - d.suffix].casefold() + old_folded[d.old_len - d.suffix :]
    )


def casefolded(name: str, text: str) -> str:
    """``text.casefold()``. In an open document's analysis (:func:`unveil.core.scope.document_cache`)
    and for a text of :data:`CASEFOLD_REUSE_MIN` code points or more, built by
    :func:`casefold_from` from the last version's folding of the text called ``name`` (kept in
    the document cache's ``kept``): an edit folds the edited stretch, not the whole text
    (2 ms for the 294 KB benchmark file)."""
    from unveil.core import scope

    cache = scope.document_cache()
    if cache is None or len(text) < CASEFOLD_REUSE_MIN:
        return folding.casefold(text)
    key = ("casefold", name)
    folded = casefold_from(cache.kept.get(key), text)
    cache.kept[key] = (text, folded)
    return folded


class Entry(NamedTuple):
    """The matches of one pattern over one text: the :data:`Record` list in order and their
    starts, and the ``lb`` and ``reach`` (code points) that held for that text."""

    records: list
    starts: list
    lb: int
    reach: int


def entry(lb: int, reach: int, records: list) -> Entry | None:
    """An :class:`Entry` (its starts listed once); ``None`` when a match is empty (such a list
    cannot be spliced)."""
    starts = [r[0] for r in records]
    if any(r[0] == r[1] for r in records):
        return None
    return Entry(records, starts, lb, reach)


EMPTY = Entry([], [], 0, 0)
"""The entry of a pattern without a match (bounds play no part in splicing it)."""

_RUN_RX: dict[str, tuple] = {}


def _run_rx(cls: str):
    got = _RUN_RX.get(cls)
    if got is None:
        import regex

        from unveil.core.checks.pattern_analysis import FLAGS

        body = "(?:" + cls + ")+"
        got = _RUN_RX[cls] = (regex.compile(body, FLAGS), regex.compile("(?r)" + body, FLAGS))
    return got


def run_through(text: str, cls: str, a: int, b: int) -> int:
    """An upper bound of the longest run of the `regex` class ``cls`` in ``text`` that overlaps
    ``[a, b)`` or touches it (for ``a == b``: that crosses ``a``): the run ending at ``a``, the
    whole stretch and the run starting at ``b``, in code points (``""``: 1)."""
    if not cls:
        return 1
    fwd, back = _run_rx(cls)
    m = back.match(text, 0, a) if a > 0 else None
    left = m.end() - m.start() if m else 0
    m = fwd.match(text, b) if b < len(text) else None
    right = m.end() - m.start() if m else 0
    return left + (b - a) + right


class Reading:
    """What one reading of an open document keeps between versions: the ``text`` of the
    version its ``entries`` (pattern key → :class:`Entry`) were found in, and ``runs``: for
    each class (a `regex` class source as in :func:`~unveil.core.checks.pattern_analysis.match_width`),
    an upper bound of its longest run in ``text`` (code points)."""

    def __init__(
        self, text: str, entries: dict, runs: dict, bounds: dict | None = None, quiet=None, present=None
    ) -> None:
        self.text, self.entries, self.runs = text, entries, runs
        self.bounds = bounds or {}  # the caller's bounds per pattern for this text
        self.quiet = quiet  # the caller's patterns known empty for this text and where (see Session.quiet)
        self.present = present  # the caller's literal → whether it occurs in this text (see Session.present)


class Session:
    """One version of one reading being analysed: ``base`` (the previous version's
    :class:`Reading`, or ``None`` for the first), the new ``text`` and its :class:`TextDelta`,
    upper bounds of its class runs (``run``), and the entries found for it (``entries``), which
    :meth:`SpliceLog.commit` keeps for the next version."""

    def __init__(self, base: Reading | None, text: str, exact_run: Callable[[str], int]) -> None:
        self.base = base
        self.text = text
        self.delta = text_delta(base.text, text) if base is not None else None
        self.entries: dict = {}
        self.runs: dict[str, int] = {}
        self.bounds: dict = {}  # the caller's bounds per pattern, for this version (see reuse_bounds)
        self.scratch: dict = {}  # the caller's other per-version values
        self.reused = False  # whether bounds start from the previous version's (reuse_bounds)
        self.quiet = None  # kept for the next version: the caller's record of patterns without a match
        self.present: dict[str, bool] | None = None  # kept too: literals looked up in this text (see carried_absent)
        self._exact_run = exact_run

    def run(self, cls: str) -> int:
        """An upper bound of the longest run of ``cls`` in :attr:`text`: the previous version's
        bound or the run through the edited stretch (:func:`run_through`), whichever is larger
        (a run of the new text lies in the common prefix or suffix, where it was a run of the
        previous text or part of one, or it overlaps the edit); exact (``exact_run``) for the
        first version and for a class the previous version did not bound."""
        got = self.runs.get(cls)
        if got is None:
            old = self.base.runs.get(cls) if self.base is not None else None
            d = self.delta
            if old is None or d is None:
                got = self._exact_run(cls)
            else:
                got = max(old, run_through(self.text, cls, d.prefix, d.new_len - d.suffix))
            self.runs[cls] = got
        return got

    def reuse_bounds(self) -> None:
        """Start from the previous version's :attr:`bounds` when every class run bounded for it
        bounds this text the same (:meth:`run`): bounds are functions of those runs alone."""
        base = self.base
        if base is None or not base.bounds:
            return
        if all(self.run(cls) == v for cls, v in base.runs.items()):
            self.bounds = dict(base.bounds)
            self.reused = True

    def bounds_of(self, pat) -> tuple[int, int] | None:
        """``(lb, reach)`` of the compiled pattern ``pat`` in :attr:`text` for :func:`splice`
        (:func:`~unveil.core.checks.pattern_analysis.reach_bound` and the reach of
        :func:`~unveil.core.checks.pattern_analysis.match_width` plus two, class runs bounded
        by :meth:`run`), or ``None`` when either is unbounded or unknown."""
        from unveil.core.checks.pattern_analysis import match_width, reach_bound

        w = match_width(pat.pattern, pat.flags)
        r = reach_bound(pat.pattern, pat.flags)
        if w is None or r is None:
            return None
        lb = r if not isinstance(r, tuple) else sum(c * self.run(k) for k, c in r)
        return lb, sum(k * self.run(cls) for cls, k in w[1]) + 2

    def records(self, key, pat, timeout: float, full: Callable[[], Iterable[Record]]) -> list[Record]:
        """Every match record of ``pat`` in :attr:`text` (one ``finditer``'s): spliced from the
        previous version's entry under ``key`` when there is one and the pattern's searches are
        bounded (:meth:`bounds_of`), else ``list(full())``; kept under ``key`` for the next
        version when bounded. The literal prefilter of
        :func:`~unveil.core.checks.pattern_analysis.required_literals` skips the searches near
        the edit that cannot match. Raises ``TimeoutError`` as ``full()`` or :func:`splice` does."""
        from unveil.core.checks.literal_index import may_match
        from unveil.core.checks.pattern_analysis import required_literals

        bounds = self.bounds_of(pat)
        prev = self.base.entries.get(key) if bounds is not None and self.base is not None else None
        got: list[Record] | None = None
        if prev is not None and bounds is not None and self.delta is not None:
            clauses = required_literals(pat.pattern, pat.flags)
            text = self.text
            maybe = (lambda a, b: may_match(clauses, text[a:b].casefold(), {})) if clauses else None
            try:
                got = splice(pat, prev, text, self.delta, bounds[0], bounds[1], timeout, maybe)
            except TimeoutError:
                got = None
        if got is None:
            got = list(full())
        if bounds is not None:
            kept = entry(bounds[0], bounds[1], got)
            if kept is not None:
                self.entries[key] = kept
        return got

    def window(self, lb: int, reach: int) -> tuple[int, int]:
        """``[a, b)``: every match that a splice with these bounds (or smaller) searches for lies
        inside it."""
        d = self.delta
        if d is None:
            return 0, len(self.text)
        n = d.new_len
        return max(0, d.prefix - reach + 1), min(n, n - d.suffix + lb + reach)


def _no_run(cls: str) -> int:
    raise RuntimeError("a committed splice session asked for a class run")


class SpliceLog:
    """The whole-text matches of the pattern rules over the last analysed version of each
    reading of one open document (the language server keeps one per document, in
    :class:`unveil.core.incremental.DocumentCache`)."""

    def __init__(self) -> None:
        self.readings: dict[str, Reading] = {}
        # for tests and profiles: pattern lists spliced, known empty without a search, searched in full
        self.spliced = self.skipped = self.full = 0
        self.quiet_rules = 0  # rules skipped whole (their patterns counted in skipped too)

    def has_base(self, name: str) -> bool:
        """Whether a previous version of the reading ``name`` was kept."""
        return name in self.readings

    def begin(self, name: str, text: str, exact_run: Callable[[str], int]) -> Session:
        """A :class:`Session` for this version of the reading ``name`` (``exact_run(cls)``:
        the exact longest run of ``cls`` in ``text``, used where no bound carries over)."""
        return Session(self.readings.get(name), text, exact_run)

    def commit(self, name: str, session: Session) -> None:
        """Keep what ``session`` found for the next version (a version whose analysis stopped
        before its end commits nothing: the previous one stays, as valid as it was). The session
        is done: it lets go of ``exact_run`` (a method of its caller's object, which holds the
        session: a cycle that kept each version's texts and matches until the collector's next
        full pass)."""
        self.readings[name] = Reading(
            session.text, session.entries, session.runs, session.bounds, session.quiet, session.present
        )
        session._exact_run = _no_run


def splice(
    pat,
    prev: Entry,
    text: str,
    delta: TextDelta,
    lb: int,
    reach: int,
    timeout: float,
    maybe: Callable[[int, int], bool] | None = None,
) -> list[Record] | None:
    """The records of every match of ``pat`` in ``text`` (as one ``finditer`` over it), from
    ``prev``, its matches in the previous text, and ``delta`` (:func:`text_delta` of the
    previous text and ``text``). ``lb``, ``reach``: the pattern's bounds for ``text`` (the larger
    of these and ``prev``'s are used). ``maybe(a, b)``: ``False`` when no match can lie inside
    ``text[a:b]`` (a literal prefilter); searches it rules out are skipped. ``None`` when a match
    is empty (the argument above does not hold); raises ``TimeoutError`` when the searches
    together take longer than ``timeout`` seconds."""
    lb = max(lb, prev.lb)
    reach = max(reach, prev.reach)
    old, starts = prev.records, prev.starts
    n = delta.new_len
    d = delta.new_len - delta.old_len
    k = bisect_right(starts, delta.prefix - reach)  # matches whose searches read only the prefix
    out = old[:k]
    y = max(out[-1][1] if k else 0, delta.prefix - reach + 1, 0)
    stop = max(n - delta.suffix + lb + 1, y)  # attempts from here on read only the suffix
    deadline = time.monotonic() + timeout
    while True:
        if y < stop and y < n:
            endpos = min(n, stop - 1 + reach)
            if maybe is None or maybe(y, endpos):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("regex timed out")
                got = list(_records(pat.finditer(text, y, endpos, timeout=left), stop))
                for r in got:
                    if r[0] == r[1]:
                        return None
                out.extend(got)
                if got and got[-1][1] > stop:
                    stop = got[-1][1]
            y = stop
        z = y - d
        j = bisect_left(starts, z)
        if j and old[j - 1][1] > z:  # a match of the old text covers z: its scan never tried z
            stop = old[j - 1][1] + d
            continue
        break
    if d:
        out.extend([(s + d, e + d, hs + d, he + d) for s, e, hs, he in old[j:]])
    else:
        out.extend(old[j:])
    return out
