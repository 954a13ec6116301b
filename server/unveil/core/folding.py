"""``str.casefold`` and ``str.lower`` of long texts, without CPython's work buffer.

CPython case-maps a non-ASCII string into a buffer of three UCS-4 code units per code point
before it builds the result (``case_operation`` in ``Objects/unicodeobject.c``: a code point's
full mapping is at most three), so folding a 10 MB file held in two bytes a code point touches
40 MB of buffer besides the 20 MB result: +57 MiB of peak memory, measured, for each of the
several folded copies an analysis makes of such a file. ``str.translate`` with a table of the
code points the text holds writes the result alone (+20 MiB), at about 45 ns a code point
instead of 5, so it is used from :data:`TABLE_MIN` code points on.

Exact: ``str.casefold`` maps each code point alone (full case folding, Unicode's
CaseFolding.txt, has no context), so does ``str.lower`` but for U+03A3 GREEK CAPITAL LETTER
SIGMA, whose lowercase depends on the letters around it (Unicode's SpecialCasing.txt,
Final_Sigma): a text holding it is lowered by ``str.lower``. Both functions return exactly what
``text.casefold()`` and ``text.lower()`` return (lengths may change, as there).
"""

from __future__ import annotations

from typing import Callable

TABLE_MIN = 1_000_000
"""Code points from which a non-ASCII text is mapped through a table (shorter ones, and ASCII
ones at any length, which CPython maps without the buffer, by the ``str`` method)."""

TABLE_MAX = 50_000
"""Distinct code points a table may grow to before the text is mapped by the ``str`` method
after all (a text of many scripts: the table's entries would outweigh the buffer)."""


class _TooMany(Exception):
    pass


class _Table(dict):
    """``ord(c) → mapping of c`` for ``str.translate``: every ASCII code point given, others
    added as the translation meets them (``__missing__``, once per distinct code point)."""

    def __init__(self, base: dict[int, int | str], how: Callable[[str], str]) -> None:
        super().__init__(base)
        self.how = how

    def __missing__(self, key: int) -> int | str:
        if len(self) >= TABLE_MAX:
            raise _TooMany
        c = chr(key)
        got = self.how(c)
        value: int | str = key if got == c else got
        self[key] = value
        return value


_ASCII_LOWER: dict[int, int | str] = {c: c + 32 if 65 <= c <= 90 else c for c in range(128)}


def _mapped(text: str, how: Callable[[str], str]) -> str:
    try:
        return text.translate(_Table(_ASCII_LOWER, how))
    except _TooMany:
        return how(text)


def casefold(text: str) -> str:
    """``text.casefold()`` (see the module docstring for how, from :data:`TABLE_MIN` code points)."""
    if len(text) < TABLE_MIN or text.isascii():
        return text.casefold()
    return _mapped(text, str.casefold)


def lower(text: str) -> str:
    """``text.lower()`` (see the module docstring for how, from :data:`TABLE_MIN` code points)."""
    if len(text) < TABLE_MIN or text.isascii() or "\u03a3" in text:
        return text.lower()
    return _mapped(text, str.lower)
