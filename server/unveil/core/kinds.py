"""File kinds (STUB — owned by the cost work)."""

from __future__ import annotations


def detect_kind(path, frontmatter=None) -> str:
    return "markdown"
