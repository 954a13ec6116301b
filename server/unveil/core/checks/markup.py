"""Markdown/HTML hidden-content checks: text a model reads that the rendered view hides.

Rules (metadata and examples in ``rules/hidden-content.toml``; techniques T13–T18 and T23 of
``hiding-techniques.md``):

* ``HID020`` HTML comments (block and inline) outside code, by content (instruction → error,
  prose → warning with its token count, short → info); exact-match tooling pragmas are exempt.
* ``HID021`` an unterminated ``<!--`` (the rest of the file disappears from the rendered view).
* ``HID022`` reference definitions used as comments (``[//]: # (text)``), unused definitions with
  a long title, footnote definitions nothing refers to (not rendered).
* ``HID023`` HTML hidden from the reader: ``hidden``, CSS hiding judged by tinycss2
  (:mod:`unveil.core.css`; ``style`` attributes and ``<style>`` rules), collapsed ``<details>``,
  script/style/template/noscript text, processing instructions, declarations, CDATA. The
  elements come from the markdown layer's single linear pass over the HTML.
* ``HID024`` prose carried only in attributes (alt, title, aria-*, data-*) and in markdown image
  alt text and link/image titles.
* ``HID025`` fence info strings beyond the language word.
* ``HID026`` character references that decode to invisible or format characters.
* ``HID027`` YAML ``#`` comments and HTML comments inside the frontmatter, by content.
* ``HID028`` duplicate reference definitions (the second never renders; CommonMark keeps the first).

Besides these findings, every hidden region the markdown layer finds (``MarkdownLayer.hidden_spans``:
frontmatter comments, link titles, image alt text, reference definitions and duplicates, unused
footnotes, collapsed ``<details>`` bodies, text attributes, elements hidden by ``hidden``, CSS or
their tag) is marked hidden by :func:`unveil.core.context.regions`, so every directive rule grades
what it says, one step higher than in prose.

Everything works from :class:`unveil.core.markdown.MarkdownLayer` (one CommonMark parse per
analysis); nothing is found by running a regex over the whole file, so constructs inside code
spans and fences (visible, literal text) never fire. Offsets are code points.
"""

from __future__ import annotations

import html
import os
import re
import unicodedata
from html.parser import HTMLParser
from typing import Iterable

import regex

from unveil.core import tokens as tokcount
from unveil.core.findings import Edit, Finding, Fix, Severity
from unveil.core.instruction import Verdict, classify
from unveil.core.markdown import HtmlChunk, mask_comments

PREVIEW = 120
"""Characters of hidden text quoted in a message."""

_SEV = {"instruction": Severity.ERROR, "prose": Severity.WARNING, "short": Severity.INFO}


#: File types that no viewer renders as Markdown (Roo-Code keeps rules as .xml/.txt, for
#: example): their comments and CDATA are read as they stand, so markup cannot hide anything.
NOT_RENDERED_SUFFIXES = (".xml", ".txt", ".json", ".yaml", ".yml", ".toml")


def check(ctx) -> Iterable[Finding]:
    """All markup findings for ``ctx`` (a :class:`unveil.core.checks.Context`); none for files
    that are never rendered as Markdown (:data:`NOT_RENDERED_SUFFIXES`)."""
    if ctx.path and ctx.path.lower().endswith(NOT_RENDERED_SUFFIXES):
        return []
    out: list[Finding] = []
    out += _comments(ctx)
    out += _frontmatter_comments(ctx)
    out += _references(ctx)
    out += _html(ctx)
    out += _markdown_attrs(ctx)
    out += _fence_info(ctx)
    out += _entities(ctx)
    return out


# -- helpers ---------------------------------------------------------------------------------


def _preview(text: str, limit: int = PREVIEW) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _token_phrase(text: str) -> tuple[str, int | None]:
    """``("N tokens", N)`` from the o200k counter, or ``("N words", None)`` while it is loading."""
    try:
        n = tokcount.count(text, wait=False)
    except Exception:  # noqa: BLE001
        n = None
    if n is None:
        w = len(text.split())
        return f"{w} word{'s' if w != 1 else ''}", None
    return f"{n} token{'s' if n != 1 else ''}", n


def _signals(v: Verdict) -> str:
    shown = [s for s in v.signals if s not in ("action", "maintainer")]
    return f" [{', '.join(shown)}]" if shown else ""


