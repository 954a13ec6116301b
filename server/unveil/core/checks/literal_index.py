"""The literal index of one document: which rule literals occur, on which lines, and the windows
around them where a bounded-width pattern can match (see :mod:`unveil.core.checks.pattern_analysis`).

* :class:`Lines` — line index of the case-folded text: candidate lines and windows per literal;
* :class:`LiteralIndex` — one Aho–Corasick automaton (``ahocorasick-rs``) over every rule literal of
  :data:`AC_MIN_LEN` or more code points: one pass per text gives which occur and where, for
  :func:`may_match`, the candidate lines and the windows;
* :func:`may_match` — whether every clause of a pattern's required literals has a member present;
* :func:`in_spans` / :func:`in_windows` — a pattern's matches restricted to those lines or windows,
  with one time bound for them all, the same matches as one ``finditer`` over the whole text;
* :class:`MatchMemo` — those matches kept per window from one version of an open document to the
  next (exact: keyed by the window widened by the pattern's lookbehind reach);
  :meth:`Lines.chunks` cuts a text into content-defined stretches so that whole-text searches
  get windows an edit leaves alone;
* :func:`near_literals` — one pattern's matches through the prefilter and windows (the
  escalation check's prose forms).

Offsets are code points of the text given (the normalised reading or the model view).
"""

from __future__ import annotations

import re
import time
from array import array
from bisect import bisect_right
from functools import lru_cache
from hashlib import blake2b as _blake2b
from typing import Iterator, Sequence
from zlib import crc32 as _crc32

import regex

from unveil.core.checks.pattern_analysis import FLAGS as _FLAGS
from unveil.core.checks.pattern_analysis import LINE as _LINE
from unveil.core.checks.pattern_analysis import lookbehind_reach as _lookbehind_reach
from unveil.core.checks.pattern_analysis import match_width, required_literals

_WS_RUNS = re.compile(r"\s{2,}")
_WS_ONE = re.compile(r"\s")
_WS_ANY = re.compile(r"\s*")
_SEPARATORS = re.compile("[\x1c-\x1f]")
r"""``re``'s ``\s`` and ``str.split`` use ``str.isspace``: `regex`'s ``\s`` (Unicode White_Space)
plus the information separators U+001C..U+001F (checked over every code point when this was
written); a text with a separator takes the `regex` form. Tests compare both forms."""


_LINE_FEED = re.compile("\n")


