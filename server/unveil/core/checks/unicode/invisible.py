"""Invisible characters: HID001 Unicode tag characters, HID002 zero-width characters (binary
runs, split words, emoji / script contexts that use them), HID006 invisible math operators,
HID007 other Default_Ignorable code points (soft hyphens, CGJ, Hangul fillers, deprecated and
reserved format controls)."""

from __future__ import annotations

from unveil.core.checks.unicode.candidates import has_property
from unveil.core.checks.unicode.decode import decode_bits, decode_tags, decode_two_symbol_run
from unveil.core.checks.unicode.messages import ERROR, INFO, WARNING, labels, quote
from unveil.core.checks.unicode.scan import Scan
from unveil.core.unicode_data import RGI_TAG_FLAGS, cp_id

# ASCII characters a split "word" may contain: letters, digits and path/identifier punctuation.
_WORDISH = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-/~$@:")


def tags(scan: Scan, s: int, e: int, _b: str) -> None:
    run = scan.text[s:e]
    if scan.ch(s - 1) == "\U0001f3f4":
        for flag in RGI_TAG_FLAGS:
            if run.startswith(flag):
                s += len(flag)
                run = run[len(flag) :]
                break
        if not run:
            return
    decoded = decode_tags(run)
    n = len(run)
    if decoded.strip():
        msg = f"Hidden Unicode tag characters ({n}) spell: {quote(decoded)}"
    else:
        msg = f"Hidden Unicode tag characters ({n}) with no printable payload ({labels(run)})"
    scan.emit("HID001", ERROR, s, e, msg, hidden=decoded or None, data={"decoded": decoded})


def zero_width(scan: Scan, s: int, e: int, _b: str) -> None:
    t = scan.text
    run = t[s:e]
    n = len(run)
    if run == "\ufeff" and s == 0:
        return  # byte order mark
    distinct = set(run)
    prev, nxt = scan.ch(s - 1), scan.ch(e)
    if n >= 8 or (n >= 4 and len(distinct) >= 2):
        dec = decode_two_symbol_run(run)
        if dec:
            text, zero, one = dec
            msg = (
                f"Run of {n} zero-width characters encodes binary data ({cp_id(zero)}=0, {cp_id(one)}=1) "
                f"that decodes to: {quote(text)}"
            )
            scan.emit("HID002", ERROR, s, e, msg, hidden=text, data={"decoded": text})
        else:
            msg = f"Run of {n} zero-width characters ({labels(run)}): invisible data the model reads"
            scan.emit("HID002", ERROR, s, e, msg)
        return
    # legitimate contexts
    if distinct == {"\u200d"} and n == 1 and _emoji_zwj(scan, s, e):
        return
    ascii_alnum = lambda c: bool(c) and c.isascii() and c.isalnum()  # noqa: E731
    if distinct <= {"\u200c", "\u200d"} and _script_context(scan, prev, nxt, "joining"):
        return
    if distinct == {"\u200b"} and _script_context(scan, prev, nxt, "sea"):
        return
    if distinct == {"\u180e"} and (has_property("mongolian", prev) or has_property("mongolian", nxt)):
        return
    # a split ASCII word: one finding for all the zero-width characters inside the word
    if _zw_splits_word(scan, s, e):
        ws, we, word = scan.rejoin_word(s, e)
        spans = [(s, e)]
        for ps, pe in scan.following(e - 1, we, "zw"):
            if not _zw_splits_word(scan, ps, pe):
                break
            spans.append((ps, pe))
            scan.absorbed.add(ps)
        scan.split_word("HID002", ERROR if scan.line_is_instruction(s) else WARNING, spans, word)
        return
    if run == "\ufeff":
        msg = "U+FEFF ZERO WIDTH NO-BREAK SPACE (byte order mark) in the middle of the text"
        scan.emit("HID002", WARNING, s, e, msg)
        return
    near_ascii = (
        (prev == "" or prev.isascii()) and (nxt == "" or nxt.isascii()) or ascii_alnum(prev) or ascii_alnum(nxt)
    )
    sev = WARNING if near_ascii else INFO
    where = "next to ASCII text" if near_ascii else "outside an emoji or script context that uses it"
    scan.emit("HID002", sev, s, e, f"Invisible {labels(run)} {where}")


