"""Redacted forms of secret values, for every place a secrets finding is shown (messages,
``hidden_text``, and therefore text, JSON, SARIF output and editor diagnostics).

:func:`redact` keeps a recognisable prefix and the last four characters, e.g.
``ghp_…1234`` for a GitHub token: enough to tell which key to rotate, not enough to use it.
"""

from __future__ import annotations


def redact(value: str) -> str:
    """``value`` with its middle replaced by ``…``: the first 4 and last 4 code points of a value
    of at least 16 code points (``ghp_…1234``); the first 2 of a shorter one (``ab…``); the
    empty string stays empty. Whitespace runs are collapsed first (a multi-line PEM block
    becomes ``----…----``)."""
    v = " ".join(value.split())
    if not v:
        return v
    if len(v) >= 16:
        return f"{v[:4]}…{v[-4:]}"
    return f"{v[:2]}…"
