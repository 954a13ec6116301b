"""Helpers of the clause-model family tests (``test_clauses_round6.py``, ``test_clauses_round7.py``):
the clause check alone on a text analysed as an AGENTS.md."""

from __future__ import annotations

from unveil.core import markdown
from unveil.core.checks import Context, clauses
from unveil.core.config import DEFAULT_SETTINGS
from unveil.core.document import Document
from unveil.core.findings import Severity


def run(text: str):
    """The clause check's findings on ``text``."""
    doc = Document(text)
    ctx = Context(doc=doc, markdown=markdown.parse(doc), kind="agents-md", settings=DEFAULT_SETTINGS, path="AGENTS.md")
    return clauses.check(ctx)


def found(text: str, rule: str) -> list[tuple[Severity, str]]:
    """``(severity, text of the range)`` of each finding of ``rule``."""
    return [(f.severity, text[f.start : f.end]) for f in run(text) if f.rule == rule]


def quiet(text: str) -> None:
    """Assert that no clause finding on ``text`` is at warning or above."""
    got = [(f.rule, f.severity.label, text[f.start : f.end]) for f in run(text) if f.severity <= Severity.WARNING]
    assert got == [], text
