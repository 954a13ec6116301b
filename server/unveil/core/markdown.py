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
"""

from __future__ import annotations

import bisect
import html
import logging
import re
from dataclasses import dataclass, field

from unveil.core.document import Document

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
        """Document offset of code point ``index`` of :attr:`content` (clamped)."""
        return _map_index(self.content, self.line_offsets, index, self.start)

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
        return ok

    return rule


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


def _parser():
    global _md
    if _md is None:
        from markdown_it import MarkdownIt
        from mdit_py_plugins.footnote import footnote_plugin
        from mdit_py_plugins.front_matter import front_matter_plugin

        md = MarkdownIt("commonmark").enable(["table", "strikethrough"])
        md.use(front_matter_plugin).use(footnote_plugin)
        for rule in list(md.inline.ruler.__rules__):
            if rule.name in ("backticks", "html_inline", "link", "image", "entity"):
                md.inline.ruler.at(rule.name, _wrap(rule.name, rule.fn))
        _md = md
    return _md


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


def _map_index(content: str, line_offsets: tuple[int, ...], index: int, default: int) -> int:
    if not line_offsets:
        return default
    index = max(0, min(index, len(content)))
    line = content.count("\n", 0, index)
    if line >= len(line_offsets):
        return line_offsets[-1]
    col = index - (content.rfind("\n", 0, index) + 1)
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


def parse(doc: Document) -> MarkdownLayer:
    """Parse ``doc`` into a :class:`MarkdownLayer`. Never raises on any text: when markdown-it
    (or the mapping) fails, the layer holds what was collected and ``error`` says why."""
    layer = MarkdownLayer()
    try:
        _fill(doc, layer)
    except Exception as exc:  # noqa: BLE001 - the layer must never raise
        log.warning("markdown parse failed: %s", exc, exc_info=True)
        layer.error = f"{type(exc).__name__}: {exc}"
    return layer


def _fill(doc: Document, layer: MarkdownLayer) -> None:
    env: dict = {}
    tokens = _parser().parse(doc.text, env)
    heading_marks: list[tuple[int, int, str]] = []
    footnote_defs: list[tuple[str, int, int, int]] = []
    inline_blocks = []
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
            title = _inline_text(tokens[i + 1]) if i + 1 < len(tokens) else ""
            heading_marks.append((tok.map[0], int(tok.tag[1:]) if tok.tag[1:].isdigit() else 1, title))
        elif t == "footnote_open":
            label = str((tok.meta or {}).get("label", ""))
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            if nxt is not None and nxt.map:
                footnote_defs.append((label, nxt.map[0], nxt.map[1], int((tok.meta or {}).get("id", -1))))
        elif t == "inline" and tok.map:
            inline_blocks.append(tok)
    for tok in inline_blocks:
        _inline(doc, tok, env, layer)
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
    # footnotes: markdown-it-footnote drops definitions nobody references (refs value -1)
    fn = env.get("footnotes") or {}
    for label, ref_id in (fn.get("refs") or {}).items():
        if ref_id == -1:
            layer.footnotes.append(_unused_footnote(doc, label.lstrip(":")))
    for label, a, b, _id in footnote_defs:
        start, end = _lines_span(doc, (max(0, a), b))
        layer.footnotes.append(Footnote(label, start, end, a, True))
    layer.footnotes = [f for f in layer.footnotes if f is not None]
    layer.footnotes.sort(key=lambda f: f.start)
    layer.code.sort(key=lambda s: s.start)
    layer.html.sort(key=lambda h: h.start)
    layer.links.sort(key=lambda lk: lk.start)
    layer.entities.sort(key=lambda e: e.start)


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


def _inline(doc: Document, tok, env: dict, layer: MarkdownLayer) -> None:
    content = tok.content
    offs = _content_line_offsets(doc, content, tok.map[0])

    def at(i: int) -> int:
        return _map_index(content, offs, i, doc.line_starts[min(tok.map[0], doc.line_count - 1)])

    def walk(children):
        children = children or []
        for n, c in enumerate(children):
            pos = (c.meta or {}).get(_POS_KEY)
            if pos is None or pos[2] is not content:
                continue
            a, b = at(pos[0]), at(pos[1])
            if c.type == "code_inline":
                layer.code.append(Span(a, b))
            elif c.type == "html_inline":
                layer.html.append(HtmlChunk(a, b, c.content, False, _content_line_offsets_from(doc, content, offs, pos[0], c.content)))
            elif c.type == "image":
                layer.links.append(Link("image", a, b, str(c.attrs.get("src", "")), str(c.attrs.get("title", "") or ""), c.content))
            elif c.type == "link_open":
                label = []
                for d in children[n + 1 :]:
                    if d.type == "link_close":
                        break
                    if d.type in ("text", "code_inline", "image"):
                        label.append(d.content)
                layer.links.append(
                    Link("link", a, b, str(c.attrs.get("href", "")), str(c.attrs.get("title", "") or ""), "".join(label))
                )

    walk(tok.children)
    for n, piece in enumerate(content.split("\n")):
        m = _DEF_LINE.match(piece)
        if m and n < len(offs):
            start = offs[n]
            title = next(g for g in m.group(3, 4, 5) if g is not None)
            layer.paragraph_definitions.append(
                RefDef(m.group(1), m.group(2) or "", title, start, start + len(piece.rstrip()), tok.map[0] + n, False)
            )
    for ent in env.get(_ENV_ENTITIES, ()):
        if ent[0] is content:
            layer.entities.append(Entity(at(ent[1]), at(ent[2]), ent[3], ent[4]))


_DEF_LINE = re.compile(
    r"""^\[([^\]]+)\]:[ \t]*(<>|#|<#>)?[ \t]*(?:\(([^()]*)\)|"([^"]*)"|'([^']*)')[ \t]*$"""
)


def _content_line_offsets_from(doc, content, offs, start_index, sub) -> tuple[int, ...]:
    """Line offsets of a substring of an inline token's content starting at ``start_index``."""
    out = []
    idx = start_index
    for piece in sub.split("\n"):
        out.append(_map_index(content, offs, idx, 0))
        idx += len(piece) + 1
    return tuple(out)


def decode_entity(raw: str) -> str:
    """Decode one character reference (``&#x200B;``, ``&#8203;``, ``&zwj;``) like HTML5 does;
    returns ``raw`` unchanged when it is not a valid reference."""
    out = html.unescape(raw)
    return out
