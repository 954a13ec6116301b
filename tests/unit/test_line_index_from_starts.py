"""``Document.from_line_starts``: the line index a stored report keeps (its line starts only)
gives every line the same content span as ``Document(text)``, over a generated family of texts
mixing the three line breaks (``\\n``, ``\\r\\n``, ``\\r``), runs of them, and lines that are
empty, long or made of ``\\r``/``\\n`` look-alikes (U+2028, U+0085, which are not LSP line
breaks)."""

from __future__ import annotations

import random
from array import array

import pytest

from unveil.core.document import Document

PIECES = ["a", "bc", "é", "\U0001f600", " ", "\u2028", "\u0085", "\n", "\r\n", "\r", "\r\r", "\n\r", "\r\n\r\n", ""]


def _texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        n = rng.randint(0, 40)
        out.append("".join(rng.choice(PIECES) for _ in range(n)))
    return out


HAND = ["", "\n", "\r", "\r\n", "a", "a\n", "a\r\r\n", "\r\n\r", "\n\r\n\r", "x\r\ny\rz\n", "\r\r\r", "\n\n"]


@pytest.mark.parametrize("text", HAND + _texts(11, 400))
@pytest.mark.parametrize("as_array", [False, True])
def test_the_line_ends_follow_from_the_starts(text, as_array):
    full = Document(text)
    starts = array("I", full.line_starts) if as_array else list(full.line_starts)
    got = Document.from_line_starts(text, starts)
    assert got.line_count == full.line_count
    assert [got.line_span(i) for i in range(got.line_count)] == [full.line_span(i) for i in range(full.line_count)]
    assert [got.position(o) for o in range(len(text) + 1)] == [full.position(o) for o in range(len(text) + 1)]


def test_the_hand_cases_have_these_spans():
    docs = [Document.from_line_starts(t, Document(t).line_starts) for t in ("a\r\r\n", "x\r\ny\rz\n")]
    assert [[d.line_span(i)[1] for i in range(d.line_count)] for d in docs] == [
        [1, 2, 4],
        [1, 4, 6, 7],
    ]


@pytest.mark.parametrize("seed", range(4))
def test_the_line_feed_only_index_is_the_patterns(seed):
    """``Document(text)`` finds line feeds with ``str.find`` when the text has no ``\\r``: the same
    starts and content ends as the line-break pattern gives, over generated texts without
    ``\\r`` (U+2028 and U+0085 are no line breaks either way)."""
    from unveil.core.document import _LINE_BREAK

    checked = 0
    for text in _texts(100 + seed, 300):
        text = text.replace("\r", "")
        doc = Document(text)
        ms = list(_LINE_BREAK.finditer(text))
        assert list(doc.line_starts) == [0, *(m.end() for m in ms)]
        assert [doc.line_span(i)[1] for i in range(doc.line_count)] == [*(m.start() for m in ms), len(text)]
        checked += len(ms)
    assert checked > 1000


def test_the_index_is_one_array_of_starts_and_lines_count_from_the_end_as_in_a_list():
    """The line index is the starts alone, an ``array("q")`` (8 bytes a line); a line's content
    end is read from the text, and a line number indexes as in a list (negative from the end,
    ``IndexError`` past either end)."""
    from array import array

    doc = Document("ab\r\ncd\re\n")
    assert isinstance(doc.line_starts, array) and doc.line_starts.typecode == "q"
    assert list(doc.line_starts) == [0, 4, 7, 9]
    assert [doc.line_span(i) for i in range(-4, 4)] == [(0, 2), (4, 6), (7, 8), (9, 9)] * 2
    assert [doc.line_text(i) for i in range(4)] == ["ab", "cd", "e", ""]
    for bad in (4, -5):
        with pytest.raises(IndexError):
            doc.line_span(bad)
    copied = Document.from_line_starts(doc.text, [0, 4, 7, 9])
    assert copied.line_starts.typecode == "q" and copied.line_starts == doc.line_starts
