"""``unveil check --format github``: GitHub Actions workflow commands, one per finding.

::

    ::error file=.claude/agents/x.md,line=3,col=5,endLine=3,endColumn=9,title=HID001 tag-characters::Unicode tag characters …

Levels: error → ``error``, warning → ``warning``, info and hint → ``notice``. ``line``/``col``
are 1-based, columns in code points (as the text format). Escaping follows the runner's own
``toolkit/packages/core/src/command.ts``: the message (data) escapes ``%`` → ``%25``, CR →
``%0D``, LF → ``%0A``; property values additionally ``:`` → ``%3A`` and ``,`` → ``%2C``. Other
characters that could make a terminal or the log viewer misbehave (controls, bidi, tags) are
written as escapes first with :func:`unveil.reporters.common.printable`, so an annotation never
carries an invisible character of the scanned file.
"""

from __future__ import annotations

from typing import Iterable

from unveil.core.findings import Severity
from unveil.reporters.common import FileResult, printable, span
from unveil.reporters.github import github_escape_data, github_escape_property  # noqa: F401 - re-exported

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice", Severity.HINT: "notice"}


def annotation(result: FileResult, finding) -> str:
    """One ``::level file=…,line=…,col=…,endLine=…,endColumn=…,title=…::message`` line."""
    s = span(result.analysis, finding)
    props = [
        ("file", printable(result.path)),
        ("line", str(s.line)),
        ("col", str(s.column)),
        ("endLine", str(s.end_line)),
        ("endColumn", str(s.end_column)),
        ("title", f"unveil {finding.rule}"),
    ]
    head = ",".join(f"{k}={github_escape_property(v)}" for k, v in props)
    message = printable(finding.message)
    return f"::{_LEVEL[finding.severity]} {head}::{github_escape_data(message)}"


def render(results: Iterable[FileResult], errors: Iterable[str] = ()) -> str:
    """Every finding as an annotation, then one ``::error::`` per path that could not be read."""
    lines = [annotation(r, f) for r in results for f in r.analysis.findings]
    lines += [f"::error title=unveil::{github_escape_data(printable(e))}" for e in errors]
    return "\n".join(lines) + ("\n" if lines else "")
