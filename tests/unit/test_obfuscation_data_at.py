"""The ``data:`` URI decoder's start positions (checks/obfuscation.py ``_DATA_AT``), found in
the text's ASCII bytes instead of a lower-cased copy of it."""

from __future__ import annotations

import random
import re
import sys

import pytest

from unveil.core import scope
from unveil.core.checks import obfuscation


def test_no_other_code_point_reads_as_a_letter_of_data_colon():
    """What makes the ASCII bytes enough: no code point but the ASCII ones lowers, case-folds or
    matches under ``re.IGNORECASE`` to ``d``, ``a``, ``t`` or ``:``."""
    letters = {c: re.compile("(?i)" + re.escape(c)) for c in "dat:"}
    odd = []
    for cp in range(128, sys.maxunicode + 1):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        ch = chr(cp)
        if ch.lower() in letters or ch.casefold() in letters or any(rx.fullmatch(ch) for rx in letters.values()):
            odd.append(cp)
    assert odd == []


@pytest.mark.parametrize("seed", range(8))
def test_data_matches_are_those_of_one_finditer(seed):
    rnd = random.Random(seed)
    pieces = [
        "data:",
        "DATA:",
        "DaTa:",
        "text/plain",
        "image/svg+xml",
        ";base64",
        ",",
        "aGVsbG8gd29ybGQ=",
        "%3Csvg%3E",
        " ",
        "\n",
        "\u0130",
        "\u212a",
        "x",
        "d",
        "ata",
        ":",
        "'",
    ]
    for _ in range(60):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 40)))
        got = [m.span() for m in obfuscation._data_matches(text)]
        assert got == [m.span() for m in obfuscation._DATA.finditer(text)], text


def test_a_long_texts_ascii_bytes_are_kept_only_inside_the_block(monkeypatch):
    monkeypatch.setattr(scope, "LOWERED_SHARE_MAX", 4)
    text = "caf\u00e9 data:text/plain,abcd"
    with scope.analysis(None):
        first = scope.ascii_bytes(text)
        assert first == b"caf? data:text/plain,abcd"
        assert scope.ascii_bytes(text) is not first  # long: encoded at each call
        with scope.ascii_kept(text):
            kept = scope.ascii_bytes(text)
            assert kept == first and scope.ascii_bytes(text) is kept
            other = "another long text"
            assert scope.ascii_bytes(other) is not scope.ascii_bytes(other)  # another text: not kept
        assert scope.ascii_bytes(text) is not kept


@pytest.mark.parametrize("seed", range(6))
def test_lines_in_pieces_are_the_lines_of_the_whole_text(monkeypatch, seed):
    """The rot13 and reversal decoder reads a long text's lines a piece at a time
    (``_iter_lines``, over ``literal_index.line_chunks``): the same non-empty lines at the same
    offsets, with pieces of a few code points, texts with ``\\r``, ``\\n`` and ``\\r\\n``."""
    from unveil.core.checks import literal_index

    rnd = random.Random(seed)
    monkeypatch.setattr(literal_index, "WORD_CHUNK", rnd.choice([1, 2, 3, 7]))
    for _ in range(80):
        text = "".join(
            rnd.choice(["a", "bc", " ", "\n", "\r", "\r\n", "\n\n", "\u00e9"]) for _ in range(rnd.randint(0, 40))
        )
        assert list(obfuscation._iter_lines(text)) == obfuscation._lines_of(text), ascii(text)