def _carried_finding(
    rule: str,
    sev: Severity,
    start: int,
    end: int,
    where: str,
    text: str,
    v: Verdict,
    otherwise: str = "carries",
    fixes: tuple[Fix, ...] = (),
    size_otherwise: bool = False,
    data: dict[str, object] | None = None,
) -> Finding:
    """The finding for ``text`` (verdict ``v``) that the reader does not see at ``where``: message
    ``"{where} tells the model: “preview”"`` with the verdict's signals for an instruction, else
    ``"{where} {otherwise}: “preview”"`` (then, with ``size_otherwise``, its size: ``" (N tokens)"``);
    ``hidden_text`` is ``text``, ``tokens`` its o200k count (``None`` while the tokenizer loads),
    ``data`` the verdict, its signals, then ``data``."""
    phrase, ntok = _token_phrase(text)
    lead = "tells the model" if v.level == "instruction" else otherwise
    msg = f"{where} {lead}: “{_preview(text)}”"
    if v.level == "instruction":
        msg += _signals(v)
    elif size_otherwise:
        msg += f" ({phrase})"
    return Finding(
        rule,
        sev,
        start,
        end,
        msg,
        hidden_text=text,
        tokens=ntok,
        fixes=fixes,
        data={"verdict": v.level, "signals": list(v.signals), **(data or {})},
    )


def _graded(v: Verdict, sev: Severity | None) -> Severity | None:
    """``sev`` replaced by the directive judgement's weight when the verdict carries one
    (:func:`unveil.core.instruction.directive_weight`: warning for an instruction with action
    evidence, error when it touches secrets, security checks, concealment or the network)."""
    if v.weight == "error":
        return Severity.ERROR
    if v.weight == "warning":
        return Severity.WARNING
    return sev


def _risky(v: Verdict) -> bool:
    """An instruction with a strong signal, a command, a URL or a credential word: used where
    plain directives are common in benign text (image alt text, captions)."""
    return v.level == "instruction" and (v.strong or any(x in v.signals for x in ("command", "url", "credential")))


def _is_claude_md(path: str | None) -> bool:
    if not path:
        return False
    return os.path.basename(path) in ("CLAUDE.md", "CLAUDE.local.md")


def _whole_lines(doc, start: int, end: int) -> tuple[int, int] | None:
    """If ``[start, end)`` is alone on its lines (only whitespace around it), the range of those
    lines including the final line break; else ``None``."""
    l0, l1 = doc.line_of(start), doc.line_of(end)
    a = doc.line_starts[l0]
    b = doc.line_span(l1)[1]
    if doc.text[a:start].strip() or doc.text[end:b].strip():
        return None
    nxt = doc.line_starts[l1 + 1] if l1 + 1 < doc.line_count else b
    return a, nxt


def _remove_fix(doc, start: int, end: int, title: str) -> Fix:
    lines = _whole_lines(doc, start, end)
    a, b = lines if lines else (start, end)
    return Fix(title=title, edits=(Edit(a, b, ""),), kind="remove-hidden")


def _reveal_text(inner: str, block: bool) -> str:
    lines = [ln.strip() for ln in inner.strip("\n").splitlines()]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    if not block:
        return " ".join(ln for ln in lines if ln)
    return "\n".join(f"> {ln}" if ln else ">" for ln in lines)


# -- HID020 / HID021: comments ------------------------------------------------------------------

_PRAGMAS = [
    re.compile(p, re.I | re.S)
    for p in (
        r"markdownlint-(?:disable|enable|disable-next-line|disable-line|capture|restore|disable-file|enable-file)"
        r"(?:\s+[A-Za-z0-9_/-]+)*",
        r"markdownlint-configure-file\s*\{.*\}",
        r"prettier-ignore(?:-start|-end)?",
        r"toc|tocstop|/toc|toc:?\s*(?:start|end)|omit (?:in|from) toc",
        r"(?:START|END) doctoc(?: generated TOC please keep comment here to allow auto update)?",
        r"DON'T EDIT THIS SECTION, INSTEAD RE-RUN doctoc TO UPDATE",
        r"vale (?:off|on)|vale [A-Za-z0-9_.-]+(?:\.[A-Za-z0-9_-]+)? = (?:NO|YES)",
        r"cspell:\s*(?:disable|enable|disable-next-line|disable-line)",
        r"cspell:\s*(?:words|ignore|ignoreWords|flagWords|ignoreRegExp|language|dictionaries|locale)\s+[^\n]{0,200}",
        r"(?:spellchecker|spell-checker|alex|lint|remark-lint|eslint)[- ](?:disable|enable|ignore)(?:[- ]next-line|[- ]line)?"
        r"(?:\s+[A-Za-z0-9_/.,-]+)*",
        r"textlint-(?:disable|enable)(?:\s+[A-Za-z0-9_/,-]+)*",
        r"mdformat-(?:off|on)|fmt:\s*(?:off|on)",
        r"(?:BEGIN|END|START|STOP)[ _:-]?(?:[A-Za-z0-9_./:-]+[ _-]?){0,6}",
        r"[A-Za-z0-9_./-]{1,40}:(?:start|end|begin)",
        r"ALL-CONTRIBUTORS-(?:LIST|BADGE):(?:START|END)(?:\s*-\s*Do not remove or modify this section\s*-*)?",
        r"(?:this (?:file|section|document|table|block) (?:is|was) )?(?:auto-?generated|generated)"
        r"(?: (?:by|from|with|using) \S+(?: \S+){0,8}?)?[.!]?\s*(?:-+\s*)?(?:please )?(?:do not|don't) (?:edit|modify)"
        r"(?: (?:this|manually|by hand|directly))*\.?(?:\s+[^\n]{0,80})?",
        r"(?:do not|don't) (?:edit|modify)(?: (?:this|manually|by hand|directly|file|section))*[.!]?"
        r"(?:\s*(?:this (?:file|section) is )?(?:auto-?)?generated(?: (?:by|from|with) [^\n.]{1,80})?\.?)?",
        r"more|excerpt|truncate|readmore",
    )
]


