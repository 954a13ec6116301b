r"""What the model reads: the model view and the normalised reading, each with an exact map back.

Two readings of a document, both pure functions of the text (plus its regions), computed once per
analysis by :mod:`unveil.core.checks.directives` and shared with the obfuscation check:

* :func:`model_view` → :class:`ModelView` — the *current* view the context judgement
  (:func:`unveil.core.context.judge`) works on: NFKC per character, Default_Ignorable code points
  removed (zero-width, soft hyphen, variation selectors …) and Unicode tag characters
  U+E0020–E007E decoded to the ASCII they encode. Lines, list markers and markup are kept, so
  sentence, list and heading logic sees the file's own structure.
* :func:`normalise` → :class:`Reading` — the text as a model *understands* it, the one pattern
  rules match. On top of the model view it

  1. strips emphasis and inline-markup delimiters that pair up as CommonMark would
     (``**``, ``__``, ``*``, ``_``, ``~~``; a backslash-escaped delimiter stays), and the backticks of
     an inline code span that breaks a word (``i`gn`ore``) — in prose and hidden text only, never in
     code or frontmatter (globs such as ``Bash(rm:*)`` stay intact);
  2. joins soft-wrapped lines of a paragraph (the line break and the next line's indentation or
     ``>`` prefix become one space) where the sentence goes on — the line has no closing
     punctuation and the next does not start with a capital letter, so a line that starts a new
     sentence keeps ``^`` anchors — and likewise a list item that continues the previous item's sentence;
     in frontmatter, an indented continuation line of a YAML plain or folded value;
  3. decodes HTML character references (named, decimal, hex; a single one too), percent escapes
     (a run that decodes to text with an ASCII letter or digit, or a space between two letters)
     and ``\xNN`` / ``\uXXXX`` / ``\u{X…}`` / ``\UXXXXXXXX`` escapes (printable results only; an
     escaped backslash is left alone);
  4. per character: tag characters decoded, Default_Ignorable removed, NFKC, combining marks
     (General_Category Mn) after a Latin letter or any ASCII character dropped (zalgo; precomposed
     accents such as ``é`` are kept, and marks on other scripts' letters stay), and confusables folded to ASCII by their UTS #39 skeleton
     (``data/confusables-ascii.json``, see its README): symbols and punctuation always, letters and
     digits only in a word that mixes them with ASCII letters or stands next to an ASCII word
     (a line of real Cyrillic or Greek text is left as it is; Han, kana and Hangul never fold).

Offsets: every value here is in code points. A :class:`Reading` maps each of its characters back
to a source span: :meth:`Reading.orig_start` / :meth:`Reading.orig_end` give, for a reading range,
the smallest source range that produced it (a decoded ``&#105;`` maps to all six source
characters). The map is monotone and every reading offset maps inside ``[0, len(source))``.

Which reading a rule runs on (see :func:`unveil.core.checks.directives.run_rules`): every pattern
rule runs on the normalised reading; rules where the raw form matters also run on the model view,
and their findings are merged by original range (one finding per rule per payload). "Raw form
matters" is decided per rule: the ``secrets`` family (exact key formats), and any rule whose
patterns name something the reading rewrites (a literal ``*``, ``~~`` or backtick, a character
reference, a percent or backslash escape). That second pass only visits the lines the reading
rewrote (widened by three lines for patterns that may span lines): elsewhere both agree.

Nothing here raises on any input.
"""

from __future__ import annotations

import bisect
import html.entities
import json
import unicodedata
from array import array
from dataclasses import dataclass, field
from functools import lru_cache
from hashlib import blake2b
from pathlib import Path
from typing import Sequence

import regex

from unveil.core import scope as _scope
from unveil.core.document import cut_after

# --------------------------------------------------------------------------------------------
# Model view (moved here from unveil.core.context, which re-exports it)
# --------------------------------------------------------------------------------------------

_SPECIAL = regex.compile(r"[^\x00-\x7f]+")
_IGNORABLE = regex.compile(r"\p{Default_Ignorable_Code_Point}")


class RunMap:
    """A non-decreasing map from view offsets ``0 .. len - 1`` to original offsets, held as runs:
    run ``k`` starts at view offset ``v[k]`` and maps view offset ``i`` to
    ``o[k] + (i - v[k]) * step[k]`` (``step`` 1: copied text; 0: the code points one original
    code point became under NFKC). Memory and build time grow with the number of runs (about one
    per dropped or expanded code point), not with the text: a list of offsets per code point
    took about 36 bytes each and most of the model view's build time. Indexing is a list's
    (negative offsets count from the end; ``IndexError`` outside)."""

    __slots__ = ("v", "o", "step", "n", "_last")

    def __init__(self) -> None:
        self.v: list[int] = []
        self.o: list[int] = []
        self.step: list[int] = []
        self.n = 0
        self._last: list[int] | None = None

    def add(self, orig: int, count: int, step: int = 1) -> None:
        """Append ``count`` view offsets starting at original offset ``orig`` (``step`` as above)."""
        if count <= 0:
            return
        if count == 1:
            step = 1
        v, o, st = self.v, self.o, self.step
        self._last = None
        if v and st[-1] == 1 and step == 1 and o[-1] + (self.n - v[-1]) == orig:
            self.n += count
            return
        v.append(self.n)
        o.append(orig)
        st.append(step)
        self.n += count

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> int:
        """As a list's item: a negative ``i`` counts from the end."""
        if i < 0:
            i += self.n
        if not 0 <= i < self.n:
            raise IndexError(i)
        k = bisect.bisect_right(self.v, i) - 1
        return self.o[k] + (i - self.v[k]) * self.step[k]

    def first_at_or_after(self, orig: int) -> int:
        """The first view offset whose original offset is ``>= orig`` (``len`` if none): what
        ``bisect_left`` gives on the per-code-point list."""
        last = self._last
        if last is None:
            v, o, st, n = self.v, self.o, self.step, self.n
            ends = v[1:] + [n]
            last = self._last = [o[k] + (ends[k] - v[k] - 1) * st[k] for k in range(len(v))]
        k = bisect.bisect_left(last, orig)
        if k == len(last):
            return self.n
        if self.step[k] == 1:
            return self.v[k] + max(0, orig - self.o[k])
        return self.v[k]

    def first_at_or_after_many(self, origs: list[int]) -> list[int]:
        """:meth:`first_at_or_after` of each of ``origs``, in their order."""
        last = self._last
        if last is None:
            self.first_at_or_after(0)  # builds it
            last = self._last
        assert last is not None
        v, o, st, n = self.v, self.o, self.step, self.n
        out: list[int] = []
        put = out.append
        nl = len(last)
        left = bisect.bisect_left
        for orig in origs:
            k = left(last, orig)
            if k == nl:
                put(n)
            elif st[k] == 1:
                d = orig - o[k]
                put(v[k] + (d if d > 0 else 0))
            else:
                put(v[k])
        return out


