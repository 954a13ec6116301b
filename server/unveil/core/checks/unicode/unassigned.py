"""Code points that are not text: HID009 private-use runs (offset-ASCII decoding), HID010
unassigned code points, noncharacters, lone surrogates and invalid UTF-8 bytes, and
:func:`looks_binary` (the per-file "looks binary" verdict)."""

from __future__ import annotations

import re

import regex

from unveil.core.checks.unicode.candidates import has_property
from unveil.core.checks.unicode.messages import ERROR, HINT, WARNING, labels, quote
from unveil.core.checks.unicode.scan import Scan
from unveil.core.unicode_data import cp_id

BINARY_SAMPLE = 8192  # code points judged by :func:`looks_binary`


def looks_binary(text: str) -> tuple[bool, int, int]:
    """Whether ``text`` looks like binary data rather than text: ``(binary, nul, invalid)``.

    ``nul`` is the number of U+0000 NUL and ``invalid`` the number of invalid UTF-8 bytes (code
    points U+DC80–U+DCFF from ``surrogateescape`` decoding) in the whole text. The verdict is
    taken on the first :data:`BINARY_SAMPLE` code points (≈ bytes for binary data, which decodes
    mostly to ASCII and escaped bytes): binary when the sample holds 4 or more NULs, or when it
    is at least 16 code points long and more than 30% of it are NUL, other C0 controls (not TAB,
    LF, CR, FF or ESC), DEL, C1 controls or invalid bytes. One stray NUL or a few escape
    sequences in real text do not make it binary (they are reported one by one)."""
    nul = text.count("\x00")
    invalid = len(_INVALID_BYTE.findall(text))
    sample = text[:BINARY_SAMPLE]
    if sample.count("\x00") >= 4:
        return True, nul, invalid
    if len(sample) >= 16 and len(_BINARYISH.findall(sample)) * 10 > len(sample) * 3:
        return True, nul, invalid
    return False, nul, invalid


_INVALID_BYTE = regex.compile("[\udc80-\udcff]")
"""Code points of invalid UTF-8 bytes (``surrogateescape``). With ``regex``: ``re`` tests the
class code point by code point, five times slower over a long non-ASCII text (294 KB corpus
file: 0.9 ms → 0.2 ms, every keystroke)."""


_BINARYISH = re.compile("[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f\x7f-\x9f\udc80-\udcff]")


def pua(scan: Scan, s: int, e: int, _b: str) -> None:
    run = scan.text[s:e]
    n = len(run)
    if n == 1:
        return  # an icon-font glyph (Nerd Fonts, Powerline, Font Awesome)
    if n < 8:
        scan.emit(
            "HID009",
            HINT,
            s,
            e,
            f"Private-use character(s) {labels(run)}: an icon-font glyph or nothing, depending on the font",
            fix=False,
        )
        return
    decoded = None
    for base in (0xE000, 0xF0000, 0x100000):
        if all(0x20 <= ord(c) - base < 0x7F for c in run):
            decoded = "".join(chr(ord(c) - base) for c in run)
            break
    msg = f"Run of {n} private-use characters: renders as boxes, icons or nothing"
    if decoded:
        msg += f"; offset-ASCII decoding gives {quote(decoded)}"
    scan.emit("HID009", WARNING, s, e, msg, hidden=decoded)


def unassigned(scan: Scan, s: int, e: int, _b: str) -> None:
    run = scan.text[s:e]
    non = [c for c in run if has_property("nonchar", c)]
    kind = (
        "Noncharacter"
        if len(non) == len(run)
        else "Unassigned code point"
        if not non
        else "Unassigned code points and noncharacters"
    )
    ids = ", ".join(dict.fromkeys(cp_id(c) for c in run))
    scan.emit("HID010", ERROR, s, e, f"{kind} {ids} (Unicode 17): no glyph, no legitimate use in text")


def surrogate(scan: Scan, s: int, e: int, _b: str) -> None:
    run = scan.text[s:e]
    if all(0xDC80 <= ord(c) <= 0xDCFF for c in run):
        bs = " ".join(f"0x{ord(c) - 0xDC00:02X}" for c in run[:16]) + (" …" if len(run) > 16 else "")
        msg = f"invalid UTF-8 byte{'s' if len(run) > 1 else ''} {bs}: the file is not valid UTF-8 here"
    else:
        msg = f"lone surrogate {', '.join(dict.fromkeys(cp_id(c) for c in run))}: not valid text"
    scan.emit("HID010", ERROR, s, e, msg[0].upper() + msg[1:])
