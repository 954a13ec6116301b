"""``unveil check --format json``.

Shape (stable; extra keys may be added to findings only)::

    {"files": [{"path": str, "kind": str, "grade": "A".."F",
                "tokens": {"session": int | null, "invoke": int | null},
                "findings": [{"rule": str, "category": str,
                              "severity": "error" | "warning" | "info" | "hint",
                              "line": int, "column": int, "end_line": int, "end_column": int,
                              "message": str, "hidden_text": str | null}],
                "suppressed": int}]}

``suppressed`` counts the findings removed by inline ``unveil-ignore…`` comments.

Lines and columns are 1-based and counted in Unicode code points; the end is exclusive (see
:mod:`unveil.reporters.common`). ``tokens`` are o200k_base tokens (``null`` only if they could
not be counted). Undecodable bytes (kept as lone surrogates) are written as U+FFFD.
"""

from __future__ import annotations

from typing import Iterable

from unveil.reporters.common import FileResult, json_text, no_lone_surrogates, span, tokens_of


def finding_dict(result: FileResult, finding) -> dict:
    """One finding as the JSON object described in the module docstring."""
    s = span(result.analysis, finding)
    return {
        "rule": finding.rule,
        "category": finding.category,
        "severity": finding.severity.label,
        "line": s.line,
        "column": s.column,
        "end_line": s.end_line,
        "end_column": s.end_column,
        "message": no_lone_surrogates(finding.message),
        "hidden_text": no_lone_surrogates(finding.hidden_text),
        **(
            {
                "related": [
                    {
                        "path": no_lone_surrogates(p),
                        "line": sl + 1,
                        "column": sc + 1,
                        "end_line": el + 1,
                        "end_column": ec + 1,
                        "message": no_lone_surrogates(m),
                    }
                    for p, sl, sc, el, ec, m in finding.related
                ]
            }
            if finding.related
            else {}
        ),
    }


def file_dict(result: FileResult) -> dict:
    """One file as the JSON object described in the module docstring."""
    session, invoke = tokens_of(result.analysis)
    return {
        "path": no_lone_surrogates(result.path),
        "kind": result.analysis.kind,
        "grade": result.analysis.grade,
        "tokens": {"session": session, "invoke": invoke},
        "findings": [finding_dict(result, f) for f in result.analysis.findings],
        "suppressed": len(result.analysis.extra.get("suppressed") or ()),
    }


def render(results: Iterable[FileResult]) -> str:
    """The whole report as a JSON document (UTF-8 safe, ends with a newline)."""
    from unveil.reporters.common import config_summary

    results = list(results)
    data = {"files": [file_dict(r) for r in results], "config": config_summary(results)}
    return json_text(data) + "\n"
