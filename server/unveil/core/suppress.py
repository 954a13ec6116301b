"""Inline suppression comments (``UNV010`` malformed, ``UNV011`` unused, ``UNV012`` refused).

Grammar (an HTML comment outside code; ``IDS`` is one or more rule ids or category names
separated by commas; the reason is mandatory and runs to the end of the comment)::

    <!-- unveil-ignore-next-line IDS: reason -->   findings starting on the next non-blank line
    <!-- unveil-ignore IDS: reason -->             findings starting on the comment's own line
    <!-- unveil-ignore-file IDS: reason -->        findings anywhere in the file
    <!-- unveil-disable IDS: reason -->            findings from here to the matching enable
    <!-- unveil-enable IDS -->                     (or the end of the file); reason optional

A comment whose text begins ``unveil-`` but does not match exactly (missing reason or ids,
unknown id, unknown directive, an enable without a disable) is reported as ``UNV010`` and
suppresses nothing — and, not being an exact pragma, it is also judged as a hidden comment by
``HID020`` (:func:`unveil.core.checks.markup.is_pragma`). A valid suppression that removes no
finding is reported as ``UNV011``. Suppressed findings are kept in
``Analysis.extra["suppressed"]``. A comment that names a finding of a security category
(:data:`SECURITY_CATEGORIES`: hidden content and every risky-directive category) keeps that
finding and is reported as ``UNV012``; only format, cost, imports, internal and user-defined
categories can be suppressed from inside the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from unveil.core.findings import Finding, Severity

MALFORMED_RULE = "UNV010"
UNUSED_RULE = "UNV011"
REFUSED_RULE = "UNV012"


#: Categories an inline comment may never suppress (issue 8 section 6): hidden content and every
#: risky-directive category. The scanned file is the untrusted party, and a suppression comment
#: is itself hidden in rendered views, so a file could otherwise silence its own payload. Such
#: findings are silenced only from outside the file (project configuration ``per-file-ignores``).
#: Other categories (format, cost, imports, internal, and user rules' own categories) stay
#: suppressible.
SECURITY_CATEGORIES = frozenset(
    {
        "hidden-content",
        "prompt-injection",
        "anti-refusal",
        "concealment",
        "data-exfiltration",
        "privilege-escalation",
        "supply-chain",
        "agent-snooping",
        "system-prompt-leakage",
        "ssrf",
        "excessive-agency",
        "secrets",
        "persistence",
        "obfuscation",
    }
)


def suppressible(f: Finding) -> bool:
    """Whether an inline comment may suppress ``f``: not when its category is one of
    :data:`SECURITY_CATEGORIES`, whatever its severity."""
    return f.category not in SECURITY_CATEGORIES


DIRECTIVES = ("ignore-next-line", "ignore-file", "ignore", "disable", "enable")

_PREFIX = re.compile(r"\s*unveil-[a-z]", re.I)
_FORM = re.compile(
    r"\s*unveil-(?P<directive>[A-Za-z-]+)(?:[ \t]+(?P<ids>[^:\n]*?))?[ \t]*(?::[ \t]*(?P<reason>.*?))?\s*\Z", re.S
)
_ID_SEP = re.compile(r"\s*,\s*")


@dataclass
class Pragma:
    """One suppression comment: code-point offsets ``start``/``end`` of the whole comment,
    ``directive`` (one of :data:`DIRECTIVES`), ``ids`` (rule ids / categories), and ``error``
    (why it is malformed, or ``None``)."""

    start: int
    end: int
    directive: str
    ids: tuple[str, ...]
    reason: str
    error: str | None = None
    used: set = field(default_factory=set)
    refused: list = field(default_factory=list)  # findings it matched but may not suppress


def is_pragma_text(body: str) -> bool:
    """Whether a comment body is an attempted unveil pragma (starts ``unveil-`` + a letter)."""
    return bool(_PREFIX.match(body))


@lru_cache(maxsize=16)
def _known(rules_paths: tuple[str, ...]) -> frozenset[str]:
    from unveil.core.rules import RuleSet, bundled_rules, load_rule_files

    rs = bundled_rules()
    ids = {r.id for r in rs} | {r.category for r in rs}
    if rules_paths:
        from pathlib import Path

        user = load_rule_files([Path(p) for p in rules_paths], into=RuleSet(rules=dict(rs.rules)))
        ids |= {r.id for r in user} | {r.category for r in user}
    return frozenset(ids)


def known_ids(settings=None) -> frozenset[str]:
    """Rule ids and categories a pragma may name: the bundled rules plus those in
    ``settings.rules_paths`` (cached per tuple of paths)."""
    return _known(tuple(getattr(settings, "rules_paths", ()) or ()))


def parse(body: str, known: frozenset[str] | None = None) -> tuple[str, tuple[str, ...], str, str | None]:
    """Parse a comment body (text between ``<!--`` and ``-->``) that :func:`is_pragma_text`.
    Returns ``(directive, ids, reason, error)``; ``error`` is ``None`` for an exact match."""
    known = known if known is not None else known_ids()
    m = _FORM.match(body)
    if m is None:
        return "", (), "", "not of the form `unveil-DIRECTIVE IDS: reason`"
    directive = m["directive"].lower()
    raw_ids = (m["ids"] or "").strip()
    reason = (m["reason"] or "").strip()
    ids = tuple(i for i in _ID_SEP.split(raw_ids) if i) if raw_ids else ()
    if directive not in DIRECTIVES:
        return (
            directive,
            ids,
            reason,
            (
                f"unknown directive `unveil-{directive}` "
                f"(expected one of {', '.join('unveil-' + d for d in DIRECTIVES)})"
            ),
        )
    if not ids:
        return directive, ids, reason, "no rule ids (write e.g. `unveil-ignore HID020: reason`)"
    bad = [i for i in ids if not re.fullmatch(r"[A-Za-z0-9_-]+", i)]
    if bad:
        return directive, ids, reason, f"{bad[0]!r} is not a rule id (ids are separated by commas)"
    unknown = [i for i in ids if i not in known]
    if unknown:
        return directive, ids, reason, f"unknown rule id or category {', '.join(unknown)} (see `unveil rules`)"
    if directive != "enable":
        if m["reason"] is None:
            return (
                directive,
                ids,
                reason,
                "the reason is mandatory: `unveil-" + directive + " " + ", ".join(ids) + ": why`",
            )
        if not reason:
            return directive, ids, reason, "empty reason after ':'"
        if "\n" in reason or "\r" in reason:
            return directive, ids, reason, "the reason must fit on one line"
    return directive, ids, reason, None


def is_exact(body: str, known: frozenset[str] | None = None) -> bool:
    """Whether a comment body is exactly a valid unveil pragma."""
    return is_pragma_text(body) and parse(body, known)[3] is None


def find_pragmas(ctx) -> list[Pragma]:
    """Every attempted unveil pragma among the document's HTML comments outside code, in order."""

    known = known_ids(ctx.settings)
    out: list[Pragma] = []
    for chunk in ctx.markdown.html:
        if not chunk.block and not chunk.content.startswith("<!--"):
            continue
        for i, j, body, terminated in chunk.comment_spans():
            if not terminated or not is_pragma_text(body):
                continue
            directive, ids, reason, error = parse(body, known)
            out.append(Pragma(chunk.offset_of(i), chunk.offset_of(j), directive, ids, reason, error))
    out.sort(key=lambda p: p.start)
    return out


