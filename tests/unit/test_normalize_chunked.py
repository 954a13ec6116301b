"""An open document's normalised reading put together from memoised stretches between blank lines
(``normalize._normalise_chunked``) equals one pass over the whole text (``normalize._normalise_core``),
segment for segment: on corpus files and on generated texts built from what the reading rewrites
next to the places where stretches meet."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from unveil.core import context as cx
from unveil.core import markdown, scope
from unveil.core import normalize as nz
from unveil.core.document import Document
from unveil.core.incremental import DocumentCache

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"


def _regions(text: str):
    dc = cx.doc_context(text, markdown.parse(Document(text)))
    return sorted(dc.regions.code), dc.regions.frontmatter


def _one_pass(text: str, code, fm) -> nz.Reading:
    blocks = [c for c in code if not nz._inline_code(text, c)]
    one_line = [c for c in code if "\n" not in text[c[0] : c[1]]]
    return nz._normalise_core(text, len(text), code, blocks, one_line, fm, False)


def _fields(r: nz.Reading) -> tuple:
    return (r.text, r.source_length, list(r.out_starts), list(r.src_starts), list(r.src_ends), list(r.copies))


def _check(text: str) -> bool:
    """Compare both ways; ``False`` when the chunked way declined (overlapping code spans)."""
    code, fm = _regions(text)
    got = nz._normalise_chunked(text, code, fm, {}, {})
    if got is None:
        return False
    assert _fields(got) == _fields(_one_pass(text, code, fm))
    return True


# Pieces a stretch may start or end with: what each reading step looks at around it.
PIECES = [
    "Plain words here.",
    "*em* and **strong** and ~~struck~~ and _under_score_",
    "an *opener left open",
    "closing it* later",
    "\\*escaped\\* stars and \\\\*real*",
    "i`gn`ore the `code` span",
    "&#105;gnore &amp; &lt;b&gt; &#x49;",
    "%69gnore %20 100%",
    "\\x69gnore \\u0069 \\uD83D\\uDE00 \\u{1F600}",
    "\u0301combining first",
    "caf\u0065\u0301 and \u0456gnore (mixed Cyrillic)",
    "\u0441\u043e\u0440\u0443 \u0441\u043eo\u0435 (a spoofed line)",
    "\u043f\u0440\u0438\u0432\u0435\u0442 \u043c\u0438\u0440",
    "zero\u200bwidth and tag\U000e0041",
    "a line that goes on\nand wraps here",
    "- item one goes\n- on in the next item",
    "Ends a sentence.\nNew sentence here.",
    "| a | b |",
    "|---|---|",
    "words that go on\n| a | b |",
    "> quoted\n> more",
    "```bash\ncurl x | sh\n\nmore code\n```",
    "    indented code\n\n    after a blank",
    "## Heading *em*",
    "<!-- a comment\n\nwith a blank line -->",
    "\u6f22\u5b57\n\u304b\u306a",
]
SEPARATORS = ["\n\n", "\n \n", "\n\t\n", "\n\n\n", "\n  \n\n", "\n", "\r\n\r\n", "\n\r\n"]


def _generated(rng: random.Random) -> str:
    out = []
    if rng.random() < 0.3:
        out.append("---\nname: x\ndescription: a long\n  folded value\n\nwith a blank\n---\n")
    for _ in range(rng.randint(3, 14)):
        out.append(rng.choice(PIECES))
        out.append(rng.choice(SEPARATORS))
    text = "".join(out)
    r = rng.random()
    if r < 0.2:  # a Windows editor's line breaks (LSP and CommonMark end lines at all three)
        text = text.replace("\r\n", "\n").replace("\n", "\r\n")
    elif r < 0.3:  # classic Mac line breaks
        text = text.replace("\r\n", "\n").replace("\n", "\r")
    return text


@pytest.mark.parametrize("chunk_min", [1, 7, 64])
def test_generated_texts_read_the_same_in_stretches(monkeypatch, chunk_min):
    monkeypatch.setattr(nz, "CHUNK_MIN", chunk_min)
    rng = random.Random(chunk_min)
    checked = 0
    for _ in range(400):
        checked += _check(_generated(rng))
    assert checked >= 390


@pytest.mark.parametrize("chunk_min", [1, 20])
def test_the_line_after_a_stretch_is_read_with_it(monkeypatch, chunk_min):
    """A line break before a stretch's last line is joined or not by the line after that one,
    the next stretch's first line (a ``|`` row followed by a delimiter row starts a table)."""
    monkeypatch.setattr(nz, "CHUNK_MIN", chunk_min)
    checked = 0
    for before in ["words that go on", "Ends here.", "- an item that goes on"]:
        for row in ["| a | b |", "|a|", "plain"]:
            for sep in SEPARATORS:
                for after in ["|---|---|", ":-:|", "| c | d |", "more words", ""]:
                    checked += _check(f"Intro.\n\n{before}\n{row}{sep}{after}\n\nEnd.\n")
    assert checked == 3 * 3 * len(SEPARATORS) * 5


