"""The markdown layer: what renders and what is hidden, from markdown-it-py's CommonMark parse.

One parse per analysis (:func:`parse`, called once by :func:`unveil.core.analyze.analyze`). The
parser is markdown-it-py's ``commonmark`` preset (raw HTML allowed, as on GitHub) plus ``table``
and ``strikethrough``, and the mdit-py-plugins ``front_matter`` (a leading ``---`` block closed
by a ``---`` line; an unclosed block is not frontmatter) and ``footnote`` plugins.

Positions. All spans are code-point offsets into :attr:`Document.text`. markdown-it gives block
tokens a line range (``token.map``; it normalises ``\\r\\n``/``\\r`` to ``\\n`` without changing
the line count, so its lines are the LSP lines of :class:`Document`). Inline tokens have no
positions in markdown-it, so :func:`parse` wraps the inline rules that produce the constructs
the checks need (``backticks``, ``html_inline``, ``link``, ``image``, ``entity``) to record
``state.pos`` before and after each match: offsets into the inline token's ``content``. Those
are mapped back to the source through the block's lines (each content line is a suffix of its
source line once indentation, blockquote and list markers are removed). Nothing is located by
searching the whole file, so a comment inside a code span or fence is never taken for a comment.

Hidden regions. Besides the constructs, the layer lists every stretch of source the model reads
but a rendered view does not show, as :class:`HiddenSpan` (``hidden_spans``, kinds in
:data:`HIDDEN_KINDS`): YAML ``#`` comments and HTML comments in the frontmatter (located with
ruamel.yaml's scanner, :func:`unveil.core.frontmatter.comment_spans`), link and image titles
(inside their quotes), image alt text, every reference definition (label, destination and
title; markdown-it's ``inline_definitions`` option gives a ``definition`` token per definition,
so a *duplicate* one — CommonMark keeps the first — is found from the token stream), unused
footnotes, collapsed ``<details>`` bodies, text attributes (``title``, ``alt``, ``aria-label``,
``data-*`` …) and elements hidden by the ``hidden`` attribute, by CSS (judged by tinycss2 in
:mod:`unveil.core.css`, ``style`` attributes and ``<style>`` rules) or by their tag
(``<template>``, ``<noscript>`` …). :func:`unveil.core.context.regions` marks them hidden, so every
rule grades what they say with the hidden raise.

Raw HTML is parsed once (:func:`_html_pass`): one ``html.parser`` pass per HTML chunk and one
stack across the document, O(tags) overall — end tags of elements that are not open cost O(1),
only the outermost hidden element (and outermost collapsed ``<details>``) is recorded, and content
indexes map to document offsets by binary search (issue 9 item 9: ``'<details>x' * 2000`` took
8 s and 10,000 nested ``<details>`` 319 s before).
"""

from __future__ import annotations

import bisect
import html
import logging
import re
from dataclasses import dataclass, field

from unveil.core import scope
from unveil.core.document import Document
from unveil.core.incremental import relocatable, top_level_blocks

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Span:
    start: int
    end: int


@dataclass(frozen=True)
class Heading:
    """An ATX or setext heading: ``line`` 0-based, ``level`` 1–6, ``title`` plain text, and the
    section it opens: ``[section_start, section_end)`` up to the next heading of any level."""

    line: int
    level: int
    title: str
    section_start: int
    section_end: int


@dataclass(frozen=True)
class HtmlChunk:
    """Raw HTML passed through to the rendered output: an ``html_block`` (``block=True``; the
    whole block, possibly several lines) or one ``html_inline`` tag/comment. ``content`` is the
    markdown-it token content; ``line_offsets[i]`` is the document offset where content line ``i``
    starts (content lines are split on ``\\n``), so ``offset_of`` maps a content index back."""

    start: int
    end: int
    content: str
    block: bool
    line_offsets: tuple[int, ...] = ()

    def offset_of(self, index: int) -> int:
        """Document offset of code point ``index`` of :attr:`content` (clamped). O(log lines):
        the newline index of :attr:`content` is computed once and cached."""
        nl = self.__dict__.get("_nl")
        if nl is None:
            nl = _newlines(self.content)
            object.__setattr__(self, "_nl", nl)
        return _map_index(self.content, self.line_offsets, index, self.start, nl)

    def comment_spans(self):
        """Yield ``(i, j, body, terminated)`` for each HTML comment in :attr:`content`: content
        indexes of the comment (``j`` just after ``-->``; for an unterminated comment, the end of
        the content without its trailing line feeds), its body and whether ``-->`` closes it.
        CommonMark 0.31: ``<!-->`` and ``<!--->`` are complete (empty) comments."""
        c = self.content
        pos = 0
        while True:
            i = c.find("<!--", pos)
            if i < 0:
                return
            k = c.find("-->", i + 2)
            if k < 0:
                yield i, len(c.rstrip("\n")), c[i + 4 :], False
                return
            body = c[i + 4 : k] if k >= i + 4 else ""
            yield i, k + 3, body, True
            pos = k + 3


@dataclass(frozen=True)
class Fence:
    """A fenced code block: ``[start, end)`` the whole block, ``info`` the info string as
    written, ``lang`` its first word, ``info_span`` where the info string is in the source and
    ``rest_span`` the part after the first word (not rendered), or ``None`` when there is none."""

    start: int
    end: int
    line: int
    info: str
    lang: str
    info_span: Span | None
    rest_span: Span | None


@dataclass(frozen=True)
class RefDef:
    """A link reference definition ``[label]: href "title"`` (renders to nothing).
    ``label`` is markdown-it's normalised label; ``used`` whether a reference link names it."""

    label: str
    href: str
    title: str
    start: int
    end: int
    line: int
    used: bool


@dataclass(frozen=True)
class Link:
    """A markdown link or image. ``kind`` is ``"link"`` or ``"image"``; ``text`` is the link text
    or image alt (plain text); ``title`` may be empty. ``[start, end)`` covers the whole
    construct when known (``start == end == -1`` when it could not be located)."""

    kind: str
    start: int
    end: int
    href: str
    title: str
    text: str
    text_span: Span | None = None
    """Where the link text / image alt is in the source (between the brackets)."""
    title_span: Span | None = None
    """Where an inline link's or image's title is in the source (inside its quotes or
    parentheses); ``None`` without a title or for reference-style links (the title is then in
    the reference definition)."""


@dataclass(frozen=True)
class Entity:
    """An HTML character reference in rendered prose: ``raw`` as written (``&#x200B;``) and
    ``decoded`` the text it produces."""

    start: int
    end: int
    raw: str
    decoded: str


@dataclass(frozen=True)
class Footnote:
    """A footnote definition ``[^label]: …``; ``used`` whether some ``[^label]`` refers to it
    (unreferenced footnotes are not rendered)."""

    label: str
    start: int
    end: int
    line: int
    used: bool


