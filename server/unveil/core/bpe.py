"""``o200k_base`` token counts from the rank table, without building tiktoken's encoding.

tiktoken's ``CoreBPE`` keeps the 199,998 ranks three times over (about 54 MiB of resident memory
in every process that builds it, and 23 MiB more while the Python ``dict`` it is built from
exists). :class:`TableCounter` counts from the ranks unveil already keeps for subset encodings
(:class:`~unveil.core.rank_table.RankTable`: 3.9 MB of flat arrays, views of the user cache's
bytes), with the same two steps as tiktoken (``tiktoken/src/lib.rs``, ``CoreBPE::encode_ordinary``
and ``byte_pair_merge``, tiktoken 0.14):

1. pre-tokenize: the matches of ``o200k_base``'s pattern (:data:`O200K_PAT`),
   here with the ``regex`` module where tiktoken uses the Rust ``fancy-regex`` crate;
2. each pre-token's UTF-8 bytes: one token when they are a token; else byte-pair merges from
   single bytes: repeatedly the adjacent pair whose concatenation has the lowest rank is merged
   (the leftmost of equal ranks), until no adjacent pair is a token; the count is the number of
   parts left.

The two pre-tokenizers read ``\\p{L}``, ``\\p{N}``, ``\\s`` … from their own Unicode tables, so
they can disagree about a code point one version assigns and the other does not. Every code
point tried in a probe text (``tests/unit/test_bpe.py``; about 20 s for all 1,114,112) was counted the
same by both for the installed versions, except 17,290 that Python 3.11's Unicode 14.0 data
leaves unassigned. :func:`covered` therefore accepts a text only when each of its code points
is assigned in Unicode 14.0 (the ranges of ``unveil/data/unicode-14-assigned.txt``, written by
``scripts/gen_unicode_assigned.py`` from Python 3.11's :mod:`unicodedata`); any other text is
counted by tiktoken (:func:`unveil.core.tokens.count`).

Thread-safe: the table is read-only and the memo's ``dict`` operations are atomic.
"""

from __future__ import annotations

import heapq
import re
from functools import lru_cache
from pathlib import Path
from typing import Mapping

O200K_PAT = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
"""``o200k_base``'s pre-tokenization pattern, as ``tiktoken_ext/openai_public.py`` (tiktoken
0.14.0) gives it: tiktoken's own encoding is built with it too (:mod:`unveil.core.tokens`)."""

_WS = r"\t\n\x0b\x0c\r "
O200K_ASCII_PAT = "|".join(
    [
        r"[^\r\nA-Za-z0-9]?[A-Z]*[a-z]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        r"[^\r\nA-Za-z0-9]?[A-Z]+[a-z]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        r"[0-9]{1,3}",
        rf" ?[^{_WS}A-Za-z0-9]+[\r\n/]*",
        rf"[{_WS}]*[\r\n]+",
        rf"[{_WS}]+(?![^{_WS}])",
        rf"[{_WS}]+",
    ]
)
r""":data:`O200K_PAT` for a text of ASCII characters only, for the standard library's ``re``
(2.4 times as fast as ``regex`` on the corpus's ASCII files): among ASCII characters ``\p{L}``
is ``[A-Za-z]`` (``\p{Lu}`` ``[A-Z]``, ``\p{Ll}`` ``[a-z]``; no ``Lt``, ``Lm``, ``Lo`` or
``\p{M}``), ``\p{N}`` is ``[0-9]`` and ``\s`` (Unicode White_Space) is tab, line feed, vertical
tab, form feed, carriage return and space (not U+001C..U+001F, which ``str.isspace`` counts).
Tested to split every generated ASCII text and every ASCII corpus file as :data:`O200K_PAT`
does."""

DATA = Path(__file__).resolve().parent.parent / "data" / "unicode-14-assigned.txt"
"""Code points assigned in Unicode 14.0: one range a line, ``XXXX..YYYY`` or ``XXXX`` (hex)."""

