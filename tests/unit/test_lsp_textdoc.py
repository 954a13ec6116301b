"""LSP line semantics for pygls documents (lsp-engineering.md §4.1).

Stock pygls 2.1.1 splits lines with ``str.splitlines``, which also breaks at U+2028, U+2029,
U+0085, ``\\f``, ``\\v`` and ``\\x1c``–``\\x1e``; these tests fail on it.
"""

from __future__ import annotations

import pytest
from lsprotocol import types
from pygls.workspace import TextDocument

from unveil.lsp.textdoc import LspTextDocument, LspWorkspace, lsp_lines


@pytest.mark.parametrize(
    "text, lines",
    [
        ("a\u2028b\r\nc\rd\x0ce\n", ("a\u2028b\r\n", "c\r", "d\x0ce\n")),
        ("x\x85y\nz", ("x\x85y\n", "z")),
        ("\x0b\x1c\x1d\x1e\u2029\n\n", ("\x0b\x1c\x1d\x1e\u2029\n", "\n")),
        ("a\r\rb\u2028", ("a\r", "\r", "b\u2028")),
        ("plain\nascii\n", ("plain\n", "ascii\n")),
        ("", ()),
    ],
)
def test_lsp_lines_split_only_on_protocol_line_breaks(text, lines):
    assert lsp_lines(text) == lines
    assert "".join(lsp_lines(text)) == text


def test_document_lines_follow_lsp_not_splitlines():
    doc = LspTextDocument("file:///x.md", "a\u2028b\r\nc\rd\x0ce\n")
    assert doc.lines == ("a\u2028b\r\n", "c\r", "d\x0ce\n")
    # the bug being fixed: stock pygls sees five lines here
    assert len(TextDocument("file:///x.md", "a\u2028b\r\nc\rd\x0ce\n").lines) == 5


def _insert(doc: TextDocument, line: int, character: int, text: str) -> None:
    pos = types.Position(line=line, character=character)
    doc.apply_change(types.TextDocumentContentChangePartial(range=types.Range(start=pos, end=pos), text=text))


@pytest.mark.parametrize("sep", ["\u2028", "\u2029", "\x85", "\x0c", "\x0b"])
def test_incremental_edit_after_non_lsp_separator_lands_on_the_protocol_line(sep):
    text = f"line0 has a LS here:{sep}still line0 per LSP\nline1\n"
    doc = LspTextDocument("file:///x.md", text, version=1)
    _insert(doc, 1, 0, "X")
    assert doc.source == f"line0 has a LS here:{sep}still line0 per LSP\nXline1\n"
    _insert(doc, 0, 21, "Y")  # column 21 = just after the separator, still on line 0
    assert doc.source == f"line0 has a LS here:{sep}Ystill line0 per LSP\nXline1\n"


def test_stock_pygls_desynchronises_on_u2028():
    doc = TextDocument("file:///x.md", "line0 has a LS here:\u2028still line0 per LSP\nline1\n", version=1)
    _insert(doc, 1, 0, "X")
    assert doc.source == "line0 has a LS here:\u2028Xstill line0 per LSP\nline1\n"  # wrong place


def test_lines_cache_follows_source_changes():
    doc = LspTextDocument("file:///x.md", "a\u2028b\n", version=1)
    assert doc.lines == ("a\u2028b\n",)
    _insert(doc, 1, 0, "c\rd")
    assert doc.lines == ("a\u2028b\n", "c\r", "d")


def test_workspace_creates_lsp_documents_with_its_encoding():
    ws = LspWorkspace(None, position_encoding=types.PositionEncodingKind.Utf8)
    ws.put_text_document(
        types.TextDocumentItem(uri="file:///a.md", language_id="markdown", version=3, text="\u00e9\u2028x")
    )
    doc = ws.get_text_document("file:///a.md")
    assert isinstance(doc, LspTextDocument)
    assert doc.version == 3
    assert doc.lines == ("\u00e9\u2028x",)
    assert doc.position_codec.encoding == types.PositionEncodingKind.Utf8


def test_units_count_each_encodings_code_units_a_lone_surrogate_as_u_fffd():
    import random

    from unveil.core.document import units

    rng = random.Random(3)
    chars = ["a", "é", "日", "\U0001f600", "\U000e0041", "\udc80", "\ud800", "\u200b", "\n"]
    for _ in range(5000):
        s = "".join(rng.choice(chars) for _ in range(rng.randrange(0, 12)))
        assert units(s, "utf-16") == sum(2 if ord(c) > 0xFFFF else 1 for c in s), repr(s)
        assert units(s, "utf-32") == len(s)
        assert units(s, "utf-8") == sum(3 if 0xD800 <= ord(c) <= 0xDFFF else len(c.encode()) for c in s), repr(s)
    assert (units("a\U0001f600\udc80", "utf-16"), units("a\U0001f600\udc80", "utf-8")) == (4, 8)


def test_document_index_moves_with_each_incremental_change():
    """The kept line index (:attr:`LspTextDocument.document`) is moved by each change, never
    rebuilt, and always equals a fresh index of the source; a full change drops it."""
    import random

    from unveil.core.document import Document

    rng = random.Random(7)
    pieces = ["a", "é", "\n", "\r", "\r\n", "\U0001f600", " "]
    doc = LspTextDocument("file:///x.md", "first\r\nsecond\rthird\n", version=1)
    kept = doc.document
    assert doc.known_document() is kept
    for _ in range(200):
        line = rng.randrange(0, kept.line_count + 1)
        character = rng.randrange(0, 12)
        _insert(doc, line, character, "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 3))))
        now = doc.known_document()
        assert now is not None and now is not kept and now.text is doc.source  # moved, not rebuilt lazily
        fresh = Document(doc.source)
        assert list(now.line_starts) == list(fresh.line_starts)
        assert [now.line_span(i) for i in range(now.line_count)] == [
            fresh.line_span(i) for i in range(fresh.line_count)
        ]
        kept = now
    doc.apply_change(types.TextDocumentContentChangeWholeDocument(text="new\ntext"))
    assert doc.known_document() is None
    analysed = Document(doc.source)
    doc.keep_document(analysed)  # an analysis of this source hands its index over
    assert doc.known_document() is analysed
    doc.keep_document(Document("other text"))  # another text's index is never taken
    assert doc.known_document() is analysed
