"""Token cost per file kind (STUB — owned by the cost work)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class SectionCost:
    """Tokens of the section opened by the heading on 0-based ``line``."""

    line: int
    level: int
    title: str
    tokens: int


@dataclass(frozen=True)
class TokenReport:
    """o200k tokens a file adds to every session (``session``) and once invoked (``invoke``),
    how they were derived (``basis``), per-heading ``sections`` and the ``kind`` label."""

    session: int
    invoke: int
    kind: str
    kind_label: str
    basis: str
    sections: tuple[SectionCost, ...] = ()
    notes: tuple[str, ...] = ()


def token_report(ctx, wait: bool = True) -> TokenReport | None:
    return None
