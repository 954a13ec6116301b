"""Markdown/HTML hidden-content checks (STUB — owned by the markup work)."""

from __future__ import annotations


def check(ctx):
    return []