@dataclass
class ModelView:
    """The normalised text ``text`` and its map back to the original.

    ``omap[i]`` is the original code-point offset of view character ``i`` (``None`` when the
    view equals the original, i.e. pure ASCII): a :class:`RunMap`. ``tag_runs`` are original
    ``(start, end)`` spans of decoded Unicode tag characters (hidden text).
    """

    text: str
    omap: RunMap | None = None
    tag_runs: list[tuple[int, int]] = field(default_factory=list)
    original_length: int = 0

    def orig_start(self, i: int) -> int:
        """Original offset of view offset ``i`` used as a range start."""
        if self.omap is None:
            return i
        if i >= len(self.omap):
            return self.original_length
        return self.omap[i]

    def orig_end(self, i: int) -> int:
        """Original offset of view offset ``i`` used as an exclusive range end (code points)."""
        if self.omap is None:
            return i
        if i <= 0:
            return self.omap[0] if len(self.omap) else 0
        return self.omap[min(i, len(self.omap)) - 1] + 1

    def view_offset(self, orig: int) -> int:
        """First view offset whose original offset is ``>= orig``."""
        if self.omap is None:
            return orig
        return self.omap.first_at_or_after(orig)

    def view_offsets(self, origs: list[int]) -> list[int]:
        """:meth:`view_offset` of each of ``origs``, in their order (one call for many: the model
        view pass maps every stretch the reading rewrote, about 3,000 offsets a version of the
        294 KB corpus file)."""
        if self.omap is None:
            return list(origs)
        return self.omap.first_at_or_after_many(origs)


_SHARE_MIN = 1024


def model_view(text: str) -> ModelView:
    """Build the :class:`ModelView` of ``text``. Linear time; ASCII runs are copied whole. Built
    once per analysis (by identity of the text: :func:`unveil.core.scope.shared`): the context
    and decoder passes of one analysis ask for the same one (texts under
    :data:`_SHARE_MIN` code points, the sentences that other modules ask about, are built each
    time: cheaper than the table entry; at most six are kept, the document's and those of the
    latest decoded payloads). Callers only read it."""
    if len(text) < _SHARE_MIN:
        return _model_view(text)
    return _scope.shared("model_view", text, None, lambda: _model_view_of(text), keep=6)


_PIECED_MIN = 16_384
"""Code points from which an open document's model view is built paragraph by paragraph
(:func:`_model_view_pieced`)."""
_PIECE_END = regex.compile(r"\n\n+")
_PIECES_MEMO = "model view pieces"


def _model_view_of(text: str) -> ModelView:
    """:func:`_model_view` of ``text``; in an open document (:func:`unveil.core.scope.memo` kept
    by its document cache) a long non-ASCII text is built from the model views of its
    paragraphs, each kept for the next version (:func:`_model_view_pieced`)."""
    if len(text) < _PIECED_MIN or _scope.document_cache() is None or text.isascii():
        return _model_view(text)
    memo = _scope.memo(_PIECES_MEMO)
    if memo is None:  # pragma: no cover - a document cache always has memos
        return _model_view(text)
    return _model_view_pieced(text, memo)


def _model_view_pieced(text: str, memo: dict) -> ModelView:
    """:func:`_model_view` of ``text``, the same ``text``, runs and tag runs, put together from
    the model views of its pieces (cut after each run of blank lines), each looked up in
    ``memo`` (piece → :class:`ModelView`) or built and added: an edit changes one piece, and the
    others' views are the previous version's (294 KB corpus file: 1.9 → 1.1 ms an edit,
    ``benchmarks/profile.md``, issue 10, session 18).

    Exact because the model view treats each maximal run of non-ASCII code points on its own
    (NFKC per code point, Default_Ignorable_Code_Point dropped, tag characters decoded within
    the run) and a cut falls after a line feed, so no run crosses one; the pieces' runs are
    joined shifted (view offsets by the views before, original offsets by the pieces before),
    the first run of each piece merged into the last of the one before where
    :meth:`RunMap.add` would have merged them. ``memo`` keeps at most about twice the pieces
    of the latest text (emptied first when it would hold more)."""
    pieces = cut_after(text, _PIECE_END)
    if len(memo) > 2 * len(pieces) + 64:
        memo.clear()
    omap = RunMap()
    v, o, st = omap.v, omap.o, omap.step
    out: list[str] = []
    tag_runs: list[tuple[int, int]] = []
    base = 0  # original offset of the piece
    for piece in pieces:
        mv = memo.get(piece)
        if mv is None:
            mv = memo[piece] = _model_view(piece)
        out.append(mv.text)
        pm = mv.omap
        if pm is None:  # an ASCII piece: its view is itself
            omap.add(base, len(piece))
        elif pm.v:
            n0 = omap.n
            first_count = (pm.v[1] if len(pm.v) > 1 else pm.n) - pm.v[0]
            omap.add(base + pm.o[0], first_count, pm.step[0] if first_count > 1 else 1)
            if len(pm.v) > 1:
                v.extend([n0 + x for x in pm.v[1:]])
                o.extend([base + x for x in pm.o[1:]])
                st.extend(pm.step[1:])
            omap.n = n0 + pm.n
        if mv.tag_runs:
            tag_runs.extend((a + base, b + base) for a, b in mv.tag_runs)
        base += len(piece)
    omap._last = None
    return ModelView("".join(out), omap, tag_runs, len(text))


