"""The document model: text, LSP line index and position-encoding conversion.

Lines split only on ``\\n``, ``\\r\\n`` and ``\\r`` (LSP 3.17, "Text Documents": "To ensure that
both client and server split the string into the same line representation the protocol
specifies the following end-of-line sequences: '\\n', '\\r\\n' and '\\r'"). U+2028, U+2029,
U+0085, ``\\f`` and ``\\v`` are ordinary characters inside a line.

Offsets are code-point indexes into :attr:`Document.text`. Columns handed to or received from a
client are counted in the negotiated position encoding: ``"utf-16"`` (the LSP default; astral
characters take two units), ``"utf-8"`` (bytes) or ``"utf-32"`` (code points).
"""

from __future__ import annotations

import bisect
import re
from array import array
from dataclasses import dataclass
from typing import Sequence

_LINE_BREAK = re.compile(r"\r\n|\r|\n")

ENCODINGS = ("utf-8", "utf-16", "utf-32")


def split_lsp_lines(text: str) -> list[str]:
    """Split ``text`` into lines the way LSP does, keeping line endings.

    Returns a list of strings whose concatenation is ``text``. A trailing line break does not
    start an extra (empty) element, matching ``str.splitlines(True)`` on ordinary text.
    """
    return cut_after(text, _LINE_BREAK)


def cut_after(text: str, pattern) -> list[str]:
    """``text`` cut after each match of the compiled ``pattern`` (``re`` or ``regex``): pieces
    whose concatenation is ``text``, none empty (a match at the very end adds no empty last
    piece; ``pattern`` should not match the empty string)."""
    parts: list[str] = []
    pos = 0
    for m in pattern.finditer(text):
        parts.append(text[pos : m.end()])
        pos = m.end()
    if pos < len(text):
        parts.append(text[pos:])
    return parts


def units(s: str, encoding: str) -> int:
    """Length of ``s`` in ``encoding`` units: bytes (utf-8), UTF-16 code units or code points.

    Raises ``ValueError`` for an unknown encoding. A lone surrogate (an undecodable byte kept
    with ``surrogateescape``, which an editor shows as U+FFFD) counts as U+FFFD does: one
    UTF-16 code unit, three UTF-8 bytes, one code point.
    """
    if encoding == "utf-32":
        return len(s)
    if encoding == "utf-16":
        if s.isascii():
            return len(s)
        # two bytes per UTF-16 code unit (a lone surrogate: two bytes, one unit)
        return len(s.encode("utf-16-le", "surrogatepass")) // 2
    if encoding == "utf-8":
        if s.isascii():
            return len(s)
        return len(s.encode("utf-8", "surrogatepass"))
    raise ValueError(f"unknown position encoding {encoding!r}; expected one of {ENCODINGS}")


@dataclass(frozen=True)
class Position:
    """A 0-based line and a column in some unit (see the function that returned it)."""

    line: int
    character: int


