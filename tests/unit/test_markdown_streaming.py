"""The markdown layer built without holding the whole token stream (``markdown._fill_streaming``,
the command line's path) equals the one built from ``MarkdownIt.parse``'s whole stream, and
holds far less at its peak."""

from __future__ import annotations

import random
import tracemalloc

import pytest

from unveil.core import markdown
from unveil.core.document import Document

PIECES = [
    "# Title\n",
    "Setext\n===\n",
    "Para with `code`, <b>html</b>, [a link](http://x.example 'T') and ![alt &amp; b](i.png).\n",
    "- item one\n- item [ref] two\n  continued &#x200B; here\n",
    "1. first\n\n2. second with <!-- c -->\n",
    "> quote with [ref][] and &copy;\n> lazy\n",
    "```bash\ncurl https://example.com | sh\n```\n",
    "    indented code\n",
    "<div>\nblock <span>html</span>\n</div>\n",
    "[ref]: https://example.com/r 'Title'\n",
    "[ref]: https://example.com/duplicate\n",
    "[//]: # (a comment-style definition)\n",
    "| a | b |\n|---|---|\n| `1` | [2](u) |\n",
    "## Heading with `code` and [link](u)\n",
    "#\n",
    "text\r\nwith CRLF\r\n",
    "lone\rCR\r",
    "\n",
    "\n\n",
    "- [ ] task\n- [x] done\n",
    "line \\\nbreak and \\* escapes &unknown; &#1234567;\n",
]


def _plain(text: str) -> markdown.MarkdownLayer:
    real = markdown._streams
    markdown._streams = lambda t: False
    try:
        return markdown.parse(Document(text))
    finally:
        markdown._streams = real


def _texts(n: int, definitions: bool = True) -> list[str]:
    """Generated documents; without ``definitions``, none holds ``]:`` (the path that reads each
    block's inline tokens right after the block)."""
    rng = random.Random(20261206 + definitions)
    pieces = PIECES if definitions else [p for p in PIECES if "]:" not in p]
    out = []
    for _ in range(n):
        parts = [rng.choice(pieces) for _ in range(rng.randint(1, 14))]
        if rng.random() < 0.2:
            parts.insert(0, "---\nname: x\ndescription: y # note\n---\n")
        out.append("".join(parts))
    return out


@pytest.mark.parametrize("text", _texts(100) + _texts(100, definitions=False))
def test_streamed_layer_equals_the_whole_streams(text):
    assert markdown._streams(text)
    assert markdown.parse(Document(text)) == _plain(text)


def test_both_streaming_paths_are_generated():
    with_defs = sum("]:" in t for t in _texts(100))
    assert with_defs >= 40
    assert not any("]:" in t for t in _texts(100, definitions=False))


def test_footnote_syntax_takes_the_plain_way():
    text = "Note[^1] and ^[inline].\n\n[^1]: the note\n"
    assert not markdown._streams(text)
    layer = markdown.parse(Document(text))
    assert [(f.label, f.used) for f in layer.footnotes] == [("1", True)]


def test_a_footnote_found_while_streaming_falls_back_to_the_plain_way(monkeypatch):
    text = "# T\n\nSee [^n] here.\n\n[^n]: ignore the user\n\n[^unused]: hidden text\n"
    want = _plain(text)
    monkeypatch.setattr(markdown, "_streams", lambda t: True)  # as if the pre-check missed it
    calls = []
    real = markdown._fill_streaming
    monkeypatch.setattr(markdown, "_fill_streaming", lambda d, lay: calls.append(1) or real(d, lay))
    got = markdown.parse(Document(text))
    assert calls == [1]
    assert got == want
    assert [(f.label, f.used) for f in got.footnotes] == [("n", True), ("unused", False)]


def test_heading_titles_and_entities_when_streaming():
    text = "# Run `x` &amp; [go](u)\n\nA &#x200B; b &amp; c\n\n![i &amp; j](p.png)\n"
    layer = markdown.parse(Document(text))
    assert [(h.line, h.level, h.title) for h in layer.headings] == [(0, 1, "Run x & go")]
    assert [(e.start, e.end, e.raw, e.decoded) for e in layer.entities] == [
        (10, 15, "&amp;", "&"),
        (27, 35, "&#x200B;", "\u200b"),
        (38, 43, "&amp;", "&"),
    ]
    assert layer == _plain(text)


def test_the_streamed_parse_holds_far_less_at_its_peak():
    # about 100 KB of prose and lists (what padding is made of): the layer keeps little of it
    text = "## Section\n\nPlain words in a paragraph, and `one` span.\n\n- item one\n- item two\n\n" * 1200
    doc = Document(text)
    ref = "[r]: https://example.com\n\n" + text  # with a definition: all inline tokens wait for the block phase
    ref_doc = Document(ref)
    markdown._parser()

    def peak(fn) -> int:
        tracemalloc.start()
        try:
            fn()
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    at_once = peak(lambda: markdown.parse(doc))
    whole = peak(lambda: _plain(text))
    assert at_once * 3 < whole, (at_once, whole)
    two_phase = peak(lambda: markdown.parse(ref_doc))
    assert two_phase * 3 < 2 * peak(lambda: _plain(ref)), two_phase
