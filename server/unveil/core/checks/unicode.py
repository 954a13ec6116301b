"""Character-level hidden-content checks (STUB — owned by the unicode work)."""

from __future__ import annotations


def check(ctx):
    return []