@dataclass(frozen=True)
class HiddenSpan:
    """Source text the model reads but the rendered view does not show: ``[start, end)`` in
    code points, ``kind`` one of :data:`HIDDEN_KINDS`, ``detail`` a short reason (e.g. the CSS
    declaration that hides an element)."""

    start: int
    end: int
    kind: str
    detail: str = ""


HIDDEN_KINDS = {
    "frontmatter-comment": "a YAML comment (# …) in the frontmatter",
    "frontmatter-html-comment": "an HTML comment in the frontmatter",
    "link-title": "a link or image title (a tooltip at most)",
    "image-alt": "image alt text (shown only when the image fails to load)",
    "reference-definition": "a link reference definition: label, destination and title render to nothing",
    "duplicate-reference-definition": "a second definition of a label (CommonMark keeps the first; this one is never used)",
    "unused-footnote": "a footnote definition nothing refers to (not rendered)",
    "details": "the body of a collapsed <details> (hidden until the reader clicks)",
    "attribute": "an HTML attribute value (title, alt, aria-label, data-* …)",
    "html": "an HTML element hidden by an attribute, CSS or its tag (hidden, display:none, <template> …)",
}
"""The kinds of :class:`HiddenSpan`. ``details`` is *collapsed* (shown after a click); the
others are never displayed."""
COLLAPSED_KINDS = frozenset({"details"})


@dataclass(frozen=True)
class HiddenElement:
    """An HTML element whose content the reader does not see (outermost only: an element inside
    another hidden element, or a collapsed ``<details>`` inside another, is part of the outer one).

    * ``[start, open_end)`` the start tag; ``[body_start, body_end)`` the hidden content (for a
      ``<details>`` after its ``</summary>``); ``end`` after the end tag (the end of the document
      when it is never closed).
    * ``kind`` — ``"details"`` (collapsed), ``"attribute"`` (``hidden``), ``"css"``
      (``style``/``<style>``/``<font color>``), ``"nondisplay"`` (``<script>``, ``<template>``,
      ``<noscript>`` …) or ``"fallback"`` (``<video>``/``<object>`` fallback text).
    * ``reason`` — human-readable, e.g. ``"style opacity: 0.01"``.
    """

    tag: str
    start: int
    open_end: int
    body_start: int
    body_end: int
    end: int
    kind: str
    reason: str
    attrs: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class HtmlAttr:
    """A text-carrying attribute (:data:`TEXT_ATTRS`, ``aria-*``, ``data-*``) of an HTML start
    tag: ``value`` with character references decoded, ``[start, end)`` the value in the source
    (the whole tag when it could not be located), ``[tag_start, tag_end)`` the start tag."""

    tag: str
    name: str
    value: str
    start: int
    end: int
    tag_start: int
    tag_end: int


@dataclass
class MarkdownLayer:
    """Parse results the checks and the cost model share.

    * ``frontmatter`` — the whole block including both ``---`` fences, or ``None``;
      ``frontmatter_body`` — the YAML text between the fences.
    * ``body_start`` — offset where the markdown body begins (after the frontmatter).
    * ``code`` — fenced/indented code blocks and inline code spans (text shown literally).
    * ``headings`` — in document order.
    * ``html`` — raw HTML blocks and inline HTML, in document order.
    * ``fences`` — fenced code blocks with their info strings.
    * ``references`` — link reference definitions, in document order.
    * ``links`` — links and images with their titles and alt text.
    * ``entities`` — character references in rendered prose (not in code, not in raw HTML).
    * ``footnotes`` — footnote definitions.
    * ``paragraph_definitions`` — lines inside a paragraph shaped like a comment-style reference
      definition (``[//]: # (text)``). CommonMark renders them as text (a definition cannot
      interrupt a paragraph) but other renderers hide them, and the author meant them hidden.
    * ``duplicate_references`` — definitions of a label already defined (never used).
    * ``frontmatter_comments`` — YAML ``#`` comments and HTML comments inside the frontmatter.
    * ``hidden_elements`` — HTML elements hidden from the reader (:class:`HiddenElement`).
    * ``html_attrs`` — text-carrying HTML attributes (:class:`HtmlAttr`).
    * ``hidden_spans`` — every :class:`HiddenSpan` above and from links, images, definitions and
      footnotes, sorted; :func:`unveil.core.context.regions` marks them hidden so every rule
      grades what they say.
    * ``error`` — ``None``, or why the parse stopped early (the fields hold what was found).
    """

    frontmatter: Span | None = None
    frontmatter_body: Span | None = None
    body_start: int = 0
    code: list[Span] = field(default_factory=list)
    headings: list[Heading] = field(default_factory=list)
    html: list[HtmlChunk] = field(default_factory=list)
    fences: list[Fence] = field(default_factory=list)
    references: list[RefDef] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    entities: list[Entity] = field(default_factory=list)
    footnotes: list[Footnote] = field(default_factory=list)
    paragraph_definitions: list[RefDef] = field(default_factory=list)
    duplicate_references: list[RefDef] = field(default_factory=list)
    frontmatter_comments: list[HiddenSpan] = field(default_factory=list)
    hidden_elements: list[HiddenElement] = field(default_factory=list)
    html_attrs: list[HtmlAttr] = field(default_factory=list)
    hidden_spans: list[HiddenSpan] = field(default_factory=list)
    error: str | None = None
    _starts: list[int] | None = field(default=None, repr=False, compare=False)

    def in_code(self, offset: int) -> bool:
        """Whether ``offset`` lies in a code block or code span (binary search over ``code``,
        which :func:`parse` keeps sorted and non-overlapping)."""
        code = self.code
        if self._starts is None or len(self._starts) != len(code):
            self._starts = [s.start for s in code]
        i = bisect.bisect_right(self._starts, offset) - 1
        return i >= 0 and code[i].start <= offset < code[i].end

    def in_frontmatter(self, offset: int) -> bool:
        return self.frontmatter is not None and self.frontmatter.start <= offset < self.frontmatter.end


# -- parser ------------------------------------------------------------------------------

_POS_KEY = "unveil_pos"
_PARTS_KEY = "unveil_link_parts"
_ENV_ENTITIES = "unveil_entities"
_ENV_USED = "unveil_used_refs"
_md = None
_WANTED = {
    "backticks": ("code_inline",),
    "html_inline": ("html_inline",),
    "link": ("link_open",),
    "image": ("image",),
    "entity": ("text_special",),
}


