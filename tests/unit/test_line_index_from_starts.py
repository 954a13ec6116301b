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
    assert [Document.from_line_starts(t, Document(t).line_starts)._line_ends for t in ("a\r\r\n", "x\r\ny\rz\n")] == [
        [1, 2, 4],
        [1, 4, 6, 7],
    ]
