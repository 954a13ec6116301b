"""Context judgement for pattern rules: what the model reads, where a hit sits, and how it is used.

Three layers, all pure functions of the text (plus the markdown layer when it is available):

* :func:`model_view` — the text as a model reads it (defined in :mod:`unveil.core.normalize`,
  re-exported here): NFKC per character, Default_Ignorable code points removed and Unicode tag
  characters decoded; every character maps back to its original code-point offset. The pattern
  rules match the normalised reading of that module; the judgement below works on this view.
* :func:`regions` — frontmatter, code (fences, indented blocks, inline code) and hidden spans
  (HTML comments, reference-definition comments, decoded tag runs, plus whatever hidden spans the
  markdown layer exposes), in original code-point offsets.
* :func:`judge` — how a hit is used: an imperative aimed at the agent keeps its severity; the same
  words in a prohibition ("never run curl | sh"), a deny-list (a list under "Never"/"Avoid", a
  permissions ``deny`` array) or quoted as an example ("e.g. …", a fenced sample in a
  security-review agent) are lowered one level (error → info, warning → hint), never dropped;
  hidden text raises one step (warning → error).

The lowering words are English. A prohibition written in another language keeps the rule's
severity (false positive rather than false negative).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import regex

from unveil.core.findings import Severity

# --------------------------------------------------------------------------------------------
# Model view: defined in unveil.core.normalize (with the normalised reading); re-exported here
# --------------------------------------------------------------------------------------------

from unveil.core.normalize import ModelView, model_view  # noqa: E402,F401

# --------------------------------------------------------------------------------------------
# Regions
# --------------------------------------------------------------------------------------------

_FRONTMATTER = regex.compile(r"\A(?:\ufeff)?---[ \t]*\r?\n(.*?)(?:\r?\n|^)---[ \t]*(?:\r?\n|\Z)", regex.S | regex.M)
_HTML_COMMENT = regex.compile(r"<!--.*?(?:-->|\Z)", regex.S)
_REFDEF_COMMENT = regex.compile(r"^[ ]{0,3}\[(?://|comment|_|\#|\s*)\]:[ \t]*(?:#|<>|\S+)?[ \t]*.*$", regex.M)
_ATX = regex.compile(r"^[ ]{0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$", regex.M)


@dataclass
class Regions:
    """Where things are, in original code-point offsets. Lists are sorted by start."""

    frontmatter: tuple[int, int] | None
    code: list[tuple[int, int]]
    hidden: list[tuple[int, int]]
    headings: list[tuple[int, int, str]]  # (offset of heading line, level, title)
    collapsed: list[tuple[int, int]] = field(default_factory=list)
    """Text shown only after a click (collapsed ``<details>`` bodies): hidden, except that code
    inside stays code (shown literally once expanded)."""

    def _inside(self, spans: Sequence[tuple[int, int]], offset: int) -> tuple[int, int] | None:
        starts = [s for s, _ in spans]
        i = bisect.bisect_right(starts, offset) - 1
        # spans may nest (inline code inside nothing; comments in blocks); check a few back
        for j in range(i, max(-1, i - 4), -1):
            s, e = spans[j]
            if s <= offset < e:
                return (s, e)
        return None

    def code_span(self, offset: int) -> tuple[int, int] | None:
        return self._inside(self.code, offset)

    def hidden_span(self, offset: int) -> tuple[int, int] | None:
        return self._inside(self.hidden, offset)

    def region(self, offset: int) -> str:
        """``"hidden"``, ``"frontmatter"``, ``"code"`` or ``"prose"`` for an original offset
        (first that applies, in that order; a collapsed span counts as hidden outside code)."""
        if self._inside(self.hidden, offset):
            return "hidden"
        if self.frontmatter and self.frontmatter[0] <= offset < self.frontmatter[1]:
            return "frontmatter"
        if self._inside(self.code, offset):
            return "code"
        if self.collapsed and self._inside(self.collapsed, offset):
            return "hidden"
        return "prose"

    def heading_before(self, offset: int) -> tuple[int, int, str] | None:
        i = bisect.bisect_right([h[0] for h in self.headings], offset) - 1
        return self.headings[i] if i >= 0 else None


def _spans(obj: Iterable) -> list[tuple[int, int]]:
    out = []
    for s in obj or ():
        start = getattr(s, "start", None)
        end = getattr(s, "end", None)
        if start is None and isinstance(s, (tuple, list)) and len(s) >= 2:
            start, end = s[0], s[1]
        if isinstance(start, int) and isinstance(end, int) and end > start:
            out.append((start, end))
    return out


def _own_code_spans(text: str) -> list[tuple[int, int]]:
    """Code blocks and inline code from markdown-it-py (fallback while the markdown layer
    does not provide them)."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark")
    try:
        tokens = md.parse(text)
    except Exception:  # noqa: BLE001 - never fail on odd input
        return []
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            starts.append(i + 1)
    out: list[tuple[int, int]] = []

    def line_off(n: int) -> int:
        return starts[n] if n < len(starts) else len(text)

    for tok in tokens:
        if tok.type in ("fence", "code_block") and tok.map:
            out.append((line_off(tok.map[0]), line_off(tok.map[1])))
        elif tok.type == "inline" and tok.map and "`" in tok.content:
            base = line_off(tok.map[0])
            seg = text[base : line_off(tok.map[1])]
            for m in regex.finditer(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", seg, regex.S):
                out.append((base + m.start(), base + m.end()))
    return out


def regions(text: str, markdown=None, view: ModelView | None = None) -> Regions:
    """Compute :class:`Regions` for ``text``. Uses the markdown layer's ``frontmatter``,
    ``code``, ``headings`` and any hidden-span list it exposes (``hidden``, ``html_comments``,
    ``comments``, ``refdef_comments``, and ``hidden_spans``: frontmatter comments, link titles,
    alt text, reference definitions and duplicates, unused footnotes, hidden HTML elements, text
    attributes; ``details`` spans go to :attr:`Regions.collapsed`), and fills gaps with local
    detection. Hidden spans are merged into a sorted disjoint union (nested spans would
    otherwise hide an outer span from the lookup). Never raises."""
    fm = None
    md_fm = getattr(markdown, "frontmatter", None)
    if md_fm is not None:
        fm = (md_fm.start, md_fm.end)
    elif text.startswith("---") or text.startswith("\ufeff---"):
        m = _FRONTMATTER.match(text)
        if m:
            fm = (0, m.end())
    code = _spans(getattr(markdown, "code", None) or ())
    if markdown is None and ("`" in text or "~~~" in text or "\n    " in text or "\n\t" in text):
        code = _own_code_spans(text)  # no markdown layer given (direct calls): parse here
    code.sort()

    def in_code(o: int) -> bool:
        for s, e in code:
            if s <= o < e:
                return True
            if s > o:
                break
        return False

    hidden: list[tuple[int, int]] = []
    collapsed: list[tuple[int, int]] = []
    for name in ("hidden", "html_comments", "comments", "refdef_comments"):
        hidden.extend(_spans(getattr(markdown, name, None) or ()))
    # the markdown layer's hidden spans (YAML and HTML comments in frontmatter, link titles,
    # alt text, reference definitions, unused footnotes, hidden HTML, attributes); collapsed
    # <details> bodies are kept apart (code inside them stays code)
    for hs in getattr(markdown, "hidden_spans", None) or ():
        span = _spans((hs,))
        (collapsed if getattr(hs, "kind", "") == "details" else hidden).extend(span)
    # reference definitions render to nothing: unused ones (and comment-shaped lines inside
    # paragraphs, which other renderers hide) carry text only the model reads
    for r in getattr(markdown, "references", None) or ():
        if not getattr(r, "used", True) and getattr(r, "end", -1) > getattr(r, "start", -1) >= 0:
            hidden.append((r.start, r.end))
    hidden.extend(_spans(getattr(markdown, "paragraph_definitions", None) or ()))
    if "<!--" in text:
        for m in _HTML_COMMENT.finditer(text):
            if not in_code(m.start()):
                hidden.append((m.start(), m.end()))
    if "]:" in text:
        for m in _REFDEF_COMMENT.finditer(text):
            line = m.group(0)
            # only comment-style definitions: [//]: #, [comment]: <>, [_]: # … (not real links)
            if regex.match(r"[ ]{0,3}\[(?://|comment|_|\#)\]:", line) and not in_code(m.start()):
                hidden.append((m.start(), m.end()))
    if view is not None:
        hidden.extend(view.tag_runs)
    hidden = _union(hidden)
    collapsed = _union(collapsed)

    headings: list[tuple[int, int, str]] = []
    md_heads = getattr(markdown, "headings", None) or []
    if md_heads:
        starts = None
        for h in md_heads:
            if starts is None:
                starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
            off = starts[h.line] if h.line < len(starts) else len(text)
            headings.append((off, h.level, h.title))
    else:
        for m in _ATX.finditer(text):
            if not in_code(m.start()) and not (fm and fm[0] <= m.start() < fm[1]):
                headings.append((m.start(), len(m.group(1)), m.group(2)))
    return Regions(fm, code, hidden, headings, collapsed)


def _union(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted, disjoint union of ``spans`` (nested and overlapping spans merged), so a lookup
    by start offset never misses an outer span that began before inner ones."""
    out: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out


# --------------------------------------------------------------------------------------------
# Units (sentence / line around a hit)
# --------------------------------------------------------------------------------------------

_UNIT_BREAK = regex.compile(
    r"(?<!\b(?:e\.g|i\.e|etc|vs|cf|approx|incl|no))[.!?][\"')\]*_]*(?=\s)"
    r"|\n[ \t]*\n"
    r"|\n(?=[ \t]*(?:[-*+][ \t]|\d{1,3}[.)][ \t]|\#|>|\||```|~~~|<!--|-->))"
    r"|(?<=\",|[{\[]|[}\]],?)[ \t]*\n"  # structured data (JSON, YAML flow): one value per line
    r"|<!--|-->",
    regex.I,
)
_WINDOW = 500


def unit_bounds(view_text: str, start: int, end: int, line_only: bool = False) -> tuple[int, int]:
    """View offsets of the sentence (or, with ``line_only``, the line) containing
    ``[start, end)``, at most about 500 characters either side."""
    lo = max(0, start - _WINDOW)
    hi = min(len(view_text), end + _WINDOW)
    if line_only:
        s = view_text.rfind("\n", lo, start)
        s = lo if s < 0 and lo > 0 else s + 1
        e = view_text.find("\n", end, hi)
        return s, (hi if e < 0 else e)
    s = lo
    for m in _UNIT_BREAK.finditer(view_text, lo, start):
        s = m.end()
    m = _UNIT_BREAK.search(view_text, end, hi)
    e = m.start() + (1 if m and m.group(0)[:1] in ".!?" else 0) if m else hi
    return s, e


# --------------------------------------------------------------------------------------------
# Judgement
# --------------------------------------------------------------------------------------------

_NEG = regex.compile(
    r"\b(?:never|do\s+not|don'?t|does\s+not|doesn'?t|must\s+not|mustn'?t|should\s+not|shouldn'?t"
    r"|may\s+not|cannot|can'?t|will\s+not|won'?t|avoid(?:s|ing)?|refrain\s+from|prohibit(?:s|ed)?"
    r"|forbid(?:s|den)?|disallow(?:s|ed)?|not\s+allowed|under\s+no\s+circumstances?|no\s+need\s+to"
    r"|warn(?:s|ing)?\s+(?:against|before|about)|block|reject|refuse\s+to|decline\s+to"
    r"|instead\s+of|rather\s+than"
    r"|don'?t\s+ever|nor)\b"
    r"|^\s*(?:[-*+]\s+)?(?:\*\*)?no\b"
    r"|❌|🚫|⛔|✗|✘",
    regex.I | regex.M,
)
# a negation that is not a prohibition of what follows
_NEG_NOT = regex.compile(
    r"(?:do\s+not|don'?t|never|no\s+need\s+to|without)\s+(?:worry|hesitate|forget|need\s+to\s+ask|ask|wait|stop|bother|"
    r"mention|tell|inform|notify|report|log|show|reveal|disclose|question|second-guess|confirm|prompt)"
    r"|\bnot\s+only\b|\bno\s+matter\b|\bno\s+longer\b|\bnever\s+mind\b",
    regex.I,
)
_CONTRAST = regex.compile(r"\b(?:but|instead|however|rather|then|otherwise|so|and\s+then|just)\b|;|\s[—–]\s", regex.I)
_POST_PROHIBITION = regex.compile(
    r"\A[^;]{0,80}?\b(?:is|are|was|were|be|considered|counts\s+as)\s+(?:strictly\s+|absolutely\s+|always\s+|very\s+)?"
    r"(?:forbidden|prohibited|not\s+allowed|disallowed|banned|blocked|dangerous|unsafe|insecure|risky|harmful|malicious"
    r"|a\s+(?:security\s+)?risk|never\s+(?:allowed|acceptable)|off-limits|denied|suspicious|red\s+flags?|an?\s+attack)\b"
    r"|\A[^;]{0,40}?[\"'`)]?\s*(?:->|→|=>|:)\s*(?:❌|🚫|⛔|blocked|denied|forbidden|never)",
    regex.I,
)
_DENY_HEAD = regex.compile(
    r"\b(?:never|don'?ts?|do\s+not|must\s+not|forbidden|prohibited|avoid|disallowed|not\s+allowed|deny|denied|blocked"
    r"|danger(?:s|ous)|unsafe|anti-?patterns?|pitfalls?|what\s+not\s+to|bad\s+(?:practices?|examples?|patterns?)"
    r"|red\s+flags|warning\s+signs|off-limits|threats?|attacks?|vulnerabilit(?:y|ies)|malicious|suspicious"
    r"|detect(?:ion|s)?|indicators?|signatures?|patterns\s+to\s+(?:flag|detect|catch|block|avoid)|(?:common\s+)?mistakes"
    r"|hazards?|prohibitions?|restricted|restrictions)\b|❌|🚫|⛔|⚠",
    regex.I,
)
# a lead-in line that opens a deny-list ("Never do the following:", "Avoid:", "Red flags:")
_DENY_LEAD = regex.compile(
    r"^[\W_]*(?:never|don'?t|do\s+not|must\s+not|avoid|forbidden|prohibited|not\s+allowed|disallowed|blocked|denied"
    r"|deny|dangerous|unsafe|red\s+flags|anti-?patterns?|watch\s+(?:out\s+)?for|look\s+(?:out\s+)?for|flag|detect|block|reject"
    r"|refuse|warning\s+signs|examples?\s+of\s+(?:malicious|attacks?|injections?|dangerous|suspicious|unsafe|bad)"
    r"|(?:malicious|suspicious|dangerous|forbidden|blocked|unsafe)\s+\w+"
    r"|(?:things|commands|actions|patterns|phrases|operations)\s+(?:to\s+avoid|(?:you\s+)?(?:must|should)\s+(?:never|not)))"
    r"|❌|🚫|⛔",
    regex.I,
)
_DENY_KEY = regex.compile(
    r"[\"']?\b(?:deny|denied|denylist|deny_list|blocklist|block_list|blocked(?:_?commands)?|disallowed(?:[_-]?tools)?"
    r"|disallowedTools|forbidden(?:_?commands)?|dangerous(?:_?commands|_?patterns)?|blacklist|exclude[sd]?)\b[\"']?\s*[:=]\s*(\[?)",
    regex.I,
)
_EXAMPLE = regex.compile(
    r"\be\.g\.|\bi\.e\.|\bfor\s+(?:example|instance)\b|\bsuch\s+as\b|\blike\s*:|(?<![\w.@/-])(?:examples?|samples?)\b(?![.-]\w)"
    r"|\bdetect(?:s|ed|ing|ion|or)?\b|\bflag(?:s|ged|ging)?\b|\blook(?:s|ing)?\s+(?:out\s+)?for\b|\bwatch(?:es|ing)?\s+(?:out\s+)?for\b"
    r"|\bscan(?:s|ning)?\s+for\b|\bsigns?\s+of\b|\bindicators?\b|\bphrases?\b|\bpatterns?\b|\bstrings?\s+like\b"
    r"|\battempts?\b|\bcatch(?:es|ing)?\b|\bred\s+flags?\b|\bsuspicious\b|\bmalicious\b|\battack(?:s|er|ers)?\b"
    r"|\binjection\b|\bjailbreaks?\b|\bpayloads?\b|\bvulnerab|\bexploit|\bthreats?\b|\bsmuggl|\bquot(?:e|ed|ing)\b",
    regex.I,
)
_SECURITY_DOC = regex.compile(
    r"secur|review|audit|scan|detect|injection|vulnerab|threat|malicious|attack|pentest|penetration|red[- ]?team|forensic"
    r"|incident|harden|guard|safety|lint|compliance|owasp|cve|exploit|offensive|defensive|ctf|malware|prompt-?engineer",
    regex.I,
)
_LIST_ITEM = regex.compile(r"[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t]+|[ \t]*\|")


@dataclass(frozen=True)
class ContextOptions:
    """A rule's ``[rule.context]`` table. Each of ``prohibition``, ``quoted``, ``denylist`` and
    ``code`` is ``"lower"`` or ``"keep"``; ``hidden`` is ``"raise"`` or ``"keep"``;
    ``raise_if``/``lower_if`` are regexes tried on the hit's sentence (view text)."""

    prohibition: str = "lower"
    quoted: str = "lower"
    denylist: str = "lower"
    code: str = "keep"
    hidden: str = "raise"
    raise_if: tuple = ()
    lower_if: tuple = ()


def lower(sev: Severity) -> Severity:
    """One level down for context: error → info, warning → hint, info → hint."""
    return {Severity.ERROR: Severity.INFO, Severity.WARNING: Severity.HINT}.get(sev, Severity.HINT)


def raise_(sev: Severity) -> Severity:
    """One step up: hint → info → warning → error (error stays)."""
    return Severity(max(1, int(sev) - 1))


@dataclass
class DocContext:
    """Per-document data the judgement needs (computed once per analysis)."""

    view: ModelView
    regions: Regions
    security_doc: bool
    original: str


def doc_context(text: str, markdown=None) -> DocContext:
    """Model view, regions and whether the file is itself about security review (its
    frontmatter ``name``/``description`` or first heading mentions security, review, audit,
    injection …), which lowers attack strings quoted in its code blocks."""
    view = model_view(text)
    regs = regions(text, markdown, view)
    head = ""
    if regs.frontmatter:
        fm = text[regs.frontmatter[0] : regs.frontmatter[1]]
        head += " ".join(regex.findall(r"(?m)^(?:name|description|title)\s*:\s*(.*)$", fm))
    if regs.headings:
        head += " " + regs.headings[0][2]
    return DocContext(view, regs, bool(_SECURITY_DOC.search(head)), text)


@dataclass
class Judgement:
    severity: Severity
    region: str
    reasons: list[str]


def _is_prohibition(pre: str, post: str) -> bool:
    last = None
    for m in _NEG.finditer(pre):
        last = m
    if last is not None:
        between = pre[last.end() :]
        if not _CONTRAST.search(between) and not _NEG_NOT.match(pre, last.start()):
            return True
    return bool(_POST_PROHIBITION.search(post))


def _in_denylist(vt: str, vstart: int, regs: Regions, view: ModelView, code_or_fm: bool) -> bool:
    ls = vt.rfind("\n", 0, vstart) + 1
    # permissions deny arrays (JSON / YAML / TOML), in code or frontmatter
    if code_or_fm:
        window = vt[max(0, vstart - 800) : vstart]
        last = None
        for m in _DENY_KEY.finditer(window):
            last = m
        if last is not None:
            between = window[last.end() :]
            if last.group(1) == "[":
                if "]" not in between:
                    return True
            else:
                lines = between.split("\n")
                if all(_LIST_ITEM.match(x) or not x.strip() for x in lines[1:]):
                    return True
        # an allow array closer than a deny array means it is allowed: fall through
    if not _LIST_ITEM.match(vt, ls):
        return False
    # walk up the list to its lead-in line (first non-item, non-blank, non-continuation line)
    pos = ls
    for _ in range(80):
        if pos == 0:
            break
        prev_start = vt.rfind("\n", 0, pos - 1) + 1
        line = vt[prev_start : pos - 1]
        pos = prev_start
        if not line.strip():
            continue
        if _LIST_ITEM.match(line) or line.startswith((" ", "\t")):
            # nested items carry their own lead-in: "- Never:" then sub-items
            stripped = _LIST_ITEM.sub("", line, count=1)
            if not line.startswith((" ", "\t")) and stripped.rstrip().endswith(":") and _DENY_LEAD.search(stripped):
                return True
            continue
        if line.rstrip().endswith(":") and (_DENY_LEAD.search(line) or (len(line) <= 60 and _DENY_HEAD.search(line))):
            return True
        break
    head = regs.heading_before(view.orig_start(vstart))
    return bool(head and _DENY_HEAD.search(head[2]))


def _quoted(vt: str, us: int, vstart: int, vend: int) -> bool:
    """Whether the hit sits inside quotes or inline code in its sentence."""
    pre = vt[us:vstart]
    for q_open, q_close in (('"', '"'), ("“", "”"), ("`", "`"), ("'", "'"), ("«", "»"), ("‘", "’")):
        if q_open == q_close:
            if q_open == "'":
                n = len(regex.findall(r"(?<![A-Za-z])'", pre))
            else:
                n = pre.count(q_open)
            if n % 2 == 1:
                return True
        elif pre.count(q_open) > pre.count(q_close):
            return True
    return False


def judge(dc: DocContext, opts: ContextOptions, base: Severity, vstart: int, vend: int,
          compiled_raise: Sequence = (), compiled_lower: Sequence = (), timeout: float = 0.25) -> Judgement:
    """Severity of a hit at view offsets ``[vstart, vend)`` given its context. ``reasons``
    names what changed it (for the message): ``"prohibition"``, ``"deny-list"``,
    ``"quoted example"``, ``"code"``, ``"hidden"``, ``"context"``."""
    vt = dc.view.text
    ostart = dc.view.orig_start(vstart)
    region = dc.regions.region(ostart)
    code_span = dc.regions.code_span(ostart)
    in_code = code_span is not None
    line_only = region in ("frontmatter",) or (in_code and code_span is not None and "\n" in dc.original[code_span[0]:code_span[1]])
    us, ue = unit_bounds(vt, vstart, vend, line_only=line_only)
    pre, post = vt[us:vstart], vt[vend:ue]
    reasons: list[str] = []
    lowered = False
    if opts.prohibition == "lower" and _is_prohibition(pre, post):
        lowered = True
        reasons.append("prohibition")
    if not lowered and opts.denylist == "lower" and _in_denylist(vt, vstart, dc.regions, dc.view, in_code or region == "frontmatter"):
        lowered = True
        reasons.append("deny-list")
    if not lowered and opts.quoted == "lower":
        if in_code and code_span is not None and "\n" in dc.original[code_span[0]:code_span[1]]:
            # a code block: lowered in a security-review file or after an example lead-in
            lead_end = dc.view.view_offset(code_span[0])
            lead = vt[max(0, lead_end - 300) : lead_end]
            if dc.security_doc or _EXAMPLE.search(lead):
                lowered = True
                reasons.append("quoted example")
        elif _quoted(vt, us, vstart, vend) or (in_code and code_span is not None):
            if _EXAMPLE.search(vt[us:ue]) or dc.security_doc:
                lowered = True
                reasons.append("quoted example")
        elif _EXAMPLE.search(pre) and regex.search(r"(?:e\.g\.|for\s+(?:example|instance)|such\s+as|like)\s*[:,]?\s*\S{0,3}\Z", pre, regex.I):
            lowered = True
            reasons.append("quoted example")
    if not lowered and opts.code == "lower" and in_code:
        lowered = True
        reasons.append("code")
    unit = vt[us:ue]
    if not lowered:
        for p in compiled_lower:
            try:
                if p.search(unit, timeout=timeout):
                    lowered = True
                    reasons.append("context")
                    break
            except TimeoutError:
                break
    sev = lower(base) if lowered else base
    if opts.hidden == "raise" and region == "hidden":
        sev = raise_(sev)
        reasons.append("hidden")
    for p in compiled_raise:
        try:
            if p.search(unit, timeout=timeout):
                sev = raise_(sev)
                reasons.append("raised by context")
                break
        except TimeoutError:
            break
    return Judgement(sev, region, reasons)