def is_pragma(body: str, known: frozenset[str] | None = None) -> bool:
    """Whether a comment body (text between ``<!--`` and ``-->``) is exactly a known tooling
    pragma. Exempt only on a full match of the grammar, and never when the text classifies as an
    instruction (so ``<!-- cspell:words ignore previous instructions -->`` still fires).
    unveil's own suppressions must match :mod:`unveil.core.suppress`'s grammar exactly (mandatory
    reason, ids in ``known`` — default: the bundled rule ids and categories)."""
    from unveil.core import suppress

    text = body.strip()
    if not text:
        return False
    if suppress.is_pragma_text(text):
        if not suppress.is_exact(text, known):
            return False
    elif not any(p.fullmatch(text) for p in _PRAGMAS):
        return False
    return classify(text).level != "instruction"


def _comment_spans(chunk: HtmlChunk):
    """:meth:`unveil.core.markdown.HtmlChunk.comment_spans` of ``chunk``."""
    return chunk.comment_spans()


def _comments(ctx) -> list[Finding]:
    doc, md = ctx.doc, ctx.markdown
    out: list[Finding] = []
    claude = _is_claude_md(ctx.path)
    known = None
    if getattr(ctx.settings, "rules_paths", ()):
        from unveil.core.suppress import known_ids

        known = known_ids(ctx.settings)
    for chunk in md.html:
        if not chunk.block and not chunk.content.startswith("<!--"):
            continue
        for i, j, body, terminated in _comment_spans(chunk):
            start = chunk.offset_of(i)
            if not terminated:
                out.append(_unterminated(doc, start))
                break
            end = chunk.offset_of(j)
            f = _comment_finding(doc, start, end, body, chunk.block, claude, known)
            if f is not None:
                out.append(f)
    return out


def _comment_finding(
    doc, start: int, end: int, body: str, block: bool, claude: bool, known: frozenset[str] | None = None
) -> Finding | None:
    text = body.strip()
    if not text or is_pragma(text, known):
        return None
    v = classify(text)
    sev = _graded(v, _SEV.get(v.level))
    if sev is None:
        return None
    phrase, ntok = _token_phrase(text)
    quoted = f"“{_preview(text)}”"
    if v.level == "instruction":
        msg = f"Hidden HTML comment tells the model: {quoted}{_signals(v)}"
    elif v.level == "prose":
        msg = f"Hidden HTML comment: {phrase} of prose the model reads but the rendered view hides: {quoted}"
    else:
        msg = f"HTML comment, hidden in the rendered view: {quoted}"
    if claude and block:
        msg += (
            " (Claude Code ≥ 2.1.72 strips block-level comments from CLAUDE.md before injecting it;"
            " other agents and the Read tool still see it)"
        )
    raw = doc.text[start:end]
    inner = raw[4:-3] if raw.endswith("-->") and len(raw) >= 7 else body
    fixes = (
        Fix("Reveal comment as visible text", (Edit(start, end, _reveal_text(inner, block)),), kind="reveal-comment"),
        _remove_fix(doc, start, end, "Remove comment"),
    )
    return Finding(
        "HID020",
        sev,
        start,
        end,
        msg,
        hidden_text=text,
        fixes=fixes,
        tokens=ntok,
        data={"verdict": v.level, "signals": list(v.signals), "block": block},
    )


