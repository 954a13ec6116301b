"""Findings: what a check reports, in code-point offsets, with optional fixes.

A :class:`Finding` is adapter-neutral: the LSP layer turns it into a ``Diagnostic`` (its
``severity`` values match LSP's ``DiagnosticSeverity`` numbers), the CLI into text, JSON or
SARIF results.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace


class Severity(enum.IntEnum):
    """Finding severity. Values are LSP ``DiagnosticSeverity`` numbers (1 is most severe)."""

    ERROR = 1
    WARNING = 2
    INFO = 3
    HINT = 4

    @property
    def label(self) -> str:
        """Lower-case name used in data files, JSON and the CLI: error|warning|info|hint."""
        return self.name.lower()

    @classmethod
    def parse(cls, value: "str | int | Severity") -> "Severity":
        """Parse ``"error"``/``"warning"``/``"warn"``/``"info"``/``"information"``/``"hint"`` or 1–4.

        Raises ``ValueError`` for anything else.
        """
        if isinstance(value, Severity):
            return value
        if isinstance(value, int):
            return cls(value)
        key = str(value).strip().lower()
        aliases = {"warn": "warning", "information": "info", "note": "info"}
        key = aliases.get(key, key)
        try:
            return cls[key.upper()]
        except KeyError:
            raise ValueError(f"unknown severity {value!r}; expected error, warning, info or hint") from None


@dataclass(frozen=True)
class Edit:
    """Replace code points ``[start, end)`` of the document with ``new_text``."""

    start: int
    end: int
    new_text: str


@dataclass(frozen=True)
class Fix:
    """A quick fix: a title and the edits that apply it.

    ``kind`` names the fix family so adapters can group them, e.g. ``"remove-invisible"``
    (delete invisible characters) or ``"reveal-comment"`` (turn hidden markup into visible text).
    """

    title: str
    edits: tuple[Edit, ...]
    kind: str = "quickfix"


@dataclass(frozen=True)
class Finding:
    """One problem at ``[start, end)`` (code-point offsets into the analysed text).

    * ``rule`` — stable rule id, e.g. ``"HID001"``; ``category`` — e.g. ``"hidden-content"``.
    * ``message`` — says what is hidden and what it says.
    * ``hidden_text`` — the revealed content (decoded payload, comment body), shown on hover.
    * ``fixes`` — quick fixes; ``tokens`` — o200k tokens of the hidden span, when counted.
    """

    rule: str
    severity: Severity
    start: int
    end: int
    message: str
    category: str = "hidden-content"
    hidden_text: str | None = None
    fixes: tuple[Fix, ...] = ()
    tokens: int | None = None
    data: dict = field(default_factory=dict, compare=False, hash=False)
    related: tuple[tuple[str, int, int, int, int, str], ...] = ()
    """Other places this finding is about: ``(path, start_line, start_column, end_line,
    end_column, message)`` with 0-based lines and code-point columns (end exclusive), e.g. where
    in an imported file the text reported on the import line is. LSP ``relatedInformation``,
    SARIF ``relatedLocations``, JSON ``related``."""

    def with_(self, **changes) -> "Finding":
        """A copy with ``changes`` applied (dataclasses.replace)."""
        return replace(self, **changes)