class Lines:
    """Line index of the case-folded model view, for running single-line patterns only on the
    lines that hold their literals. Usable only when case folding kept every offset."""

    def __init__(self, view_text: str, folded: str):
        self.ok = len(folded) == len(view_text)
        self.view_text = view_text
        self.folded = folded
        self.runs: dict[str, int] = {}
        self.present: dict[str, bool] = {}  # literal -> occurs (shared with may_match)
        self.words: str | None = None  # the word_index of folded, when built
        self.occurrences_of: dict[str, tuple[int, array[int] | None]] = {}
        # literal -> sorted start offsets in folded, for the literals a LiteralIndex scanned
        # (absent: not indexed, or it does not occur when present[literal] is False)
        self.positions: dict[str, array[int]] = {}
        self.indexed: set[str] = set()
        # each line's start in folded (8 bytes a line as an array: a list of ints took about 36,
        # 7 MB for the 203,812 lines of the benchmark's padded 10 MB file)
        self.starts = array("q", (0,))
        if self.ok:
            self.starts.extend(m.end() for m in _LINE_FEED.finditer(folded))
        self.n = len(self.starts)
        self.lines_of: dict[str, set[int] | None] = {}
        self.memo: MatchMemo | None = None  # an open document's memo: per-stretch run summaries

    def span(self, line: int) -> tuple[int, int]:
        """``(start, endpos)`` of ``line``, its line feed included."""
        end = self.starts[line + 1] if line + 1 < self.n else len(self.folded)
        return self.starts[line], end

    def with_literal(self, lit: str, limit: int) -> set[int] | None:
        """Lines holding ``lit`` (``None`` when more than ``limit`` occurrences)."""
        if lit in self.lines_of:
            return self.lines_of[lit]
        out: set[int] = set()
        find, starts = self.folded.find, self.starts
        if lit in self.indexed:  # offsets from the one Aho–Corasick pass
            occ = self.positions.get(lit, _NONE)
            lines = None if len(occ) > limit else {bisect_right(starts, j) - 1 for j in occ}
            self.lines_of[lit] = lines
            return lines
        i, count = find(lit), 0
        while i >= 0:
            count += 1
            if count > limit:
                self.lines_of[lit] = None
                return None
            out.add(bisect_right(starts, i) - 1)
            i = find(lit, i + 1)
        self.lines_of[lit] = out
        return out

    def longest_run(self, cls: str) -> int:
        """Longest run of characters matching the `regex` class ``cls`` in the model view
        (``[^\\n]``: the longest line, line feed excluded), in code points; 1 for ``""``."""
        got = self.runs.get(cls)
        if got is None:
            if not cls:
                got = 1
            elif self.memo is not None and self.ok and len(self.view_text) > WINDOW_MIN_TEXT:
                got = self._longest_run_by_chunks(cls, self.memo)  # an edit recomputes one stretch
            elif cls == _LINE:
                starts = self.starts
                got = max(
                    max((b - a - 1 for a, b in zip(starts, starts[1:])), default=0), len(self.folded) - starts[-1]
                )
            elif cls in (r"\S", r"\s") and not _SEPARATORS.search(self.view_text):
                # str.split and re's \s cut at str.isspace: regex's \s plus U+001C..U+001F
                if cls == r"\S":
                    got = longest_word(self.view_text)
                else:  # runs of two or more are few; a single one needs only a search
                    got = longest_match(self.view_text, _WS_RUNS, _WS_ANY)
                    got = got or (1 if _WS_ONE.search(self.view_text) else 0)
            else:
                got = longest_match(
                    self.view_text, regex.compile("(?:" + cls + ")+", _FLAGS), regex.compile("(?:" + cls + ")*", _FLAGS)
                )
            self.runs[cls] = got
        return got

    def _longest_run_by_chunks(self, cls: str, memo: MatchMemo) -> int:
        """:meth:`longest_run` from a summary of each of :meth:`chunks` (kept in ``memo``, so an
        edit recomputes only its own stretch): ``(run at its start, run at its end, longest
        run, whole stretch is one run)``, combined left to right, which is exact because
        membership of a class is decided per character."""
        rx = regex.compile("(?:" + cls + ")+", _FLAGS)
        last = regex.compile("(?r)(?:" + cls + ")+", _FLAGS)  # searched backwards: the last run
        text = self.view_text
        best = cur = 0
        for (a, b), digest in zip(self.chunks(), self._chunk_digests()):
            key = ("run", cls, digest, b - a)
            summary = memo.get(key)
            if summary is None:
                top = max(map(len, rx.findall(text, a, b)), default=0)
                m = rx.match(text, a, b)
                head = m.end() - a if m else 0
                m = last.search(text, a, b)
                tail = b - m.start() if m and m.end() == b else 0
                summary = (head, tail, top, head == b - a)
                memo.put(key, summary)
            head, tail, top, whole = summary
            if whole:
                cur += b - a
            else:
                best = max(best, cur + head, top)
                cur = tail
        return max(best, cur)

    def _chunk_digests(self) -> list[bytes]:
        got = getattr(self, "_digests", None)
        if got is None:
            text = self.view_text
            got = self._digests = [digest(text[a:b]) for a, b in self.chunks()]
        return got

    def occurrences(self, lit: str, limit: int) -> array[int] | list[int] | None:
        """Offsets of ``lit`` in the case-folded view, ascending (``None`` when more than
        ``limit``). Kept for the rest of the analysis as an ``array('q')`` (:func:`offsets`)."""
        got = self.occurrences_of.get(lit)
        if got is not None and (got[1] is not None or limit <= got[0]):
            return got[1]
        hit = self.present.get(lit)
        if hit is None and self.words is not None and _is_word(lit):
            hit = self.present[lit] = lit in self.words
        if hit is False:
            return []
        if lit in self.indexed:  # offsets from the one Aho–Corasick pass
            occ = self.positions.get(lit, _NONE)
            found = occ if len(occ) <= limit else None
            self.occurrences_of[lit] = (limit, found)
            return found
        out: list[int] = []
        find = self.folded.find
        i = find(lit)
        while i >= 0:
            if len(out) >= limit:
                self.occurrences_of[lit] = (limit, None)
                return None
            out.append(i)
            i = find(lit, i + 1)
        kept = offsets(out)
        self.occurrences_of[lit] = (limit, kept)
        return kept

    def windows(self, clauses, bounds) -> list[tuple[int, int, int]] | None:
        """For a pattern whose matches contain a member of every clause of ``clauses`` and whose
        :func:`match_width` is ``bounds``: ``(pos, stop, endpos)`` triples, in order, such that
        every match starts in some ``[pos, stop)`` and reads nothing at or after ``endpos``
        when it does. ``None`` when the windows would cover much of the text."""
        width = sum(k * self.longest_run(cls) for cls, k in bounds[0])
        reach = sum(k * self.longest_run(cls) for cls, k in bounds[1]) + 2
        n = len(self.folded)
        limit = max(16, n // (4 * max(width, 1)))
        # Every match holds a member of every clause, so the occurrences of any one clause seed
        # the windows: take the clause with the fewest (an early one with few is good enough).
        chosen: list[tuple[str, Sequence[int]]] | None = None
        count = 0
        for clause in clauses:
            parts: list[tuple[str, Sequence[int]]] = []
            got = 0
            cap = limit if chosen is None else count - 1
            ok = True
            for lit in clause:
                occ = self.occurrences(lit, cap - got) if cap >= got else None
                if occ is None:
                    ok = False
                    break
                parts.append((lit, occ))
                got += len(occ)
            if ok:
                chosen, count = parts, got
                if count <= _FEW_SEEDS:
                    break
        if chosen is None or any(len(lit) > width for lit, _occ in chosen):
            return None  # (a literal longer than a match cannot be: the whole text is searched)
        # The seed of an occurrence o of lit is the span [max(0, o + d), o + 1), d = len(lit) -
        # width, sorted (by start, then end) as one integer start * w + length (w above every
        # length, 1 - d at most): 36 bytes a seed where a tuple of two integers took about 130
        # (850,000 seeds, 110 MB, for one pattern of the padded 10 MB file: its peak).
        w = max(1 - (len(lit) - width) for lit, _occ in chosen) + 1
        keys: list[int] = []
        for lit, offs in chosen:
            d = len(lit) - width  # a window starts d code points after the occurrence, at 0 at least
            lo = 0
            while lo < len(offs) and offs[lo] + d < 0:  # offs is sorted: only the first few clip
                keys.append(offs[lo] + 1)  # start 0, length o + 1
                lo += 1
            rest = offs[lo:] if lo else offs
            keys.extend(map((d * w + 1 - d).__add__, map(w.__mul__, rest)))  # (o + d) * w + (1 - d)
        keys.sort()
        merged: list[list[int]] = []
        for k in keys:
            a, b = divmod(k, w)
            b += a
            if merged and a <= merged[-1][1] + reach:
                if b > merged[-1][1]:
                    merged[-1][1] = b
            else:
                merged.append([a, b])
        return [(a, b, min(n, b - 1 + reach)) for a, b in merged]

    def chunks(self) -> list[tuple[int, int]]:
        """The text cut into stretches of whole lines, ``(start, end)`` in order, covering it
        all (each includes its last line feed). Cut by content, not position: after at least
        :data:`CHUNK_MIN` code points, before a line whose CRC-32 is divisible by
        :data:`CHUNK_EVERY` (or one past :data:`CHUNK_MAX`), so an edit moves only the cuts near
        it and the stretches elsewhere keep their text (what :class:`MatchMemo` reuses)."""
        got = getattr(self, "_chunks", None)
        if got is None:
            got = []
            text, starts, n = self.view_text, self.starts, len(self.view_text)
            a = 0
            for i in range(1, self.n):
                b = starts[i]
                if b - a < CHUNK_MIN:
                    continue
                end = starts[i + 1] if i + 1 < self.n else n
                line = text[b:end].encode("utf-8", "surrogatepass")
                if b - a >= CHUNK_MAX or _crc32(line) % CHUNK_EVERY == 0:
                    got.append((a, b))
                    a = b
            if a < n or not got:
                got.append((a, n))
            self._chunks = got
        return got

    def chunk_windows(self, bounds) -> list[tuple[int, int, int]]:
        """:meth:`chunks` as ``(pos, stop, endpos)`` windows for a pattern whose
        :func:`match_width` is ``bounds``: a match starting before ``stop`` reads nothing at
        or after ``endpos`` (the same reach as :meth:`windows`)."""
        reach = sum(k * self.longest_run(cls) for cls, k in bounds[1]) + 2
        n = len(self.view_text)
        return [(a, b, min(n, b - 1 + reach)) for a, b in self.chunks()]

    def candidates(self, clauses) -> list[int] | None:
        """Sorted lines on which every clause has a member, or ``None`` when that is most of
        the document (then running over the whole text is as cheap)."""
        limit = max(64, self.n // 4)
        lines: set[int] = set()
        for lit in clauses[0]:
            got = self.with_literal(lit, limit)
            if got is None:
                return None
            lines |= got
            if len(lines) > limit:
                return None
        out = []
        for ln in sorted(lines):
            s, e = self.span(ln)
            text = self.folded[s:e]
            if all(any(lit in text for lit in clause) for clause in clauses[1:]):
                out.append(ln)
        return out


def records(matches, stop: int | None = None):
    """``(start, end, hit start, hit end)`` of each match of the iterator ``matches`` (the
    ``hit`` group's span when the pattern has one and it took part, else the match's span), up
    to the first that starts at or after ``stop``; lazily, so a time-out raised by the iterator
    reaches the caller after the records before it."""
    for m in matches:
        s, e = m.span()
        if stop is not None and s >= stop:
            return
        hs, he = s, e
        if "hit" in m.re.groupindex:
            hs, he = m.span("hit")
            if hs < 0:
                hs, he = s, e
        yield (s, e, hs, he)


class MatchMemo:
    """Matches of patterns in stretches of one document's text, kept from one version to the
    next so that an edit re-runs a pattern only on the stretches it changed (the language
    server keeps one per open document, in :class:`unveil.core.incremental.DocumentCache`).

    Key: ``(pattern, BLAKE2b-128 of text[a:endpos], endpos - a, pos - a, stop - pos)`` where
    ``a = max(0, pos - lookbehind_reach - 1)``
    (:func:`~unveil.core.checks.pattern_analysis.lookbehind_reach`). A search for matches
    starting in ``[pos, stop)`` that reads nothing at or past ``endpos`` reads only that slice,
    so two texts with the same slice have the same matches, at the same offsets relative to
    ``a``: a hit is exact up to a 128-bit hash collision (the slices themselves, kept as keys,
    would cost about 30 code points per code point of the document). Values: :func:`records` relative
    to ``a``. Patterns whose reach is unknown are not memoised. Two generations: what the
    current version used or computed, and the previous version's (dropped at the next
    :meth:`next_version`), so memory stays about two versions' worth of keys, and at most
    ``max_entries`` per version (about 300 bytes each)."""

    def __init__(self, max_entries: int = 100_000) -> None:
        self.cur: dict = {}
        self.old: dict = {}
        self.digests: dict = {}  # (text, a, endpos) -> digest of text[a:endpos], this version
        self.hits = 0
        self.misses = 0
        self.max_entries = max_entries  # per version; past it new results are not kept

    def next_version(self) -> None:
        """Start a new version: keep what the last one used, drop the rest."""
        self.old, self.cur = self.cur, {}
        self.digests = {}

    def digest(self, text: str, a: int, b: int) -> bytes:
        """:func:`digest` of ``text[a:b]``, computed once per version (patterns of one reach
        search the same stretches)."""
        key = (id(text), a, b)
        got = self.digests.get(key)
        if got is None or got[0] is not text:
            got = self.digests[key] = (text, digest(text[a:b]))
        return got[1]

    def get(self, key):
        got = self.cur.get(key)
        if got is None:
            got = self.old.get(key)
            if got is not None:
                self.cur[key] = got
        if got is None:
            self.misses += 1
        else:
            self.hits += 1
        return got

    def put(self, key, value) -> None:
        if len(self.cur) < self.max_entries:
            self.cur[key] = value


_UNSET: object = object()

MEMO_MAX_TEXT = 1_000_000
"""Code points above which an open document is searched as in the CLI, without the memo: a
document of 1 MB already keeps about 43,000 entries (about 13 MiB) and its first version costs
about 15% more with them (measured on this machine), while its other stages dominate an edit."""


def digest(s: str) -> bytes:
    """128-bit BLAKE2b of ``s`` (UTF-8, lone surrogates kept: an injective encoding)."""
    return _blake2b(s.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _reach_of(pat) -> int | None:
    return _lookbehind_reach(pat.pattern, pat.flags)


def _memoised(pat, text: str, pos: int, stop: int | None, endpos: int, left: float, memo: MatchMemo, reach: int):
    """The records of ``pat`` starting in ``[pos, stop)`` (``stop`` ``None``: anywhere before
    ``endpos``), from ``memo`` or computed and stored (not when the search timed out)."""
    a = max(0, pos - reach - 1)
    key = (pat, memo.digest(text, a, endpos), endpos - a, pos - a, None if stop is None else stop - pos)
    got = memo.get(key)
    if got is None:
        got = [
            (s - a, e - a, hs - a, he - a)
            for s, e, hs, he in records(pat.finditer(text, pos, endpos, timeout=left), stop)
        ]
        memo.put(key, got)
    return a, got


CHUNK_MIN = 2048
CHUNK_MAX = 16384
CHUNK_EVERY = 4
"""Content-defined cuts of :meth:`Lines.chunks`: stretches of 2–16 K code points, about 2.5 K
past the minimum on average (one line in four qualifies as a cut)."""

_FEW_SEEDS = 8
"""Windows seeded by this many literal occurrences or fewer are not worth looking for a rarer clause."""


def in_spans(pat, text: str, spans, timeout: float, memo: MatchMemo | None = None, reach=_UNSET):
    """Records (:func:`records`) of the matches of ``pat`` in ``text`` restricted to ``spans``
    (``(pos, endpos)`` pairs in order), with one ``timeout`` for them all, like a single
    ``finditer`` over the text. ``memo``: reuse the matches of spans seen before (:class:`MatchMemo`);
    ``reach``: the pattern's lookbehind reach when known (else computed)."""
    deadline = time.monotonic() + timeout
    if memo is None:
        reach = None
    elif reach is _UNSET:
        reach = _reach_of(pat)
    for pos, endpos in spans:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("regex timed out")
        if reach is None or memo is None:
            yield from records(pat.finditer(text, pos, endpos, timeout=left))
            continue
        a, got = _memoised(pat, text, pos, None, endpos, left, memo, reach)
        for s, e, hs, he in got:
            yield (a + s, a + e, a + hs, a + he)


def in_windows(pat, text: str, windows, timeout: float, memo: MatchMemo | None = None, reach=_UNSET):
    """Records (:func:`records`) of the matches of ``pat`` in ``text`` that start inside the
    windows (``(pos, stop, endpos)`` triples from :meth:`Lines.windows`), with one ``timeout``
    for them all: the same matches as a single ``finditer`` over the whole text when every
    match starts in a window and reads nothing at or past its window's ``endpos``.
    ``memo``: reuse the matches of windows seen before (:class:`MatchMemo`); ``reach``: the
    pattern's lookbehind reach when known (else computed)."""
    deadline = time.monotonic() + timeout
    cursor = 0  # end of the last match: the next search starts there, as in one finditer
    if memo is None:
        reach = None
    elif reach is _UNSET:
        reach = _reach_of(pat)
    for pos, stop, endpos in windows:
        pos = max(pos, cursor)
        if pos >= stop:
            continue
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("regex timed out")
        if reach is None or memo is None:
            for rec in records(pat.finditer(text, pos, endpos, timeout=left), stop):
                cursor = rec[1]
                yield rec
            continue
        a, got = _memoised(pat, text, pos, stop, endpos, left, memo, reach)
        for s, e, hs, he in got:
            cursor = a + e
            yield (a + s, a + e, a + hs, a + he)


PRESENCE_CHUNKS = (4_096, 65_536)
"""Code points of the first pieces :func:`occurs` scans before the rest of the text."""


def occurs(ac, text: str, longest: int) -> bool:
    """Whether the Aho–Corasick automaton ``ac`` (``ahocorasick-rs``) over literals of at most
    ``longest`` code points finds one in ``text``: ``bool(ac.find_matches_as_indexes(text))``,
    found in a prefix first (:data:`PRESENCE_CHUNKS`, then the rest), each piece starting
    ``longest - 1`` code points before the previous one ended, so every occurrence lies whole in
    one piece. A literal that occurs early (a common trigger in a long document) is found
    without listing every match of the whole text (0.7 ms → 0.02 ms for the escalation
    triggers of the 294 KB corpus file); past those, pieces of :data:`SCAN_CHUNK` code points
    (a long text is neither copied whole nor its matches listed at once). Raises what
    ``find_matches_as_indexes`` raises (a ``UnicodeError`` or ``ValueError`` for lone
    surrogates)."""
    n = len(text)
    start = 0
    k = 0
    while True:
        size = max(PRESENCE_CHUNKS[k] if k < len(PRESENCE_CHUNKS) else SCAN_CHUNK, 2 * longest)
        k += 1
        end = min(n, start + size)
        if end >= n:
            return bool(ac.find_matches_as_indexes(text[start:] if start else text))
        if ac.find_matches_as_indexes(text[start:end]):
            return True
        start = max(0, end - max(longest - 1, 0))


AC_MIN_LEN = 3
"""Literals shorter than this stay out of :class:`LiteralIndex`: single characters and pairs
(``":"``, ``"-"``, ``"&&"``) occur so often that listing their offsets costs more than
``str.__contains__``."""


class LiteralIndex:
    """One Aho–Corasick automaton (``ahocorasick-rs``, ``MatchKind.Standard``) over every
    prefilter literal of at least :data:`AC_MIN_LEN` code points of a set of rules, built once
    per set: one pass over a case-folded text finds which of them occur and where, instead of
    one ``in`` / ``str.find`` scan per literal. Offsets are code points (``ahocorasick-rs``
    reports ``str`` indexes), overlapping occurrences included, as a ``str.find`` loop that
    restarts one code point after each hit finds them. Without the library (or if the automaton
    cannot be built) :meth:`scan` returns ``None`` and the per-literal scans run as before."""

    def __init__(self, literals) -> None:
        self.literals = sorted({lit for lit in literals if len(lit) >= AC_MIN_LEN})
        self.rules_key: tuple = ()  # set by the owner: which rule list it was built from
        self.automaton = None
        if self.literals:
            try:
                import ahocorasick_rs

                self.automaton = ahocorasick_rs.AhoCorasick(self.literals, matchkind=ahocorasick_rs.MatchKind.Standard)
            except Exception:  # noqa: BLE001 - no index: the per-literal scans still work
                self.automaton = None

    def scan(self, folded: str) -> tuple[dict[str, bool], dict[str, array[int]]] | None:
        """``(presence of every indexed literal, sorted start offsets of those present)``, or
        ``None`` without an automaton or when ``folded`` holds lone surrogates (undecodable bytes
        kept with ``surrogateescape``, which the library cannot take): the per-literal scans
        then run as before.

        The matches come from :func:`stretch_matches` (one stretch's list alive at a time)."""
        if self.automaton is None:
            return None
        lits = self.literals
        found: dict[int, array[int]] = {}
        try:
            for i, start in stretch_matches(self.automaton, folded, max(map(len, lits)) - 1):
                got = found.get(i)
                if got is None:
                    got = found[i] = array("q")
                got.append(start)
        except UnicodeError:
            return None
        kept = {lits[i]: offsets(sorted(v)) for i, v in found.items()}
        present = dict.fromkeys(lits, False)
        present.update(dict.fromkeys(kept, True))
        return present, kept


SCAN_CHUNK = 1 << 18
"""Code points of text one Aho–Corasick search covers (:func:`stretch_matches`)."""


def leftmost_matches(automaton, text: str, reach: int, fold=None) -> list[tuple[int, int]]:
    """``(start, end)`` of the matches ``automaton.find_matches_as_indexes(text)`` gives for a
    leftmost (non-overlapping) ``ahocorasick_rs.AhoCorasick`` whose longest literal is
    ``reach + 1`` code points, searched in stretches of :data:`SCAN_CHUNK` code points (see
    :func:`stretch_matches`): each stretch's search starts where the last kept match ended (or
    at the stretch's start) and reaches ``reach`` past the stretch's end, and keeps the matches
    that start in the stretch. The same matches: a leftmost search resumes after each match,
    and every literal starting in a stretch ends inside its search.

    ``fold`` (e.g. ``str.lower``): applied to each piece searched instead of to the whole text,
    so no folded copy of a long text exists at once; the matches are those of
    ``fold(text)`` when ``fold`` maps every piece to one of the same length whose code points
    are those of ``fold(text)`` there (``str.lower`` does, but for ``U+0130``, which becomes two
    code points, and a final sigma's form, which no ASCII literal reads). Raises ``ValueError``
    when a folded piece's length differs, and what the library raises."""
    n = len(text)
    find = automaton.find_matches_as_indexes

    def piece(a: int, b: int) -> str:
        got = text[a:b]
        if fold is None:
            return got
        folded = fold(got)
        if len(folded) != len(got):
            raise ValueError("folding changed the length of the text")
        return folded

    if n <= SCAN_CHUNK:
        return [(a, b) for _i, a, b in find(piece(0, n))]
    out: list[tuple[int, int]] = []
    pos = 0
    for stop in range(SCAN_CHUNK, n + SCAN_CHUNK, SCAN_CHUNK):
        if pos >= n:
            break
        last = stop >= n
        part_end = n if last else min(n, stop + reach)
        if pos < stop:
            for _i, a, b in find(piece(pos, part_end)):
                if not last and pos + a >= stop:
                    break  # the next stretch's
                out.append((pos + a, pos + b))
            if out and out[-1][1] > pos:
                pos = out[-1][1]
        pos = max(pos, stop)
    return out


def stretch_matches(automaton, text: str, reach: int) -> Iterator[tuple[int, int]]:
    """``(literal number, start)`` of every overlapping match of ``automaton`` (an
    ``ahocorasick_rs.AhoCorasick``) in ``text``, in code points, ``reach`` being its longest
    literal's length less one. The library returns every match of a search at once, a tuple of
    three integers each (about 130 bytes; a padded 10 MB file has 1.25 million matches of the
    directive literals), so the text is searched in stretches of :data:`SCAN_CHUNK` code points,
    each reaching ``reach`` past its end, and a stretch gives the matches that start in it (one
    starting in the overlap is the next stretch's): the same matches, ordered by stretch, with
    one stretch's list alive at a time. Raises ``UnicodeError`` as the library does (lone
    surrogates), after the matches of the stretches before."""
    n = len(text)
    step = SCAN_CHUNK
    for a in range(0, max(n, 1), step):
        part = text if a == 0 and n <= step else text[a : a + step + reach]
        for i, start, _end in automaton.find_matches_as_indexes(part, overlapping=True):
            if start < step:
                yield i, a + start


WORD_CHUNK = 1 << 20
"""Code points of text :func:`longest_word`, :func:`longest_match` and :func:`word_index` read at
a time (at least: up to the end of the line or of the class's run)."""


def line_chunks(text: str) -> Iterator[str]:
    """``text`` in consecutive pieces of at least :data:`WORD_CHUNK` code points (the last one
    shorter), each cut after a line feed: no run of word characters, nor of code points that
    are not whitespace, spans two pieces. One piece when the text is no longer than that."""
    n = len(text)
    if n <= WORD_CHUNK:
        yield text
        return
    a = 0
    while a < n:
        b = text.find("\n", min(n, a + WORD_CHUNK))
        b = n if b < 0 else b + 1
        yield text[a:b]
        a = b


def longest_match(text: str, plus, star) -> int:
    """``max(map(len, plus.findall(text)), default=0)`` for ``plus`` a compiled run of one
    single-character class (``(?:cls)+``, ``\\s{2,}``; ``star`` the same class's ``(?:cls)*``),
    without listing every run of a long text at once: the text is read :data:`WORD_CHUNK` code
    points at a time, each stretch extended to the end of the class's run it ends in (``star``
    matched there), so no run spans two stretches. The padded 10 MB file has 1.4 million runs
    of ``\\W`` and 760,000 of ``[\\s\\w]``: 35 and 46 MB listed (``tracemalloc``)."""
    n = len(text)
    if n <= WORD_CHUNK:
        return max(map(len, plus.findall(text)), default=0)
    best = a = 0
    while a < n:
        b = min(n, a + WORD_CHUNK)
        if b < n:
            b = star.match(text, b).end()
        best = max(best, max(map(len, plus.findall(text, a, b)), default=0))
        a = b
    return best


def longest_word(text: str) -> int:
    """``max(map(len, text.split()), default=0)``, the longest run of code points that are not
    ``str.isspace``, without listing every word of a long text at once (:func:`line_chunks`).
    The list of a padded 10 MB file's words was 80 MB (``tracemalloc``), made once per line
    index of the analysis."""
    return max((max(map(len, piece.split()), default=0) for piece in line_chunks(text)), default=0)


_NONE: array[int] = array("q")
"""No offsets (never changed)."""


def offsets(values: list[int]) -> array[int]:
    """``values`` (code-point offsets) as an ``array('q')``: 8 bytes an offset where a list of
    Python integers takes 36 (the pointer and the integer object). The literal offsets the
    directive rules keep for a whole analysis were the largest part of a big file's state: 80 MB
    of lists for a padded 10 MB ``AGENTS.md`` (``sys.getsizeof`` over the lists and their
    integers). Read by iteration, ``len``, indexing and slicing, as the lists were."""
    return array("q", values)


_WORD_RUN = regex.compile(r"\w+")


@lru_cache(maxsize=8192)
def _is_word(lit: str) -> bool:
    return _WORD_RUN.fullmatch(lit) is not None


def word_index(folded: str) -> str:
    """The distinct runs of word characters (`regex` ``\\w+``) of ``folded``, joined by line
    feeds: a literal made only of word characters occurs in ``folded`` exactly when it occurs
    in this (much shorter) string, because each occurrence lies inside one such run."""
    words: set[str] = set()
    for piece in line_chunks(folded):  # (one piece's list of runs at a time)
        words.update(_WORD_RUN.findall(piece))
    return "\n".join(words)


def may_match(clauses, folded: str, seen: dict[str, bool], words: str | None = None) -> bool:
    """Whether every clause has a member in ``folded`` (memoised per literal in ``seen``;
    ``words``: the :func:`word_index` of ``folded``, searched instead for word literals)."""
    for clause in clauses:
        for lit in clause:
            hit = seen.get(lit)
            if hit is None:
                hit = seen[lit] = lit in (words if words is not None and _is_word(lit) else folded)
            if hit:
                break
        else:
            return False
    return True


WINDOW_MIN_TEXT = 4096
"""Below this many code points a pattern runs on the whole text (windows would not pay off)."""


def near_literals(pat, lines: Lines, timeout: float, memo: MatchMemo | None = None):
    """Records (:func:`records`) of every match of the compiled ``pat`` in ``lines.view_text``,
    the same as one ``finditer`` over it, found cheaply: none at all when a clause of its
    :func:`~unveil.core.checks.pattern_analysis.required_literals` has no member in the text;
    only the windows around those literals (:meth:`Lines.windows`) when its
    :func:`~unveil.core.checks.pattern_analysis.match_width` is bounded and the text is longer
    than :data:`WINDOW_MIN_TEXT`; else the whole text. One ``timeout`` (seconds) for it all;
    raises ``TimeoutError`` after yielding the records found before it."""
    text = lines.view_text
    clauses = required_literals(pat.pattern, pat.flags)
    if clauses and not may_match(clauses, lines.folded, lines.present, lines.words):
        return iter(())
    if clauses and lines.ok and len(text) > WINDOW_MIN_TEXT:
        bounds = match_width(pat.pattern, pat.flags)
        if bounds is not None:
            windows = lines.windows(clauses, bounds)
            if windows is not None:
                return in_windows(pat, text, windows, timeout, memo)
    return records(pat.finditer(text, timeout=timeout))
