"""``unveil check --format markdown``: a Markdown report for a CI job summary
(``$GITHUB_STEP_SUMMARY``), a pull-request comment or any Markdown view.

::

    ## unveil: 3 findings (2 errors, 1 warning) in 2 of 5 files

    | File | Kind | Grade | Tokens every session | Tokens once invoked | Findings |
    |---|---|---|---:|---:|---:|
    | `examples/CLAUDE.md` | CLAUDE.md memory | D | 136 | 0 | 3 |

    ### Findings
    - `examples/CLAUDE.md:14:72` **error** HID020 `Hidden HTML comment tells the model: …`

Everything that comes from a scanned file or repository — file names, kind labels of user
mappings, finding messages — is inert: a code span (:func:`unveil.core.inert.code_span`, with
``|`` escaped inside table cells) or :func:`unveil.core.inert.inline` plain text, so no link,
image, HTML or autolink of the scanned file can render. Findings are listed up to
:data:`MAX_FINDINGS` (a line then says how many more there are).
"""

from __future__ import annotations

from typing import Iterable

from unveil.core.findings import Severity
from unveil.core.inert import code_span, inline
from unveil.reporters.common import FileResult, kind_label, printable, span, tokens_of

MAX_FINDINGS = 200


def _plural(n: int, word: str) -> str:
    if word == "info":
        return f"{n:,} info"
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def render(results: Iterable[FileResult], notes: Iterable[str] = ()) -> str:
    """The Markdown report (newline-terminated)."""
    results = list(results)
    counts = {s: 0 for s in Severity}
    for r in results:
        for f in r.analysis.findings:
            counts[f.severity] += 1
    total = sum(counts.values())
    with_findings = sum(1 for r in results if r.analysis.findings)
    if total:
        detail = ", ".join(_plural(counts[s], s.label) for s in Severity if counts[s])
        head = (
            f"## unveil: {_plural(total, 'finding')} ({detail}) in {with_findings:,} of {_plural(len(results), 'file')}"
        )
    else:
        head = f"## unveil: no findings in {_plural(len(results), 'file')}"
    lines = [head, ""]
    if results:
        lines += [
            "| File | Kind | Grade | Tokens every session | Tokens once invoked | Findings |",
            "|---|---|---|---:|---:|---:|",
        ]
        for r in results:
            session, invoke = tokens_of(r.analysis)
            cells = [
                code_span(printable(r.path), in_table=True),
                code_span(printable(kind_label(r.analysis)), in_table=True),
                str(r.analysis.grade)
                if str(r.analysis.grade) in "ABCDEF"
                else code_span(str(r.analysis.grade), in_table=True),
                "–" if session is None else f"{session:,}",
                "–" if invoke is None else f"{invoke:,}",
                str(len(r.analysis.findings)),
            ]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    listed = 0
    items = []
    for r in results:
        for f in r.analysis.findings:
            if listed >= MAX_FINDINGS:
                break
            s = span(r.analysis, f)
            items.append(
                f"- {code_span(printable(f'{r.path}:{s.line}:{s.column}'))} **{f.severity.label}** "
                f"{inline(f.rule)} {code_span(printable(f.message))}"
            )
            listed += 1
    if items:
        lines += ["### Findings", ""] + items
        if total > listed:
            lines.append(f"- … and {_plural(total - listed, 'more finding')} (see the job log or the SARIF report)")
        lines.append("")
    from unveil.reporters.common import config_lines, config_summary

    results = list(results) if not isinstance(results, list) else results
    for n in [*notes, *config_lines(config_summary(results))]:
        lines.append(f"> {inline(printable(n))}")
    return "\n".join(lines).rstrip("\n") + "\n"
