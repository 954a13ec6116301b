"""The checks: functions from a :class:`Context` to findings.

Each check module exposes ``check(ctx) -> Iterable[Finding]`` and emits only rule ids that
``rules/*.toml`` documents with ``check = "<module name>"``. :func:`unveil.core.analyze.analyze`
runs them all, then applies rule metadata (enabled rules, severity overrides).
"""

from __future__ import annotations

from dataclasses import dataclass

from unveil.core.config import Settings
from unveil.core.document import Document
from unveil.core.markdown import MarkdownLayer


@dataclass
class Context:
    """What a check sees: the document, its markdown layer, its file kind id and the settings.
    ``path`` is the file's path or ``None`` (untitled buffers)."""

    doc: Document
    markdown: MarkdownLayer
    kind: str
    settings: Settings
    path: str | None = None
    imports: object | None = None  # unveil.core.imports.ImportTree for CLAUDE.md / GEMINI.md
    frontmatter: object | None = None  # unveil.core.frontmatter.Frontmatter, parsed once per analysis
    incremental: object | None = None  # unveil.core.incremental.DocumentCache of an open document (server)
    token_report: object | None = None  # unveil.core.cost.TokenReport once a check computed it (reused)

    def parsed_frontmatter(self):
        """The document's :class:`~unveil.core.frontmatter.Frontmatter` (parsed once, then shared)."""
        if self.frontmatter is None:
            from unveil.core import frontmatter

            self.frontmatter = frontmatter.parse(self.doc.text)
        return self.frontmatter


def all_checks():
    """The check functions in a fixed order, imported lazily."""
    from unveil.core.checks import (
        clauses,
        commands,
        directives,
        escalation,
        frontmatter_schema,
        limits,
        markup,
        obfuscation,
        unicode,
    )

    return [
        unicode.check,
        markup.check,
        directives.check,
        obfuscation.check,
        limits.check,
        frontmatter_schema.check,
        commands.check,
        escalation.check,
        clauses.check,
    ]