def _wrap(name, fn):
    def rule(state, silent):
        start = state.pos
        n = len(state.tokens)
        ok = fn(state, silent)
        if ok and not silent and len(state.tokens) > n:
            tok = next((t for t in state.tokens[n:] if t.type in _WANTED[name]), None)
            if name == "entity":
                raw = state.src[start : state.pos]
                decoded = tok.content if tok is not None else html.unescape(raw)
                state.env.setdefault(_ENV_ENTITIES, []).append((state.src, start, state.pos, raw, decoded))
                return ok
            if tok is None:
                return ok
            tok.meta = dict(tok.meta or {})
            tok.meta[_POS_KEY] = (start, state.pos, state.src)
            if name in ("link", "image"):
                _note_reference_use(state, start)
                tok.meta[_PARTS_KEY] = _link_parts(state, start, name == "image")
        return ok

    return rule


def _link_parts(state, start: int, image: bool):
    """``(label_start, label_end, title_start, title_end)`` as indexes into ``state.src`` for a
    link or image that was just parsed from ``start`` (title ``-1, -1`` when there is none or
    the link is reference-style), using markdown-it's own label/destination/title helpers."""
    from markdown_it.helpers import parseLinkDestination, parseLinkLabel, parseLinkTitle

    end = state.pos
    lab0 = start + (2 if image else 1)
    try:
        label_end = parseLinkLabel(state, lab0 - 1, not image)
    finally:
        state.pos = end
    if label_end < 0:
        return (lab0, lab0, -1, -1)
    src = state.src
    pos = label_end + 1
    t0 = t1 = -1
    if pos < end and src[pos] == "(":
        pos += 1
        while pos < end and src[pos] in " \t\n":
            pos += 1
        dest = parseLinkDestination(src, pos, end)
        if dest.ok:
            pos = dest.pos
        while pos < end and src[pos] in " \t\n":
            pos += 1
        if pos < end and src[pos] in "\"'(":
            res = parseLinkTitle(src, pos, end)
            if res.ok and res.pos > pos + 1:
                t0, t1 = pos + 1, res.pos - 1
    return (lab0, label_end, t0, t1)


def _note_reference_use(state, start: int) -> None:
    """Record the label a reference-style link or image used (``[t][label]``, ``[t][]``, ``[t]``)."""
    from markdown_it.common.utils import normalizeReference

    src = state.src[start : state.pos]
    if src.endswith(")"):
        return  # inline link [text](dest)
    m = re.search(r"\]\[([^\[\]]*)\]$", src)
    if m and m.group(1).strip():
        label = m.group(1)
    else:
        body = src[2:] if src.startswith("![") else src[1:]
        body = re.sub(r"\]\[\]$", "", body)
        label = body[:-1] if body.endswith("]") else body
    state.env.setdefault(_ENV_USED, set()).add(normalizeReference(label))


def configured_parser():
    """A new ``MarkdownIt`` configured as unveil reads Markdown: CommonMark with tables,
    strikethrough, YAML front matter and footnotes (``mdit_py_plugins``), and a ``definition``
    token for every reference definition; without the position-recording wrappers that
    :func:`parse` adds (``benchmarks/floors.py`` times it bare)."""
    from markdown_it import MarkdownIt
    from mdit_py_plugins.footnote import footnote_plugin
    from mdit_py_plugins.front_matter import front_matter_plugin

    # inline_definitions: a `definition` token (with its line map) for every reference
    # definition, the duplicates included, so unused and duplicate ones can be located
    md = MarkdownIt("commonmark", {"inline_definitions": True}).enable(["table", "strikethrough"])
    return md.use(front_matter_plugin).use(footnote_plugin)


def _parser():
    global _md
    if _md is None:
        md = configured_parser()
        for rule in list(md.inline.ruler.__rules__):
            if rule.name in ("backticks", "html_inline", "link", "image", "entity"):
                md.inline.ruler.at(rule.name, _wrap(rule.name, rule.fn))
        md.core.ruler.at("normalize", normalize_source)
        _md = md
    return _md


def normalize_source(state) -> None:
    """markdown-it's core ``normalize`` rule (``rules_core/normalize.py``: every ``\r\n`` and
    lone ``\r`` to ``\n``, NUL to U+FFFD) with ``str.replace``, and nothing done to a text
    without either: its regular expression rewrote every line feed of every version (about
    2 ms for a 300 KB text)."""
    src = state.src
    if "\r" in src:
        src = src.replace("\r\n", "\n").replace("\r", "\n")
    if "\0" in src:
        src = src.replace("\0", "\ufffd")
    state.src = src


# -- position mapping -----------------------------------------------------------------------


def _content_line_offsets(doc: Document, content: str, first_line: int) -> tuple[int, ...]:
    """Document offset of the start of each ``\\n``-separated line of ``content``, which came
    from source lines ``first_line, first_line + 1, …`` with a prefix removed."""
    out: list[int] = []
    cursor: dict[int, int] = {}
    pieces = content.split("\n")
    for i, piece in enumerate(pieces):
        line = first_line + i
        if line >= doc.line_count:
            out.append(len(doc.text))
            continue
        if i and i == len(pieces) - 1 and piece == "":
            out.append(doc.line_span(line - 1)[1])  # after the final line break of a block
            continue
        src = doc.line_text(line).replace("\0", "\ufffd")
        base = doc.line_starts[line]
        k = None
        if piece == "":
            k = len(src.rstrip(" \t")) if i else len(src) - len(src.lstrip(" \t>"))
        elif src.endswith(piece):
            k = len(src) - len(piece)
        else:
            stripped = src.rstrip()
            if stripped.endswith(piece):
                k = len(stripped) - len(piece)
            else:
                j = src.find(piece, cursor.get(line, 0))
                k = j if j >= 0 else len(src) - len(src.lstrip(" \t>"))
        out.append(base + k)
    return tuple(out)


def _newlines(content: str) -> list[int]:
    """Indexes of the ``\n`` characters of ``content`` (for :func:`_map_index`)."""
    out = []
    i = content.find("\n")
    while i >= 0:
        out.append(i)
        i = content.find("\n", i + 1)
    return out


def _map_index(
    content: str, line_offsets: tuple[int, ...], index: int, default: int, nl: list[int] | None = None
) -> int:
    """Document offset of ``content[index]``; ``nl`` (from :func:`_newlines`) makes it
    O(log lines) instead of O(index)."""
    if not line_offsets:
        return default
    index = max(0, min(index, len(content)))
    if nl is None:
        line = content.count("\n", 0, index)
        col = index - (content.rfind("\n", 0, index) + 1)
    else:
        line = bisect.bisect_left(nl, index)
        col = index - (nl[line - 1] + 1 if line else 0)
    if line >= len(line_offsets):
        return line_offsets[-1]
    return line_offsets[line] + col


def _lines_span(doc: Document, m) -> tuple[int, int]:
    """``(start, end)`` of a ``token.map`` line range: the first line's start through the last
    line's content end (line break excluded)."""
    a, b = m
    a = max(0, min(a, doc.line_count - 1))
    b = max(a + 1, min(b, doc.line_count))
    return doc.line_starts[a], doc.line_span(b - 1)[1]