def _model_view(text: str) -> ModelView:
    if text.isascii():
        return ModelView(text, None, [], len(text))
    out: list[str] = []
    omap = RunMap()
    tag_runs: list[tuple[int, int]] = []
    pos = 0
    for m in _SPECIAL.finditer(text):
        if m.start() > pos:
            out.append(text[pos : m.start()])
            omap.add(pos, m.start() - pos)
        run_start = None
        for i in range(m.start(), m.end()):
            ch = text[i]
            cp = ord(ch)
            if 0xE0000 <= cp <= 0xE007F:
                if run_start is None:
                    run_start = i
                if 0xE0020 <= cp <= 0xE007E:
                    out.append(chr(cp - 0xE0000))
                    omap.add(i, 1)
                continue
            if run_start is not None:
                tag_runs.append((run_start, i))
                run_start = None
            if _IGNORABLE.match(ch):
                continue
            norm = unicodedata.normalize("NFKC", ch)
            out.append(norm)
            omap.add(i, len(norm), 0)
        if run_start is not None:
            tag_runs.append((run_start, m.end()))
        pos = m.end()
    if pos < len(text):
        out.append(text[pos:])
        omap.add(pos, len(text) - pos)
    return ModelView("".join(out), omap, tag_runs, len(text))


# --------------------------------------------------------------------------------------------
# The normalised reading
# --------------------------------------------------------------------------------------------


@dataclass
class Reading:
    """The normalised text ``text`` of a source of ``source_length`` code points.

    The map is a list of segments, in order, each ``(out_start, src_start, src_end, copy)``:
    a copy segment maps reading ``[out_start, out_start + n)`` one to one onto source
    ``[src_start, src_start + n)``; any other segment maps all its reading characters onto the
    whole source span ``[src_start, src_end)``. Deleted source text has no segment.
    """

    text: str
    source_length: int
    out_starts: list[int] = field(default_factory=list)
    src_starts: list[int] = field(default_factory=list)
    src_ends: list[int] = field(default_factory=list)
    copies: list[bool] = field(default_factory=list)

    @property
    def identity(self) -> bool:
        """Whether the reading is the source itself (one copy segment, or empty)."""
        return len(self.text) == self.source_length and len(self.out_starts) <= 1 and all(self.copies)

    def _seg(self, i: int) -> int:
        return bisect.bisect_right(self.out_starts, i) - 1

    def source_span(self, i: int) -> tuple[int, int]:
        """Source ``(start, end)`` of reading character ``i`` (``0 <= i < len(text)``)."""
        k = self._seg(i)
        if self.copies[k]:
            s = self.src_starts[k] + (i - self.out_starts[k])
            return s, s + 1
        return self.src_starts[k], self.src_ends[k]

    def orig_start(self, i: int) -> int:
        """Source offset where reading offset ``i`` starts (``len(text)`` → end of the source)."""
        if i >= len(self.text):
            return self.source_length
        return self.source_span(max(0, i))[0]

    def orig_end(self, j: int) -> int:
        """Source offset (exclusive) where a reading range ending at ``j`` ends."""
        if j <= 0:
            return self.orig_start(0)
        return self.source_span(min(j, len(self.text)) - 1)[1]


# ---- character tables


@lru_cache(maxsize=1)
def confusables() -> dict[str, str]:
    """``{character: ASCII}`` from ``data/confusables-ascii.json`` (UTS #39 skeletons; see the data
    README for provenance). Empty if the file is missing."""
    try:
        path = Path(__file__).resolve().parents[1] / "data" / "confusables-ascii.json"
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


_NO_FOLD_SCRIPT = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\p{Thai}\p{Arabic}\p{Hebrew}]")
_LATIN = regex.compile(r"[\p{Latin}]")
_LETTERS = regex.compile(r"[\p{L}\p{M}\p{Nd}]+")
_ASCII_WORD = regex.compile(r"[A-Za-z]{2,}")


def _ascii_letters(word: str) -> int:
    return sum(1 for c in word if "a" <= c.lower() <= "z")


def _line_spoofed(text: str, i: int, cache: dict) -> bool:
    """Whether the line around ``i`` (at most 400 code points either side) reads as ASCII text
    spelled with look-alikes: it has a word with two ASCII letters, and every non-ASCII letter on
    it folds to ASCII (UTS #39 skeleton). Real Cyrillic or Greek text nearly always has a letter
    with no ASCII look-alike (б, д, ж, λ …), which keeps its line as it is."""
    n = len(text)
    ls = max(text.rfind("\n", max(0, i - 400), i) + 1, i - 400 if i > 400 else 0)
    key = ("line", ls)
    got = cache.get(key)
    if got is not None:
        return got
    le = text.find("\n", i, min(n, i + 400))
    le = min(n, i + 400) if le < 0 else le
    line = text[ls:le]
    conf = confusables()
    ok = bool(_ASCII_WORD.search(line)) and all(c.isascii() or c in conf or not c.isalpha() for c in line)
    cache[key] = ok
    return ok


def _fold_letter_ok(text: str, i: int, cache: dict) -> bool:
    """Whether confusable letters/digits of the source word around ``i`` are folded: the word mixes
    them with ASCII letters; or every such letter folds and an adjacent word on the line has two
    ASCII letters (an ASCII word, or a mixed one that folds itself), or the whole line is spelled
    with look-alikes (:func:`_line_spoofed`)."""
    n = len(text)
    s = i
    while s > 0 and _LETTERS.match(text[s - 1]):
        s -= 1
        if i - s > 64:
            break
    got = cache.get(s)
    if got is not None:
        return got
    m = _LETTERS.match(text, s, min(n, s + 128))
    word = m.group(0) if m else text[i]
    conf = confusables()
    has_ascii = any("a" <= c.lower() <= "z" for c in word)
    ok = has_ascii
    if not ok:
        if all(c.isascii() or c in conf or unicodedata.category(c)[0] == "M" for c in word):
            ls = text.rfind("\n", max(0, s - 80), s) + 1
            le = text.find("\n", s, min(n, s + len(word) + 80))
            le = min(n, s + len(word) + 80) if le < 0 else le
            before = _LETTERS.findall(text, max(ls, s - 80), s)
            after = _LETTERS.findall(text, s + len(word), le)
            near = [w for w in (before[-1:] + after[:1])]
            ok = any(_ascii_letters(w) >= 2 for w in near) or _line_spoofed(text, s, cache)
    cache[s] = ok
    return ok


