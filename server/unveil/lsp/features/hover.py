"""Hover: a finding's revealed hidden text, or the file's token cost on its summary line.

* On a finding's range: rule id and name, severity, the message, the hidden text in a fenced
  block, the hidden span's token count and the rule's documentation link.
* On the summary line (first line, or the frontmatter's closing fence): the kind label, grade,
  "N tok/session · M tok on invoke", how the count was derived, and a table of models with the
  cost per session, once invoked and per 1,000 sessions (USD, from the bundled price table
  merged with the user's ``prices``). Claude models show the estimate (o200k tokens × the
  model's measured tokenizer ratio) marked "≈", explained in a footnote under the table.
  Without a price module the table is left out.

Price-table problems (unreadable ``pricesFile``, unknown ``models``) are logged and sent once
per distinct set as a ``window/logMessage`` warning, like the server's settings problems
(``UnveilServer._report_problems``), never on every hover.
"""

from __future__ import annotations

import logging
import re
import unicodedata

from lsprotocol import types

from unveil.core import tokens as tokens_mod
from unveil.core.analyze import Analysis
from unveil.core.findings import Finding
from unveil.core.inert import code_block, code_span, inline
from unveil.core.rules import RuleSet, bundled_rules
from unveil.lsp.convert import lsp_range
from unveil.lsp.features.inlay_hints import format_tokens, summary_line, summary_text

log = logging.getLogger(__name__)


def fenced(text: str, info: str = "text") -> str:
    """``text`` in a markdown code fence long enough not to be closed by backticks inside it
    (:func:`unveil.core.inert.code_block`)."""
    return code_block(text, info)


def _cell(text: str) -> str:
    """A table cell: :func:`~unveil.core.inert.inline`, with ``|`` escaped inside a code span."""
    shown = inline(text)
    return shown if shown == text else code_span(text, in_table=True)


def findings_at(analysis: Analysis, offset: int) -> list[Finding]:
    """Findings whose range contains code-point ``offset`` (end inclusive, so a cursor right
    after a span still hits it); when none does, findings on an invisible run that starts just
    after ``offset``."""
    hits = [f for f in analysis.findings if f.start <= offset <= f.end]
    if hits:
        return hits
    # A run that draws nothing (tag characters, zero-width, bidi controls) leaves no character
    # for the cursor to rest on in a terminal editor: the character just before it answers too.
    text = analysis.text
    return [
        f for f in analysis.findings if f.start == offset + 1 and f.end > f.start and _invisible(text[f.start : f.end])
    ]


def _invisible(text: str) -> bool:
    """True when nothing in ``text`` would show on screen (format, control, separator,
    private-use or unassigned code points, or only whitespace)."""
    return all(ch.isspace() or unicodedata.category(ch) in ("Cf", "Cc", "Co", "Cn", "Zl", "Zp") for ch in text)


def code_points(text: str, limit: int = 16) -> str:
    """``"U+200B U+2060"`` for the first ``limit`` code points of ``text`` (``…`` if longer)."""
    shown = " ".join(f"U+{ord(ch):04X}" for ch in text[:limit])
    return shown + (" …" if len(text) > limit else "")


def _span_tokens(analysis: Analysis, f: Finding) -> int | None:
    if f.tokens is not None:
        return f.tokens
    text = f.hidden_text if f.hidden_text is not None else analysis.text[f.start : f.end]
    try:
        return tokens_mod.count(text, wait=False)
    except Exception:  # noqa: BLE001
        return None


CONTEXT_NOTES = {
    "prohibition": "Lowered one level: the same sentence states it as a prohibition (never, do not …).",
    "deny-list": "Lowered one level: an item of a list introduced, right above it, as things not to do.",
    "quoted example": "Lowered one level: quoted as an example in the same sentence or its code block's caption.",
    "code": "Lowered one level: inside code, where this rule reads as documentation.",
    "context": "Lowered one level by words in the same sentence (the rule's lower_if).",
    "hidden": "Raised one step: a reader of the rendered file never sees this text, the model does.",
    "raised by context": 'Raised one step by words in the same sentence (such as "silently").',
}
"""What each ``Finding.data["context"]`` reason means, shown under the finding in the hover."""

_QUOTE = re.compile(r"[“\"«][^”\"»]{6,}[”\"»]")


def finding_markdown(analysis: Analysis, f: Finding, rules: RuleSet | None = None) -> str:
    """Markdown for one finding: rule and severity, the message (its quotation of the payload
    left out when the hidden text is shown below it, so the payload appears once), the hidden
    text in a fenced block with its token count, what raised or lowered the severity, and how
    to read the rule's documentation. Every piece of scanned text is inert
    (:mod:`unveil.core.inert`)."""
    rule = (rules or bundled_rules()).get(f.rule)
    head = f"**{f.rule}**" + (f" {rule.name}" if rule is not None else "") + f" · {f.severity.label}"
    message = f.message
    if f.hidden_text and not _invisible(f.hidden_text):
        message = _QUOTE.sub("(shown below)", message, count=1)
    parts = [head, inline(message)]
    if f.hidden_text:
        n = _span_tokens(analysis, f)
        count = f" ({format_tokens(n)} tok)" if n is not None else ""
        if _invisible(f.hidden_text):
            parts.append(f"Hidden code points{count}: `{code_points(f.hidden_text)}`")
        else:
            parts.append(f"Hidden text{count}:\n\n" + fenced(f.hidden_text))
    for reason in (f.data or {}).get("context", ()) or ():
        note = CONTEXT_NOTES.get(reason)
        if note:
            parts.append(f"_{note}_")
    if rule is not None:
        parts.append(f"{inline(rule.summary)} · more: `unveil explain {f.rule}`")
    return "\n\n".join(parts)


