"""Applying fixes: one code path for ``unveil check --fix`` / ``--diff`` and the language
server's code actions (:mod:`unveil.lsp.features.code_actions`).

A :class:`~unveil.core.findings.Fix` is **safe** when applying it cannot change what the file
asks of the agent as a reader sees it:

* ``remove-invisible`` — delete invisible characters (tag characters, zero-width runs, bidi
  controls, invisible character references …) that a reviewer cannot see;
* every fix of a frontmatter finding (category ``format``): rename a misspelt key, quote a
  value, ``"true"`` → ``true``, lower-case an enum value — the host then reads what the author
  evidently meant.

Every other fix is **unsafe** (only with ``--unsafe-fixes``): removing hidden HTML or a code
fence's info string, revealing a comment as visible text, replacing a confusable with ASCII or an
odd space with a space, closing an unterminated comment. They change visible text or drop
content a human may want to read first.

Offsets are code points of :attr:`Analysis.text`. Edits are applied right to left after sorting
and de-duplication; an edit that overlaps an earlier-kept one is dropped (the next pass of
:func:`fix_text` picks it up if it still applies).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from unveil.core.findings import Edit, Finding, Fix

REMOVE_INVISIBLE = "remove-invisible"
SAFE_KINDS = frozenset({REMOVE_INVISIBLE})
SAFE_CATEGORIES = frozenset({"format"})
MAX_PASSES = 10
""":func:`fix_text` re-analyses and fixes at most this many times (a fix that makes a new
finding with a fix is applied in the next pass)."""


def is_safe(fix: Fix, finding: Finding) -> bool:
    """Whether ``fix`` of ``finding`` is safe (see the module docstring)."""
    return fix.kind in SAFE_KINDS or finding.category in SAFE_CATEGORIES


def chosen_fixes(findings: Iterable[Finding], unsafe: bool = False) -> list[tuple[Finding, Fix]]:
    """``(finding, fix)`` for the first applicable fix of each finding: the first safe one, or
    with ``unsafe`` the first one of any kind."""
    out = []
    for f in findings:
        for fix in f.fixes:
            if unsafe or is_safe(fix, f):
                out.append((f, fix))
                break
    return out


def non_overlapping(edits: Iterable[Edit]) -> list[Edit]:
    """``edits`` sorted by position, duplicates removed, and an edit that starts inside an
    earlier kept one dropped. Two insertions at one offset are both kept, in text order."""
    out: list[Edit] = []
    last_end = -1
    for e in sorted(set(edits), key=lambda e: (e.start, e.end, e.new_text)):
        if e.start < last_end:
            continue
        out.append(e)
        last_end = max(last_end, e.end)
    return out


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """``text`` with :func:`non_overlapping` ``edits`` applied (offsets into ``text``)."""
    for e in reversed(non_overlapping(edits)):
        start = min(max(e.start, 0), len(text))
        end = min(max(e.end, start), len(text))
        text = text[:start] + e.new_text + text[end:]
    return text


def remove_invisible_edits(findings: Iterable[Finding]) -> list[Edit]:
    """Every edit of every ``remove-invisible`` fix (the editor's "remove all invisible
    characters" action)."""
    return [e for f in findings for fix in f.fixes if fix.kind == REMOVE_INVISIBLE for e in fix.edits]


def safe_edits(findings: Iterable[Finding], unsafe: bool = False) -> list[Edit]:
    """The edits of :func:`chosen_fixes`, in one list (one pass of ``--fix``)."""
    return [e for _, fix in chosen_fixes(findings, unsafe) for e in fix.edits]


@dataclass
class FixResult:
    """What :func:`fix_text` did: the ``text`` after fixing, the ``applied`` ``(rule id, fix
    title)`` pairs in order, and ``passes`` run."""

    original: str
    text: str
    applied: list[tuple[str, str]] = field(default_factory=list)
    passes: int = 0

    @property
    def changed(self) -> bool:
        return self.text != self.original


def fix_text(text: str, analyse: Callable[[str], Sequence[Finding]], unsafe: bool = False) -> FixResult:
    """Fix ``text`` until no chosen fix is left (at most :data:`MAX_PASSES` passes).
    ``analyse(text)`` returns the findings of a text (the caller's settings and path)."""
    result = FixResult(text, text)
    current = text
    for _ in range(MAX_PASSES):
        chosen = chosen_fixes(analyse(current), unsafe)
        if not chosen:
            break
        new = apply_edits(current, [e for _, fix in chosen for e in fix.edits])
        result.passes += 1
        if new == current:
            break
        result.applied += [(f.rule, fix.title) for f, fix in chosen]
        current = new
    result.text = current
    return result


_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def split_lines(text: str) -> list[str]:
    """``text`` split after ``\\n``, ``\\r\\n`` and ``\\r`` only (the document model's line
    breaks), each line keeping its end."""
    return _LINES.findall(text)


def unified_diff(path: str, before: str, after: str, escape: Callable[[str], str] | None = None) -> str:
    """A unified diff (``--- a/PATH`` / ``+++ b/PATH``, 3 lines of context) of ``before`` →
    ``after``; ``""`` when equal. Every diff line ends with ``\\n`` (the original line end is
    not shown); a last line without one is followed by ``\\ No newline at end of file`` as in
    git. ``escape`` (e.g. :func:`unveil.reporters.common.printable`) is applied to each line's
    content, so removed invisible characters show as escapes; tabs are kept."""
    if before == after:
        return ""
    esc = (lambda s: "\t".join(escape(part) for part in s.split("\t"))) if escape else (lambda s: s)
    out = []
    a, b = split_lines(before), split_lines(after)
    for line in difflib.unified_diff(a, b, f"a/{path}", f"b/{path}", n=3, lineterm=""):
        if line.startswith(("---", "+++", "@@")):
            out.append(esc(line.rstrip("\r\n")) + "\n")
            continue
        body = line.rstrip("\r\n")
        out.append(esc(body) + "\n")
        if body == line:
            out.append("\\ No newline at end of file\n")
    return "".join(out)