class _Builder:
    """Accumulates reading text and segments."""

    __slots__ = ("parts", "out_len", "out_starts", "src_starts", "src_ends", "copies", "prev_latin")

    def __init__(self):
        self.parts: list[str] = []
        self.out_len = 0
        self.out_starts: list[int] = []
        self.src_starts: list[int] = []
        self.src_ends: list[int] = []
        self.copies: list[bool] = []
        self.prev_latin = False

    def copy(self, s: str, src: int) -> None:
        if not s:
            return
        n = len(s)
        if (
            self.copies
            and self.copies[-1]
            and self.src_ends[-1] == src
            and self.out_starts[-1] + (self.src_ends[-1] - self.src_starts[-1]) == self.out_len
        ):
            self.src_ends[-1] = src + n
        else:
            self.out_starts.append(self.out_len)
            self.src_starts.append(src)
            self.src_ends.append(src + n)
            self.copies.append(True)
        self.parts.append(s)
        self.out_len += n
        self.prev_latin = True  # an ASCII base: combining marks after it are decoration

    def replace(self, s: str, src: int, src_end: int) -> None:
        if not s:
            return
        self.out_starts.append(self.out_len)
        self.src_starts.append(src)
        self.src_ends.append(src_end)
        self.copies.append(False)
        self.parts.append(s)
        self.out_len += len(s)


def _norm_chars(
    b: _Builder, chars: str, text: str, src: int, src_end: int, cache: dict, per_char: bool, force_fold: bool = False
) -> None:
    """Normalise ``chars`` (from source ``[src, src_end)``; ``per_char``: ``chars`` is the source
    itself, so each character maps to its own source offset) into ``b``."""
    conf = confusables()
    out: list[str] = []
    for k, ch in enumerate(chars):
        cp = ord(ch)
        if cp < 0x80:
            res = ch
        elif 0xE0000 <= cp <= 0xE007F:
            res = chr(cp - 0xE0000) if 0xE0020 <= cp <= 0xE007E else ""
        elif _IGNORABLE.match(ch):
            res = ""
        else:
            nf = unicodedata.normalize("NFKC", ch) if not (0x300 <= cp < 0x370) else ch
            pieces = []
            for c in nf:
                if c.isascii():
                    pieces.append(c)
                    continue
                cat = unicodedata.category(c)
                if cat == "Mn":
                    if b.prev_latin:
                        continue
                    pieces.append(c)
                    continue
                f = conf.get(c)
                if f is not None and not _NO_FOLD_SCRIPT.match(c):
                    if cat[0] in "PS" or force_fold or (per_char and _fold_letter_ok(text, src + k, cache)):
                        pieces.append(f)
                        continue
                pieces.append(c)
            res = "".join(pieces)
        if per_char:
            if res == ch:
                b.copy(ch, src + k)
            else:
                b.replace(res, src + k, src + k + 1)
            if res:
                last = res[-1]
                b.prev_latin = last.isascii() or bool(_LATIN.match(last))
        else:
            out.append(res)
            if res:
                last = res[-1]
                b.prev_latin = last.isascii() or bool(_LATIN.match(last))
    if not per_char:
        b.replace("".join(out), src, src_end)


# ---- structural edits: (start, end, replacement) on the source


def _spans_index(spans: Sequence[tuple[int, int]]):
    starts = [s for s, _ in spans]

    def inside(o: int) -> bool:
        i = bisect.bisect_right(starts, o) - 1
        for j in range(i, max(-1, i - 4), -1):
            s, e = spans[j]
            if s <= o < e:
                return True
        return False

    return inside


_DELIM = regex.compile(r"\*+|_+|~~+")
_BLANK = regex.compile(r"\r?\n[ \t]*\r?\n")
"""A blank line: its line break and the next one's, ``\n`` or ``\r\n`` (a lone ``\r`` is not
cut at: a character's folding reads its line up to a ``\n``)."""


def _is_ws(c: str) -> bool:
    return c == "" or c.isspace()


def _is_punct(c: str) -> bool:
    return c != "" and unicodedata.category(c)[0] in "PS"


def _emphasis_edits(text: str, skip, out: list) -> None:
    """Deletions of paired emphasis delimiters (CommonMark flanking rules, simplified: no rule of
    three) in prose; paragraphs end at blank lines."""
    runs = []
    for m in _DELIM.finditer(text):
        s, e = m.span()
        if skip(s):
            continue
        bs = 0
        j = s - 1
        while j >= 0 and text[j] == "\\":
            bs += 1
            j -= 1
        if bs % 2:
            s += 1  # the first delimiter is escaped
            if s >= e:
                continue
        prev = text[s - 1] if s > 0 else ""
        nxt = text[e] if e < len(text) else ""
        lf = not _is_ws(nxt) and (not _is_punct(nxt) or _is_ws(prev) or _is_punct(prev))
        rf = not _is_ws(prev) and (not _is_punct(prev) or _is_ws(nxt) or _is_punct(nxt))
        ch = text[s]
        if ch == "_":
            can_open = lf and (not rf or _is_punct(prev))
            can_close = rf and (not lf or _is_punct(nxt))
        else:
            can_open, can_close = lf, rf
        if can_open or can_close:
            runs.append((s, e, ch, can_open, can_close))
    if not runs:
        return
    para_breaks = [m.start() for m in _BLANK.finditer(text)]
    stack: list[list] = []  # [char, start, remaining, orig_len, paragraph]
    for s, e, ch, can_open, can_close in runs:
        para = bisect.bisect_right(para_breaks, s)
        if stack and stack[-1][4] != para:
            stack = [x for x in stack if x[4] == para]
        cnt = e - s
        length = cnt
        if can_close:
            while cnt > 0:
                j = len(stack) - 1
                while j >= 0 and not (stack[j][0] == ch and (ch != "~" or stack[j][3] == length)):
                    j -= 1
                if j < 0:
                    break
                op = stack[j]
                use = cnt if ch == "~" else (2 if op[2] >= 2 and cnt >= 2 else 1)
                ostart = op[1] + op[2] - use
                out.append((ostart, ostart + use, ""))
                cstart = s + (length - cnt)
                out.append((cstart, cstart + use, ""))
                op[2] -= use
                cnt -= use
                del stack[j + 1 :]
                if op[2] == 0:
                    stack.pop()
        if cnt > 0 and can_open:
            stack.append([ch, s + (length - cnt), cnt, length, para])