def _inline_text(tok) -> str:
    parts = []
    for c in tok.children or []:
        if c.type in ("text", "code_inline", "text_special"):
            parts.append(c.content)
        elif c.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif c.type == "image":
            parts.append(c.content)
    return "".join(parts).strip()


# -- parse ----------------------------------------------------------------------------------


def parse(doc: Document, tokenize=None) -> MarkdownLayer:
    """Parse ``doc`` into a :class:`MarkdownLayer`. Never raises on any text: when markdown-it
    (or the mapping) fails, the layer holds what was collected and ``error`` says why.
    ``tokenize(md, text, env) -> tokens``, when given, stands in for ``md.parse(text, env)`` and
    must return the same tokens (:meth:`unveil.core.incremental.DocumentCache.tokenize`)."""
    layer = MarkdownLayer()
    try:
        _fill(doc, layer, tokenize)
    except Exception as exc:  # noqa: BLE001 - the layer must never raise
        log.warning("markdown parse failed: %s", exc, exc_info=True)
        layer.error = f"{type(exc).__name__}: {exc}"
    return layer


def _fill(doc: Document, layer: MarkdownLayer, tokenize=None) -> None:
    if tokenize is None and _streams(doc.text):
        if _fill_streaming(doc, layer):
            return
        _reset(layer)  # footnote syntax after all: the plain way
    env: dict = {}
    tokens = _parser().parse(doc.text, env) if tokenize is None else tokenize(_parser(), doc.text, env)
    scope.checkpoint()
    heading_marks: list[list] = []
    footnote_defs: list[tuple[str, int, int, int]] = []
    inline_blocks: list = []
    definitions: list = []
    _block_facts(doc, layer, tokens, heading_marks, footnote_defs, inline_blocks, definitions, None)
    entities: dict[int, list] = {}  # id(content string) -> the entity records naming it
    for ent in env.get(_ENV_ENTITIES, ()):
        entities.setdefault(id(ent[0]), []).append(ent)
    for k, tok in enumerate(inline_blocks):
        if not k % 256:
            scope.checkpoint()  # a background analysis may wait here (unveil.core.scope)
        _inline(doc, tok, entities, layer)
    _finish(doc, layer, env, heading_marks, footnote_defs, definitions)


_CORE_CHAIN = ["normalize", "block", "inline", "footnote_tail", "text_join"]
"""The core rules of :func:`_parser`, in order, that :func:`_fill_streaming` runs itself."""


def _streams(text: str) -> bool:
    """Whether :func:`_fill_streaming` parses ``text``: no footnote syntax (``[^`` or ``^[``:
    the footnote plugin's ``footnote_tail`` rewrites the whole token stream) and the parser's
    core chain is :data:`_CORE_CHAIN`."""
    if "[^" in text or "^[" in text:
        return False
    return [r.name for r in _parser().core.ruler.__rules__ if r.enabled] == _CORE_CHAIN


def _fill_streaming(doc: Document, layer: MarkdownLayer) -> bool:
    """:func:`_fill` without holding the whole token stream (a 10 MB file's is about 1.3 GB of
    Python objects at its peak): markdown-it's core chain run by hand, as ``MarkdownIt.parse``
    runs it, the same tokens made in the same order, but each top-level block's tokens are read
    as soon as the block is parsed and only its ``inline`` and ``definition`` tokens are kept;
    then each inline token is parsed (every reference definition is known by then, as in
    ``parse``), joined (``text_join``), read, and dropped. A text without ``]:`` can hold no
    reference definition: there each block's inline tokens are read right after the block, so
    no more than one top-level block's tokens are held (block rules never read what inline
    parses write to the environment: the entity and used-label records, and footnote records,
    which send the text to :func:`_fill`).

    Exact because nothing reads a finished top-level block's tokens: block rules read only the
    tokens they push (the list rule marks its own paragraphs tight from its own first token),
    the inline rule reads one inline token's content and the environment, ``text_join`` one
    inline token's children, and ``footnote_tail`` changes nothing when the plugin recorded no
    definition, reference or inline footnote (:func:`_streams` leaves texts with footnote syntax
    to :func:`_fill`, and a record found after all sends the text there too). The entity records
    an inline parse appends name that token's content string (the layer matches them by
    identity); a parse records them for its own content only. Tested equal to :func:`_fill` on
    every corpus file. Returns ``False`` (``layer`` partly filled) when a footnote rule fired
    after all."""
    from markdown_it.rules_block.state_block import StateBlock
    from markdown_it.rules_core.state_core import StateCore
    from markdown_it.rules_core.text_join import text_join

    md = _parser()
    env: dict = {}
    state = StateCore(doc.text, md, env)
    normalize_source(state)
    heading_marks: list[list] = []
    footnote_defs: list[tuple[str, int, int, int]] = []
    inlines: list = []  # every inline token, in order (those without a line map are parsed too)
    definitions: list = []
    titles: dict[int, int] = {}  # id(inline token) -> index in heading_marks of the heading it titles
    # inline parses read the reference definitions, which block rules record: with none possible
    # (every definition holds "]:"), each block's inline tokens are read as soon as it is parsed
    at_once = "]:" not in state.src
    read = [0]  # inline tokens read so far

    def read_inlines() -> None:
        for k, tok in enumerate(inlines):
            read[0] += 1
            if not read[0] % 256:
                scope.checkpoint()  # a background analysis may wait here (unveil.core.scope)
            if tok.children is None:
                tok.children = []
            records = env.get(_ENV_ENTITIES)
            n0 = len(records) if records is not None else 0
            md.inline.parse(tok.content, md, env, tok.children)
            text_join(_OneToken(tok))  # type: ignore[arg-type]
            head = titles.pop(id(tok), None)
            if head is not None:
                heading_marks[head][2] = _inline_text(tok)
            if tok.map:
                records = env.get(_ENV_ENTITIES)
                mine = records[n0:] if records is not None else ()
                _inline(doc, tok, {id(tok.content): mine} if mine else {}, layer)
            tok.children = None
            inlines[k] = None
        inlines.clear()

    if state.src:
        out: list = []
        bstate = StateBlock(state.src, md, env, out)
        blocks = [0]

        def on_block(_line: int, _n0: int) -> None:
            _block_facts(doc, layer, out, heading_marks, footnote_defs, inlines, definitions, titles)
            out.clear()  # (nothing reads a finished top-level block's tokens)
            if at_once:
                read_inlines()
            blocks[0] += 1
            if not blocks[0] % 256:
                scope.checkpoint()

        top_level_blocks(md, bstate, bstate.line, bstate.lineMax, on_block)
    scope.checkpoint()
    if _footnoted(env):  # a footnote block rule fired after all
        return False
    read_inlines()
    if _footnoted(env):  # a footnote reference or inline footnote after all
        return False
    _finish(doc, layer, env, heading_marks, footnote_defs, definitions)
    return True