def _unterminated(doc, start: int) -> Finding:
    line = doc.line_of(start)
    line_end = doc.line_span(line)[1]
    close = doc.text.find("-->", start + 4)
    hidden_end = len(doc.text) if close < 0 else close + 3
    hidden = doc.text[start + 4 : hidden_end if close < 0 else close]
    last_line = doc.line_of(max(start, hidden_end - 1))
    n_lines = last_line - line + 1
    phrase, ntok = _token_phrase(hidden)
    where = "the rest of the file" if close < 0 else f"everything up to line {last_line + 1}"
    msg = (
        f"Unterminated HTML comment: <!-- hides {where} from rendered views "
        f"({n_lines} line{'s' if n_lines != 1 else ''}, {phrase} the model still reads)"
    )
    v = classify(hidden)
    if v.level == "instruction":
        msg += f"; the hidden text tells the model: “{_preview(hidden)}”"
    fixes = (Fix("Close the comment here", (Edit(line_end, line_end, " -->"),), kind="quickfix"),)
    return Finding(
        "HID021",
        Severity.ERROR,
        start,
        line_end,
        msg,
        hidden_text=hidden.strip(),
        fixes=fixes,
        tokens=ntok,
        data={"verdict": v.level, "signals": list(v.signals), "hidden_end": hidden_end},
    )


# -- HID022: reference definitions and footnotes --------------------------------------------------

_COMMENT_LABELS = {"//", "COMMENT", "_", "#", "NOTE", "TODO", "//:", "COMMENTS", "HIDDEN"}


def _references(ctx) -> list[Finding]:
    doc, md = ctx.doc, ctx.markdown
    out: list[Finding] = []
    refs = [(r, False) for r in md.references] + [(r, True) for r in md.paragraph_definitions]
    for ref, in_paragraph in refs:
        title = ref.title.strip()
        idiom = bool(title) and (ref.href in ("", "#", "<>", "<#>") or ref.label.upper() in _COMMENT_LABELS)
        if in_paragraph:
            if not idiom:
                continue
            v = classify(title)
            sev = _graded(v, _SEV.get(v.level))
            if sev is None:
                continue
            lead = "tells the model" if v.level == "instruction" else "says"
            msg = (
                f"Comment-style reference definition inside a paragraph {lead}: “{_preview(title)}”"
                f"{_signals(v) if v.level == 'instruction' else ''} (CommonMark shows this line as text because a"
                " definition cannot interrupt a paragraph; renderers that accept it hide it, and it was written to be hidden)"
            )
        elif idiom:
            v = classify(title)
            sev = _graded(v, _SEV.get(v.level))
            if sev is None:
                continue
            if v.level == "instruction":
                msg = f"Reference definition used as a comment (renders to nothing) tells the model: “{_preview(title)}”{_signals(v)}"
            else:
                msg = f"Reference definition used as a comment, hidden in the rendered view: “{_preview(title)}”"
        elif not ref.used and len(title) > 40:
            v = classify(title)
            sev = Severity.ERROR if v.level == "instruction" else Severity.WARNING
            lead = "tells the model" if v.level == "instruction" else "carries text nobody sees"
            msg = f"Unused reference definition [{ref.label.lower()}] (renders to nothing) {lead}: “{_preview(title)}”{_signals(v) if v.level == 'instruction' else ''}"
        elif not ref.used and _label_dest_text(doc, ref):
            text = _label_dest_text(doc, ref)
            v = classify(text)
            if v.level == "instruction":
                sev = Severity.ERROR
            elif v.level == "prose":
                sev = Severity.WARNING
            else:
                continue
            lead = "tells the model" if v.level == "instruction" else "carries text nobody sees"
            msg = (
                f"Unused reference definition renders to nothing; its label and destination {lead}: "
                f"“{_preview(text)}”{_signals(v) if v.level == 'instruction' else ''}"
            )
            title = text
        else:
            continue
        phrase, ntok = _token_phrase(title)
        fixes = (
            Fix(
                "Reveal definition text as visible text",
                (Edit(ref.start, ref.end, _reveal_text(title, True)),),
                kind="reveal-comment",
            ),
            _remove_fix(doc, ref.start, ref.end, "Remove definition"),
        )
        out.append(
            Finding(
                "HID022",
                sev,
                ref.start,
                ref.end,
                msg,
                hidden_text=title,
                fixes=fixes,
                tokens=ntok,
                data={"verdict": v.level, "signals": list(v.signals), "label": ref.label},
            )
        )
    for ref in md.duplicate_references:
        out.append(_duplicate_definition(doc, ref))
    for fn in md.footnotes:
        if fn.used:
            continue
        raw = doc.text[fn.start : fn.end]
        text = re.sub(r"^\s*\[\^[^\]]*\]:\s*", "", raw)
        v = classify(text)
        sev = _graded(v, _SEV.get(v.level))
        if sev is None:
            continue
        lead = "tells the model" if v.level == "instruction" else "carries"
        msg = f"Footnote [^{fn.label}] is never referenced, so it is not rendered; it {lead}: “{_preview(text)}”"
        phrase, ntok = _token_phrase(text)
        out.append(
            Finding(
                "HID022",
                sev,
                fn.start,
                fn.end,
                msg,
                hidden_text=text.strip(),
                tokens=ntok,
                fixes=(_remove_fix(doc, fn.start, fn.end, "Remove footnote"),),
                data={"verdict": v.level, "signals": list(v.signals), "footnote": fn.label},
            )
        )
    return out