_WORDCH = regex.compile(r"[\p{L}\p{N}]")
_BREAKER_BODY = regex.compile(r"[\p{L}\p{M}\p{N}]{1,30}")


def _backtick_edits(text: str, code: Sequence[tuple[int, int]], out: list) -> None:
    """Delete the backticks of an inline code span that breaks a word: ``i`gn`ore``."""
    n = len(text)
    for s, e in code:
        if e - s > 40 or text[s] != "`":
            continue
        k = 0
        while s + k < e and text[s + k] == "`":
            k += 1
        if e - s <= 2 * k or text[e - k : e] != "`" * k:
            continue
        body = text[s + k : e - k]
        if not _BREAKER_BODY.fullmatch(body):
            continue
        if (s > 0 and _WORDCH.match(text[s - 1])) or (e < n and _WORDCH.match(text[e])):
            out.append((s, s + k, ""))
            out.append((e - k, e, ""))


_LINE_END = regex.compile(r"\r\n|\r|\n")
_BLOCK_START = regex.compile(
    r"[ \t]{0,3}(?:\#{1,6}(?:[ \t]|$)|```|~~~|\||<|(?:[-*_][ \t]*){3,}$|=+[ \t]*$|-+[ \t]*$|\[[^\]]*\]:|\$\$)"
)
_LIST_MARK = regex.compile(r"[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t]+")
_QUOTE = regex.compile(r"[ \t]{0,3}>[ \t]?")
_ENDS_SENTENCE = regex.compile(r"[.!?:;…。！？][\"'”’)\]*_`]*[ \t]*$|^[ \t]*$")
_YAML_KEY = regex.compile(r"[ \t]*(?:-[ \t]|[\w\"'.-]+[ \t]*:(?:[ \t]|$)|#)")