def _footnoted(env: dict) -> bool:
    """Whether the footnote plugin recorded a definition, reference or inline footnote (its
    reference rule also leaves an empty record wherever it was tried)."""
    data = env.get("footnotes") or {}
    return bool(data.get("refs") or data.get("list"))


class _OneToken:
    """What markdown-it's ``text_join`` core rule reads of its state (``tokens``), for one inline
    token."""

    def __init__(self, tok) -> None:
        self.tokens = [tok]


def _reset(layer: MarkdownLayer) -> MarkdownLayer:
    """``layer`` emptied in place (its fields as a new layer's) and returned."""
    fresh = MarkdownLayer()
    layer.__dict__.clear()
    layer.__dict__.update(fresh.__dict__)
    return layer


def _block_facts(doc, layer, tokens, heading_marks, footnote_defs, inline_blocks, definitions, titles) -> None:
    """Read block tokens (the whole stream, or one top-level block's): code blocks, HTML
    blocks, the frontmatter and footnote definitions go to ``layer`` and the lists given; each
    heading's title is read from the token after its ``heading_open`` now, or, with ``titles``
    (streaming: the inline token is not parsed yet), when that inline token is parsed.
    ``inline_blocks`` gets the inline tokens with a line map, or with ``titles`` every one."""
    for i, tok in enumerate(tokens):
        t = tok.type
        if t == "front_matter" and tok.map and tok.map[0] == 0:
            start, end = _lines_span(doc, tok.map)
            layer.frontmatter = Span(start, end)
            body_a = doc.line_starts[min(1, doc.line_count - 1)]
            last = tok.map[1] - 1
            body_b = doc.line_starts[last] if last >= 1 else body_a
            layer.frontmatter_body = Span(body_a, max(body_a, body_b))
            nxt = tok.map[1]
            layer.body_start = doc.line_starts[nxt] if nxt < doc.line_count else len(doc.text)
        elif t in ("fence", "code_block") and tok.map:
            start, end = _lines_span(doc, tok.map)
            layer.code.append(Span(start, end))
            if t == "fence":
                layer.fences.append(_fence(doc, tok, start, end))
        elif t == "html_block" and tok.map:
            start, end = _lines_span(doc, tok.map)
            offs = _content_line_offsets(doc, tok.content, tok.map[0])
            start = offs[0] if offs else start
            layer.html.append(HtmlChunk(start, end, tok.content, True, offs))
        elif t == "heading_open" and tok.map:
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            level = int(tok.tag[1:]) if tok.tag[1:].isdigit() else 1
            if titles is not None and nxt is not None and nxt.type == "inline":
                titles[id(nxt)] = len(heading_marks)
                heading_marks.append([tok.map[0], level, ""])
            else:
                heading_marks.append([tok.map[0], level, _inline_text(nxt) if nxt is not None else ""])
        elif t == "footnote_open":
            label = str((tok.meta or {}).get("label", ""))
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            if nxt is not None and nxt.map:
                footnote_defs.append((label, nxt.map[0], nxt.map[1], int((tok.meta or {}).get("id", -1))))
        elif t == "inline" and (tok.map or titles is not None):
            inline_blocks.append(tok)
        elif t == "definition" and tok.map:
            definitions.append(tok)


def _finish(doc, layer, env, heading_marks, footnote_defs, definitions) -> None:
    """The rest of :func:`_fill` once every token is read: sections, reference definitions
    (used, duplicate), footnotes, sorting, frontmatter comments, the HTML pass, hidden spans."""
    # headings and sections
    for n, (line, level, title) in enumerate(heading_marks):
        start = doc.line_starts[line] if line < doc.line_count else len(doc.text)
        nxt = heading_marks[n + 1][0] if n + 1 < len(heading_marks) else None
        end = doc.line_starts[nxt] if nxt is not None and nxt < doc.line_count else len(doc.text)
        layer.headings.append(Heading(line, level, title, start, end))
    # reference definitions
    used = env.get(_ENV_USED, set())
    for label, ref in (env.get("references") or {}).items():
        m = ref.get("map")
        if not m:
            continue
        start, end = _lines_span(doc, m)
        src = doc.text[start:end]
        start += len(src) - len(src.lstrip())
        layer.references.append(
            RefDef(label, str(ref.get("href", "")), str(ref.get("title", "")), start, end, m[0], label in used)
        )
    layer.references.sort(key=lambda r: r.start)
    # duplicate definitions: markdown-it keeps the first; a later one with the same
    # normalised label is never used and renders to nothing
    from markdown_it.common.utils import normalizeReference

    seen_labels: set[str] = set()
    for tok in definitions:
        meta = tok.meta or {}
        label = normalizeReference(str(meta.get("label", "")))
        if label in seen_labels:
            start, end = _lines_span(doc, tok.map)
            src = doc.text[start:end]
            start += len(src) - len(src.lstrip())
            layer.duplicate_references.append(
                RefDef(label, str(meta.get("url", "")), str(meta.get("title", "")), start, end, tok.map[0], False)
            )
        seen_labels.add(label)
    # footnotes: markdown-it-footnote drops definitions nobody references (refs value -1)
    fn = env.get("footnotes") or {}
    for label, ref_id in (fn.get("refs") or {}).items():
        if ref_id == -1:
            note = _unused_footnote(doc, label.lstrip(":"))
            if note is not None:  # None: no definition line found for the label
                layer.footnotes.append(note)
    for label, a, b, _id in footnote_defs:
        start, end = _lines_span(doc, (max(0, a), b))
        layer.footnotes.append(Footnote(label, start, end, a, True))
    layer.footnotes = [f for f in layer.footnotes if f is not None]
    layer.footnotes.sort(key=lambda f: f.start)
    layer.code.sort(key=lambda s: s.start)
    layer.html.sort(key=lambda h: h.start)
    layer.links.sort(key=lambda lk: lk.start)
    layer.entities.sort(key=lambda e: e.start)
    if layer.frontmatter_body is not None:
        from unveil.core.frontmatter import comment_spans

        fb = layer.frontmatter_body
        for a, b, kind in comment_spans(doc.text[fb.start : fb.end], fb.start):
            layer.frontmatter_comments.append(HiddenSpan(a, b, kind))
    _html_pass(doc, layer)
    _collect_hidden(layer)


_FOOTNOTE_DEF = re.compile(r"^ {0,3}\[\^([^\]\s]+)\]:")