_REFDEF_LABEL = re.compile(r"\[((?:[^\]\\]|\\.){0,999})\]:")


def _label_dest_text(doc, ref) -> str:
    """The words a definition's label and destination carry (``""`` when they look like an
    ordinary short label and URL): a label of four words or more, or a destination that reads
    as text once percent-decoded (spaces, four words or more)."""
    from urllib.parse import unquote

    m = _REFDEF_LABEL.match(doc.text, ref.start, ref.end)
    label = m.group(1) if m else ref.label
    dest = unquote(ref.href or "")
    parts = []
    if len(label.split()) >= 4:
        parts.append(label)
    if len(dest.split()) >= 4:
        parts.append(dest)
    return " ".join(parts)


def _duplicate_definition(doc, ref) -> Finding:
    """HID028: a second definition of a label already defined (CommonMark uses the first; this
    one renders to nothing and no link can reach it)."""
    from urllib.parse import unquote

    m = _REFDEF_LABEL.match(doc.text, ref.start, ref.end)
    label = m.group(1) if m else ref.label
    text = " ".join(x for x in (label, unquote(ref.href or ""), ref.title.strip()) if x)
    v = classify(text)
    if v.level == "instruction":
        sev = Severity.ERROR
    elif v.level == "prose" or len(ref.title.strip()) > 40:
        sev = Severity.WARNING
    else:
        sev = Severity.INFO
    return _carried_finding(
        "HID028",
        sev,
        ref.start,
        ref.end,
        f"Duplicate reference definition [{label}]: CommonMark uses the first definition, so this one "
        "renders to nothing and no link reaches it; it",
        text,
        v,
        fixes=(_remove_fix(doc, ref.start, ref.end, "Remove duplicate definition"),),
        data={"label": ref.label},
    )


# -- HID027: comments inside frontmatter -----------------------------------------------------------


FRONTMATTER_PROSE_WORDS = 25
"""Words of plain prose from which a frontmatter comment is reported (info); shorter notes
("# Standard tools for file reading") are common and only graded by the directive rules."""


def _frontmatter_comments(ctx) -> list[Finding]:
    """HID027 for each YAML ``#`` comment and HTML comment inside the frontmatter, by content:
    an instruction with a strong signal (override, concealment, role marker) → error, another
    instruction → warning (or the directive judgement's weight, :func:`_graded`), prose of
    :data:`FRONTMATTER_PROSE_WORDS` words or more → info; other comments are not reported (the
    directive rules still grade them as hidden text). A run of YAML comments on consecutive lines
    is one text to the model: when the run read as one sentence grades higher than each of its
    lines, one finding covers the run (first comment's start to last comment's end)."""
    doc, md = ctx.doc, ctx.markdown
    out: list[Finding] = []
    graded: list[tuple] = []  # (comment, what, text, verdict, severity or None)
    for c in md.frontmatter_comments:
        raw = doc.text[c.start : c.end]
        if c.kind == "frontmatter-html-comment":
            body = raw[4:-3] if raw.endswith("-->") else raw[4:]
            what = "HTML comment in the frontmatter"
        else:
            body = raw[1:]
            what = "YAML comment in the frontmatter"
        text = body.strip()
        if not text or is_pragma(text):
            graded.append((c, what, "", None, None))
            continue
        v = classify(text)
        graded.append((c, what, text, v, _frontmatter_severity(v, text)))
    runs: list[list[tuple]] = []
    for g in graded:
        c = g[0]
        prev = runs[-1][-1][0] if runs else None
        if (
            prev is not None
            and c.kind != "frontmatter-html-comment"
            and prev.kind != "frontmatter-html-comment"
            and doc.line_of(c.start) == doc.line_of(prev.start) + 1
        ):
            runs[-1].append(g)
        else:
            runs.append([g])
    for run in runs:
        texts = [g[2] for g in run if g[2]]
        if len(texts) >= 2:
            joined = " ".join(texts)
            jv = classify(joined)
            jsev = _frontmatter_severity(jv, joined)
            best = min((g[4] for g in run if g[4] is not None), default=None)
            if jsev is not None and (best is None or jsev < best):
                first, last = run[0][0], run[-1][0]
                out.append(
                    _carried_finding(
                        "HID027",
                        jsev,
                        first.start,
                        last.end,
                        f"YAML comments on lines {doc.line_of(first.start) + 1}–{doc.line_of(last.start) + 1} of the"
                        " frontmatter (no rendered view shows them; the model reads the raw file)",
                        joined,
                        jv,
                        fixes=(_remove_fix(doc, first.start, last.end, "Remove comments"),),
                        data={"kind": first.kind, "lines": len(run)},
                    )
                )
                continue
        for c, what, text, v, sev in run:
            if sev is None:
                continue
            out.append(
                _carried_finding(
                    "HID027",
                    sev,
                    c.start,
                    c.end,
                    f"{what} (no rendered view shows it; the model reads the raw file)",
                    text,
                    v,
                    fixes=(_remove_fix(doc, c.start, c.end, "Remove comment"),),
                    data={"kind": c.kind},
                )
            )
    return out


