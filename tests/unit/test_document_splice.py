"""Document.spliced (a line index moved by an edit) and the position conversions' fast paths,
against the plain computations, over generated texts and edits (issue 10: the language
server's per-keystroke work outside the analysis)."""

from __future__ import annotations

import random

import pytest

from unveil.core.document import Document, Position, units

ALPHABET = ["a", "b", " ", "\n", "\r", "\r\n", "é", "\U0001f600", "\u2028", "\udc80", "\t"]


def _text(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(n))


def _index(doc: Document) -> tuple[list[int], list[int]]:
    return list(doc.line_starts), [doc.line_span(i)[1] for i in range(doc.line_count)]


@pytest.mark.parametrize("seed", range(40))
def test_spliced_equals_a_fresh_index(seed):
    rng = random.Random(seed)
    text = _text(rng, rng.randrange(0, 60))
    doc = Document(text)
    for _ in range(30):
        a = rng.randrange(0, len(text) + 1)
        b = min(len(text), a + rng.choice([0, 0, 1, 2, 5]))
        insert = _text(rng, rng.choice([0, 1, 1, 2, 4]))
        new = text[:a] + insert + text[b:]
        got = doc.spliced(a, b, insert)
        assert got.text == new
        assert _index(got) == _index(Document(new)), (text, a, b, insert)
        doc, text = got, new


def test_spliced_joins_and_splits_crlf_pairs():
    doc = Document("ab\rcd\r\nef")
    assert _index(doc.spliced(3, 3, "\n")) == _index(Document("ab\r\ncd\r\nef"))  # \r + inserted \n
    assert _index(doc.spliced(6, 6, "x")) == _index(Document("ab\rcd\rx\nef"))  # a pair split
    assert _index(doc.spliced(5, 6, "")) == _index(Document("ab\rcd\nef"))  # \r of a pair deleted
    joined = Document("ab\r\ncd")
    assert list(joined.spliced(3, 4, "").line_starts) == [0, 3]  # "ab\rcd": a lone \r ends line 0


def test_spliced_keeps_the_callers_string_and_refuses_bad_ranges():
    doc = Document("one\ntwo\n")
    new = "one\nt!wo\n"
    got = doc.spliced(5, 5, "!", new)
    assert got.text is new
    assert list(got.line_starts) == [0, 4, 9]
    with pytest.raises(ValueError):
        doc.spliced(3, 2, "")
    with pytest.raises(ValueError):
        doc.spliced(0, 99, "")


def _from_client_reference(doc: Document, line: int, character: int, encoding: str) -> int:
    """The definition: the last offset of the line whose prefix is at most ``character`` units
    (rounding down inside a character), by trying every offset."""
    if line < 0:
        return 0
    if line >= doc.line_count:
        return len(doc.text)
    start, end = doc.line_span(line)
    fits = [i for i in range(start, end + 1) if units(doc.text[start:i], encoding) <= max(character, 0)]
    return fits[-1]


def _to_client_reference(doc: Document, offset: int, encoding: str) -> Position:
    line = doc.line_of(offset)
    start, end = doc.line_span(line)
    column = min(max(offset, 0), end) - start
    if encoding == "utf-32":
        return Position(line, column)
    return Position(line, units(doc.text[start : start + column], encoding))


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
@pytest.mark.parametrize("seed", range(12))
def test_position_conversions_match_the_plain_loops(seed, encoding):
    rng = random.Random(seed)
    doc = Document(_text(rng, 80))
    for line in range(-1, doc.line_count + 2):
        for character in range(-1, 14):
            assert doc.from_client(line, character, encoding) == _from_client_reference(
                doc, line, character, encoding
            ), (doc.text, line, character)
    for offset in range(-2, len(doc.text) + 3):
        assert doc.to_client(offset, encoding) == _to_client_reference(doc, offset, encoding)


def test_from_client_on_ascii_lines_examples():
    doc = Document("abc\r\nde")
    assert doc.from_client(0, 2) == 2
    assert doc.from_client(0, 9) == 3  # past the content: its end, never inside \r\n
    assert doc.from_client(1, 1) == 6
    assert doc.from_client(1, 5) == 7


def test_analyze_takes_the_callers_index_only_for_its_own_text():
    from unveil.core.analyze import analyze

    text = "# Title\n\nSome text.\n"
    mine = Document(text)
    assert analyze(text, "AGENTS.md", count_tokens=False, document=mine).doc is mine
    other = Document("".join(["# Title\n", "\nSome text.\n"]))  # equal, but another string object
    assert other.text == text and other.text is not text
    got = analyze(text, "AGENTS.md", count_tokens=False, document=other)
    assert got.doc is not other and got.doc.text is text


def test_positions_of_offsets_outside_the_text_clamp_to_its_ends():
    doc = Document("ab\r\ncd")
    assert doc.position(-3) == doc.to_client(-3) == Position(0, 0)
    assert doc.position(99) == doc.to_client(99) == Position(1, 2)
    assert doc.position(3) == Position(0, 2)  # inside the \r\n pair: the line's content end
