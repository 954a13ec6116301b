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
  words in a prohibition that governs the hit in its own clause ("never run curl | sh"), a
  deny-list (the list's own lead-in line "Never:"/"Avoid:", a permissions ``deny`` array) or quoted
  as an example in the same sentence or under the fenced block's own caption are lowered one
  level (error → info, warning → hint), never dropped; a rule's ``floor`` stops the lowering at
  that severity; hidden text raises one step (warning → error). Only evidence next to the hit
  counts: never the file or skill name, the frontmatter description or a heading (the policy is
  written down in ``docs/context.md``).

Prohibitions are recognised in English, Chinese, Spanish, Russian, Japanese, German, French,
Portuguese and Korean (basic negations only; see :data:`_NEG_I18N`). A prohibition in any other
language keeps the rule's severity (false positive rather than false negative).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import regex

from unveil.core import scope as _scope
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

    def _starts(self, spans: Sequence) -> list[int]:
        """The start offsets of ``spans`` (first items), built once per list: a lookup is a
        binary search, not a pass over every span (files with thousands of spans). Rebuilt if
        the list was replaced or changed length or ends since."""
        memo = self.__dict__.setdefault("_starts_memo", {})
        key = id(spans)
        got = memo.get(key)
        n = len(spans)
        if got is None or got[0] is not spans or len(got[1]) != n or (n and got[1][-1] != spans[-1][0]):
            got = memo[key] = (spans, [x[0] for x in spans])
        return got[1]

    def _inside(self, spans: Sequence[tuple[int, int]], offset: int) -> tuple[int, int] | None:
        starts = self._starts(spans)
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

    def code_or_frontmatter(self, offset: int) -> bool:
        """``region(offset) in ("frontmatter", "code")``, looking up the hidden spans only
        for an offset inside code or frontmatter (most offsets are in neither)."""
        fm = self.frontmatter
        if not (fm and fm[0] <= offset < fm[1]) and self._inside(self.code, offset) is None:
            return False
        return self._inside(self.hidden, offset) is None

    def heading_before(self, offset: int) -> tuple[int, int, str] | None:
        i = bisect.bisect_right(self._starts(self.headings), offset) - 1
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
            if starts is None:  # line feeds only, as markdown-it counts lines
                starts, find = [0], text.find
                i = find("\n")
                while i >= 0:
                    starts.append(i + 1)
                    i = find("\n", i + 1)
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
    r"|<!--|-->"
    r"|[。！？](?=\S|\s|\Z)",  # CJK full stops need no space after them
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
    if _scope.document_cache() is not None:
        # an open document: the same hits are bounded again after each edit; the searches read
        # nothing before lo - 9 (the longest lookbehind, "approx", and its \b) nor past hi
        base = max(0, lo - _UNIT_MARGIN)
        key = (view_text[base:hi], lo - base, start - base, end - base)
        memo = _scope.memo("unit bounds")
        got = memo.get(key) if memo is not None else None
        if got is None:
            got = _sentence_bounds(view_text, lo, hi, start, end)
            got = (got[0] - base, got[1] - base)
            if memo is not None:
                _scope.keep(memo, key, got, _UNIT_MEMO_MAX)
        return base + got[0], base + got[1]
    return _sentence_bounds(view_text, lo, hi, start, end)


_UNIT_MARGIN = 16
"""Code points before ``lo`` in a :func:`unit_bounds` memo key (more than :data:`_UNIT_BREAK`'s
lookbehinds read)."""


def unit_reads(length: int, start: int, end: int) -> tuple[int, int]:
    """``[a, b)``, code-point offsets: the stretch of a text of ``length`` code points that
    :func:`unit_bounds` of ``[start, end)`` reads in either mode (its window, and before it the
    reach of :data:`_UNIT_BREAK`'s lookbehinds). Two texts equal on it give the same bounds."""
    return max(0, start - _WINDOW - _UNIT_MARGIN), min(length, end + _WINDOW)


_UNIT_MEMO_MAX = 1_000
"""Most sentence bounds an open document keeps (each key holds about 1,000 code points)."""


def _sentence_bounds(view_text: str, lo: int, hi: int, start: int, end: int) -> tuple[int, int]:
    """:func:`unit_bounds` of a sentence, searched in ``[lo, hi)``."""
    s = lo
    for m in _UNIT_BREAK.finditer(view_text, lo, start):
        s = m.end()
    m = _UNIT_BREAK.search(view_text, end, hi)
    e = m.start() + (1 if m and m.group(0)[:1] in ".!?。！？" else 0) if m else hi
    return s, e


# --------------------------------------------------------------------------------------------
# Judgement
# --------------------------------------------------------------------------------------------
#
# Policy (docs/context.md): a finding is lowered only on evidence the reader sees next to the
# hit — its own clause (a negation that governs it, "… is forbidden" after it), its own sentence
# (a quote around it plus an example/detection word), the fenced block's own caption (the line
# just before the fence, or the info string), or the list's own lead-in line / the permissions
# array it sits in. Nothing the file says about itself elsewhere (name, description, headings,
# other sentences of the paragraph) counts.

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
#: Basic negations that precede the verb in the other languages of the multilingual rules
#: (rules/*-i18n.toml). Japanese and Korean negate after the verb: see :data:`_POST_NEG_I18N`
#: (and their rules match affirmative imperative endings only).
_NEG_I18N = regex.compile(
    # Chinese (no word boundaries in Han script)
    r"(?:不要|不得|不可以?|不能|不准|不许|不許|别|別|请勿|請勿|切勿|勿|禁止|严禁|嚴禁|决不|決不|绝不|絕不|从不|從不|永远不要|永遠不要)"
    # Spanish, Portuguese, French, German, Russian
    r"|\b(?:no|nunca|jamás|jamas|tampoco|ni|evit[ae]r?|evite|prohibido|não|nao|nem|jamais|proibido"
    r"|ne|n['’]|aucun(?:e)?|interdit|évite[rz]?"
    r"|nicht|nie|niemals|kein(?:e|en|em|er)?|keinesfalls|verboten|vermeide[n]?"
    r"|не|никогда|нельзя|запрещено|запрещается)(?=\W|\Z)"
    # Japanese / Korean adverbs that open a negated sentence
    r"|決して|絶対に|절대(?:로)?",
    regex.I | regex.M,
)
#: Negations that follow the hit: German/French sentence-final "nicht"/"pas", Japanese
#: 「〜てはいけない」「〜ないで」, Korean 「〜지 마」「〜면 안 된다」.
_POST_NEG_I18N = regex.compile(
    r"\A[^\n.;,，。；]{0,40}?(?<!\w)(?:nicht|niemals|nie|pas|jamais|point)(?!\w)"
    r"|\A\s*(?:は|も)?(?:いけ|なら|だめ|ダメ|駄目)|\A\s*(?:ない|ません|ず|ぬ|るな)"
    r"|\A\s*(?:지\s*(?:마|말|않)|(?:서는|선|면)\s*안\s*(?:됩|돼|된|되))",
    regex.I,
)
# a negation that is not a prohibition of what follows
_NEG_NOT = regex.compile(
    r"(?:do\s+not|don'?t|never|no\s+need\s+to|without)\s+(?:worry|hesitate|forget|need\s+to\s+ask|ask|wait|stop|bother|"
    r"mention|tell|inform|notify|report|log|show|reveal|disclose|question|second-guess|confirm|prompt)"
    r"|\bnot\s+only\b|\bno\s+matter\b|\bno\s+longer\b|\bnever\s+mind\b"
    r"|不要犹豫|不要猶豫|不用担心|别担心|別擔心|不要忘记|不要忘記|别忘|別忘|不仅|不僅"
    r"|no\s+(?:dudes|te\s+preocupes|olvides|importa|solo)|não\s+(?:hesite|se\s+preocupe|esqueça|só)"
    r"|n['’]h[ée]sitez?\s+pas|ne\s+t['’]inqui[èe]te\s+pas|n['’]oubliez?\s+pas|non\s+seulement"
    r"|nicht\s+nur|zögere\s+nicht|vergiss\s+nicht|не\s+(?:стесняйся|бойся|забудь|только|волнуйся)",
    regex.I,
)
#: Words that end a negation's clause: a new sentence or clause, a contrast, "then"/"just".
_CONTRAST = regex.compile(
    r"\b(?:but|instead|however|rather|then|otherwise|so|and\s+then|just|now|also|after\s+that|afterwards)\b"
    r"|;|[.!?](?=\s)|:\s|\s[—–]\s|\s--\s|[。！？；：]"
    r"|\b(?:pero|sino|mas|mais|aber|sondern|но|а\s+затем|затем|потом|然后|然後|但是|而是|しかし|그러나|하지만)\b",
    regex.I,
)
#: Verbs (and words) that open a new imperative clause after a comma or at a line start.
_ACTION = (
    r"(?:run|execute|exec|send|upload|post|read|cat|fetch|download|install|ignore|disregard|forget|reveal|print"
    r"|output|show|tell|say|delete|remove|write|copy|pipe|eval|open|visit|go|use|call|invoke|add|set|put|append"
    r"|include|keep|hide|make|do|follow|treat|act|pretend|respond|reply|answer|always|simply|please|immediately"
    r"|first|finally|next|curl|wget|bash|sh|sudo|source|export|paste|share|email|transmit|leak|dump|grant"
    r"|approve|enable|disable|bypass|override|skip|you\s+(?:must|should|will|may|can|are)|we\s+(?:must|will))\b"
)
_COMMA_ACTION = regex.compile(r"[,，]\s*(?:and\s+|or\s+)?(?=" + _ACTION + r")", regex.I)
_LINE_ACTION = regex.compile(r"\n[ \t>*_#+\-\d.)]*(?=" + _ACTION + r"|`)", regex.I)
_HIT_STARTS_LINE = regex.compile(r"\n[ \t>*_#+\-\d.)\[(\"'`“]*\Z")
"""The hit begins its own line: a negation on an earlier line does not govern it."""
_FILLER = regex.compile(
    r"\A[\s,]*(?:(?:under\s+any\s+circumstances?|ever|at\s+all|for\s+any\s+reason|whatsoever|in\s+any\s+case"
    r"|please|again|even|once|really|simply|automatically|blindly|directly)[\s,]*)*\Z",
    regex.I,
)
_SCOPE_CHARS = 160
"""A negation governs a hit at most this many code points after it (one clause)."""
_POST_CUT = regex.compile(
    r"[;.!?](?=\s)|[。！？；]|\n|\b(?:but|however|instead|otherwise|so|and\s+then)\b|[,，]\s*(?:and\s+)?(?="
    + _ACTION
    + ")",
    regex.I,
)
_POST_PROHIBITION = regex.compile(
    r"\A.{0,80}?\b(?:is|are|was|were|be|considered|counts\s+as)\s+(?:strictly\s+|absolutely\s+|always\s+|very\s+)?"
    r"(?:forbidden|prohibited|not\s+allowed|disallowed|banned|blocked|dangerous|unsafe|insecure|risky|harmful|malicious"
    r"|a\s+(?:security\s+)?risk|never\s+(?:allowed|acceptable)|off-limits|denied|suspicious|red\s+flags?|an?\s+attack)\b"
    r"|\A.{0,40}?[\"'`)]?\s*(?:->|→|=>|:)\s*(?:❌|🚫|⛔|blocked|denied|forbidden|never)",
    regex.I | regex.S,
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
    r"\be\.g[.:]|\bi\.e\.|\bfor\s+(?:example|instance)\b|\bsuch\s+as\b|\blike\s*:|(?<![\w.@/-])(?:examples?|samples?)\b(?![.-]\w)"
    r"|\bdetect(?:s|ed|ing|ion|or)?\b|\bflag(?:s|ged|ging)?\b|\blook(?:s|ing)?\s+(?:out\s+)?for\b|\bwatch(?:es|ing)?\s+(?:out\s+)?for\b"
    r"|\bscan(?:s|ning)?\s+for\b|\bsigns?\s+of\b|\bindicators?\b|\bphrases?\b|\bpatterns?\b|\bstrings?\s+like\b"
    r"|\battempts?\b|\bcatch(?:es|ing)?\b|\bred\s+flags?\b|\bsuspicious\b|\bmalicious\b|\battack(?:s|er|ers)?\b"
    r"|\binjection\b|\bjailbreaks?\b|\bpayloads?\b|\bvulnerab|\bexploit|\bthreats?\b|\bsmuggl|\bquot(?:e|ed|ing)\b",
    regex.I,
)
#: An example marker right before the hit ("e.g. ignore …", "such as `curl … | sh`"); "for
#: example"/"for instance" count only when a quote or code span opens right after them.
_EXAMPLE_BEFORE = regex.compile(
    r"(?:\be\.g\.|\bsuch\s+as|\blike)\s*[:,]?\s*\S{0,3}\Z|\bfor\s+(?:example|instance)\s*[:,]?\s*[\"'“‘`«]\Z",
    regex.I,
)
_LIST_ITEM = regex.compile(r"[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t]+|[ \t]*\|")
_QUOTES = (
    ('"', '"'),
    ("“", "”"),
    ("`", "`"),
    ("'", "'"),
    ("«", "»"),
    ("‘", "’"),
    ("「", "」"),
    ("『", "』"),
    ("„", "“"),
)
_QUOTE_MAX = 300
"""A quoted example is at most this many code points long (a quote opened earlier in a long
sentence and never closed does not make the rest of it an example)."""

#: Default ``floor`` per category: sending data out and hiding an action from the user never go
#: below warning in context (issue 8 §5). Download-and-run rules declare ``floor = "warning"`` in
#: their own table (supply-chain has rules that are not about running code).
FLOOR_DEFAULTS = {"data-exfiltration": "warning", "concealment": "warning"}


@dataclass(frozen=True)
class ContextOptions:
    """A rule's ``[rule.context]`` table. Each of ``prohibition``, ``quoted``, ``denylist`` and
    ``code`` is ``"lower"`` or ``"keep"``; ``hidden`` is ``"raise"`` or ``"keep"``;
    ``raise_if``/``lower_if`` are regexes tried on the hit's sentence (view text). ``floor`` (the
    rule's top-level ``floor`` key, or :data:`FLOOR_DEFAULTS` by category): the lowest severity
    context may lower the finding to (``None``: no floor); a rule whose own severity is already
    below the floor keeps its severity."""

    prohibition: str = "lower"
    quoted: str = "lower"
    denylist: str = "lower"
    code: str = "keep"
    hidden: str = "raise"
    raise_if: tuple = ()
    lower_if: tuple = ()
    floor: Severity | None = None


def lower(sev: Severity) -> Severity:
    """One level down for context: error → info, warning → hint, info → hint."""
    return {Severity.ERROR: Severity.INFO, Severity.WARNING: Severity.HINT}.get(sev, Severity.HINT)


def raise_(sev: Severity) -> Severity:
    """One step up: hint → info → warning → error (error stays)."""
    return Severity(max(1, int(sev) - 1))


@dataclass
class DocContext:
    """Per-document data the judgement needs (computed once per analysis). Nothing here
    describes the file as a whole: judgement uses only evidence next to each hit."""

    view: ModelView
    regions: Regions
    original: str


def doc_context(text: str, markdown=None) -> DocContext:
    """Model view and regions of ``text``."""
    view = model_view(text)
    return DocContext(view, regions(text, markdown, view), text)


@dataclass
class Judgement:
    severity: Severity
    region: str
    reasons: list[str]


def _last_negation(pre: str):
    """The last negation in ``pre`` (English or another language): ``(match, english)``."""
    last, english = None, True
    for m in _NEG.finditer(pre):
        if not _in_compound(pre, m.start(), m.end()):
            last = m
    for m in _NEG_I18N.finditer(pre, last.end() if last is not None else 0):
        if not _in_compound(pre, m.start(), m.end()):
            last, english = m, False
    return last, english


def _in_compound(text: str, s: int, e: int) -> bool:
    """Whether ``text[s:e]`` is part of a hyphenated word or option (``--no-verify``,
    ``no-cache``, ``non-blocking``): a name, not a negation."""
    return (s > 0 and text[s - 1] in "-_") or (e < len(text) and text[e] in "-_")


def _governs(pre: str) -> bool:
    """Whether the last negation of ``pre`` (the sentence up to the hit) governs the hit: in the
    same clause, at most :data:`_SCOPE_CHARS` before it, with no contrast ("but", "just", "then",
    ";", ":", a dash), no new imperative clause (a comma or a line start followed by an action
    verb, after the negation already had its verb) and, for "instead of"/"rather than"/
    "without" and the other languages, no comma in between."""
    last, english = _last_negation(pre)
    if last is None or _NEG_NOT.match(pre, last.start()):
        return False
    between = pre[last.end() :]
    if len(between) > _SCOPE_CHARS or _CONTRAST.search(between):
        return False
    word = last.group(0).lower()
    if not english or word.startswith(("instead", "rather", "without")) or regex.sub(r"[\s*+\-]", "", word) == "no":
        if regex.search(r"[,，、]", between):
            return False
    else:
        for m in _COMMA_ACTION.finditer(between):
            head, rest = between[: m.start()], between[m.end() :]
            # "never, under any circumstances, run …": the negation still waits for its verb;
            # "never read, print or upload …": an enumeration of verbs under one negation
            if not _FILLER.match(head) and not regex.search(r"\b(?:or|nor)\b", rest, regex.I):
                return False
    if _LINE_ACTION.search(between) or (("\n" in between) and _HIT_STARTS_LINE.search(between)):
        return False
    return True


def _is_prohibition(pre: str, post: str) -> bool:
    """A negation governing the hit (:func:`_governs`), or a predicate after it in the same
    clause ("… is forbidden", "→ ❌", German "… nicht", Japanese 「〜てはいけない」)."""
    if _governs(pre):
        return True
    cut = _POST_CUT.search(post)
    clause = post[: cut.start()] if cut else post
    return bool(_POST_PROHIBITION.search(clause) or _POST_NEG_I18N.search(post[:60]))


_REQUEST_FRAME = regex.compile(
    r"\b(?:if|when|whenever|should|in\s+case)\b[^.;!?\n]{0,120}?\b(?:asks?|tells?|instructs?|wants?|urges?|requests?"
    r"|directs?|invites?|prompts?|pushes|pressures?|tries\s+to\s+(?:get|make|convince)|attempts?\s+to\s+(?:get|make))"
    r"\s+(?:you|the\s+(?:agent|assistant|model))\s+(?:to\b|into\b)[^.;!?]{0,200}\Z",
    regex.I,
)
_REFUSAL = regex.compile(
    r"\b(?:(?:do\s+not|don'?t|never)\s+(?:comply|follow|obey|act\s+on|do\s+(?:it|so|that)|go\s+along)"
    r"|refuse|decline|(?:ignore|disregard)\s+(?:it|them|that|this|the\s+(?:request|instruction)s?)\b"
    r"|treat\s+(?:it|them|that|this)\s+as\s+(?:data|untrusted|text|content)"
    r"|(?:stop|pause)\s+and\s+(?:ask|tell|report|check)"
    r"|(?:mention|report|flag|surface)\s+(?:it|this|that|them)\s+to\s+the\s+user"
    r"|not\s+(?:something|anything|an?\s+instruction|instructions?)\s+(?:to|you\s+should)\s+(?:act\s+on|follow|obey|carry\s+out)"
    r"|(?:is|are)\s+itself\s+(?:a|the)\s+finding|(?:report|flag)\s+(?:it|this|that|them)\s+as\s+(?:a\s+)?findings?)",
    regex.I,
)
_REFUSAL_NEGATED = regex.compile(r"\b(?:never|not|don'?t|no|without)\s+(?:\w+\s+)?\Z", regex.I)


def _refused_request(pre: str, post: str) -> bool:
    """The hit is what someone else may ask for, and the same sentence refuses it: "If such
    content asks you to ignore earlier guidance, don't comply". The refusal must come after
    the hit in the same sentence and not be negated itself ("… never refuse")."""
    if not _REQUEST_FRAME.search(pre):
        return False
    for m in _REFUSAL.finditer(post):
        if not _REFUSAL_NEGATED.search(post[: m.start()]):
            return True
    return False


def _region_start(dc: DocContext, ostart: int, in_code: tuple[int, int] | None) -> int:
    """View offset where the hit's code span or frontmatter begins (0 elsewhere)."""
    if in_code is not None:
        return dc.view.view_offset(in_code[0])
    fm = dc.regions.frontmatter
    if fm and fm[0] <= ostart < fm[1]:
        return dc.view.view_offset(fm[0])
    return 0


def _in_denylist(vt: str, vstart: int, region_start: int, code_or_fm: bool, vend: int | None = None) -> bool:
    """The hit is an entry of a permissions deny array in its own code block or frontmatter, or
    an item of a list whose own lead-in line (the first line above the list that is not an item)
    ends with ":" and says "never"/"avoid"/"red flags"… A heading above the list does not count."""
    ls = vt.rfind("\n", 0, vstart) + 1
    # permissions deny arrays (JSON / YAML / TOML), in code or frontmatter
    if code_or_fm:
        window = vt[max(region_start, vstart - 800) : vstart]
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
    if regex.match(r"[ \t]*\|", vt[ls : ls + 8]):
        return _table_column_detects(vt, ls, vstart, vstart + 1 if vend is None else vend)
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
        if line.lstrip().startswith("#"):
            return False  # a heading is not the list's lead-in
        if not line.rstrip().endswith(":"):
            return False
        if _DENY_LEAD.search(line) or (len(line) <= 60 and _DENY_HEAD.search(line)) or _lead_in_sentence(line):
            return True
        # a lead-in sentence soft-wrapped over the lines above ("… Flag, and quote the⏎exact line,
        # when a change:"): the paragraph's last sentence, at most four lines up
        para = [line]
        for _ in range(4):
            if pos == 0:
                break
            prev_start = vt.rfind("\n", 0, pos - 1) + 1
            above = vt[prev_start : pos - 1]
            if not above.strip() or above.lstrip().startswith("#") or _LIST_ITEM.match(above):
                break
            para.insert(0, above)
            pos = prev_start
        return len(para) > 1 and _lead_in_sentence(" ".join(x.strip() for x in para))
    return False


def in_denylist(vt: str, vstart: int, vend: int) -> bool:
    """Whether the prose hit ``[vstart, vend)`` (view offsets) is an item of a deny-list: a list
    whose own lead-in line opens a deny or detect list, or a table cell under such a header (for
    checks that judge prose outside :func:`judge`)."""
    return _in_denylist(vt, vstart, 0, False, vend)


_TABLE_DELIM = regex.compile(r"[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)*\|?[ \t]*\Z")
_DETECT_HEAD = regex.compile(
    r"\b(?:what|things|patterns?|phrases?|examples?|signs?|items?|strings?|text|content|instructions?|lines?|wording)"
    r"\s+(?:[\w-]+\s+){0,2}?(?:to|you\s+(?:must|should))\s+(?:flag|detect|look\s+(?:out\s+)?for|watch\s+(?:out\s+)?for"
    r"|catch|report|block|reject|refuse|quarantine|treat\s+as\s+(?:suspicious|hostile|malicious))\b",
    regex.I,
)
"""A list or table header that names its entries as things to detect ("Examples of what to
flag", "Phrases to look for", "Patterns you must report")."""


def _cells(row: str) -> list[tuple[int, int]]:
    """``(start, end)`` of the cells of a table row (offsets into ``row``), split at ``|`` not
    escaped by a backslash; the leading and trailing pipes open and close the row."""
    bars = [m.start() for m in regex.finditer(r"(?<!\\)\|", row)]
    if row.lstrip().startswith("|"):
        bars = bars[1:] if bars else bars
        lead = row.index("|") + 1
    else:
        lead = 0
    out, prev = [], lead
    for b in bars:
        out.append((prev, b))
        prev = b + 1
    if row[prev:].strip():
        out.append((prev, len(row)))
    return out


def _table_column_detects(vt: str, ls: int, vstart: int, vend: int) -> bool:
    """The hit ``[vstart, vend)`` is in a body cell of a table whose header cell of the same
    column (of one of the columns the hit spans) names its entries as things to detect, flag or
    avoid: the table's own caption, never a heading or the file name. ``ls``: view offset of the
    hit's row."""
    le = vt.find("\n", ls)
    row = vt[ls : le if le >= 0 else len(vt)]
    cols = [i for i, (a, b) in enumerate(_cells(row)) if a < vend - ls and vstart - ls < b + 1]
    if not cols:
        return False
    pos = ls
    for _ in range(200):
        if pos == 0:
            return False
        prev_start = vt.rfind("\n", 0, pos - 1) + 1
        line = vt[prev_start : pos - 1]
        pos = prev_start
        if _TABLE_DELIM.match(line):
            if pos == 0:
                return False
            hs = vt.rfind("\n", 0, pos - 1) + 1
            header = vt[hs : pos - 1]
            cells = _cells(header)
            for col in cols:
                if col < len(cells):
                    cell = header[cells[col][0] : cells[col][1]]
                    if _DETECT_HEAD.search(cell) or _DENY_HEAD.search(cell) or _DENY_LEAD.search(cell.strip()):
                        return True
            return False
        if not regex.match(r"[ \t]*\|", line):
            return False  # left the table before its delimiter row
    return False


_FRONTED = regex.compile(r"^[\W_]*[^\W\d_][^,:;.!?\n]{0,40},\s*")
"""A short fronted phrase ("In these files, ", "During review, ") before a lead-in verb."""


def _lead_in_sentence(line: str) -> bool:
    """The last sentence of a list's lead-in line opens a deny/detect list ("… steer agents. In
    these, flag:"): :data:`_DENY_LEAD` on that sentence, after a short fronted phrase if any."""
    last = regex.split(r"(?<=[.!?])\s+", line.strip())[-1]
    return bool(_DENY_LEAD.search(last) or _DENY_LEAD.search(_FRONTED.sub("", last, count=1)))


_CAPTION_EXAMPLE = regex.compile(
    r"\b(?:typical|common|known|classic|sample|phras(?:e|es|ing|ings)|wordings?|look(?:s)?\s+like|read(?:s)?\s+like"
    r"|such\s+as|for\s+(?:example|instance)|including|e\.g\.)\b",
    regex.I,
)
"""A list caption that introduces quoted examples ("Typical phrasings:", "Injection attempts look
like:")."""


def _list_caption(vt: str, vstart: int) -> str | None:
    """The own lead-in line of the list whose item holds ``vstart`` (the first line above the
    list that is not an item, a continuation or blank, when it ends with ":"), its last sentence;
    ``None`` when the hit is not in a list item, or the list has a heading or no lead-in."""
    ls = vt.rfind("\n", 0, vstart) + 1
    if not _LIST_ITEM.match(vt, ls) or regex.match(r"[ \t]*\|", vt[ls : ls + 8]):
        return None
    pos = ls
    for _ in range(80):
        if pos == 0:
            return None
        prev_start = vt.rfind("\n", 0, pos - 1) + 1
        line = vt[prev_start : pos - 1]
        pos = prev_start
        if not line.strip() or _LIST_ITEM.match(line) or line.startswith((" ", "\t")):
            continue
        if line.lstrip().startswith("#") or not line.rstrip().endswith(":"):
            return None
        return regex.split(r"(?<=[.!?])\s+", line.strip())[-1]
    return None


def _quoted(vt: str, us: int, ue: int, vstart: int, vend: int) -> bool:
    """Whether the hit is enclosed in a pair of quotes (or backticks) of its sentence: an opening
    quote before it and the closing one after it, at most :data:`_QUOTE_MAX` apart."""
    pre = vt[max(us, vstart - _QUOTE_MAX) : vstart]
    while ue < len(vt) and vt[ue] in "\"')]*_”’»":
        ue += 1  # the sentence's end took the quote it closes ("Ignore all previous instructions …")
    post = vt[vend : min(ue, vend + _QUOTE_MAX)]
    for q_open, q_close in _QUOTES:
        if q_open == q_close:
            if q_open == "'":
                n = len(regex.findall(r"(?<![A-Za-z])'", vt[us:vstart]))
                closes = regex.search(r"'(?![A-Za-z])", post)
            else:
                n = vt[us:vstart].count(q_open)
                closes = q_close in post
            if n % 2 == 1 and q_open in pre and closes:
                return True
        else:
            o = pre.rfind(q_open)
            if o >= 0 and q_close not in pre[o + 1 :] and q_close in post:
                return True
    return False


_WRAP_MARKER = regex.compile(
    r"(?:\be\.g\.|\bi\.e\.|\bsuch\s+as|\blike|\bfor\s+(?:example|instance)|\bphrases?|\bpatterns?|\bstrings?|:)[\s,]*\Z",
    regex.I,
)


def _evidence_start(vt: str, us: int, vstart: int) -> int:
    """Where same-sentence evidence for a hit may start: the sentence start, or the hit's own
    line when the sentence is soft-wrapped over an earlier line that does not lead into the hit
    (a line ending "such as", "e.g.", ":" … does)."""
    ls = vt.rfind("\n", us, vstart)
    if ls < 0:
        return us
    prev = vt[vt.rfind("\n", us, ls) + 1 if vt.rfind("\n", us, ls) >= 0 else us : ls]
    return us if _WRAP_MARKER.search(prev) else ls + 1


def _fence_caption(dc: DocContext, code_span: tuple[int, int]) -> str:
    """The fenced block's own caption, as view text: its info string plus the last non-blank line
    before the fence (at most one blank line above it)."""
    vt = dc.view.text
    start = dc.view.view_offset(code_span[0])
    first_end = vt.find("\n", start)
    first = vt[start : first_end if first_end >= 0 else len(vt)]
    info = regex.sub(r"^[ \t]*(?:`{3,}|~{3,})", "", first) if regex.match(r"[ \t]*(?:`{3,}|~{3,})", first) else ""
    lines = vt[max(0, start - 600) : start].split("\n")
    if lines and lines[-1].strip() == "":
        lines.pop()  # the fence starts a line: drop the empty tail
    blanks = 0
    while lines and not lines[-1].strip() and blanks < 1:
        lines.pop()
        blanks += 1
    caption = lines[-1] if lines and lines[-1].strip() else ""
    return info + "\n" + caption


def judge(
    dc: DocContext,
    opts: ContextOptions,
    base: Severity,
    vstart: int,
    vend: int,
    compiled_raise: Sequence = (),
    compiled_lower: Sequence = (),
    timeout: float = 0.25,
) -> Judgement:
    """Severity of a hit at view offsets ``[vstart, vend)`` given its context. ``reasons``
    names what changed it (for the message): ``"prohibition"``, ``"deny-list"``,
    ``"quoted example"``, ``"code"``, ``"context"``, ``"floor"``, ``"hidden"``,
    ``"raised by context"``."""
    vt = dc.view.text
    ostart = dc.view.orig_start(vstart)
    region = dc.regions.region(ostart)
    code_span = dc.regions.code_span(ostart)
    in_code = code_span is not None
    block = code_span is not None and "\n" in dc.original[code_span[0] : code_span[1]]
    line_only = region in ("frontmatter",) or block
    us, ue = unit_bounds(vt, vstart, vend, line_only=line_only)
    pre, post = vt[us:vstart], vt[vend:ue]
    reasons: list[str] = []
    lowered = False
    if opts.prohibition == "lower" and (_is_prohibition(pre, post) or _refused_request(pre, post)):
        lowered = True
        reasons.append("prohibition")
    if (
        not lowered
        and opts.denylist == "lower"
        and _in_denylist(vt, vstart, _region_start(dc, ostart, code_span), in_code or region == "frontmatter", vend)
    ):
        lowered = True
        reasons.append("deny-list")
    if not lowered and opts.quoted == "lower":
        if block and code_span is not None:
            # a code block: lowered when its own caption introduces an example / detection list
            caption = _fence_caption(dc, code_span)
            if (
                _EXAMPLE.search(caption)
                or _DENY_LEAD.search(caption.rsplit("\n", 1)[-1])
                or (_quoted(vt, us, ue, vstart, vend) and _EXAMPLE.search(vt[us:ue]))
            ):
                lowered = True
                reasons.append("quoted example")
        elif in_code or _quoted(vt, us, ue, vstart, vend):
            if _EXAMPLE.search(vt[_evidence_start(vt, us, vstart) : ue]):
                lowered = True
                reasons.append("quoted example")
            elif (cap := _list_caption(vt, vstart)) is not None and (
                _EXAMPLE.search(cap) or _CAPTION_EXAMPLE.search(cap)
            ):
                # a quoted list item under its own lead-in "Typical phrasings:" (the list's caption)
                lowered = True
                reasons.append("quoted example")
        elif _EXAMPLE_BEFORE.search(pre):
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
    # the floor comes last: context may not take the finding below it, whatever raised it since
    if lowered and opts.floor is not None and int(base) <= int(opts.floor) < int(sev):
        sev = opts.floor
        reasons.append("floor")
    return Judgement(sev, region, reasons)