def _frontmatter_severity(v: Verdict, text: str) -> Severity | None:
    """HID027's severity for one comment text (see :func:`_frontmatter_comments`)."""
    if v.level == "instruction":
        return _graded(v, Severity.ERROR if v.strong else Severity.WARNING)
    if v.level == "prose" and len(text.split()) >= FRONTMATTER_PROSE_WORDS:
        return Severity.INFO
    return None


# -- HID023 / HID024: raw HTML ------------------------------------------------------------------


def hidden_reason(tag: str, attrs: dict[str, str | None]) -> str | None:
    """Why an element with ``attrs`` is hidden from the reader (``hidden`` attribute, CSS in its
    ``style`` judged by :mod:`unveil.core.css`, ``<font color>``), or ``None``. The document's
    ``<style>`` rules are taken into account by the markdown layer, not here."""
    from unveil.core import css
    from unveil.core.markdown import PAGE_BACKGROUND, element_hidden

    amap = {k.lower(): (v or "") for k, v in attrs.items()}
    kind, reason, _bg = element_hidden(tag, amap, css.StyleSheet([]), PAGE_BACKGROUND)
    return reason if kind in ("attribute", "css") else None


class _Text(HTMLParser):
    """Visible-ish text of an HTML/markdown fragment: data outside comments, tags dropped."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data):
        self.parts.append(data)


def html_text(fragment: str) -> str:
    """The text content of ``fragment`` (tags and comments dropped, entities decoded)."""
    p = _Text()
    try:
        p.feed(fragment)
        p.close()
    except Exception:  # noqa: BLE001
        return re.sub(r"<[^>]*>", " ", fragment)
    return "".join(p.parts)


def _mask_comments(content: str) -> str:
    """``content`` with comment text replaced by spaces (same length)."""
    return mask_comments(content)


def _html(ctx) -> list[Finding]:
    """HID023 for each hidden element and HID024 for each text attribute, from the markdown
    layer's single pass over the HTML (:func:`unveil.core.markdown._html_pass`): linear in the
    document (only outermost hidden elements are recorded, so no text is extracted twice)."""
    doc, md = ctx.doc, ctx.markdown
    out: list[Finding] = []
    for at in md.html_attrs:
        f = _attr_finding(at)
        if f:
            out.append(f)
    for h in md.hidden_elements:
        f = _container(doc, h)
        if f:
            out.append(f)
    for chunk in md.html:
        out += _pi_decl_cdata(doc, chunk)
    return out


def _container(doc, h) -> Finding | None:
    tag, start, open_end = h.tag, h.start, h.open_end
    region = doc.text[h.body_start : h.body_end]
    if h.kind == "details":
        body = html_text(region).strip()
        if not body:
            return None
        v = classify(body)
        if v.level == "instruction" and v.strong:
            sev = Severity.ERROR
        elif v.level == "instruction":
            sev = Severity.WARNING
        else:
            sev = Severity.INFO
        if v.weight and sev > Severity.WARNING:
            sev = Severity.WARNING  # one click shows a collapsed block: the directive judgement raises to warning
        phrase, ntok = _token_phrase(body)
        lead = "tells the model" if v.level == "instruction" else "holds"
        msg = f"Collapsed <details> ({phrase} hidden until expanded) {lead}: “{_preview(body)}”"
        if v.level == "instruction":
            msg += _signals(v)
        return Finding(
            "HID023",
            sev,
            start,
            open_end,
            msg,
            hidden_text=body,
            tokens=ntok,
            data={
                "verdict": v.level,
                "signals": list(v.signals),
                "reason": "details",
                "body": [h.body_start, h.body_end],
            },
        )
    text = region if tag in ("script", "style") else html_text(region)
    text = text.strip()
    if not text:
        return None
    v = classify(text, directives=tag not in ("script", "style"))
    if h.kind in ("nondisplay", "fallback"):
        sev = Severity.ERROR if v.level == "instruction" else Severity.WARNING
    else:
        sev = _SEV[v.level] if v.level in _SEV else Severity.INFO
    sev = _graded(v, sev) or sev
    end = min(len(doc.text), h.end)
    return _carried_finding(
        "HID023",
        sev,
        start,
        open_end,
        f"Hidden HTML <{tag}> ({h.reason})",
        text,
        v,
        "hides",
        fixes=(_remove_fix(doc, start, end, f"Remove hidden <{tag}> element"),),
        size_otherwise=True,
        data={"reason": h.reason, "end": end},
    )


def _carried_text_severity(value: str):
    """``(verdict, severity)`` for text carried only in an attribute or link/image metadata:
    error for a risky instruction, warning for another instruction, info for prose, ``None``
    (not reported) for short labels."""
    v = classify(value)
    if v.weight:
        return v, _graded(v, None)
    if _risky(v):
        return v, Severity.ERROR
    if v.level == "instruction":
        return v, Severity.WARNING
    if _prose_value(value):
        return v, Severity.INFO
    return v, None


def _prose_value(value: str) -> bool:
    words = value.split()
    return len(words) >= 6 or (len(value) >= 40 and len(words) >= 2)


def _attr_finding(at) -> Finding | None:
    v, sev = _carried_text_severity(at.value)
    if sev is None:
        return None
    return _carried_finding(
        "HID024",
        sev,
        at.start,
        at.end,
        f"HTML {at.name}= attribute on <{at.tag}>",
        at.value,
        v,
        "carries text the page does not show",
        data={"attribute": at.name},
    )


_PI = re.compile(r"<\?(.*?)(?:\?>|$)", re.S)
_CDATA = re.compile(r"<!\[CDATA\[(.*?)(?:\]\]>|$)", re.S)
_DECL = re.compile(r"<!([A-Za-z][^>]*)>?")


def _pi_decl_cdata(doc, chunk: HtmlChunk) -> list[Finding]:
    out = []
    masked = _mask_comments(chunk.content)
    for rx, what in ((_PI, "processing instruction <?…?>"), (_CDATA, "CDATA section"), (_DECL, "declaration <!…>")):
        for m in rx.finditer(masked):
            body = m.group(1).strip()
            if what.startswith("decl") and m.group(0).startswith("<![CDATA["):
                continue
            if not body:
                continue
            v = classify(body)
            sev = Severity.ERROR if v.level in ("instruction", "prose") else Severity.INFO
            a, b = chunk.offset_of(m.start()), chunk.offset_of(m.end())
            out.append(
                _carried_finding(
                    "HID023",
                    sev,
                    a,
                    b,
                    f"HTML {what} renders to nothing; it",
                    body,
                    v,
                    "hides",
                    fixes=(_remove_fix(doc, a, b, "Remove hidden markup"),),
                    data={"reason": what},
                )
            )
    return out


# -- HID024: markdown image alt / link titles -----------------------------------------------------


def _markdown_attrs(ctx) -> list[Finding]:
    out = []
    for lk in ctx.markdown.links:
        if lk.start < 0:
            continue
        items = []
        if lk.kind == "image" and lk.text.strip():
            items.append(("image alt text (shown only if the image fails to load)", lk.text.strip()))
        if lk.title.strip():
            items.append((f"{lk.kind} title (shown only as a tooltip)", lk.title.strip()))
        for what, value in items:
            v, sev = _carried_text_severity(value)
            if sev is None:
                continue
            out.append(_carried_finding("HID024", sev, lk.start, lk.end, f"Markdown {what}", value, v))
    return out


# -- HID025: fence info strings -------------------------------------------------------------------

_ATTRS_ONLY = re.compile(
    r"""\{[^{}]*\}|[\w:.@-]+\s*=\s*(?:"[^"]*"|'[^']*'|\S+)|[.#][\w-]+|\d+(?:[-,]\d+)*|\[[^\]]*\]"""
)