SHORT_MAX = 16
"""Tokens of at most this many bytes are looked up in the table; longer ones in ``long``
(:data:`unveil.core.tokens.SUBSET_MAX_BYTES`)."""

MEMO_MAX = 50_000
"""Most pre-tokens whose counts :class:`TableCounter` keeps (emptied past it): prose repeats
its words. Counting the benign corpus's 3,349 files whole in one process, before the ASCII
pattern: 3.6 s with 200,000 (9.4 MiB kept), 4.0 s with 50,000 (4.4 MiB), 4.5 s with 20,000;
tiktoken's encoding 1.0 s."""

SIMPLE_MAX = 64
"""Pre-tokens of at most this many bytes are merged by scanning every adjacent pair (quadratic,
and fastest for short ones); longer ones with a heap (:func:`_merge_heap`)."""

LONG_BUDGET = 1_000_000
"""Bytes of pre-tokens longer than :data:`SIMPLE_MAX` a :class:`TableCounter` merges itself
(about 3 µs a byte: 0.16 s for a 50,000-letter run, where tiktoken takes 7 ms); past it, a
counter given ``long_piece`` hands such pre-tokens to it (tiktoken). The benign corpus holds
761 pre-tokens over 64 bytes, none over 1,024; a padded file of letter runs spends the budget
in about 3 s, then counts at tiktoken's speed."""