def _unused_footnote(doc: Document, label: str) -> Footnote | None:
    """Locate ``[^label]:`` for a footnote definition that no reference uses (markdown-it keeps
    no map for it). The definition runs to the next blank line that is followed by a
    non-indented line."""
    for line in range(doc.line_count):
        m = _FOOTNOTE_DEF.match(doc.line_text(line))
        if m and m.group(1) == label:
            end_line = line
            while end_line + 1 < doc.line_count:
                nxt = doc.line_text(end_line + 1)
                if not nxt.strip():
                    after = doc.line_text(end_line + 2) if end_line + 2 < doc.line_count else ""
                    if not after.startswith((" ", "\t")) or not after.strip():
                        break
                elif _FOOTNOTE_DEF.match(nxt):
                    break
                end_line += 1
            start = doc.line_starts[line] + (len(doc.line_text(line)) - len(doc.line_text(line).lstrip()))
            return Footnote(label, start, doc.line_span(end_line)[1], line, False)
    return None


_FENCE_OPEN = re.compile(r"^[ \t>]*?(?:(?:[-*+]|\d+[.)])[ \t]+)*([`~]{3,})")


def _fence(doc: Document, tok, start: int, end: int) -> Fence:
    line = tok.map[0]
    info = tok.info or ""
    stripped = info.strip()
    lang = stripped.split(maxsplit=1)[0] if stripped else ""
    info_span = rest_span = None
    if stripped and line < doc.line_count:
        src = doc.line_text(line)
        base = doc.line_starts[line]
        mk = src.find(tok.markup)
        from_ = mk + len(tok.markup) if mk >= 0 else 0
        j = src.find(stripped, from_)
        if j < 0:  # escapes or entities in the info string: fall back to the text after the fence
            j = from_ + (len(src[from_:]) - len(src[from_:].lstrip()))
            info_span = Span(base + j, base + len(src.rstrip()))
        else:
            info_span = Span(base + j, base + j + len(stripped))
        text = doc.text[info_span.start : info_span.end]
        parts = text.split(maxsplit=1)
        if len(parts) == 2:
            k = text.find(parts[1], len(parts[0]))
            rest_span = Span(info_span.start + k, info_span.end)
    return Fence(start, end, line, info, lang, info_span, rest_span)


_FACT_CHARS = re.compile(r"[`<\[&]")
"""What an inline token's content must hold for :func:`_inline` to find anything: the rules
whose tokens it records (:data:`_WANTED`: backticks, HTML, links, images, character references)
start at one of these characters, and so does a reference definition line."""


def _inline(doc: Document, tok, entities: dict[int, list], layer: MarkdownLayer) -> None:
    """Add what one inline token holds to ``layer``: inline code, inline HTML, links and images,
    character references (``entities``: the parse's entity records by ``id`` of the content
    string they name) and reference-definition-like lines of a paragraph.

    In an open document (:func:`unveil.core.incremental.relocatable`) the offset-carrying facts
    of a token are kept by its content, its source lines and its children list (by identity:
    the incremental tokenizer hands an unchanged content's previous parse on, and the kept entry
    holds that list so its ``id`` stays its own); a token at a new place gets them moved. They
    are a function of those alone: the children and entity records come from that one parse,
    and every offset is the first source line's start plus a distance measured inside the
    source lines (:func:`_content_line_offsets`). A token whose content reaches past the last
    line is never kept (its offsets there are the text's length)."""
    content = tok.content
    if _FACT_CHARS.search(content) is None:
        return
    first = tok.map[0]
    last = first + content.count("\n")
    mine = entities.get(id(content), ())
    if last < doc.line_count and scope.document_cache() is not None:  # (else nothing is kept: no key)
        base = doc.line_starts[first]
        src = doc.text[base : doc.line_span(last)[1]]
        children = tok.children
        facts = relocatable(
            "markdown inline",
            (content, src, id(children)),
            base,
            lambda: [("", children), *_inline_facts(doc, tok, mine)],
            _shift_fact,
        )
    else:
        facts = _inline_facts(doc, tok, mine)
    for name, fact in facts:
        if name:
            getattr(layer, name).append(fact)
    if "[" in content:
        offs: tuple[int, ...] | None = None
        for n, piece in enumerate(content.split("\n")):
            m = _DEF_LINE.match(piece)
            if m is None:
                continue
            if offs is None:
                offs = _content_line_offsets(doc, content, first)
            if n < len(offs):
                start = offs[n]
                title = next(g for g in m.group(3, 4, 5) if g is not None)
                layer.paragraph_definitions.append(
                    RefDef(m.group(1), m.group(2) or "", title, start, start + len(piece.rstrip()), first + n, False)
                )


def _inline_facts(doc: Document, tok, entities) -> list[tuple[str, object]]:
    """``(layer list name, fact)`` of each inline code span, inline HTML chunk, link, image and
    character reference of one inline token, in the order :func:`_inline` adds them."""
    out: list[tuple[str, object]] = []
    content = tok.content
    offs = _content_line_offsets(doc, content, tok.map[0])

    nl = _newlines(content)

    def at(i: int) -> int:
        return _map_index(content, offs, i, doc.line_starts[min(tok.map[0], doc.line_count - 1)], nl)

    def walk(children):
        children = children or []
        for n, c in enumerate(children):
            pos = (c.meta or {}).get(_POS_KEY)
            if pos is None or pos[2] is not content:
                continue
            a, b = at(pos[0]), at(pos[1])
            if c.type == "code_inline":
                out.append(("code", Span(a, b)))
            elif c.type == "html_inline":
                out.append(
                    (
                        "html",
                        HtmlChunk(
                            a,
                            b,
                            c.content,
                            False,
                            _content_line_offsets_from(doc, content, offs, pos[0], c.content, nl),
                        ),
                    )
                )
            elif c.type in ("image", "link_open"):
                parts = (c.meta or {}).get(_PARTS_KEY) or (-1, -1, -1, -1)
                text_span = Span(at(parts[0]), at(parts[1])) if parts[1] > parts[0] >= 0 else None
                title_span = Span(at(parts[2]), at(parts[3])) if parts[3] > parts[2] >= 0 else None
                title = str(c.attrs.get("title", "") or "")
                if c.type == "image":
                    out.append(
                        (
                            "links",
                            Link("image", a, b, str(c.attrs.get("src", "")), title, c.content, text_span, title_span),
                        )
                    )
                    continue
                label = []
                for d in children[n + 1 :]:
                    if d.type == "link_close":
                        break
                    if d.type in ("text", "code_inline", "image"):
                        label.append(d.content)
                out.append(
                    (
                        "links",
                        Link("link", a, b, str(c.attrs.get("href", "")), title, "".join(label), text_span, title_span),
                    )
                )

    walk(tok.children)
    for ent in entities:
        if ent[0] is content:
            out.append(("entities", Entity(at(ent[1]), at(ent[2]), ent[3], ent[4])))
    return out


def _shift_span(s: Span | None, d: int) -> Span | None:
    return None if s is None else Span(s.start + d, s.end + d)