def _fence_info(ctx) -> list[Finding]:
    doc = ctx.doc
    out = []
    for fence in ctx.markdown.fences:
        span = fence.rest_span
        if span is None:
            continue
        rest = doc.text[span.start : span.end].strip()
        if not rest:
            continue
        v = classify(rest)
        leftover = _ATTRS_ONLY.sub(" ", rest).strip()
        short = len(rest.split()) <= 3 and len(rest) <= 40
        if v.level == "instruction" and (v.strong or "command" in v.signals or not short):
            sev = Severity.ERROR
        elif not leftover or short:
            continue
        elif v.level == "instruction":
            sev = Severity.ERROR
        else:
            sev = Severity.WARNING
        lang_only = Edit(span.start, span.end, "")
        start = span.start
        # also remove the whitespace between the language word and the hidden part
        while start > 0 and doc.text[start - 1] in " \t":
            start -= 1
        out.append(
            _carried_finding(
                "HID025",
                sev,
                span.start,
                span.end,
                f"Code-fence info string after “{fence.lang}” is not rendered; it",
                rest,
                v,
                "hides",
                fixes=(Fix("Keep only the language word", (Edit(start, lang_only.end, ""),), kind="remove-hidden"),),
                size_otherwise=True,
            )
        )
    return out


# -- HID026: entities producing invisible characters ----------------------------------------------

