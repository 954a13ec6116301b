"""HID011 control characters (C0, C1, lone CR, terminal escape sequences described by what they
do) and HID012 line and paragraph separators (a line break for some parsers only)."""

from __future__ import annotations

import re

from unveil.core.checks.unicode.messages import ERROR, INFO, PREVIEW, WARNING, labels, quote
from unveil.core.checks.unicode.scan import Scan
from unveil.core.findings import Edit, Fix
from unveil.core.unicode_data import CONTROL_NAMES, cp_id

_CONCEAL_END = re.compile(r"\x1b\[|\n|\r")


_ESC_SEQ = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC
    r"|\x1b[ -/]*[0-~]"  # other escape
    r"|\x9b[0-?]*[ -/]*[@-~]"  # C1 CSI
)


# two-character escapes (ESC + final byte) with a known effect; sources: ECMA-48 §5.3, DEC VT100
_ESC_FINAL = {
    "7": "saves the cursor position",
    "8": "restores a saved cursor position: overwrites text in terminals",
    "M": "moves the cursor up (reverse index): overwrites earlier lines in terminals",
    "D": "moves the cursor down (index)",
    "E": "moves the cursor to the next line",
    "c": "resets the terminal",
    "=": "changes the keypad mode",
    ">": "changes the keypad mode",
}


def describe_escape(seq: str) -> str:
    """What an ANSI/VT escape sequence does, as a verb phrase that follows the sequence in a
    message (``"conceals text in terminals"``); ``seq`` starts with ESC or C1 CSI. Unknown
    sequences get ``"is a control command to the terminal, not text"``."""
    body = seq[2:] if seq.startswith("\x1b[") else seq[1:] if seq.startswith("\x9b") else None
    if body is not None:
        final, params = body[-1:], body[:-1]
        nums = [p for p in re.split(r"[;:]", params) if p]
        if final == "m":
            if "8" in nums:
                return "conceals text in terminals"
            return "changes text colour or style in terminals"
        if final in "AF":
            return "moves the cursor up: overwrites earlier lines in terminals"
        if final in "BCDEGHf":
            return "moves the cursor: overwrites text in terminals"
        if final == "K":
            return "erases the line in terminals"
        if final == "J":
            return "erases the screen in terminals"
        if final in "hl":
            return "changes a terminal mode"
        return "controls the terminal"
    if seq.startswith("\x1b]"):
        if seq[2:4] == "8;":
            return "makes a terminal hyperlink (OSC 8): shows one text, links elsewhere"
        if seq[2:5] == "52;":
            return "writes to the clipboard (OSC 52)"
        if seq[2:4] in ("0;", "1;", "2;"):
            return "sets the terminal title"
        return "sends an operating-system command to the terminal"
    if len(seq) == 2 and seq[1] in _ESC_FINAL:
        return _ESC_FINAL[seq[1]]
    if len(seq) >= 3 and seq[1] in "()*+-./":
        return "switches the terminal character set: later text can show as other symbols"
    return "is a control command to the terminal, not text"


def show_controls(s: str) -> str:
    """Controls made visible: ``ESC``, ``BEL``, ``\\xNN``; ``"\\x1bR"`` → ``"ESC R"`` (a space
    after ESC when a letter or digit follows, so the name does not run into it)."""
    out = []
    for i, c in enumerate(s):
        cp = ord(c)
        if cp == 0x1B:
            out.append("ESC " if s[i + 1 : i + 2].isalnum() else "ESC")
        elif cp == 0x07:
            out.append("BEL")
        elif cp < 0x20 or 0x7F <= cp < 0xA0:
            out.append(f"\\x{cp:02x}")
        else:
            out.append(c)
    return "".join(out)


def control(scan: Scan, s: int, e: int, _b: str) -> int | None:
    t = scan.text
    run = t[s:e]
    if run == "\r" and scan.cr_file:
        if s != t.index("\r"):
            return None  # reported once, with the first CR
        n = t.count("\r")
        lines = n + (0 if t.endswith("\r") else 1)
        fix = Fix(
            "Convert line endings to LF",
            tuple(Edit(m.start(), m.end(), "\n") for m in re.finditer("\r", t)),
            kind="line-endings",
        )
        scan.emit(
            "HID011",
            WARNING,
            s,
            e,
            f"This file uses lone CR line endings ({lines} lines): terminals show it as one overwritten line",
            fixes=(fix,),
            data={"count": n, "lines": lines},
        )
        return None
    if run == "\r":
        scan.emit(
            "HID011",
            WARNING,
            s,
            e,
            "Lone carriage return (CR without LF): editors show a line break, but terminals return to the "
            "start of the line and overwrite the text before it",
        )
        return None
    if run == "\f":
        scan.emit("HID011", INFO, s, e, "Form feed (FF, U+000C): a page break in old text files, invisible here")
        return None
    # escape sequence at the end of the run (its parameters are ordinary ASCII)
    last = run[-1]
    if last in "\x1b\x9b":
        m = _ESC_SEQ.match(t, e - 1)
        if m:
            seq = m.group()
            new_e = m.end()
            desc = describe_escape(seq)
            shown = show_controls(seq)
            hidden = None
            prefix = t[s : e - 1]
            if prefix:
                msg = (
                    f"Control character{'s' if len(prefix) > 1 else ''} {show_controls(prefix)} before "
                    f"terminal escape sequence {shown}, which {desc}"
                )
            else:
                msg = f"Terminal escape sequence {shown} {desc}"
            if "conceals" in desc:
                stop = _CONCEAL_END.search(t, new_e, new_e + 4 * PREVIEW)
                hidden = t[new_e : stop.start() if stop else min(len(t), new_e + 4 * PREVIEW)]
                if hidden:
                    msg += f": {quote(hidden)}"
            elif seq.startswith("\x1b]8;"):
                hidden = seq
            ctrl = [cp_id(c) for c in dict.fromkeys(t[s:new_e]) if ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0]
            scan.emit(
                "HID011", ERROR, s, new_e, msg, hidden=hidden or None, data={"sequence": shown, "codepoints": ctrl}
            )
            return new_e
    names = list(dict.fromkeys(f"{CONTROL_NAMES.get(ord(c), 'C1 control')} (U+{ord(c):04X})" for c in run))
    effects = []
    if "\x08" in run:
        effects.append("backspace overwrites the previous character in terminals")
    if "\x1b" in run:
        effects.append("a bare ESC starts terminal control sequences")
    if "\x00" in run:
        effects.append("NUL truncates the text for some tools")
    sev = WARNING if set(run) <= {"\x0b", "\x0c"} else ERROR
    msg = f"Control character{'s' if len(run) > 1 else ''} {', '.join(names)}"
    if effects:
        msg += ": " + "; ".join(effects)
    scan.emit("HID011", sev, s, e, msg)
    return None


def line_sep(scan: Scan, s: int, e: int, _b: str) -> None:
    run = scan.text[s:e]
    in_fm, in_code = scan.in_fm(s), scan.in_code(s)
    sev = ERROR if (in_fm or in_code) else WARNING
    if in_fm:
        msg = (
            f"{labels(run)} inside the frontmatter: a line break for YAML 1.1 parsers (PyYAML) and "
            "Python's splitlines(), an ordinary character for YAML 1.2, editors and LSP"
        )
    else:
        msg = (
            f"{labels(run)}{' inside code' if in_code else ''}: a line break for Python's splitlines(), "
            "an ordinary character for editors, LSP and CommonMark"
        )
    scan.emit("HID012", sev, s, e, msg)
