"""``unveil.core.folding``: ``str.casefold`` and ``str.lower`` of long texts through a table
give exactly what the ``str`` methods give."""

from __future__ import annotations

import random

import pytest

from unveil.core import folding

_ALPHABET = [
    "a",
    "Z",
    " ",
    "\n",
    "\u00df",  # ß: casefolds to "ss"
    "\u0130",  # İ: lowers to two code points
    "\u03a3",  # Σ: final sigma, lowered by context
    "\u03c3",
    "\ufb06",  # ﬆ
    "\u212a",  # Kelvin sign: lowers to ASCII k
    "\u017f",  # long s: casefolds to s
    "\u1e9e",  # capital sharp s
    "\u13a0",  # Cherokee: casefolds to upper case
    "\u251c",
    "\U0001d400",
    "\U00010400",  # Deseret capital: lowers to an astral letter
    "\ud800",  # a lone surrogate
    "\u00c9",
]


@pytest.mark.parametrize("seed", range(10))
def test_table_folding_equals_the_str_methods(monkeypatch, seed):
    monkeypatch.setattr(folding, "TABLE_MIN", 0)
    rnd = random.Random(seed)
    for _ in range(50):
        text = "".join(rnd.choice(_ALPHABET) for _ in range(rnd.randint(0, 60)))
        assert folding.casefold(text) == text.casefold(), ascii(text)
        assert folding.lower(text) == text.lower(), ascii(text)


def test_a_text_of_many_scripts_falls_back_to_the_str_method(monkeypatch):
    monkeypatch.setattr(folding, "TABLE_MIN", 0)
    monkeypatch.setattr(folding, "TABLE_MAX", 200)
    text = "".join(chr(c) for c in range(0x100, 0x600))  # 1,280 distinct code points
    calls = []
    real = folding._Table.__missing__

    def counted(self, key):
        calls.append(key)
        return real(self, key)

    monkeypatch.setattr(folding._Table, "__missing__", counted)
    assert folding.casefold(text) == text.casefold()
    assert len(calls) == 200 - 128 + 1  # the table filled up to its bound, then the str method
    calls.clear()
    assert folding.casefold("\u00c9" * 50 + "A") == "\u00e9" * 50 + "a"
    assert calls == [0xC9]  # once per distinct code point


def test_short_and_ascii_texts_use_the_str_method(monkeypatch):
    seen = []
    monkeypatch.setattr(folding, "_mapped", lambda text, how: seen.append(text) or how(text))
    monkeypatch.setattr(folding, "TABLE_MIN", 10)
    assert folding.casefold("\u00c9" * 9) == "\u00e9" * 9
    assert folding.lower("ABCDEFGHIJKL") == "abcdefghijkl"
    assert folding.lower("\u03a3\u00c9" * 6) == ("\u03a3\u00c9" * 6).lower()  # a capital sigma: the str method
    assert seen == []
    assert folding.casefold("\u00c9" * 10) == "\u00e9" * 10
    assert seen == ["\u00c9" * 10]
