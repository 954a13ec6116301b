"""``unveil check --format text`` (the default): one line per finding, ruff/eslint style.

::

    examples/CLAUDE.md:7:1: error HID020 HTML comment hidden from the reader: "..."
    examples/CLAUDE.md: CLAUDE.md (project memory) · grade C · 412 tok/session · 412 tok on invoke · 1 finding
    examples/AGENTS.md: AGENTS.md · grade A · 230 tok/session · 230 tok on invoke · no findings

    Found 3 findings (2 errors, 1 warning) in 2 of 5 files.

Columns are 1-based code points. Everything that comes from the scanned file is escaped with
:func:`unveil.reporters.common.printable`, so hidden control or bidi characters cannot act on
the terminal. Colour (ANSI SGR) only when asked for, i.e. when stdout is a terminal.
"""

from __future__ import annotations

from typing import Iterable

from unveil.core.findings import Severity
from unveil.reporters.common import FileResult, kind_label, printable, span, tokens_of

_COLOURS = {
    Severity.ERROR: "\x1b[1;31m",
    Severity.WARNING: "\x1b[1;33m",
    Severity.INFO: "\x1b[1;34m",
    Severity.HINT: "\x1b[2m",
}
_BOLD = "\x1b[1m"
_DIM = "\x1b[2m"
_RESET = "\x1b[0m"


def _plural(n: int, word: str) -> str:
    if word == "info":  # "2 info", not "2 infos"
        return f"{n:,} info"
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def finding_line(result: FileResult, finding, colour: bool = False) -> str:
    """``path:line:col: severity RULE message`` for one finding."""
    s = span(result.analysis, finding)
    sev = finding.severity.label
    rule = finding.rule
    where = f"{printable(result.path)}:{s.line}:{s.column}:"
    if colour:
        where = f"{_BOLD}{where}{_RESET}"
        sev = f"{_COLOURS.get(finding.severity, '')}{sev}{_RESET}"
        rule = f"{_DIM}{rule}{_RESET}"
    return f"{where} {sev} {rule} {printable(finding.message)}"


def summary_line(result: FileResult, colour: bool = False) -> str:
    """Per-file summary: kind, grade, tokens every session and once invoked, finding count."""
    a = result.analysis
    session, invoke = tokens_of(a)
    parts = [printable(kind_label(a)), f"grade {a.grade}"]
    if session is not None:
        parts.append(f"{session:,} tok/session")
        parts.append(f"{invoke:,} tok on invoke")
    parts.append(_plural(len(a.findings), "finding") if a.findings else "no findings")
    n_suppressed = len(a.extra.get("suppressed") or ())
    if n_suppressed:
        parts.append(f"{n_suppressed} suppressed inline")
    path = printable(result.path)
    if colour:
        path = f"{_BOLD}{path}{_RESET}"
    return f"{path}: " + " · ".join(parts)


def render(
    results: Iterable[FileResult], colour: bool = False, errors: int = 0, quiet: bool = False, notes: Iterable[str] = ()
) -> str:
    """The whole report. ``errors`` is the number of paths that could not be read (their
    messages went to stderr); it is repeated in the final count. ``quiet``: the finding lines
    only (``""`` when there are none). ``notes``: lines about what shaped the scan
    (configuration applied, files left out), printed after the count."""
    results = list(results)
    lines: list[str] = []
    counts = {s: 0 for s in Severity}
    files_with = 0
    for r in results:
        for f in r.analysis.findings:
            lines.append(finding_line(r, f, colour))
            counts[f.severity] += 1
        if r.analysis.findings:
            files_with += 1
        if not quiet:
            lines.append(summary_line(r, colour))
    if quiet:
        return "".join(line + "\n" for line in lines)
    total = sum(counts.values())
    lines.append("")
    if total:
        detail = ", ".join(_plural(counts[s], s.label) for s in Severity if counts[s])
        lines.append(
            f"Found {_plural(total, 'finding')} ({detail}) in {files_with:,} of {_plural(len(results), 'file')}."
        )
    else:
        lines.append(f"No findings in {_plural(len(results), 'file')}.")
    if errors:
        lines.append(f"{_plural(errors, 'path')} could not be read (see above).")
    lines.extend(printable(n) for n in notes)
    from unveil.reporters.common import config_lines, config_summary

    lines.extend(config_lines(config_summary(results)))
    return "\n".join(lines) + "\n"


def statistics(results: Iterable[FileResult]) -> str:
    """``--statistics``: one line per rule, most frequent first (ties by id), as
    ``COUNT  RULE  SEVERITY  NAME`` where SEVERITY is the most severe one seen; then the total.
    ``"No findings."`` when there are none."""
    from unveil.core.rules import bundled_rules

    rules = bundled_rules()
    count: dict[str, int] = {}
    worst: dict[str, Severity] = {}
    for r in results:
        for f in r.analysis.findings:
            count[f.rule] = count.get(f.rule, 0) + 1
            worst[f.rule] = min(worst.get(f.rule, Severity.HINT), f.severity)
    if not count:
        return "No findings.\n"
    rows = sorted(count.items(), key=lambda kv: (-kv[1], kv[0]))
    width = max(len(f"{n:,}") for _, n in rows)
    lines = []
    for rid, n in rows:
        rule = rules.get(rid)
        name = rule.name if rule else ""
        lines.append(f"{n:>{width},}  {rid:<7} {worst[rid].label:<7} {name}".rstrip())
    lines.append(f"Found {_plural(sum(count.values()), 'finding')} of {_plural(len(count), 'rule')}.")
    return "\n".join(lines) + "\n"
