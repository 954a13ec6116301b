""":func:`supersede` (run by :func:`unveil.core.analyze.analyze` after all checks): a parsed finding
is merged into an overlapping regex finding its rule lists in ``supersedes``, so one hit gives one
finding under a stable id."""

from __future__ import annotations

from unveil.core.findings import Finding
from unveil.core.rules import RuleSet


def supersede(findings: list[Finding], rules: RuleSet | None) -> list[Finding]:
    """One finding per hit. A parsed finding whose rule lists, in ``supersedes``, the rule of an
    overlapping regex finding is merged into that finding: the regex finding keeps its id and
    range (stable ids: users' configuration and suppressions keep working), takes the higher of
    the two severities (a parsed dangerous command is never lowered by the regex rule's context
    judgement), gets the parsed judgement appended to its message and recorded in
    ``data["parsed"]``; the parsed finding is dropped. Parsed findings without an overlapping
    regex finding are kept as they are: they are what the regex rules miss."""
    cover: dict[str, frozenset[str]] = {}
    for f in findings:
        if f.data.get("parsed") is True and f.rule not in cover:
            r = rules.get(f.rule) if rules is not None else None
            cover[f.rule] = frozenset((r.raw.get("supersedes") or ()) if r is not None else ())
    if not cover:
        return findings
    regex_hits = sorted(
        (i for i, f in enumerate(findings) if f.data.get("parsed") is not True),
        key=lambda i: (findings[i].start, findings[i].end),
    )
    merged: dict[int, Finding] = {}
    drop: set[int] = set()
    for k, p in enumerate(findings):
        if p.data.get("parsed") is not True or not cover.get(p.rule):
            continue
        for i in regex_hits:
            f = merged.get(i, findings[i])
            if f.rule in cover[p.rule] and f.start < max(p.end, p.start + 1) and p.start < max(f.end, f.start + 1):
                info = list(f.data.get("parsed_facts", ())) + [
                    {"rule": p.rule, "message": p.message, "severity": p.severity.label}
                ]
                merged[i] = f.with_(
                    severity=min(f.severity, p.severity),
                    message=f"{f.message} (parsed as {p.rule}: {p.message})",
                    data={**f.data, "parsed_facts": info},
                )
                drop.add(k)
                break
    return [merged.get(i, f) for i, f in enumerate(findings) if i not in drop]
