"""Letter grades from finding severities."""

from __future__ import annotations

import pytest

from unveil.core.findings import Finding, Severity
from unveil.core.grade import grade


def f(sev: Severity, **data) -> Finding:
    return Finding("HID001", sev, 0, 1, "m", data=data)


E, W, I, H = Severity.ERROR, Severity.WARNING, Severity.INFO, Severity.HINT  # noqa: E741 - I for INFO


@pytest.mark.parametrize(
    ("sevs", "expected"),
    [
        ([], "A"),
        ([I, H, H], "A"),
        ([W], "B"),
        ([W, W, I], "B"),
        ([E], "C"),
        ([E, W, W, W], "C"),
        ([E, E], "D"),
        ([E, E, E], "D"),
        ([E, E, E, E], "F"),
        ([E] * 9, "F"),
    ],
)
def test_grade(sevs, expected):
    assert grade([f(s) for s in sevs]) == expected


def test_disabled_or_suppressed_findings_do_not_count():
    assert grade([f(E, enabled=False), f(E, suppressed=True), f(W)]) == "B"


def test_accepts_any_iterable():
    assert grade(f(s) for s in [E, W]) == "C"


def test_explain_names_grade_counts_and_scale():
    from unveil.core.grade import explain

    fs = [
        Finding("X", Severity.ERROR, 0, 1, "m"),
        Finding("Y", Severity.WARNING, 0, 1, "m"),
        Finding("Z", Severity.INFO, 0, 1, "m"),
    ]
    assert explain(fs) == (
        "Grade C: one error (1 error, 1 warning). Scale: A no error and no warning · B warnings only, no error · "
        "C one error · D two or three errors · F four or more errors; info and hint findings do not count."
    )
    assert explain([]).startswith("Grade A: no error and no warning (0 errors, 0 warnings).")