_INVISIBLE = regex.compile(
    r"[\p{DI}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cn}\p{Cs}\u2800\u3164\uFFFC\u115F\u1160]|[^\P{Cc}\t\n\r]"
)
_ENTITY = re.compile(r"&(?:#[xX][0-9a-fA-F]{1,8}|#[0-9]{1,9}|[A-Za-z][A-Za-z0-9]{1,31});")
_BIDI_STRONG = set(range(0x202A, 0x202F)) | set(range(0x2066, 0x206A))


def _cp_name(ch: str) -> str:
    cp = ord(ch)
    if 0xE0020 <= cp <= 0xE007E:
        return f"U+{cp:04X} TAG {chr(cp - 0xE0000)!r}"
    try:
        return f"U+{cp:04X} {unicodedata.name(ch)}"
    except ValueError:
        return f"U+{cp:04X}"


def _entities(ctx) -> list[Finding]:
    doc, md = ctx.doc, ctx.markdown
    hits = [(e.start, e.end, e.raw, e.decoded) for e in md.entities]
    for chunk in md.html:
        if not chunk.block:
            continue
        masked = _mask_comments(chunk.content)
        for m in _ENTITY.finditer(masked):
            dec = html.unescape(m.group(0))
            if dec != m.group(0):
                hits.append((chunk.offset_of(m.start()), chunk.offset_of(m.end()), m.group(0), dec))
    hits = [h for h in hits if h[3] and _INVISIBLE.search(h[3])]
    hits.sort()
    runs: list[list[tuple]] = []
    for h in hits:
        if runs and runs[-1][-1][1] == h[0]:
            runs[-1].append(h)
        else:
            runs.append([h])
    out = []
    for run in runs:
        start, end = run[0][0], run[-1][1]
        decoded = "".join(h[3] for h in run)
        cps = [ord(c) for c in decoded]
        tags = [c for c in cps if 0xE0000 <= c <= 0xE007F]
        if tags or len(run) >= 3 or any(c in _BIDI_STRONG for c in cps):
            sev = Severity.ERROR
        elif all(c == 0xAD for c in cps) and _between_letters(doc, start, end):
            sev = Severity.INFO
        else:
            sev = Severity.WARNING
        names = []
        for c in decoded:
            n = _cp_name(c)
            if n not in names:
                names.append(n)
        raw = "".join(h[2] for h in run)
        desc = ", ".join(names[:6]) + (", …" if len(names) > 6 else "")
        msg = f"HTML character reference{'s' if len(run) > 1 else ''} {_preview(raw, 60)} produce{'' if len(run) > 1 else 's'} invisible character{'s' if len(cps) > 1 else ''}: {desc}"
        if tags:
            ascii_ = "".join(chr(c - 0xE0000) for c in tags if 0xE0020 <= c <= 0xE007E)
            msg += f"; tag characters spell “{_preview(ascii_)}”"
        out.append(
            Finding(
                "HID026",
                sev,
                start,
                end,
                msg,
                hidden_text=decoded,
                fixes=(Fix("Remove invisible character references", (Edit(start, end, ""),), kind="remove-invisible"),),
                data={"codepoints": cps},
            )
        )
    return out


def _between_letters(doc, start: int, end: int) -> bool:
    before = doc.text[start - 1] if start > 0 else ""
    after = doc.text[end] if end < len(doc.text) else ""
    return before.isalpha() and after.isalpha()