def load_assigned(path: Path | None = None) -> list[tuple[int, int]]:
    """``[(first, last)]`` code point ranges (inclusive) of ``path``. Raises ``ValueError`` on a
    malformed line and ``OSError`` when it cannot be read. ``path``: :data:`DATA` by default."""
    path = DATA if path is None else path
    out: list[tuple[int, int]] = []
    for n, line in enumerate(path.read_text(encoding="ascii").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        a, _, b = line.partition("..")
        try:
            lo, hi = int(a, 16), int(b or a, 16)
        except ValueError as exc:
            raise ValueError(f"{path}:{n}: not a code point range: {line!r}") from exc
        if not 0 <= lo <= hi <= 0x10FFFF or (out and lo <= out[-1][1]):
            raise ValueError(f"{path}:{n}: range out of order or out of bounds: {line!r}")
        out.append((lo, hi))
    return out


@lru_cache(maxsize=1)
def _outside():
    """A compiled ``re`` pattern matching one code point that is not assigned in Unicode 14.0
    (:data:`DATA`), or ``None`` when the data file is missing or malformed (then nothing is
    :func:`covered`: tiktoken counts everything, as before this module)."""
    import re

    try:
        ranges = load_assigned()
    except (OSError, ValueError):
        return None
    parts = []
    for lo, hi in ranges:
        parts.append(re.escape(chr(lo)) if lo == hi else f"{re.escape(chr(lo))}-{re.escape(chr(hi))}")
    return re.compile("[^" + "".join(parts) + "]")


def covered(text: str) -> bool:
    """Whether :class:`TableCounter` counts ``text`` as tiktoken does: every code point of it is
    assigned in Unicode 14.0 (module docstring). ``False`` when the data file is unusable."""
    outside = _outside()
    return outside is not None and outside.search(text) is None


class TableCounter:
    """Counts of ``o200k_base`` tokens of texts that are :func:`covered`.

    ``ranks``: a ``bytes → rank`` lookup with ``get`` for the tokens of at most
    :data:`SHORT_MAX` bytes (a :class:`~unveil.core.rank_table.RankTable`, or the ``dict`` of
    every rank), ``long``: the ranks of the longer tokens; ``long_piece``: ``bytes → tokens``
    (or ``None``: not available) for one pre-token, used for long ones once
    :data:`LONG_BUDGET` is spent (tiktoken's ``encode_single_piece``; without it the counter
    merges them all itself)."""

    def __init__(self, ranks, long: Mapping[bytes, int], long_piece=None) -> None:
        import regex

        self._short = ranks.get
        self._long = long.get
        self._findall = regex.compile(O200K_PAT).findall
        self._ascii_findall = re.compile(O200K_ASCII_PAT).findall
        self._memo: dict[str, int] = {}
        self._long_piece = long_piece
        self.long_budget = LONG_BUDGET

    def rank(self, piece: bytes) -> int | None:
        """The rank of ``piece``, or ``None`` when it is not a token."""
        return self._short(piece) if len(piece) <= SHORT_MAX else self._long(piece)

    def count(self, text: str) -> int:
        """The number of tokens tiktoken's ``encode_ordinary(text)`` gives, for a text that is
        :func:`covered` and encodes as UTF-8 (no lone surrogate: clean it first)."""
        memo = self._memo
        get = memo.get
        n = 0
        for pre in (self._ascii_findall if text.isascii() else self._findall)(text):
            got = get(pre)
            if got is None:
                got = self.pieces(pre.encode("utf-8"))
                if len(memo) >= MEMO_MAX:
                    memo.clear()
                memo[pre] = got
            n += got
        return n

    def pieces(self, b: bytes) -> int:
        """How many tokens the pre-token ``b`` (UTF-8 bytes) is encoded as."""
        if len(b) == 1 or self.rank(b) is not None:
            return 1
        if len(b) <= SIMPLE_MAX:
            return _merge_simple(b, self.rank)
        if self._long_piece is not None and len(b) > self.long_budget:
            got = self._long_piece(b)
            if got is not None:
                return got
        self.long_budget -= len(b)  # (a race between threads only moves the switch a little)
        return _merge_heap(b, self.rank)


def _merge_simple(b: bytes, rank) -> int:
    """Byte-pair merges of ``b`` (module docstring): the rank of each adjacent pair kept in a
    list, the lowest (leftmost of equal ones) merged, the two pairs around it looked up again."""
    starts = list(range(len(b) + 1))  # part i is b[starts[i] : starts[i + 1]]
    pair = [rank(b[i : i + 2]) for i in range(len(b) - 1)]  # pair[i]: parts i and i + 1 merged
    while True:
        best = None
        at = -1
        for i, r in enumerate(pair):
            if r is not None and (best is None or r < best):
                best, at = r, i
        if best is None:
            return len(starts) - 1
        del starts[at + 1]
        del pair[at]
        if at > 0:
            pair[at - 1] = rank(b[starts[at - 1] : starts[at + 1]])
        if at < len(pair):
            pair[at] = rank(b[starts[at] : starts[at + 2]])


def _merge_heap(b: bytes, rank) -> int:
    """:func:`_merge_simple`'s result in O(n log n): the candidate pairs in a heap ordered by
    (rank, start), parts as a doubly linked list of start offsets; a popped pair whose parts
    changed since it was pushed is skipped. Merging the lowest rank, leftmost first, is the
    order the scan makes."""
    n = len(b)
    nxt = list(range(1, n + 1))  # start of the next part (n: none)
    prv = list(range(-1, n - 1))
    alive = [True] * n
    heap: list[tuple[int, int, int]] = []  # (rank, start, end of the right part)
    for i in range(n - 1):
        r = rank(b[i : i + 2])
        if r is not None:
            heap.append((r, i, i + 2))
    heapq.heapify(heap)
    parts = n
    while heap:
        r, i, end = heapq.heappop(heap)
        if not alive[i]:
            continue
        j = nxt[i]
        if j >= n or nxt[j] != end:  # the pair is no longer these two parts
            continue
        # merge part i and part j
        alive[j] = False
        nxt[i] = end
        if end < n:
            prv[end] = i
        parts -= 1
        p = prv[i]
        if p >= 0:
            q = rank(b[p:end])
            if q is not None:
                heapq.heappush(heap, (q, p, end))
        if end < n:
            q = rank(b[i : nxt[end]])
            if q is not None:
                heapq.heappush(heap, (q, i, nxt[end]))
    return parts
