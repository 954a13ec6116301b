"""A letter grade A–F per file from its findings.

| Grade | Findings (enabled ones, after severity overrides) |
|---|---|
| A | no error and no warning (info and hint findings do not lower the grade) |
| B | warnings only |
| C | exactly one error (one error-level hidden instruction gives C, issue 2) |
| D | two or three errors |
| F | four or more errors |

Warnings do not lower a grade below B on their own, and do not change the grade once there
are errors. Disabled rules never reach this function: :func:`unveil.core.analyze.analyze`
drops them before grading, and findings whose ``data`` has ``"enabled": False`` or
``"suppressed": True`` are skipped here as well.
"""

from __future__ import annotations

from typing import Iterable

from unveil.core.findings import Finding, Severity

GRADES = ("A", "B", "C", "D", "F")


def _counts(f: Finding) -> bool:
    data = getattr(f, "data", None)
    if isinstance(data, dict) and (data.get("enabled") is False or data.get("suppressed") is True):
        return False
    return True


def grade(findings: Iterable[Finding]) -> str:
    """Letter ``"A"``–``"F"`` for ``findings`` (see the module table). Never raises."""
    errors = warnings = 0
    for f in findings:
        if not _counts(f):
            continue
        try:
            sev = Severity(int(f.severity))
        except (TypeError, ValueError):
            continue
        if sev == Severity.ERROR:
            errors += 1
        elif sev == Severity.WARNING:
            warnings += 1
    if errors >= 4:
        return "F"
    if errors >= 2:
        return "D"
    if errors == 1:
        return "C"
    if warnings:
        return "B"
    return "A"


GRADE_MEANING = {
    "A": "no error and no warning",
    "B": "warnings only, no error",
    "C": "one error",
    "D": "two or three errors",
    "F": "four or more errors",
}
"""One line per grade, for hovers and reports (the table above)."""


def explain(findings: Iterable[Finding]) -> str:
    """``"C: one error (1 error, 2 warnings); A no error or warning · B warnings only · C one
    error · D two or three errors · F four or more"`` — the grade, why, and the scale."""
    errors = warnings = 0
    for f in findings:
        if not _counts(f):
            continue
        if int(f.severity) == int(Severity.ERROR):
            errors += 1
        elif int(f.severity) == int(Severity.WARNING):
            warnings += 1
    g = grade(findings if isinstance(findings, list) else list(findings))
    counts = f"{errors} error{'s' if errors != 1 else ''}, {warnings} warning{'s' if warnings != 1 else ''}"
    scale = " · ".join(f"{k} {v}" for k, v in GRADE_MEANING.items())
    return f"Grade {g}: {GRADE_MEANING[g]} ({counts}). Scale: {scale}; info and hint findings do not count."