def _corpus_files() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    files = sorted(p for p in CORPUS.rglob("*.md") if p.is_file())
    return files[::8]


@pytest.mark.skipif(not CORPUS.is_dir(), reason="needs ../shared/corpus")
def test_corpus_files_read_the_same_in_stretches(monkeypatch):
    monkeypatch.setattr(nz, "CHUNK_MIN", 1)  # a stretch at every blank line: the most seams
    files = _corpus_files()
    checked = sum(_check(p.read_bytes().decode("utf-8", "surrogateescape")) for p in files)
    assert len(files) >= 300 and checked >= len(files) - 5


def test_overlapping_code_spans_are_read_in_one_pass():
    text = "a\n\n" + "word " * 3000
    assert nz._normalise_chunked(text, [(0, 10), (5, 20)], None, {}, {}) is None
    with scope.analysis(DocumentCache()):
        got = nz.normalise(text, [(0, 10), (5, 20)], None, reuse="t")
    assert _fields(got) == _fields(_one_pass(text, [(0, 10), (5, 20)], None))


def test_an_open_document_reads_again_only_the_stretch_it_edited(monkeypatch):
    paragraphs = [f"Paragraph {i} says *something* and &amp; goes\non here." for i in range(400)]
    text = "\n\n".join(paragraphs) + "\n"
    assert len(text) >= nz.CHUNKED_MIN
    calls = []
    core = nz._normalise_core
    monkeypatch.setattr(nz, "_normalise_core", lambda t, *a: calls.append(len(t)) or core(t, *a))
    cache = DocumentCache()
    with scope.analysis(cache):
        first = nz.normalise(text, reuse="t")
        stretches = len(calls)
        calls.clear()
        edited = text[:5000] + "x" + text[5000:]
        second = nz.normalise(edited, reuse="t")
    assert len(cache.kept[("normalise", "t")]) == stretches  # the last version's stretches only
    # a stretch ends at the first blank line CHUNK_MIN or more code points after its start
    ends = [i + 2 for i in range(len(text)) if text.startswith("\n\n", i)]
    start, want = 0, 1
    for e in ends:
        if e - start >= nz.CHUNK_MIN and e < len(text):
            start, want = e, want + 1
    assert (stretches, want) == (22, 22)
    assert len(calls) == 1
    assert _fields(first) == _fields(_one_pass(text, [], None))
    assert _fields(second) == _fields(_one_pass(edited, [], None))


def test_without_an_open_document_or_a_name_the_text_is_read_in_one_pass(monkeypatch):
    text = "Some *words* here.\n\n" * 1000
    monkeypatch.setattr(nz, "_normalise_chunked", lambda *a: pytest.fail("read in stretches"))
    assert _fields(nz.normalise(text, reuse="t")) == _fields(_one_pass(text, [], None))
    with scope.analysis(DocumentCache()):  # a decoded payload's text: no name
        assert _fields(nz.normalise(text)) == _fields(_one_pass(text, [], None))


def test_an_identity_reading_is_the_source_itself():
    text = "plain ascii words\n\n" * 1000
    with scope.analysis(DocumentCache()):
        r = nz.normalise(text, reuse="t")
    assert r.text is text and r.identity
