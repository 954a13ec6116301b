"""Showing scanned text inside Markdown without making it live.

Anything that comes from a scanned file (a finding's message quotes it, hidden text, file and
import names) or from a scanned repository's configuration (model names in a price table) must
never render as a link, an image, HTML or an autolink in a Markdown view (LSP hover, a job
summary, a rendered report): a hidden ``![x](https://host/beacon.png)`` rendered in a hover makes
the editor fetch the attacker's beacon.

The only construct CommonMark and GFM never interpret inside is code: :func:`code_span` wraps
text in a code span whose backtick fence is longer than any backtick run inside it (CommonMark
0.31 §6.1), :func:`code_block` in a fenced code block (§4.5). Both are inert in every renderer
that follows the spec (VS Code's hover, GitHub, markdown-it).
"""

from __future__ import annotations

import re

_TICKS = re.compile(r"`+")
_LINE_BREAKS = re.compile(r"\r\n|[\r\n\u2028\u2029\x85\x0b\x0c]")


def _fence_len(text: str, minimum: int) -> int:
    longest = max((len(m) for m in _TICKS.findall(text)), default=0)
    return max(minimum, longest + 1)


def code_span(text: str, *, in_table: bool = False) -> str:
    """``text`` as one inline code span (line breaks become spaces, as a code span renders
    them anyway). ``in_table=True`` also escapes ``|`` as ``\\|`` so a GFM table cell is not
    split (GFM spec, example 200: the escape is honoured inside code spans in tables).
    An empty ``text`` gives ``""``."""
    if not text:
        return ""
    text = _LINE_BREAKS.sub(" ", text)
    if in_table:
        text = text.replace("|", "\\|")
    fence = "`" * _fence_len(text, 1)
    # a space on each side when the content starts or ends with a backtick or a space, so the
    # fence is not extended and the content survives the one-space stripping rule
    pad = " " if (text[0] in "` " or text[-1] in "` ") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def code_block(text: str, info: str = "text") -> str:
    """``text`` in a fenced code block whose backtick fence is longer than any backtick run in
    ``text`` (so nothing inside can close it). ``info`` must be our own word, never scanned text."""
    fence = "`" * _fence_len(text, 3)
    body = text if text.endswith("\n") else text + "\n"
    return f"{fence}{info}\n{body}{fence}"


_PLAIN = re.compile(r"[A-Za-z0-9 ,.;:()+=%/'\"?\u00b7\u2248\u00d7\u2013\u2014\u2026-]*")


def inline(text: str) -> str:
    """``text`` unchanged when it is made only of characters that no Markdown construct uses
    (letters, digits, spaces and ``, . ; : ( ) + = % / ' " ? - · ≈ × – — …``) and holds no
    autolink trigger (``://``, ``www.``), else :func:`code_span` of it. For short strings that
    are usually plain (a model name, a count's explanation) but may come from a scanned file
    or repository."""
    if _PLAIN.fullmatch(text) and "://" not in text and "www." not in text.lower():
        return text
    return code_span(text)
