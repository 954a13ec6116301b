"""``unveil check --format gitlab``: a GitLab Code Quality report (JSON array).

Each finding is one object with ``description``, ``check_name`` (the rule id), ``fingerprint``,
``severity`` and ``location.path`` / ``location.lines.begin`` — the fields GitLab requires
(docs.gitlab.com/ci/testing/code_quality, "Code Quality report format"); ``categories``
(``["Security"]``) and ``location.lines.end`` are added. Severities: error → ``critical``,
warning → ``major``, info → ``minor``, hint → ``info`` (GitLab's scale is info, minor, major,
critical, blocker; ``blocker`` is kept for findings of a check that failed, UNV001, because
the file was not fully scanned).

``fingerprint`` is the SHA-256 (hex) of the path, the rule id, the text the finding covers and
its occurrence number among identical (path, rule, text) findings, so it survives line moves;
the lock branch's core/fingerprint.py replaces it at merge if it lands.
"""

from __future__ import annotations

import hashlib
from typing import Iterable

from unveil.core.findings import Severity
from unveil.reporters.common import FileResult, json_text, no_lone_surrogates, span

SEVERITY = {Severity.ERROR: "critical", Severity.WARNING: "major", Severity.INFO: "minor", Severity.HINT: "info"}
INTERNAL_RULE = "UNV001"


def _fingerprint(path: str, rule: str, covered: str, n: int) -> str:
    data = "\0".join((path, rule, covered, str(n))).encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()


def issues(results: Iterable[FileResult]) -> list[dict]:
    """The Code Quality issues, in report order."""
    out = []
    for r in results:
        seen: dict[tuple, int] = {}
        text = r.analysis.doc.text
        for f in r.analysis.findings:
            s = span(r.analysis, f)
            covered = text[max(f.start, 0) : max(f.end, f.start, 0)]
            key = (f.rule, covered)
            seen[key] = seen.get(key, 0) + 1
            out.append(
                {
                    "description": no_lone_surrogates(f"{f.rule}: {f.message}"),
                    "check_name": f.rule,
                    "fingerprint": _fingerprint(r.path, f.rule, covered, seen[key]),
                    "severity": "blocker" if f.rule == INTERNAL_RULE else SEVERITY[f.severity],
                    "categories": ["Security"],
                    "location": {"path": no_lone_surrogates(r.path), "lines": {"begin": s.line, "end": s.end_line}},
                }
            )
    return out


def render(results: Iterable[FileResult]) -> str:
    """The report as JSON text (UTF-8, indented, newline-terminated)."""
    return json_text(issues(results)) + "\n"
