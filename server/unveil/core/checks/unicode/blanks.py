"""HID008 blank look-alikes: no-break spaces inside code, U+2800 BRAILLE PATTERN BLANK, U+3000
IDEOGRAPHIC SPACE outside CJK text, U+FFFC OBJECT REPLACEMENT CHARACTER."""

from __future__ import annotations

from unveil.core.checks.unicode.candidates import has_property
from unveil.core.checks.unicode.messages import INFO, WARNING, labels
from unveil.core.checks.unicode.scan import Scan
from unveil.core.findings import Edit, Fix


def blank(scan: Scan, s: int, e: int, b: str) -> None:
    run = scan.text[s:e]
    prev, nxt = scan.ch(s - 1), scan.ch(e)
    if b == "nbsp":
        if scan.in_code(s) and prev.isascii() and nxt.isascii() and prev.strip() and nxt.strip():
            scan.emit(
                "HID008",
                WARNING,
                s,
                e,
                f"{labels(run)} inside code: looks like a space but is not one to a shell or parser",
                fixes=(Fix("Replace with a space", (Edit(s, e, " "),), kind="replace-space"),),
            )
        return
    if b == "braille":
        if 0x2801 <= ord(prev or " ") <= 0x28FF or 0x2801 <= ord(nxt or " ") <= 0x28FF:
            return
        scan.emit("HID008", WARNING, s, e, f"{len(run)} × U+2800 BRAILLE PATTERN BLANK: looks blank, is not whitespace")
        return
    if b == "objrep":
        scan.emit(
            "HID008", WARNING, s, e, f"{len(run)} × U+FFFC OBJECT REPLACEMENT CHARACTER: renders blank or as a box"
        )
        return
    if b == "idsp":
        if has_property("cjk", prev) or has_property("cjk", nxt):
            return
        scan.emit(
            "HID008",
            INFO,
            s,
            e,
            f"{len(run)} × U+3000 IDEOGRAPHIC SPACE outside CJK text",
            fix=False,
            fixes=(Fix("Replace with a space", (Edit(s, e, " "),), kind="replace-space"),),
        )