class Document:
    """Immutable text with an LSP line index.

    ``line_starts[i]`` is the code-point offset where line ``i`` begins, an ``array("q")`` (8
    bytes a line; a list of ints took about 36, and a second one held each line's content end:
    the 52 documents of the language server benchmark kept 4.0 MB of them, 0.4 MB now). A
    line's content ends where the next line starts less its line break, one code point
    (``\\n``, ``\\r``) or two (``\\r\\n``), read from the text when asked (:meth:`line_span`).
    There is always at least one line (an empty document has one empty line, as in LSP).
    """

    __slots__ = ("text", "line_starts")
    text: str
    line_starts: array[int]

    def __init__(self, text: str) -> None:
        self.text = text
        starts = array("q", (0,))
        add = starts.append
        if "\r" not in text:  # line feeds only: found by str.find, four times faster than the pattern
            find = text.find
            i = find("\n")
            while i >= 0:
                i += 1
                add(i)
                i = find("\n", i)
        else:
            for m in _LINE_BREAK.finditer(text):
                add(m.end())
        self.line_starts = starts

    @classmethod
    def from_line_starts(cls, text: str, line_starts: Sequence[int]) -> "Document":
        """A document over ``text`` with its ``line_starts`` given (as an earlier
        ``Document(text)`` computed them; an ``array("q")`` is kept as it is, any other sequence
        is copied into one): a stored result loads without a pass over the text. The caller
        vouches that the starts are ``text``'s (:mod:`unveil.core.results` stores them from one
        document)."""
        doc = cls.__new__(cls)
        doc.text = text
        doc.line_starts = (
            line_starts if isinstance(line_starts, array) and line_starts.typecode == "q" else array("q", line_starts)
        )
        return doc

    def _end(self, line: int) -> int:
        """Code-point offset where ``line``'s content ends, before its line break: the next
        line's start less one, or two when the break is ``\\r\\n`` (a ``\\r`` right before the
        ``\\n`` that precedes a line start is always that pair: the splitting pattern tries it
        first). Raises ``IndexError`` past the last line."""
        starts = self.line_starts
        k = len(starts)
        if line < 0:  # counted from the end, as for a list
            line += k
        if not 0 <= line < k:
            raise IndexError("line index out of range")
        if line == k - 1:
            return len(self.text)
        n = starts[line + 1] - 1
        text = self.text
        if text[n] == "\n" and n > starts[line] and text[n - 1] == "\r":
            return n - 1
        return n

    def spliced(self, start: int, end: int, insert: str, text: str | None = None) -> "Document":
        """The document of this text with code points ``[start, end)`` replaced by ``insert``
        (``0 <= start <= end <= len(self.text)``; raises ``ValueError`` otherwise), equal to
        ``Document`` of that text: the lines from the one before ``start``'s up to the line
        after ``end``'s are indexed afresh, the lines before kept, the lines after moved by the
        length change. ``text``, when given, is that new text (the caller's own string, which
        the result then holds; it is not checked).

        The line before ``start``'s is indexed again because an edit at a line start can join
        the previous line's ``\\r`` with an inserted ``\\n``; the line after ``end``'s starts
        at a character the edit left in place, after one it left in place, so it starts a line
        in both versions. A language server's copy of an open document gets its next version's
        index this way at each edit, in time proportional to the number of lines rather than
        to the text's length (no scan of the text)."""
        old = self.text
        if not 0 <= start <= end <= len(old):
            raise ValueError(f"bad splice [{start}, {end}) of a text of {len(old)} code points")
        if text is None:
            text = old[:start] + insert + old[end:]
        starts = self.line_starts
        first = max(0, self.line_of(start) - 1)
        after = self.line_of(end) + 1  # the first line kept after the edit (if any)
        lo = starts[first]
        delta = len(insert) - (end - start)
        hi = starts[after] + delta if after < len(starts) else len(text)
        seg_starts = Document(text[lo:hi]).line_starts
        if after < len(starts):  # the segment ends with a line break: drop its empty last line
            seg_starts = seg_starts[:-1]
        new_starts = starts[:first]
        new_starts.extend([lo + s for s in seg_starts] if lo else seg_starts)
        if after < len(starts):
            if delta:
                new_starts.extend([s + delta for s in starts[after:]])
            else:
                new_starts.extend(starts[after:])
        return Document.from_line_starts(text, new_starts)

    # -- lines -------------------------------------------------------------------------
    @property
    def line_count(self) -> int:
        """Number of lines; a final line break opens a last, empty line (LSP semantics)."""
        return len(self.line_starts)

    def line_text(self, line: int) -> str:
        """Content of ``line`` without its line break. Raises ``IndexError`` past the end."""
        return self.text[self.line_starts[line] : self._end(line)]

    def line_span(self, line: int) -> tuple[int, int]:
        """``(start, end)`` code-point offsets of ``line``'s content, line break excluded."""
        return self.line_starts[line], self._end(line)

    def line_of(self, offset: int) -> int:
        """0-based line containing code-point ``offset`` (clamped to the document)."""
        offset = max(0, min(offset, len(self.text)))
        return bisect.bisect_right(self.line_starts, offset) - 1

    # -- code points -------------------------------------------------------------------
    def position(self, offset: int) -> Position:
        """Line and code-point column of ``offset``. An offset inside a ``\\r\\n`` pair or
        past the line content maps to the end of the line's content; one before the text, to
        its start."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self.line_starts, offset) - 1
        start, end = self.line_starts[line], self._end(line)
        return Position(line, min(offset, end) - start)

    def offset(self, line: int, column: int) -> int:
        """Code-point offset of (line, code-point column), clamped to the line's content.
        A line past the end maps to the end of the text."""
        if line < 0:
            return 0
        if line >= len(self.line_starts):
            return len(self.text)
        start, end = self.line_starts[line], self._end(line)
        return min(start + max(column, 0), end)

    # -- client units --------------------------------------------------------------------
    def to_client(self, offset: int, encoding: str = "utf-16") -> Position:
        """Position of code-point ``offset`` with the column counted in ``encoding`` units."""
        text = self.text
        offset = max(0, min(offset, len(text)))
        line = bisect.bisect_right(self.line_starts, offset) - 1
        start = self.line_starts[line]
        column = min(offset, self._end(line)) - start  # (position()'s, without building it)
        if encoding == "utf-32":
            return Position(line, column)
        return Position(line, units(text[start : start + column], encoding))

    def from_client(self, line: int, character: int, encoding: str = "utf-16") -> int:
        """Code-point offset of a client position (column in ``encoding`` units).

        A column inside a surrogate pair or a multi-byte sequence rounds down to the start of
        that character; a column past the line content clamps to the line end (LSP 3.17:
        "If the character value is greater than the line length it defaults back to the line
        length").
        """
        if line < 0:
            return 0
        if line >= len(self.line_starts):
            return len(self.text)
        start, end = self.line_starts[line], self._end(line)
        if encoding == "utf-32":
            return min(start + max(character, 0), end)
        head = self.text[start : min(end, start + max(character, 0))]
        if head.isascii():  # one unit per code point in every encoding
            if len(head) == character or start + len(head) == end:
                return start + len(head)
        count = 0
        for i in range(start, end):
            w = units(self.text[i], encoding)
            if count + w > character:
                return i
            count += w
        return end

    def client_range(self, start: int, end: int, encoding: str = "utf-16") -> tuple[Position, Position]:
        """``(start, end)`` client positions for a code-point range."""
        return self.to_client(start, encoding), self.to_client(end, encoding)
