"""Instruction-likeness: does a piece of hidden text read as an instruction to the model?

STUB — owned by the markup work; the interface is what checks rely on.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Verdict:
    """``level`` is ``"instruction"`` (addressed to the model: imperatives, overrides, concealment,
    commands, URLs, secret paths), ``"prose"`` (natural-language text), ``"short"`` (a few words,
    a marker) or ``"empty"``. ``signals`` names what matched, for messages."""

    level: str
    signals: tuple[str, ...] = ()


def classify(text: str) -> Verdict:
    """Classify hidden ``text``. Never raises."""
    words = text.split()
    if not words:
        return Verdict("empty")
    return Verdict("prose" if len(words) >= 6 else "short")