def _shift_fact(item: tuple[str, object], d: int) -> tuple[str, object]:
    """One item of :func:`_inline_facts` (or the children anchor, ``("", list)``) with every
    document offset moved by ``d`` code points."""
    name, f = item
    if isinstance(f, Span):
        return name, Span(f.start + d, f.end + d)
    if isinstance(f, HtmlChunk):
        return name, HtmlChunk(f.start + d, f.end + d, f.content, f.block, tuple(o + d for o in f.line_offsets))
    if isinstance(f, Link):
        return name, Link(
            f.kind,
            f.start + d,
            f.end + d,
            f.href,
            f.title,
            f.text,
            _shift_span(f.text_span, d),
            _shift_span(f.title_span, d),
        )
    if isinstance(f, Entity):
        return name, Entity(f.start + d, f.end + d, f.raw, f.decoded)
    return item


_DEF_LINE = re.compile(r"""^\[([^\]]+)\]:[ \t]*(<>|#|<#>)?[ \t]*(?:\(([^()]*)\)|"([^"]*)"|'([^']*)')[ \t]*$""")


def _content_line_offsets_from(doc, content, offs, start_index, sub, nl=None) -> tuple[int, ...]:
    """Line offsets of a substring of an inline token's content starting at ``start_index``."""
    out = []
    idx = start_index
    for piece in sub.split("\n"):
        out.append(_map_index(content, offs, idx, 0, nl))
        idx += len(piece) + 1
    return tuple(out)


def decode_entity(raw: str) -> str:
    """Decode one character reference (``&#x200B;``, ``&#8203;``, ``&zwj;``) like HTML5 does;
    returns ``raw`` unchanged when it is not a valid reference."""
    out = html.unescape(raw)
    return out


# -- raw HTML: one linear pass over every HTML chunk -------------------------------------------

VOID_TAGS = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr"}
)
NONDISPLAY_TAGS = frozenset({"script", "style", "template", "noscript", "noembed", "noframes", "title", "iframe"})
"""Elements whose text content is never displayed (HTML Living Standard, "Rendering" §15.3.1)."""
FALLBACK_TAGS = frozenset({"audio", "video", "object", "canvas"})
"""Elements whose text content is fallback, shown only where the media cannot be."""
TEXT_ATTRS = frozenset({"alt", "title", "summary", "abbr", "label", "placeholder", "content"})
"""Attributes (besides ``aria-*`` and ``data-*``) whose value is text shown as a tooltip, a
fallback, or not at all."""
_NON_TEXT_ARIA = frozenset(
    {
        "aria-hidden",
        "aria-expanded",
        "aria-controls",
        "aria-labelledby",
        "aria-describedby",
        "aria-haspopup",
        "aria-selected",
        "aria-checked",
        "aria-pressed",
        "aria-current",
        "aria-level",
        "aria-live",
        "aria-atomic",
        "aria-busy",
        "aria-disabled",
        "aria-modal",
        "aria-owns",
        "aria-posinset",
        "aria-setsize",
        "aria-sort",
        "aria-orientation",
    }
)
PAGE_BACKGROUND = (1.0, 1.0, 1.0, 1.0)
"""Background assumed for the page (GitHub's and VS Code's light themes): white text on no
background is judged invisible."""
_COMMENT_RX = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_ATTR_VALUE_RX = re.compile(r"""\s([^\s=/>"']+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']+))""")


def mask_comments(content: str) -> str:
    """``content`` with the text of every HTML comment replaced by spaces (same length and
    line breaks), so a tag written inside a comment is not taken for a tag."""
    if "<!--" not in content:
        return content
    return _COMMENT_RX.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), content)


def _chunk_events(chunk: HtmlChunk) -> list[tuple]:
    """``(kind, tag, attrs, i, j, raw)`` for each start/end tag of ``chunk`` (content indexes;
    ``kind`` ``"start"``, ``"startend"`` or ``"end"``). One pass of the standard library's
    ``html.parser`` over the chunk (comments masked)."""
    from html.parser import HTMLParser

    masked = mask_comments(chunk.content)
    events: list[tuple] = []
    nl = [0] + [m.end() for m in re.finditer("\n", masked)]

    class P(HTMLParser):
        def _index(self) -> int:
            line, col = self.getpos()
            return nl[min(line - 1, len(nl) - 1)] + col

        def handle_starttag(self, tag, attrs):
            i = self._index()
            raw = self.get_starttag_text() or ""
            events.append(("start", tag, attrs, i, i + len(raw), raw))

        def handle_startendtag(self, tag, attrs):
            i = self._index()
            raw = self.get_starttag_text() or ""
            events.append(("startend", tag, attrs, i, i + len(raw), raw))

        def handle_endtag(self, tag):
            i = self._index()
            j = masked.find(">", i)
            events.append(("end", tag, None, i, (j + 1) if j >= 0 else len(masked), ""))

    p = P(convert_charrefs=False)
    try:
        p.feed(masked)
        p.close()
    except Exception:  # noqa: BLE001 - keep what was parsed
        pass
    return events


def _attr_spans(raw: str) -> dict[str, tuple[int, int]]:
    spans: dict[str, tuple[int, int]] = {}
    for m in _ATTR_VALUE_RX.finditer(raw):
        g = 2 if m.group(2) is not None else 3 if m.group(3) is not None else 4
        spans.setdefault(m.group(1).lower(), (m.start(g), m.end(g)))
    return spans


def text_attribute(name: str) -> bool:
    """Whether attribute ``name`` (lower case) carries text a reader does not see as content."""
    return name in TEXT_ATTRS or name.startswith("data-") or (name.startswith("aria-") and name not in _NON_TEXT_ARIA)


