"""A letter grade A–F per file from its findings (STUB — owned by the cost work)."""

from __future__ import annotations


def grade(findings) -> str:
    return "A"
