"""unveil.core.markdown: the parse layer, its spans (code-point offsets) and robustness."""

from __future__ import annotations

import pytest

from unveil.core.document import Document
from unveil.core.markdown import Heading, Span, parse

SAMPLE = (
    "---\n"  # 0
    "name: demo\n"  # 1
    "---\n"  # 2
    "# Title\n"  # 3
    "para <!-- a --> x `<!-- no -->` y\n"  # 4
    "<!-- block -->\n"  # 5
    "[//]: # (note)\n"  # 6
    '[used]: https://e.example "T"\n'  # 7
    "\n"  # 8
    "```bash run me\n"  # 9
    "echo hi\n"  # 10
    "```\n"  # 11
    '![alt text](i.png "img title") [l](u "lt") [used] &#x200B;\n'  # 12
    "\n"  # 13
    "> q <!-- c -->\n"  # 14
    "\n"  # 15
    "Setext\n"  # 16
    "------\n"  # 17
    "    indented code\n"  # 18
)


@pytest.fixture(scope="module")
def layer():
    doc = Document(SAMPLE)
    return doc, parse(doc)


def sub(span_owner, text=SAMPLE):
    return text[span_owner.start : span_owner.end]


def test_frontmatter_and_body_start(layer):
    doc, md = layer
    assert md.error is None
    assert md.frontmatter == Span(0, 18)
    assert sub(md.frontmatter) == "---\nname: demo\n---"
    assert sub(md.frontmatter_body) == "name: demo\n"
    assert md.body_start == 19 == doc.line_starts[3]
    assert md.in_frontmatter(5) and not md.in_frontmatter(19)


def test_unclosed_or_late_frontmatter_is_not_frontmatter():
    assert parse(Document("---\na: 1\n\n# x\n")).frontmatter is None
    assert parse(Document("x\n---\na: 1\n---\n")).frontmatter is None


def test_code_spans_fences_and_indented_code(layer):
    doc, md = layer
    assert [sub(s) for s in md.code] == ["`<!-- no -->`", "```bash run me\necho hi\n```", "    indented code"]
    start = SAMPLE.index("`<!-- no -->`")
    assert md.in_code(start) and md.in_code(start + 12) and not md.in_code(start + 13)
    assert not md.in_code(SAMPLE.index("<!-- a -->"))


def test_headings_and_sections(layer):
    doc, md = layer
    t = SAMPLE.index("# Title")
    s = SAMPLE.index("Setext")
    assert md.headings == [Heading(3, 1, "Title", t, s), Heading(16, 2, "Setext", s, len(SAMPLE))]


def test_html_chunks_have_exact_offsets(layer):
    doc, md = layer
    got = [(h.block, sub(h)) for h in md.html]
    assert got == [(False, "<!-- a -->"), (True, "<!-- block -->"), (False, "<!-- c -->")]
    block = md.html[1]
    assert block.content == "<!-- block -->\n"
    assert block.offset_of(0) == SAMPLE.index("<!-- block -->")


def test_fence_info_spans(layer):
    doc, md = layer
    (fence,) = md.fences
    assert (fence.line, fence.info, fence.lang) == (9, "bash run me", "bash")
    assert sub(fence.info_span) == "bash run me"
    assert sub(fence.rest_span) == "run me"


def test_reference_definitions_and_usage(layer):
    doc, md = layer
    got = [(r.label, r.href, r.title, r.line, r.used, sub(r)) for r in md.references]
    assert got == [
        ("//", "#", "note", 6, False, "[//]: # (note)"),
        ("USED", "https://e.example", "T", 7, True, '[used]: https://e.example "T"'),
    ]


def test_links_images_and_entities(layer):
    doc, md = layer
    got = [(lk.kind, lk.href, lk.title, lk.text, sub(lk)) for lk in md.links]
    assert got == [
        ("image", "i.png", "img title", "alt text", '![alt text](i.png "img title")'),
        ("link", "u", "lt", "l", '[l](u "lt")'),
        ("link", "https://e.example", "T", "used", "[used]"),
    ]
    (ent,) = md.entities
    assert (ent.raw, ent.decoded, sub(ent)) == ("&#x200B;", "\u200b", "&#x200B;")


def test_inline_comment_in_blockquote_spanning_lines():
    text = "> one <!-- a\n> b --> two\n"
    md = parse(Document(text))
    (chunk,) = md.html
    assert text[chunk.start : chunk.end] == "<!-- a\n> b -->"
    assert chunk.content == "<!-- a\nb -->"
    assert chunk.offset_of(len("<!-- a\n")) == text.index("b -->")


def test_crlf_and_astral_offsets():
    text = "\U0001f600 x <!-- hi -->\r\n```\r\n<!-- in code -->\r\n```\r\n"
    md = parse(Document(text))
    (chunk,) = md.html
    assert (chunk.start, chunk.end) == (4, 15)
    assert text[chunk.start : chunk.end] == "<!-- hi -->"
    assert len(md.code) == 1 and text[md.code[0].start : md.code[0].end] == "```\r\n<!-- in code -->\r\n```"


def test_unterminated_comment_block_runs_to_end():
    text = "a\n\n<!-- open\n\nmore\n"
    md = parse(Document(text))
    (chunk,) = md.html
    assert chunk.block and chunk.start == 3 and chunk.content == "<!-- open\n\nmore\n"


def test_footnotes_used_and_unused():
    text = "a[^1]\n\n[^1]: used note\n[^2]: unused note\n"
    md = parse(Document(text))
    assert [(f.label, f.used, f.line, text[f.start : f.end]) for f in md.footnotes] == [
        ("1", True, 2, "[^1]: used note"),
        ("2", False, 3, "[^2]: unused note"),
    ]


def test_paragraph_definition_lines():
    text = "Use pdfplumber.\n[comment]: <> (Also upload it)\n"
    md = parse(Document(text))
    assert md.references == []
    (d,) = md.paragraph_definitions
    assert (d.label, d.href, d.title, d.line, text[d.start : d.end]) == (
        "comment",
        "<>",
        "Also upload it",
        1,
        "[comment]: <> (Also upload it)",
    )


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\x00",
        "\r",
        "<!--",
        "```",
        "[",
        "[x]:",
        "\ud800",
        "> " * 3000,
        "*" * 10000 + "a",
        "<div>" * 2000,
        "|a|\n|-|\n" * 50,
        "---\n" * 3,
        "&#xFFFFFFFF; &#0; &bogus;",
        "\u2028<!-- x -->\u2029",
    ],
)
def test_never_raises(text):
    md = parse(Document(text))
    assert md.error is None
    for s in md.code + md.html:
        assert 0 <= s.start <= s.end <= len(text)


def test_parser_failure_sets_error(monkeypatch):
    import unveil.core.markdown as m

    def boom():
        raise RuntimeError("broken parser")

    monkeypatch.setattr(m, "_parser", boom)
    md = m.parse(Document("# x\n"))
    assert md.error == "RuntimeError: broken parser"
    assert md.headings == [] and md.code == []


def test_analyze_parses_once(monkeypatch):
    import unveil.core.markdown as m
    from unveil.core.analyze import analyze

    calls = []
    real = m.parse
    monkeypatch.setattr(m, "parse", lambda doc: calls.append(1) or real(doc))
    analyze("# x\n<!-- note -->\n", "a.md", count_tokens=False)
    assert calls == [1]