def _html_pass(doc: Document, layer: MarkdownLayer) -> None:
    """Fill ``hidden_elements`` and ``html_attrs`` in one pass over the HTML chunks, in
    document order, with a stack of open elements (containers are followed across chunks, so
    markdown between ``<div hidden>`` and ``</div>`` counts as hidden). Linear in the number of
    tags: an end tag whose element is not open costs O(1) (per-tag open counts), popping is
    amortised over the pushes, only the outermost hidden element (and the outermost collapsed
    ``<details>``) is recorded, and ``<style>`` rules are parsed once for the whole document."""
    from unveil.core import css

    chunks = sorted(layer.html, key=lambda h: h.start)
    all_events = [(chunk, _chunk_events(chunk)) for chunk in chunks]
    # <style> rules apply to the whole document: read them first. The CSS is the source between
    # <style …> and the next </style>, so a <style> written inline in a paragraph (its CSS then
    # being paragraph text, not part of any HTML chunk) counts too.
    sheet = css.StyleSheet([])
    style_open: int | None = None
    for chunk, events in all_events:
        for kind, tag, _attrs, i, j, _raw in events:
            if tag != "style":
                continue
            if kind == "start" and style_open is None:
                style_open = chunk.offset_of(j)
            elif kind == "end" and style_open is not None:
                sheet.extend(css.StyleSheet.parse(doc.text[style_open : chunk.offset_of(i)]))
                style_open = None
    if style_open is not None:
        sheet.extend(css.StyleSheet.parse(doc.text[style_open:]))
    stack: list[dict] = []
    open_count: dict[str, int] = {}
    hard_depth = 0  # open elements that are hidden outright
    details_open: list[int] = []  # stack indexes of open collapsed <details>
    details_depth = 0
    out: list[HiddenElement] = []

    def close(e: dict, close_start: int, close_end: int) -> None:
        nonlocal hard_depth, details_depth
        if e["hard"]:
            hard_depth -= 1
            if e["record"]:
                out.append(
                    HiddenElement(
                        e["tag"],
                        e["start"],
                        e["open_end"],
                        e["open_end"],
                        close_start,
                        close_end,
                        e["kind"],
                        e["reason"],
                        e["attrs"],
                    )
                )
        if e["details"]:
            details_depth -= 1
            if e["record"]:
                body = e["summary_end"] if e["summary_end"] is not None else e["open_end"]
                out.append(
                    HiddenElement(
                        "details",
                        e["start"],
                        e["open_end"],
                        max(body, e["open_end"]),
                        max(close_start, body),
                        close_end,
                        "details",
                        "collapsed <details>",
                        e["attrs"],
                    )
                )

    for chunk, events in all_events:
        for kind, tag, attrs, i, j, raw in events:
            a, b = chunk.offset_of(i), chunk.offset_of(j)
            if kind in ("start", "startend"):
                amap = {k.lower(): (v if v is not None else "") for k, v in attrs}
                spans = None
                for name, value in amap.items():
                    if not text_attribute(name):
                        continue
                    value = html.unescape(value or "").strip()
                    if not value:
                        continue
                    if spans is None:
                        spans = _attr_spans(raw)
                    sp = spans.get(name)
                    s0, s1 = (chunk.offset_of(i + sp[0]), chunk.offset_of(i + sp[1])) if sp else (a, b)
                    layer.html_attrs.append(HtmlAttr(tag, name, value, s0, s1, a, b))
                if kind == "startend" or tag in VOID_TAGS:
                    continue
                inherited = stack[-1]["bg"] if stack else PAGE_BACKGROUND
                hkind, reason, bg = element_hidden(tag, amap, sheet, inherited)
                hard = hkind is not None
                is_details = tag == "details" and "open" not in amap and not hard
                e = {
                    "tag": tag,
                    "start": a,
                    "open_end": b,
                    "attrs": tuple(amap.items())[:16],
                    "bg": bg,
                    "hard": hard,
                    "kind": hkind,
                    "reason": reason,
                    "details": is_details,
                    "summary_end": None,
                    "record": (hard and hard_depth == 0) or (is_details and hard_depth == 0 and details_depth == 0),
                }
                if hard:
                    hard_depth += 1
                if is_details:
                    details_depth += 1
                    details_open.append(len(stack))
                stack.append(e)
                open_count[tag] = open_count.get(tag, 0) + 1
            else:  # end tag
                if tag == "summary" and details_open:
                    d = stack[details_open[-1]]
                    if d["summary_end"] is None:
                        d["summary_end"] = b
                if not open_count.get(tag):
                    continue
                while stack:
                    e = stack.pop()
                    open_count[e["tag"]] -= 1
                    if details_open and details_open[-1] == len(stack):
                        details_open.pop()
                    close(e, a, b)
                    if e["tag"] == tag:
                        break
    end = len(doc.text)
    while stack:  # never closed: the browser hides to the end of the document
        e = stack.pop()
        close(e, end, end)
    out.sort(key=lambda h: h.start)
    layer.hidden_elements = out


def element_hidden(tag: str, amap: dict[str, str], sheet, inherited):
    """Whether an element is hidden from the reader: ``(kind, reason, background)``.

    ``amap`` is its attributes (lower-case names), ``sheet`` a :class:`unveil.core.css.StyleSheet`
    of the document's ``<style>`` rules, ``inherited`` the parent's background ``(r, g, b, a)``.
    ``kind`` is ``"attribute"``, ``"css"``, ``"nondisplay"``, ``"fallback"`` or ``None`` (shown);
    ``background`` is the element's own background or the inherited one (for its children)."""
    from unveil.core import css

    decls = sheet.declarations_for(tag, amap) if sheet.rules else []
    style = amap.get("style") or ""
    if style.strip():
        decls = decls + css.parse_declarations(style)
    own_bg = css.background_of(decls) if decls else None
    bg = own_bg or inherited
    if "hidden" in amap and tag != "input":
        return "attribute", "hidden attribute", bg
    if decls:
        why = css.hidden_by_declarations(decls, inherited)
        if why:
            return "css", f"style {why}", bg
    if tag == "font" and amap.get("color"):
        fdecls = css.parse_declarations(f"color: {amap['color']}")
        why = css.hidden_by_declarations(fdecls, bg)
        if why:
            return "css", f"<font color={amap['color']}>: {why}", bg
    if tag in NONDISPLAY_TAGS:
        return "nondisplay", f"<{tag}> content is not displayed", bg
    if tag in FALLBACK_TAGS:
        return "fallback", f"<{tag}> fallback text is not displayed", bg
    return None, None, bg


def _collect_hidden(layer: MarkdownLayer) -> None:
    """Gather every hidden span of ``layer`` into ``layer.hidden_spans`` (sorted)."""
    spans = list(layer.frontmatter_comments)
    for lk in layer.links:
        if lk.title_span is not None:
            spans.append(HiddenSpan(lk.title_span.start, lk.title_span.end, "link-title"))
        if lk.kind == "image" and lk.text_span is not None:
            spans.append(HiddenSpan(lk.text_span.start, lk.text_span.end, "image-alt"))
    for r in layer.references:
        spans.append(HiddenSpan(r.start, r.end, "reference-definition", r.label))
    for r in layer.duplicate_references:
        spans.append(HiddenSpan(r.start, r.end, "duplicate-reference-definition", r.label))
    for f in layer.footnotes:
        if not f.used:
            spans.append(HiddenSpan(f.start, f.end, "unused-footnote", f.label))
    for h in layer.hidden_elements:
        if h.kind == "details":
            spans.append(HiddenSpan(h.body_start, h.body_end, "details", h.reason))
        else:
            spans.append(HiddenSpan(h.start, h.end, "html", h.reason))
    for at in layer.html_attrs:
        spans.append(HiddenSpan(at.start, at.end, "attribute", at.name))
    layer.hidden_spans = sorted((s for s in spans if s.end > s.start), key=lambda s: (s.start, s.end))