def _zw_splits_word(scan: Scan, s: int, e: int) -> bool:
    """Whether the zero-width run ``[s, e)`` is short (not a data run) and sits inside an ASCII
    word (both neighbours word characters, one of them an ASCII letter or digit)."""
    run = scan.text[s:e]
    if len(run) >= 8 or (len(run) >= 4 and len(set(run)) >= 2):
        return False
    prev, nxt = scan.ch(s - 1), scan.ch(e)
    alnum = lambda c: bool(c) and c.isascii() and c.isalnum()  # noqa: E731
    return prev in _WORDISH and nxt in _WORDISH and (alnum(prev) or alnum(nxt))


def _emoji_zwj(scan: Scan, s: int, e: int) -> bool:
    """ZWJ between pictographs: ExtPict [VS16 | skin-tone modifier | keycap] ZWJ ExtPict."""
    p = s - 1
    while p >= 0 and (scan.text[p] in "\ufe0f\u20e3" or has_property("emod", scan.text[p])):
        p -= 1
    return (
        p >= 0
        and (has_property("extpict", scan.text[p]) or has_property("emoji", scan.text[p]))
        and has_property("extpict", scan.ch(e))
    )


def _script_context(scan: Scan, prev: str, nxt: str, prop: str) -> bool:
    """One neighbour is in the script family ``prop`` and neither is an ASCII letter/digit."""
    if (prev.isascii() and prev.isalnum()) or (nxt.isascii() and nxt.isalnum()):
        return False
    return has_property(prop, prev) or has_property(prop, nxt)


def math_op(scan: Scan, s: int, e: int, _b: str) -> None:
    run = scan.text[s:e]
    n = len(run)
    if n >= 8 and set(run) <= {"\u2062", "\u2064"}:
        text = decode_bits(run, "\u2062", "\u2064") or decode_bits(run, "\u2064", "\u2062")
        msg = f'Run of {n} invisible math operators (U+2062=0, U+2064=1: "Sneaky Bits" encoding)'
        msg += f" decodes to: {quote(text)}" if text else " hides binary data"
        scan.emit("HID006", ERROR, s, e, msg, hidden=text, data={"decoded": text} if text else None)
        return
    scan.emit("HID006", WARNING, s, e, f"Invisible math operator {labels(run)} outside a formula")


def other_di(scan: Scan, s: int, e: int, b: str) -> None:
    t = scan.text
    run = t[s:e]
    prev, nxt = scan.ch(s - 1), scan.ch(e)
    label = labels(run)
    if b == "shy":
        if len(run) == 1 and prev.isalpha() and nxt.isalpha():
            ws, we, word = scan.rejoin_word(s, e)
            if not (prev.isascii() and nxt.isascii()):
                return  # hyphenation hint in a non-ASCII word
            spans = [(s, e)]
            for ps, pe in scan.following(s, we, "shy"):
                p2, n2 = scan.ch(ps - 1), scan.ch(pe)
                if pe - ps != 1 or not (p2.isalpha() and n2.isalpha() and p2.isascii() and n2.isascii()):
                    break
                spans.append((ps, pe))
            scan.absorbed.update(a for a, _ in spans[1:])
            if scan.line_is_instruction(s):
                sev = ERROR
            elif len(word) >= 12 and all(scan.ch(a - 1).islower() and scan.ch(a + 1).islower() for a, _ in spans):
                return  # hyphenation points in a long word (German compounds, converted HTML)
            else:
                sev = WARNING
            scan.split_word("HID007", sev, spans, word)
            return
        scan.emit("HID007", WARNING, s, e, f"Invisible {label} outside a word")
        return
    if b == "cgj":
        if has_property("mark", prev) or has_property("hebrew", prev):
            return
        scan.emit("HID007", WARNING, s, e, f"Invisible {label} not between combining marks")
        return
    if b == "hangul":
        if set(run) <= {"\u115f", "\u1160"} and (has_property("jamo", prev) or has_property("jamo", nxt)):
            return
        scan.emit("HID007", ERROR, s, e, f"{label}: renders as a blank letter (used for invisible names and code)")
        return
    if b == "deprecated":
        scan.emit("HID007", ERROR, s, e, f"Deprecated invisible format control {label}")
        return
    if b == "reserved":
        scan.emit("HID007", ERROR, s, e, f"Reserved invisible code point(s) {label}: no legitimate use")
        return
    if b == "shorthand" and (has_property("duployan", prev) or has_property("duployan", nxt)):
        return
    if b == "music" and (0x1D100 <= ord(prev or " ") <= 0x1D1FF or 0x1D100 <= ord(nxt or " ") <= 0x1D1FF):
        return
    scan.emit("HID007", WARNING, s, e, f"Invisible {label}")
