"""HID003 bidi embeddings, overrides and isolates (balanced, in right-to-left text, or not) and
HID004 bidi marks outside right-to-left text or in data runs."""

from __future__ import annotations

from unveil.core.checks.unicode.candidates import BIDI_CONTROLS
from unveil.core.checks.unicode.decode import decode_two_symbol_run
from unveil.core.checks.unicode.messages import ERROR, INFO, PREVIEW, WARNING, labels, quote
from unveil.core.checks.unicode.scan import Scan

BIDI_OPEN = {
    "\u202a": "\u202c",
    "\u202b": "\u202c",
    "\u202d": "\u202c",
    "\u202e": "\u202c",
    "\u2066": "\u2069",
    "\u2067": "\u2069",
    "\u2068": "\u2069",
}


def _bidi_pairs(scan: Scan, line_start: int, line_text: str) -> tuple[set[int], dict[int, int]]:
    """Unmatched bidi control offsets on a line and the opener → closer offset map."""
    stack: list[int] = []
    unmatched: set[int] = set()
    pairs: dict[int, int] = {}
    for i, c in enumerate(line_text):
        if c in BIDI_OPEN:
            stack.append(line_start + i)
        elif c in ("\u202c", "\u2069"):
            # close the innermost opener of the matching kind
            for k in range(len(stack) - 1, -1, -1):
                if BIDI_OPEN[scan.text[stack[k]]] == c:
                    for extra in stack[k + 1 :]:
                        unmatched.add(extra)
                    pairs[stack[k]] = line_start + i
                    del stack[k:]
                    break
            else:
                unmatched.add(line_start + i)
    unmatched.update(stack)
    return unmatched, pairs


def bidi(scan: Scan, s: int, e: int, _b: str) -> None:
    ls, le, lt, rtl = scan.line_info(s)
    cached = scan.bidi_cache.get(ls)
    if cached is None:
        cached = scan.bidi_cache[ls] = _bidi_pairs(scan, ls, lt)
    unmatched, pairs = cached
    run = scan.text[s:e]
    bad_balance = any(i in unmatched for i in range(s, e))
    in_code, in_fm = scan.in_code(s), scan.in_fm(s)
    opener = next((i for i in range(s, e) if scan.text[i] in BIDI_OPEN), None)
    affected = ""
    if opener is not None:
        close = min(pairs.get(opener, le), opener + 1 + 2 * PREVIEW)
        affected = "".join(c for c in scan.text[opener + 1 : close] if c not in BIDI_CONTROLS)
    reasons = []
    if not rtl:
        reasons.append("there is no right-to-left text on this line")
    if bad_balance:
        reasons.append("it is not closed on this line" if opener is not None else "it closes nothing")
    if in_code:
        reasons.append("it is inside code")
    if in_fm:
        reasons.append("it is inside the frontmatter")
    sev = ERROR if reasons else INFO
    what = (
        f"{labels(run)} reorders the displayed text"
        if opener is not None
        else f"{labels(run)} ends a bidi embedding, override or isolate"
    )
    if affected:
        what += f": {quote(affected)} is shown reordered while the model reads it in this order"
    msg = what + (" (" + "; ".join(reasons) + ")" if reasons else " (balanced, in right-to-left text)")
    scan.emit("HID003", sev, s, e, msg, hidden=affected or None)


def bidi_mark(scan: Scan, s: int, e: int, _b: str) -> None:
    run = scan.text[s:e]
    n = len(run)
    if n >= 8:
        dec = decode_two_symbol_run(run)
        extra = f" that decodes to {quote(dec[0])}" if dec else ""
        scan.emit(
            "HID004",
            ERROR,
            s,
            e,
            f"Run of {n} bidi marks ({labels(run)}) encodes data{extra}",
            hidden=dec[0] if dec else None,
        )
        return
    if scan.line_info(s)[3]:
        return  # right-to-left context: normal
    prev, nxt = scan.ch(s - 1), scan.ch(e)
    near_ascii = (prev.isascii() and prev not in "\n") or (nxt.isascii() and nxt not in "\n")
    sev = WARNING if near_ascii else INFO
    scan.emit("HID004", sev, s, e, f"Invisible {labels(run)} with no right-to-left text on the line")
