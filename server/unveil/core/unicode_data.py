"""Small hand-maintained Unicode tables for the character checks (:mod:`unveil.core.checks.unicode`).

Character *properties* (Default_Ignorable, Bidi_Control, scripts, emoji, gc=Cn …) come from the
``regex`` module's Unicode 17 data, never from this file or from ``unicodedata`` (Unicode 14 on
Python 3.11). This file only holds what no property gives:

* :data:`CONFUSABLES` — Cyrillic, Greek, Armenian and Cherokee letters that look like ASCII Latin
  letters, with their ASCII prototype. Source: Unicode ``confusables.txt`` (UTS #39), restricted
  to single-letter mappings whose prototype is one ASCII letter.
* :data:`CONTROL_NAMES` — names of C0/C1 controls (``unicodedata.name`` has none for gc=Cc).
* :data:`RGI_TAG_FLAGS` — the three RGI emoji tag sequences (England, Scotland, Wales); source:
  Unicode ``emoji-sequences.txt`` (RGI_Emoji_Tag_Sequence), unchanged since Emoji 5.0.
* :func:`variation_sequences` — every registered variation sequence (base code point, selector),
  read once from three bundled Unicode data files in ``unveil/data/unicode/``:
  ``emoji-variation-sequences.txt`` (UTS #51, Emoji 15.0: text/emoji presentation with
  VS15/VS16), ``StandardizedVariants.txt`` (UCD 15.0: VS1–VS3 and Mongolian FVS sequences) and
  ``ivd-bases.txt`` (the Ideographic Variation Database, UTS #37: ideograph + VS17–VS256, a
  compact table derived from ``IVD_Sequences.txt``). The first two are copied unchanged from
  Debian's ``unicode-data`` 15.0.0 package; provenance of all three is in
  ``unveil/data/README.md``. Gap: sequences registered after Unicode 15.0 (emoji and
  standardized) or after the bundled IVD release are not known, so such a selector is reported
  (a warning at most for a single selector after a Han or emoji base).
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from pathlib import Path

_DATA = Path(__file__).resolve().parent.parent / "data" / "unicode"

# Confusable letter → (ASCII prototype, script name). From confusables.txt; only the letters
# whose skeleton is a single ASCII letter. Deliberately excludes letters used as math/unit
# symbols with no Latin look-alike (μ, π, Ω, Δ …).
_CYRILLIC = {
    "\u0430": "a",
    "\u0435": "e",
    "\u043e": "o",
    "\u0440": "p",
    "\u0441": "c",
    "\u0443": "y",
    "\u0445": "x",
    "\u0455": "s",
    "\u0456": "i",
    "\u0458": "j",
    "\u04bb": "h",
    "\u0501": "d",
    "\u051b": "q",
    "\u051d": "w",
    "\u04cf": "l",
    "\u0475": "v",
    "\u0410": "A",
    "\u0412": "B",
    "\u0415": "E",
    "\u041a": "K",
    "\u041c": "M",
    "\u041d": "H",
    "\u041e": "O",
    "\u0420": "P",
    "\u0421": "C",
    "\u0422": "T",
    "\u0425": "X",
    "\u0405": "S",
    "\u0406": "I",
    "\u0408": "J",
    "\u04ae": "Y",
    "\u051a": "Q",
    "\u051c": "W",
    "\u04c0": "l",
}
_GREEK = {
    "\u03b1": "a",
    "\u03bf": "o",
    "\u03bd": "v",
    "\u03c1": "p",
    "\u03b9": "i",
    "\u03c5": "u",
    "\u03b3": "y",
    "\u0391": "A",
    "\u0392": "B",
    "\u0395": "E",
    "\u0396": "Z",
    "\u0397": "H",
    "\u0399": "I",
    "\u039a": "K",
    "\u039c": "M",
    "\u039d": "N",
    "\u039f": "O",
    "\u03a1": "P",
    "\u03a4": "T",
    "\u03a5": "Y",
    "\u03a7": "X",
    "\u03f3": "j",
}
_ARMENIAN = {
    "\u0585": "o",
    "\u057d": "u",
    "\u0578": "n",
    "\u0570": "h",
    "\u0581": "g",
    "\u0566": "q",
    "\u0561": "w",
    "\u0575": "j",
    "\u054d": "U",
    "\u054f": "S",
    "\u0555": "O",
    "\u053c": "L",
}
_CHEROKEE = {
    "\u13aa": "A",
    "\u13f4": "B",
    "\u13df": "C",
    "\u13a0": "D",
    "\u13ac": "E",
    "\u13c0": "G",
    "\u13bb": "H",
    "\u13ab": "J",
    "\u13e6": "K",
    "\u13de": "L",
    "\u13b7": "M",
    "\u13e2": "P",
    "\u13a1": "R",
    "\u13da": "S",
    "\u13a2": "T",
    "\u13d9": "V",
    "\u13b3": "W",
    "\u13c3": "Z",
}

CONFUSABLES: dict[str, tuple[str, str]] = {}
for _script, _table in (("Cyrillic", _CYRILLIC), ("Greek", _GREEK), ("Armenian", _ARMENIAN), ("Cherokee", _CHEROKEE)):
    for _ch, _proto in _table.items():
        CONFUSABLES[_ch] = (_proto, _script)
del _script, _table, _ch, _proto

CONTROL_NAMES: dict[int, str] = {
    0x00: "NUL",
    0x01: "SOH",
    0x02: "STX",
    0x03: "ETX",
    0x04: "EOT",
    0x05: "ENQ",
    0x06: "ACK",
    0x07: "BEL",
    0x08: "BS (backspace)",
    0x09: "TAB",
    0x0A: "LF",
    0x0B: "VT (vertical tab)",
    0x0C: "FF (form feed)",
    0x0D: "CR (carriage return)",
    0x0E: "SO",
    0x0F: "SI",
    0x10: "DLE",
    0x11: "DC1",
    0x12: "DC2",
    0x13: "DC3",
    0x14: "DC4",
    0x15: "NAK",
    0x16: "SYN",
    0x17: "ETB",
    0x18: "CAN",
    0x19: "EM",
    0x1A: "SUB",
    0x1B: "ESC",
    0x1C: "FS",
    0x1D: "GS",
    0x1E: "RS",
    0x1F: "US",
    0x7F: "DEL",
    0x85: "NEL (next line)",
    0x9B: "CSI (C1 control sequence introducer)",
    0x9D: "OSC (C1 operating system command)",
}

_TAG = 0xE0000
RGI_TAG_FLAGS: frozenset[str] = frozenset(
    "".join(chr(_TAG + ord(c)) for c in code) + "\U000e007f" for code in ("gbeng", "gbsct", "gbwls")
)
"""Tag-character tails of the RGI flags: the tags after U+1F3F4 WAVING BLACK FLAG, ending with
U+E007F CANCEL TAG."""


def cp_label(ch: str) -> str:
    """``"U+200B ZERO WIDTH SPACE"`` for one code point; the name is omitted when unknown
    (unassigned, surrogates, private use, names newer than the stdlib's Unicode data)."""
    cp = ord(ch)
    name = CONTROL_NAMES.get(cp) if cp < 0xA0 else None
    if name is None:
        try:
            name = unicodedata.name(ch)
        except ValueError:
            name = ""
    return f"U+{cp:04X} {name}".rstrip()


def cp_id(ch: str) -> str:
    """``"U+200B"`` for one code point."""
    return f"U+{ord(ch):04X}"


def _read(name: str) -> str:
    try:
        return (_DATA / name).read_text(encoding="utf-8")
    except OSError:  # pragma: no cover - broken install: no sequence is registered
        return ""


def _ucd_pairs(text: str) -> set[tuple[int, int]]:
    """``(base, selector)`` pairs from a UCD-style file (``XXXX FE0F ; …`` lines)."""
    out: set[tuple[int, int]] = set()
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        seq = line.split(";", 1)[0].split()
        if len(seq) == 2:
            try:
                out.add((int(seq[0], 16), int(seq[1], 16)))
            except ValueError:
                continue
    return out


@lru_cache(maxsize=1)
def emoji_variation_sequences() -> frozenset[tuple[int, int]]:
    """Registered emoji variation sequences ``(base, 0xFE0E | 0xFE0F)`` (Emoji 15.0)."""
    return frozenset(_ucd_pairs(_read("emoji-variation-sequences.txt")))


@lru_cache(maxsize=1)
def standardized_variants() -> frozenset[tuple[int, int]]:
    """Standardized variation sequences ``(base, selector)`` (UCD 15.0; VS1–VS3, Mongolian FVS)."""
    return frozenset(_ucd_pairs(_read("StandardizedVariants.txt")))


@lru_cache(maxsize=1)
def ideographic_variation_sequences() -> dict[int, frozenset[int]]:
    """Ideograph base → registered selectors (code points U+E0100–E01EF) from the IVD."""
    out: dict[int, frozenset[int]] = {}
    for line in _read("ivd-bases.txt").splitlines():
        if not line or line.startswith("#"):
            continue
        try:
            base, ranges = line.split()
            vs: set[int] = set()
            for r in ranges.split(","):
                a, _, b = r.partition("-")
                vs.update(range(0xE0100 + int(a), 0xE0100 + int(b or a) + 1))
            out[int(base, 16)] = frozenset(vs)
        except ValueError:
            continue
    return out


def registered_variation(base: str, selector: str) -> bool:
    """Whether ``base`` + ``selector`` is a registered variation sequence (emoji, standardized
    or ideographic). ``base`` and ``selector`` are single code points."""
    if not base or not selector:
        return False
    b, v = ord(base), ord(selector)
    if v >= 0xE0100:
        return v in ideographic_variation_sequences().get(b, ())
    if v in (0xFE0E, 0xFE0F) and (b, v) in emoji_variation_sequences():
        return True
    return (b, v) in standardized_variants()