_UNSPACED = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}\u30fc\u3005\u3006]")
"""Scripts written without spaces between words (Han, kana; not Hangul, which spaces its words):
a line break between two of their characters joins with nothing."""
_TABLE_DELIM = regex.compile(r"[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_HTML_START = regex.compile(r"[ \t]{0,3}<[A-Za-z/!?]")
_SINGLE_TICK = regex.compile(r"(?<!`)`(?!`)")


def _starts_block(line: str, following: str | None) -> bool:
    """Whether ``line`` starts a block that interrupts a paragraph (CommonMark/GFM): a heading,
    fence, thematic break, setext underline, reference definition, math block, an HTML tag (``<``
    then a letter, ``/``, ``!`` or ``?``: ``<|im_start|>`` is text), or a table row — a ``|`` line
    starts a table only when a delimiter row (``|---|``) follows it."""
    if not _BLOCK_START.match(line):
        return False
    body = line.lstrip(" \t")
    if body.startswith("|"):
        return any(x is not None and "-" in x and bool(_TABLE_DELIM.match(x)) for x in (line, following))
    if body.startswith("<"):
        return bool(_HTML_START.match(line))
    return True


def _open_code_span(line: str) -> bool:
    """``line`` leaves a single-backtick code span open (an odd number of lone backticks): the
    command in it goes on at the next line, whatever that line starts with."""
    return len(_SINGLE_TICK.findall(line)) % 2 == 1


_FIRST_WORD = regex.compile(r"[\p{L}\p{N}_]+")
_OPENERS, _CLOSERS = "([{", ")]}"


def _goes_on(prev: str, first: str) -> bool:
    """Whether a line (or list item) starting with ``first`` continues ``prev``, a line that does
    not close its sentence: it starts with anything but a capital letter (lower case, a caseless
    script, a digit, punctuation such as ``.env``, ``= value``, ``| sh``); or with an acronym or
    constant (``IA``, ``ИИ``, ``GITHUB_TOKEN``: a first word of two or more letters, all capitals);
    or ``prev`` leaves a bracket open that ``first``'s line closes."""
    if not first:
        return False
    if not first[:1].isupper():
        return True
    m = _FIRST_WORD.match(first)
    word = m.group(0) if m else ""
    if sum(ch.isalpha() for ch in word) >= 2 and word.isupper():
        return True
    return _bracket_open(prev, first)


def _bracket_open(prev: str, nxt: str) -> bool:
    """``prev`` leaves a bracket (``( [ {``) open and ``nxt`` closes one: a JSON object, a call or
    a link split over lines or list items goes on, whatever punctuation ends ``prev``."""
    depth = sum(prev.count(c) for c in _OPENERS) - sum(prev.count(c) for c in _CLOSERS)
    return depth > 0 and any(c in nxt for c in _CLOSERS)


def _joiner(prev: str, nxt: str) -> str:
    """What a line break between ``prev`` and ``nxt`` reads as: nothing between two characters
    of a script written without spaces, else one space."""
    a, b = prev.rstrip(" \t")[-1:], nxt.lstrip(" \t")[:1]
    return "" if a and b and _UNSPACED.match(a) and _UNSPACED.match(b) else " "


_LINE_BREAKS = regex.compile(r"[\r\n]*")


def _line_after(text: str, pos: int) -> str:
    """``text[pos:].lstrip("\\r\\n").split("\\n", 1)[0]`` without copying the rest of the text
    (that copy per line made :func:`_join_edits` quadratic on big files)."""
    start = _LINE_BREAKS.match(text, pos).end()
    end = text.find("\n", start)
    return text[start:] if end < 0 else text[start:end]


def _join_edits(text: str, skip, fm: tuple[int, int] | None, code_inside, out: list, block_inside=None) -> None:
    """Soft line breaks in prose paragraphs and continued list items become one space (nothing
    between two Han or kana characters); indented continuation lines of YAML values in frontmatter
    likewise. ``code_inside``: offset inside any code span; ``block_inside``: inside a code block
    (fenced or indented; default ``code_inside``) — a line break inside or at the edge of an
    inline code span still joins (CommonMark reads it as a space).

    The decision at each line break is :func:`_join_at`, a pure function of the two lines, the
    line after them and where the break sits (frontmatter, code block), memoised: re-reading a
    document after an edit decides again only at the breaks around the edited lines."""
    block_inside = block_inside or code_inside
    n = len(text)
    ends = [m.span() for m in _LINE_END.finditer(text)]
    memo = _scope.memo("line joins")  # (an open document's: unveil.core.scope.memo)
    if memo is None:
        memo = {}
    elif len(memo) > _JOIN_MEMO_MAX:
        memo.clear()
    for idx, (p, q) in enumerate(ends):
        if q >= n:
            break
        ls = ends[idx - 1][1] if idx else 0
        le = ends[idx + 1][0] if idx + 1 < len(ends) else n
        prev, nxt = text[ls:p], text[q:le]
        if not prev.strip() or not nxt.strip():
            continue
        in_fm = fm is not None and fm[0] <= p < fm[1]
        where = (
            (1 if q >= fm[1] else 2)  # type: ignore[index]
            if in_fm
            else (3 if (block_inside(p) or block_inside(q) or block_inside(max(0, p - 1))) else 0)
        )
        if where == 3:
            continue
        following = _line_after(text, le) if le < n else None
        key = (prev, nxt, following, where)
        if key in memo:
            got = memo[key]
        else:
            got = memo[key] = _join_at(prev, nxt, following, where)
        if got is not None:
            out.append((p, q + got[0], got[1]))


_JOIN_MEMO_MAX = 50_000
"""Most line-break decisions :func:`_join_edits` keeps (the memo is emptied past it)."""


def _join_at(prev: str, nxt: str, following: str | None, where: int) -> tuple[int, str] | None:
    """Whether the line break between the lines ``prev`` and ``nxt`` (both with content;
    ``following``: the line after ``nxt``, ``None`` at the end of the text) is joined, and how:
    ``(k, joiner)`` replaces the break and the first ``k`` code points of ``nxt`` with ``joiner``;
    ``None`` keeps it. ``where``: 0 prose, 1 frontmatter with ``nxt`` past its end, 2 inside the
    frontmatter."""
    if where:
        # a YAML continuation line: more indented than nothing, not a key, item or comment
        if (
            where == 1
            or nxt[:1] not in (" ", "\t")
            or _YAML_KEY.match(nxt)
            or prev.rstrip().endswith((":", "|", "|-", ">", ">-"))
        ):
            return None
        if prev.lstrip().startswith(("#", "---")) or nxt.strip() == "---":
            return None
        return len(nxt) - len(nxt.lstrip(" \t")), " "
    html_like = prev.lstrip(" \t").startswith("<")
    if (_starts_block(prev, None) if html_like else _BLOCK_START.match(prev)) and not _QUOTE.match(prev):
        return None  # a heading, table row, HTML line … ends at its line
    qm = _QUOTE.match(nxt)
    pq = _QUOTE.match(prev)
    prev_body = prev[pq.end() :] if pq else prev
    k = qm.end() if (qm and pq) else 0
    rest = nxt[k:]
    lm = _LIST_MARK.match(rest)
    if _open_code_span(prev_body) and "`" in rest:
        # a code span left open goes on at the next line (``>>`` there is a redirection, not
        # a quote): one space, past the next item's list marker when both are list items
        cut = lm.end() if (lm and _LIST_MARK.match(prev_body)) else 0
        return k + cut, " "
    if qm and not pq:
        return None
    if _starts_block(rest, following):
        return None
    if lm:
        if not (_LIST_MARK.match(prev_body) or prev_body[:1] in (" ", "\t")):
            return None
        if _ENDS_SENTENCE.search(prev_body) and not _bracket_open(prev_body, rest):
            return None
        # the next item continues the sentence unless it opens with a capital letter (lower
        # case, a caseless script, a digit or punctuation such as ``.env``, ``= value``, ``| sh``)
        first = rest[lm.end() :].lstrip("*_`~\"'“(")
        if not _goes_on(prev_body, first):
            return None
        return k + lm.end(), _joiner(prev_body, first)
    # a soft wrap inside a sentence: the previous line does not close it and the next goes on
    # in lower case (a line that starts a new sentence keeps its break, so `^` anchors hold)
    body = rest.lstrip(" \t")
    if _bracket_open(prev, body):
        pass
    elif _ENDS_SENTENCE.search(prev) or prev.rstrip().endswith(":") or not _goes_on(prev, body.lstrip("*_`~\"'“(")):
        return None
    return k + (len(rest) - len(body)), _joiner(prev, body)


_CHARREF = regex.compile(r"&(?:#[xX]([0-9A-Fa-f]{1,6})|#([0-9]{1,7})|([A-Za-z][A-Za-z0-9]{1,31}));")
_PERCENT_RUN = regex.compile(r"(?:%[0-9A-Fa-f]{2})+")
_ESCAPE = regex.compile(r"\\(?:x([0-9A-Fa-f]{2})|u\{([0-9A-Fa-f]{1,6})\}|u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8}))")


def _chr(cp: int) -> str | None:
    if 0 <= cp <= 0x10FFFF and not 0xD800 <= cp <= 0xDFFF:
        return chr(cp)
    return None


def _printable(s: str) -> bool:
    return all(c.isprintable() or _IGNORABLE.match(c) for c in s)


def _charref_edits(text: str, out: list) -> None:
    for m in _CHARREF.finditer(text):
        hexa, dec, name = m.groups()
        if hexa is not None:
            ch = _chr(int(hexa, 16))
        elif dec is not None:
            ch = _chr(int(dec))
        else:
            ch = html.entities.html5.get(name + ";")
        if ch and (_printable(ch) or ch in "\t\n"):
            out.append((m.start(), m.end(), ch))


def _percent_edits(text: str, out: list) -> None:
    n = len(text)
    for m in _PERCENT_RUN.finditer(text):
        try:
            dec = bytes.fromhex(m.group(0).replace("%", "")).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            continue
        if not _printable(dec):
            continue
        s, e = m.span()
        if any(c.isascii() and c.isalnum() for c in dec) or (
            dec.isspace() and s > 0 and e < n and text[s - 1].isalpha() and text[e].isalpha()
        ):
            out.append((s, e, dec))


def _escape_edits(text: str, out: list) -> None:
    pending = None  # a high surrogate waiting for its pair: (start, end, cp)
    for m in _ESCAPE.finditer(text):
        s, e = m.span()
        bs = 0
        j = s - 1
        while j >= 0 and text[j] == "\\":
            bs += 1
            j -= 1
        if bs % 2:
            continue
        x, ub, u, big = m.groups()
        cp = int(x or ub or u or big, 16)
        if u is not None and 0xD800 <= cp <= 0xDBFF:
            pending = (s, e, cp)
            continue
        if u is not None and 0xDC00 <= cp <= 0xDFFF and pending and pending[1] == s:
            cp = 0x10000 + ((pending[2] - 0xD800) << 10) + (cp - 0xDC00)
            s = pending[0]
        pending = None
        ch = _chr(cp)
        if ch and _printable(ch):
            out.append((s, e, ch))


def _inline_code(text: str, span: tuple[int, int]) -> bool:
    """Whether a code span is inline code (opens with one or two backticks), not a block."""
    s = span[0]
    return text[s : s + 1] == "`" and text[s : s + 3] != "```"


def normalise(
    text: str,
    code: Sequence[tuple[int, int]] = (),
    frontmatter: tuple[int, int] | None = None,
    *,
    reuse: str | None = None,
) -> Reading:
    """The :class:`Reading` of ``text``. ``code``: code spans (blocks and inline) and
    ``frontmatter``: the frontmatter span, both in source code points (from
    :func:`unveil.core.context.regions`); without them the whole text counts as prose.

    ``reuse``: a name for this text in an open document (:func:`unveil.core.scope.document_cache`;
    the pattern rules pass one for the document, none for a decoded payload). Then a text of at
    least :data:`CHUNKED_MIN` code points whose code spans do not overlap is read in stretches
    between blank lines (:func:`_normalise_chunked`), and the readings of the last version's
    stretches, kept in the document cache under that name, are reused: after an edit only the
    stretch around it is read again. The result is the same."""
    code = sorted(code)
    cache = _scope.document_cache() if reuse is not None and len(text) >= CHUNKED_MIN else None
    if cache is not None:
        key = ("normalise", reuse)
        memo: dict = {}
        got = _normalise_chunked(text, code, frontmatter, cache.kept.get(key) or {}, memo)
        if got is not None:
            cache.kept[key] = memo  # the stretches of this version only: what the next one reuses
            return got
    blocks = [c for c in code if not _inline_code(text, c)]
    one_line = [c for c in code if "\n" not in text[c[0] : c[1]]]
    return _normalise_core(text, len(text), code, blocks, one_line, frontmatter, False)


def _normalise_core(
    text: str,
    end: int,
    code: Sequence[tuple[int, int]],
    blocks: Sequence[tuple[int, int]],
    one_line: Sequence[tuple[int, int]],
    frontmatter: tuple[int, int] | None,
    prev_latin: bool,
) -> Reading:
    """The :class:`Reading` of ``text[:end]``, where the text past ``end`` is only read as the
    context of the last lines (the line after a line, see :func:`_join_edits`), and no edit of
    it is kept. ``code``: sorted code spans; ``blocks``: those that are code blocks (not inline
    code: :func:`_inline_code`); ``one_line``: those without a line break; ``prev_latin``: the
    reading of what came before ``text`` ended in a Latin or ASCII letter (combining marks at
    the start are then dropped)."""
    n = len(text)
    code_inside = _spans_index(code)
    fm = frontmatter

    def skip(o: int) -> bool:
        return (fm is not None and fm[0] <= o < fm[1]) or code_inside(o)

    edits: list[tuple[int, int, str]] = []
    if "*" in text or "_" in text or "~~" in text:
        _emphasis_edits(text, skip, edits)
    if "`" in text and one_line:
        _backtick_edits(text, one_line, edits)
    if "\n" in text or "\r" in text:
        _join_edits(text, skip, fm, code_inside, edits, _spans_index(blocks) if len(blocks) < len(code) else None)
    if "&" in text and ";" in text:
        _charref_edits(text, edits)
    if "%" in text:
        _percent_edits(text, edits)
    if "\\" in text:
        _escape_edits(text, edits)
    if "\r" in text:
        _line_break_edits(text, edits)
    if end < n:
        edits = [x for x in edits if x[0] < end]
        text = text[:end]
        n = end
    if not edits and text.isascii():
        r = Reading(text, n)
        if n:
            r.out_starts, r.src_starts, r.src_ends, r.copies = [0], [0], [n], [True]
        return r
    edits.sort(key=lambda t: (t[0], -(t[1] - t[0])))
    b = _Builder()
    b.prev_latin = prev_latin
    cache: dict[int, bool] = {}
    pos = 0

    def gap(a: int, z: int) -> None:
        if a >= z:
            return
        seg = text[a:z]
        if seg.isascii():
            b.copy(seg, a)
            return
        p = a
        for m in _SPECIAL.finditer(text, a, z):
            if m.start() > p:
                b.copy(text[p : m.start()], p)
            _norm_chars(b, m.group(0), text, m.start(), m.end(), cache, per_char=True)
            p = m.end()
        if p < z:
            b.copy(text[p:z], p)

    for s, e, repl in edits:
        if s < pos:
            continue  # overlaps an earlier edit
        gap(pos, s)
        if repl:
            if repl.isascii():
                b.replace(repl, s, e)
                b.prev_latin = True
            else:
                _norm_chars(b, repl, text, s, e, cache, per_char=False, force_fold=True)
        pos = e
    gap(pos, n)
    return Reading("".join(b.parts), n, b.out_starts, b.src_starts, b.src_ends, b.copies)


_CR_BREAK = regex.compile(r"\r\n?")


def _line_break_edits(text: str, edits: list[tuple[int, int, str]]) -> None:
    """A line feed for each ``\r\n`` and each lone ``\r`` of ``text`` (LSP 3.17 and CommonMark
    both end lines at ``\n``, ``\r\n`` and ``\r``): the rules read every line break as
    ``\n``, so a pattern's ``$``, ``^`` or ``\n`` holds on a CRLF or CR file as on an LF one
    (``tools: "*"`` with CRLF line endings went unreported). Appended after the other edits, so
    one that starts at the same offset (a soft wrap joined) is applied instead."""
    edits.extend((m.start(), m.end(), "\n") for m in _CR_BREAK.finditer(text))


CHUNKED_MIN = 8_192
"""Code points from which an open document's reading is put together from memoised stretches
(:func:`_normalise_chunked`); below it, one pass over the text costs less than the bookkeeping."""
CHUNK_MIN = 1_024
"""A stretch ends at the first blank line at least this many code points after its start."""


def _overlapping(spans: Sequence[tuple[int, int]]) -> bool:
    """Whether two of the sorted ``spans`` overlap."""
    return any(spans[i][0] < spans[i - 1][1] for i in range(1, len(spans)))


def _clip_all(text: str, code: Sequence[tuple[int, int]], cuts: list[int]) -> list[tuple]:
    """Per stretch ``[cuts[k], cuts[k + 1])``: the sorted, non-overlapping ``code`` spans that
    meet it, cut to it and moved by ``-cuts[k]``, as ``(start, end, kind)`` with ``kind`` bit 1
    set for a code block (:func:`_inline_code` is false) and bit 2 for a span with no line break
    (both decided on the whole span)."""
    out: list[list] = [[] for _ in range(len(cuts) - 1)]
    last = len(cuts) - 1
    k = 0
    a, b = cuts[0], cuts[1]
    for s, e in code:
        # (_inline_code and a search for a line break, without slicing the text)
        kind = (0 if text.startswith("`", s) and not text.startswith("```", s) else 1) | (
            2 if text.find("\n", s, e) < 0 else 0
        )
        while b <= s and k < last - 1:
            k += 1
            a, b = b, cuts[k + 1]
        if a <= s and e <= b:  # the usual case: inside one stretch
            out[k].append((s - a, e - a, kind))
            continue
        j = k
        while j < last and cuts[j] < e:
            lo, hi = cuts[j], cuts[j + 1]
            out[j].append((max(s, lo) - lo, min(e, hi) - lo, kind))
            j += 1
    return [tuple(x) for x in out]


def _normalise_chunked(
    text: str, code: list[tuple[int, int]], frontmatter: tuple[int, int] | None, old: dict, new: dict
) -> Reading | None:
    """:func:`normalise` of ``text`` put together from the readings of its stretches, or
    ``None`` when the code spans overlap (then the whole text is read in one pass).

    A stretch ends just after a blank line (a match of :data:`_BLANK`, as ``finditer`` finds
    them; the first at least :data:`CHUNK_MIN` code points after the stretch's start). Nothing
    the reading does crosses one, so a stretch's reading is a function of what it reads:

    * paired emphasis delimiters pair within a paragraph, and paragraphs end at those same
      blank lines; a delimiter run, a character reference, a percent or backslash escape and an
      inline code span hold no line break, and what they look at before and after them stops at
      the line break that ends the blank line;
    * a line break is joined only between two lines with content (never at a blank line); the
      decision reads the two lines and the line after them, which for a stretch's last line can
      be the next stretch's first line: that line is read with the stretch (``tail``) and its
      own edits are dropped;
    * what a character's folding looks at (its word, its line: :func:`_fold_letter_ok`,
      :func:`_line_spoofed`) stops at line breaks, and the reading before a stretch ends with
      that line break, an ASCII character (``prev_latin``);
    * code spans (from the markdown layer) and the frontmatter are cut to the stretch; which
      spans are code blocks and which hold no line break is decided on the whole text. Spans
      that overlap are found by a bisection that looks back at most four spans
      (:func:`_spans_index`), which cutting could change: such a text is not put together.

    Each stretch's reading is looked up in ``old`` by its text (a 128-bit BLAKE2b of it, with
    the tail), its cut spans and ``prev_latin`` (the last version's stretches), computed when missing, and put in ``new``
    (so a document keeps the stretches of one version: about its reading's size again); the
    segments are moved into place and two copy segments that meet are merged as
    :class:`_Builder` merges them. ``tests/unit/test_normalize_chunked.py`` compares the result
    with one pass over corpus files and generated texts."""
    if _overlapping(code):
        return None
    n = len(text)
    cuts = [0]
    for m in _BLANK.finditer(text):
        c = m.end()
        if c - cuts[-1] >= CHUNK_MIN and c < n:
            cuts.append(c)
    cuts.append(n)
    spans = _clip_all(text, code, cuts)
    parts: list[str] = []
    out_starts: list[int] = []
    src_starts: list[int] = []
    src_ends: list[int] = []
    copies: list[bool] = []
    out_len = 0
    for k in range(len(cuts) - 1):
        a, b = cuts[k], cuts[k + 1]
        if b < n:
            t0 = _LINE_BREAKS.match(text, b).end()
            t1 = text.find("\n", t0)
            piece = text[a : n if t1 < 0 else t1]
        else:
            piece = text[a:b]
        end = b - a
        fm = None
        if frontmatter is not None and frontmatter[1] > a and frontmatter[0] < b:
            fm = (max(frontmatter[0], a) - a, min(frontmatter[1], b) - a)
        # (a 128-bit BLAKE2b of the stretch's text stands for it: the memo keeps no copy)
        key = (blake2b(piece.encode("utf-8", "surrogatepass"), digest_size=16).digest(), end, spans[k], fm, a > 0)
        got = old.get(key) or new.get(key)
        if got is None:
            cs = spans[k]
            r = _normalise_core(
                piece,
                end,
                [(x, y) for x, y, _ in cs],
                [(x, y) for x, y, kind in cs if kind & 1],
                [(x, y) for x, y, kind in cs if kind & 2],
                fm,
                a > 0,
            )
            # (offsets as machine integers: a tenth of the memory of a tuple of Python ints)
            got = (r.text, array("q", r.out_starts), array("q", r.src_starts), array("q", r.src_ends), tuple(r.copies))
        new[key] = got
        rtext, ro, rs, re_, rc = got
        if not ro:
            continue
        first = 0
        if (
            rc[0]
            and copies
            and copies[-1]
            and src_ends[-1] == a + rs[0]
            and out_starts[-1] + (src_ends[-1] - src_starts[-1]) == out_len
        ):
            src_ends[-1] = a + re_[0]
            first = 1
        if first < len(ro):
            out_starts.extend([o + out_len for o in ro[first:]])
            src_starts.extend([x + a for x in rs[first:]])
            src_ends.extend([x + a for x in re_[first:]])
            copies.extend(rc[first:])
        parts.append(rtext)
        out_len += len(rtext)
    joined = "".join(parts)
    if len(out_starts) == 1 and copies[0] and joined == text:
        joined = text  # the source itself, as one pass returns it
    return Reading(joined, n, out_starts, src_starts, src_ends, copies)
