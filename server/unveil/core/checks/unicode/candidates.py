"""Which code points are candidates and their technique (bucket): the Unicode property patterns
(Unicode 17 data from ``regex``: Default_Ignorable, Bidi_Control, Co, Cn, Cs, scripts), the
candidate scans (ASCII controls; non-ASCII runs) and :func:`bucket_of`."""

from __future__ import annotations

import re

import regex

from unveil.core import scope

# --------------------------------------------------------------------------------------------
# Scanners
# --------------------------------------------------------------------------------------------
# ASCII controls that matter (everything in C0 but TAB/LF, CR only when not part of CRLF, DEL).
ASCII_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]+|\r(?!\n)")
_CONTROL_BYTES = bytes(
    ord("x") if re.match(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", chr(b)) else ord(" ") for b in range(256)
)
"""``bytes.translate`` table: the code points of :data:`ASCII_CONTROLS`'s class to ``x``, every
other byte (and so every non-ASCII code point, encoded as ``?``) to a space."""
_X_RUNS = re.compile(rb"x+")
_LONE_CR = re.compile(r"\r(?!\n)")


def ascii_control_spans(text: str) -> list[tuple[int, int]]:
    """The spans of :data:`ASCII_CONTROLS`'s matches in ``text``, in order. The class runs are
    found in the text's ASCII bytes (one byte per code point, others as ``?``), translated to
    ``x`` and space (the alternation made every position of a 300 KB text try both branches:
    about 70 MB/s); ``\r`` is looked at only where the text has one. A class run holds no
    ``\r``, so the two lists never overlap."""
    mapped = scope.ascii_bytes(text).translate(_CONTROL_BYTES)
    spans = [m.span() for m in _X_RUNS.finditer(mapped)] if b"x" in mapped else []
    if "\r" in text:
        spans += [m.span() for m in _LONE_CR.finditer(text)]
        spans.sort()
    return spans


NON_ASCII = regex.compile(r"[^\x00-\x7f]+")
"""Maximal runs of non-ASCII code points. With ``regex`` rather than ``re``: the same runs,
found about six times faster in a long non-ASCII text (``re`` tests a class code point by code
point; 294 KB corpus file: 2.5 ms → 0.4 ms, every keystroke; ``benchmarks/profile.md``,
issue 10, session 18)."""


# Non-ASCII candidates (Unicode 17 properties from `regex`).
# ZWJ inside an emoji sequence is excluded here already, so emoji-heavy text yields few candidates
# (the handlers check the same contexts again); VS16 is always a candidate and the handler keeps
# registered emoji variation sequences quiet (unicode_data.registered_variation).
_CANDIDATE_CLASS = r"\p{DI}\p{Bidi_C}\p{Co}\p{Cn}\p{Cs}\x80-\x9f\u2028\u2029\u2800\u3000\ufffc"


CANDIDATE = regex.compile(
    r"(?V1)(?:[[" + _CANDIDATE_CLASS + r"]--[\ufe0f\u200d]]"
    r"|\ufe0f"  # every VS16: registered emoji sequences are told apart in the handler
    r"|(?<![\p{ExtPict}\p{EMod}\ufe0f\u20e3])\u200d|\u200d(?!\p{ExtPict}))+"
)


_P = {
    name: regex.compile(pat)
    for name, pat in {
        "emoji": r"\p{Emoji}",
        "extpict": r"\p{ExtPict}",
        "emod": r"\p{Emoji_Modifier}",
        "han": r"\p{scx=Han}",
        "cjk": r"[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}\p{scx=Bopomofo}\uff00-\uffef]",
        "sea": r"[\p{scx=Thai}\p{scx=Lao}\p{scx=Khmer}\p{scx=Myanmar}\p{scx=Tai_Tham}\p{scx=Tai_Viet}"
        r"\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}\p{scx=Bopomofo}]",
        "joining": r"[\p{scx=Arabic}\p{scx=Syriac}\p{scx=Nko}\p{scx=Mongolian}\p{scx=Devanagari}"
        r"\p{scx=Bengali}\p{scx=Gurmukhi}\p{scx=Gujarati}\p{scx=Oriya}\p{scx=Tamil}"
        r"\p{scx=Telugu}\p{scx=Kannada}\p{scx=Malayalam}\p{scx=Sinhala}\p{scx=Tibetan}"
        r"\p{scx=Myanmar}\p{scx=Khmer}\p{scx=Phags_Pa}\p{scx=Kaithi}\p{scx=Sharada}\p{scx=Grantha}]",
        "virama": r"\p{ccc=9}",
        "mongolian": r"\p{scx=Mongolian}",
        "duployan": r"\p{scx=Duployan}",
        "jamo": r"[\p{Hangul_Syllable_Type=L}\p{Hangul_Syllable_Type=V}\p{Hangul_Syllable_Type=T}]",
        "mark": r"\p{M}",
        "hebrew": r"\p{scx=Hebrew}",
        "std_variant_base": r"[\p{Sm}\p{scx=Han}\p{scx=Myanmar}\p{scx=Phags_Pa}\p{scx=Manichaean}"
        r"\p{scx=Egyptian_Hieroglyphs}\p{Emoji}\u2200-\u22ff]",
        "cn": r"\p{Cn}",
        "nonchar": r"\p{Noncharacter_Code_Point}",
        "latin": r"\p{scx=Latin}",
        "letter": r"\p{L}",
    }.items()
}


RTL_LETTER = regex.compile(r"(?V1)[[\p{bc=R}\p{bc=AL}]--\p{Bidi_C}]")


DEFAULT_IGNORABLE = regex.compile(r"\p{DI}")


def has_property(prop: str, ch: str) -> bool:
    return bool(ch) and _P[prop].match(ch) is not None


# --------------------------------------------------------------------------------------------
# Code-point classes (buckets)
# --------------------------------------------------------------------------------------------
ZERO_WIDTH = frozenset("\u200b\u200c\u200d\u2060\ufeff\u180e")


BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


BIDI_MARKS = frozenset("\u200e\u200f\u061c")


MONGOLIAN_FVS = frozenset("\u180b\u180c\u180d\u180f")


HANGUL_FILLERS = frozenset("\u115f\u1160\u3164\uffa0")


def bucket_of(ch: str) -> str:
    """The technique a candidate code point belongs to (see the module docstring)."""
    cp = ord(ch)
    if cp < 0xA0:
        if cp == 0x85:
            return "ls"
        return "cc"
    if 0xE0000 <= cp <= 0xE007F:
        return "tag"
    if ch in ZERO_WIDTH:
        return "zw"
    if ch in BIDI_CONTROLS:
        return "bidi"
    if ch in BIDI_MARKS:
        return "mark"
    if 0xFE00 <= cp <= 0xFE0F or 0xE0100 <= cp <= 0xE01EF or ch in MONGOLIAN_FVS:
        return "vs"
    if 0x2061 <= cp <= 0x2064:
        return "math"
    if cp in (0x2028, 0x2029):
        return "ls"
    if cp == 0xAD:
        return "shy"
    if cp == 0x34F:
        return "cgj"
    if ch in HANGUL_FILLERS:
        return "hangul"
    if cp in (0x17B4, 0x17B5):
        return "khmer"
    if 0x206A <= cp <= 0x206F:
        return "deprecated"
    if cp == 0x2065 or 0xFFF0 <= cp <= 0xFFF8 or 0xE0080 <= cp <= 0xE0FFF:
        return "reserved"
    if 0x1BCA0 <= cp <= 0x1BCA3:
        return "shorthand"
    if 0x1D173 <= cp <= 0x1D17A:
        return "music"
    if ch in "\u00a0\u202f":
        return "nbsp"
    if cp == 0x2800:
        return "braille"
    if cp == 0x3000:
        return "idsp"
    if cp == 0xFFFC:
        return "objrep"
    if 0xD800 <= cp <= 0xDFFF:
        return "surrogate"
    if _P["cn"].match(ch):
        return "cn"
    if 0xE000 <= cp <= 0xF8FF or cp >= 0xF0000:
        return "pua"
    return "di"  # any other Default_Ignorable (future additions)


NO_BREAK_SPACES = re.compile("[\u00a0\u202f]+")