def _matches(p: Pragma, f: Finding) -> str | None:
    for i in p.ids:
        if f.rule == i or f.category == i:
            return i
    return None


def apply(ctx, findings: list[Finding]) -> tuple[list[Finding], list[Finding], list[Finding]]:
    """Apply the suppression comments of ``ctx``'s document to ``findings``.

    Returns ``(kept, suppressed, reports)``: ``reports`` are the ``UNV010`` / ``UNV011``
    findings (warnings; their range is the whole comment). With
    ``ctx.settings.inline_suppressions`` off, nothing is suppressed and no report is made.
    Never raises for any document.
    """
    if not getattr(ctx.settings, "inline_suppressions", True):
        return findings, [], []
    pragmas = find_pragmas(ctx)
    if not pragmas:
        return findings, [], []
    doc = ctx.doc
    # (pragma, id or None for all of its ids, start offset, end offset)
    ranges: list[tuple[Pragma, str | None, int, int]] = []
    lines: list[tuple[Pragma, int]] = []
    open_ids: dict[str, Pragma] = {}
    for p in pragmas:
        if p.error is not None:
            continue
        if p.directive == "enable":
            missing = [i for i in p.ids if i not in open_ids]
            if missing:
                p.error = f"`unveil-enable {', '.join(missing)}` without an earlier `unveil-disable` of it"
            for i in p.ids:
                d = open_ids.pop(i, None)
                if d is not None:
                    ranges.append((d, i, d.end, p.start))
        elif p.directive == "disable":
            for i in p.ids:
                open_ids.setdefault(i, p)
        elif p.directive == "ignore-file":
            ranges.append((p, None, 0, len(doc.text)))
        elif p.directive == "ignore":
            lines.append((p, doc.line_of(p.start)))
        else:  # ignore-next-line
            line = doc.line_of(max(p.start, p.end - 1)) + 1
            while line < doc.line_count and not doc.line_text(line).strip():
                line += 1
            lines.append((p, line))
    for i, d in open_ids.items():
        ranges.append((d, i, d.end, len(doc.text)))
    kept: list[Finding] = []
    suppressed: list[Finding] = []
    for f in findings:
        hit: tuple[Pragma, str] | None = None
        for p, only, s, e in ranges:
            if s <= f.start < e and not (p.start <= f.start < p.end):
                rid = _matches(p, f)
                if rid is not None and (only is None or only == rid):
                    hit = (p, rid)
                    break
        if hit is None:
            fl = doc.line_of(f.start)
            for p, line in lines:
                if fl == line and not (p.start <= f.start < p.end):
                    rid = _matches(p, f)
                    if rid is not None:
                        hit = (p, rid)
                        break
        if hit is None:
            kept.append(f)
        elif not suppressible(f):
            hit[0].refused.append(f)
            kept.append(f)
        else:
            hit[0].used.add(hit[1])
            suppressed.append(f)
    reports: list[Finding] = []
    for p in pragmas:
        if p.error is not None:
            reports.append(
                Finding(
                    MALFORMED_RULE,
                    Severity.WARNING,
                    p.start,
                    p.end,
                    f"Malformed unveil suppression: {p.error}; it suppresses nothing",
                    category="internal",
                    data={"error": p.error},
                )
            )
            continue
        for f in p.refused:
            line = doc.line_of(f.start) + 1
            reports.append(
                Finding(
                    REFUSED_RULE,
                    Severity.WARNING,
                    p.start,
                    p.end,
                    f"This suppression cannot hide {f.rule} on line {line}: security findings "
                    f"({f.category}) are never suppressed from inside the file (the file could "
                    "silence its own payload); use per-file-ignores in the project configuration",
                    category="internal",
                    data={"refused": f.rule, "line": line},
                )
            )
        if p.directive != "enable" and not p.refused:
            unused = [i for i in p.ids if i not in p.used]
            if unused:
                reports.append(
                    Finding(
                        UNUSED_RULE,
                        Severity.WARNING,
                        p.start,
                        p.end,
                        f"Unused suppression: `unveil-{p.directive}` of {', '.join(unused)} "
                        "suppresses no finding; remove it",
                        category="internal",
                        data={"unused": unused},
                    )
                )
    return kept, suppressed, reports