def _price_rows(analysis: Analysis):
    """``(rows, format_usd)`` or ``None`` when no price table is available."""
    try:
        from unveil.core import cost, prices
    except ImportError:
        return None
    shown = getattr(prices, "shown_models", None)
    rows_fn = getattr(cost, "price_rows", None)
    if shown is None or rows_fn is None:
        return None
    fmt = getattr(cost, "format_usd", None) or (lambda x: f"${x:,.4f}")
    try:
        return rows_fn(analysis.tokens, shown(analysis.settings)), fmt
    except Exception:  # noqa: BLE001 - a broken price file must not break hover
        log.exception("price table failed")
        return None


def cost_mod():
    """:mod:`unveil.core.cost` (imported lazily)."""
    from unveil.core import cost

    return cost


def price_problems(analysis: Analysis) -> tuple[str, ...]:
    """The price-table errors for the analysis' settings
    (:attr:`unveil.core.prices.PriceTable.errors`); empty without a price module."""
    try:
        from unveil.core import prices

        load = getattr(prices, "load_prices", None)
        if load is None:
            return ()
        table = load(analysis.settings)
        prices.shown_models(analysis.settings, table)
        return tuple(table.errors)
    except Exception:  # noqa: BLE001 - never break hover over a price file
        log.exception("price table failed")
        return ()


def report_price_problems(ls, problems: tuple[str, ...]) -> bool:
    """Log ``problems`` and send them as one ``window/logMessage`` warning, unless this exact
    set was already reported on ``ls`` (the server). Returns whether a message was sent."""
    if not problems or getattr(ls, "_reported_price_problems", None) == problems:
        return False
    ls._reported_price_problems = problems
    message = "unveil prices: " + "; ".join(problems)
    log.warning("%s", message)
    try:
        ls.window_log_message(types.LogMessageParams(type=types.MessageType.Warning, message=message))
    except Exception:  # noqa: BLE001 - a client that cannot take the message
        log.info("window/logMessage failed", exc_info=True)
    return True


def _grade_meaning(letter: str) -> str:
    from unveil.core import grade as grading

    return grading.GRADE_MEANING.get(letter, "")


def _grade_note(analysis: Analysis) -> str:
    from unveil.core import grade as grading

    return "_" + grading.explain(analysis.findings) + "_"


def cost_markdown(analysis: Analysis) -> str:
    """Markdown for the summary-line hover."""
    report = analysis.tokens
    label = getattr(report, "kind_label", None) or analysis.kind
    parts = [f"**unveil** · {label} · grade **{analysis.grade}** ({_grade_meaning(analysis.grade)})"]
    if report is None:
        parts.append("Token counts are still loading.")
        return "\n\n".join(parts)
    parts.append(f"**{summary_text(report)}**")
    if getattr(report, "basis", None):
        parts.append(inline(report.basis))
    got = _price_rows(analysis)
    if got:
        rows, fmt = got
        if rows:
            table = ["| Model | per session | once invoked | per 1,000 sessions |", "|---|--:|--:|--:|"]
            for r in rows:
                name = getattr(r.model, "display_name", None) or str(r.model)
                approx = getattr(r, "approx_usd_per_session", None)
                if approx is None:
                    cells = (r.usd_per_session, r.usd_per_invoke, r.usd_per_1000_sessions)
                else:
                    invoke = getattr(r, "approx_usd_per_invoke", None)
                    cells = (approx, r.usd_per_invoke if invoke is None else invoke, approx * 1000)
                mark = "≈" if approx is not None else ""
                shown = " | ".join((mark if x else "") + fmt(x) for x in cells)
                table.append(f"| {_cell(str(name))} | {shown} |")
            parts.append("\n".join(table))
            note_fn = getattr(cost_mod(), "estimate_note", None)
            note = note_fn(rows) if note_fn else None
            if note:
                parts.append(f"_{note}_")
    for note in getattr(report, "notes", ()) or ():
        parts.append(inline(str(note)))
    parts.append(_grade_note(analysis))
    return "\n\n".join(parts)


def hover(
    analysis: Analysis, offset: int, line: int, encoding: str, rules: RuleSet | None = None
) -> types.Hover | None:
    """The hover at code-point ``offset`` on 0-based ``line``, or ``None``."""
    hits = findings_at(analysis, offset)
    sections = [finding_markdown(analysis, f, rules) for f in hits]
    rng = None
    if hits:
        rng = lsp_range(analysis.doc, min(f.start for f in hits), max(f.end for f in hits), encoding)
    if line == summary_line(analysis) or line == 0:
        sections.append(cost_markdown(analysis))
    if not sections:
        return None
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(sections)),
        range=rng,
    )


def register(server) -> None:
    from unveil.lsp.convert import offset as to_offset
    from unveil.lsp.registry import safe

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    @safe()
    async def on_hover(ls, params: types.HoverParams) -> types.Hover | None:
        got = await ls.get_analysis(params.text_document.uri, with_tokens=True)
        if got is None:
            return None
        analysis, _ = got
        off = to_offset(analysis.doc, params.position, ls.encoding)
        if params.position.line == summary_line(analysis):
            report_price_problems(ls, price_problems(analysis))
        return hover(analysis, off, params.position.line, ls.encoding)
