"""HID005 variation selectors: byte-carrying runs (Paul Butler's encoding), sequences not
registered in StandardizedVariants.txt / emoji-variation-sequences.txt / the Ideographic
Variation Database, Mongolian free variation selectors after other letters."""

from __future__ import annotations

from unveil.core.checks.unicode.candidates import MONGOLIAN_FVS, has_property
from unveil.core.checks.unicode.decode import printable, vs_byte
from unveil.core.checks.unicode.messages import ERROR, INFO, WARNING, quote
from unveil.core.checks.unicode.scan import Scan
from unveil.core.unicode_data import cp_id, cp_label, registered_variation


def variation(scan: Scan, s: int, e: int, _b: str) -> None:
    run = scan.text[s:e]
    n = len(run)
    base = scan.ch(s - 1)
    data = [b for b in (vs_byte(c) for c in run) if b is not None]
    if n >= 2:
        raw = bytes(data)
        text = raw.decode("utf-8", "replace")
        if "\ufffd" in text and run[0] == "\ufe0f":
            alt = raw[1:].decode("utf-8", "replace")
            if "\ufffd" not in alt:
                text = alt
        msg = f"Run of {n} variation selectors after {quote(base)} hides {len(data)} bytes"
        if printable(text):
            msg += f" that decode to: {quote(text)}"
        else:
            msg += f" (bytes {raw[:32].hex(' ')}{'…' if len(raw) > 32 else ''})"
        scan.emit("HID005", ERROR, s, e, msg, hidden=text, data={"decoded": text, "bytes": raw.hex()})
        return
    c = run
    cp = ord(c)
    if registered_variation(base, c):
        return  # a registered emoji, standardized or ideographic variation sequence
    if c in MONGOLIAN_FVS:
        if not has_property("mongolian", base):
            scan.emit("HID005", WARNING, s, e, f"{cp_label(c)} after {quote(base)}, not after a Mongolian letter")
        return  # Mongolian shaping uses FVS beyond the registered list: not reported
    if cp >= 0xE0100:
        b = vs_byte(c)
        shown = chr(b) if b is not None and 32 <= b < 127 else f"0x{b:02x}"
        if has_property("han", base):
            scan.emit(
                "HID005",
                WARNING,
                s,
                e,
                f"Ideographic variation selector {cp_id(c)} after {quote(base)} is not a registered "
                f"sequence in the Ideographic Variation Database (carries byte {shown!s})",
                hidden=shown,
            )
            return
        scan.emit(
            "HID005",
            ERROR,
            s,
            e,
            f"Supplementary variation selector {cp_id(c)} after non-ideograph {quote(base)} "
            f"(not a variation sequence; carries byte {shown!s})",
            hidden=shown,
        )
        return
    if c in "\ufe0e\ufe0f" and has_property("emoji", base):
        # an emoji with a presentation selector it has no registered sequence for (common
        # when typed on phones: "✅️"); renders the same, carries at most one nibble
        scan.emit(
            "HID005",
            INFO,
            s,
            e,
            f"{cp_label(c)} after {quote(base)}, which has no registered emoji variation sequence",
        )
        return
    scan.emit(
        "HID005",
        WARNING,
        s,
        e,
        f"{cp_label(c)} after {quote(base)} is not a registered variation sequence "
        "(StandardizedVariants.txt, emoji-variation-sequences.txt)",
    )
