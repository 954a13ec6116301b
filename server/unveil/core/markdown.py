"""The markdown layer: what renders and what is hidden, from markdown-it-py's CommonMark parse.

STUB — owned by the markup work; the interface below is what checks rely on.

All spans are code-point offsets into the document text.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from unveil.core.document import Document


@dataclass(frozen=True)
class Span:
    start: int
    end: int


@dataclass(frozen=True)
class Heading:
    """An ATX or setext heading: ``line`` 0-based, ``level`` 1–6, ``title`` plain text, and the
    section it opens: ``[section_start, section_end)`` up to the next heading of any level."""

    line: int
    level: int
    title: str
    section_start: int
    section_end: int


@dataclass
class MarkdownLayer:
    """Parse results the checks and the cost model share.

    * ``frontmatter`` — the whole block including both ``---`` fences, or ``None``;
      ``frontmatter_body`` — the YAML text between the fences.
    * ``body_start`` — offset where the markdown body begins (after the frontmatter).
    * ``code`` — fenced/indented code blocks and inline code spans (text shown literally).
    * ``headings`` — in document order.
    """

    frontmatter: Span | None = None
    frontmatter_body: Span | None = None
    body_start: int = 0
    code: list[Span] = field(default_factory=list)
    headings: list[Heading] = field(default_factory=list)

    def in_code(self, offset: int) -> bool:
        return any(s.start <= offset < s.end for s in self.code)

    def in_frontmatter(self, offset: int) -> bool:
        return self.frontmatter is not None and self.frontmatter.start <= offset < self.frontmatter.end


def parse(doc: Document) -> MarkdownLayer:
    """Parse ``doc`` into a :class:`MarkdownLayer`. Never raises on any text."""
    return MarkdownLayer()
