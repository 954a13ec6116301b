"""HID013 look-alike letters: words mixing Latin with Cyrillic / Greek / Armenian / Cherokee
confusables (Unicode confusables.txt) whose skeleton is ASCII."""

from __future__ import annotations

import unicodedata

import regex

from unveil.core.checks.unicode.candidates import has_property
from unveil.core.checks.unicode.messages import ERROR, WARNING, quote
from unveil.core.checks.unicode.scan import Scan
from unveil.core.findings import Edit, Fix
from unveil.core.unicode_data import CONFUSABLES, cp_id

_URL = regex.compile(r"(?:[A-Za-z][A-Za-z0-9+.\-]*://|www\.)[^\s<>\"'`)\]]+")


_HOSTISH = regex.compile(r"\.[A-Za-z]{2,6}$")


_FOREIGN = r"[[\p{L}\p{M}]--[\p{scx=Latin}\p{scx=Zinh}\p{scx=Zyyy}]]"


# runs of look-alike letters not touching a letter of another script (Привет cannot look ASCII)
_CONF_RUN = regex.compile(r"(?V1)(?<!" + _FOREIGN + ")[" + "".join(sorted(CONFUSABLES)) + "]+(?!" + _FOREIGN + ")")


_WORD_L = regex.compile(r"(?r)\w*")


_WORD_R = regex.compile(r"\w*")


def confusables(scan: Scan) -> None:
    t = scan.text
    done_to = -1
    hits = (m.span() for a, b in scan.segments for m in _CONF_RUN.finditer(t, a, b))
    for s, _e in hits:
        if s < done_to:
            continue
        ts, te = _token(scan, s)
        done_to = te
        _judge_token(scan, ts, te)


def _token(scan: Scan, i: int) -> tuple[int, int]:
    """Word around offset ``i``: ``\\w`` runs joined by single ``-`` or ``.``."""
    t = scan.text
    s = _WORD_L.match(t, 0, i).start()
    e = _WORD_R.match(t, i).end()
    while s >= 2 and t[s - 1] in "-." and _WORD_L.match(t, 0, s - 1).start() < s - 1:
        s = _WORD_L.match(t, 0, s - 1).start()
    while e + 1 < len(t) and t[e] in "-." and _WORD_R.match(t, e + 1).end() > e + 1:
        e = _WORD_R.match(t, e + 1).end()
    return s, e


def _judge_token(scan: Scan, s: int, e: int) -> None:
    tok = scan.text[s:e]
    letters = 0
    latin = False
    skeleton = []
    found: list[tuple[str, str]] = []
    for c in tok:
        if c.isascii():
            skeleton.append(c)
            if c.isalpha():
                letters += 1
                latin = True
            continue
        conf = CONFUSABLES.get(c)
        if conf:
            skeleton.append(conf[0])
            letters += 1
            found.append((c, conf[1]))
            continue
        if has_property("latin", c):
            base = unicodedata.normalize("NFD", c)[0]
            if not base.isascii():
                return
            skeleton.append(base)
            letters += 1
            latin = True
            continue
        if has_property("mark", c):
            continue
        return  # a letter of another script: not an ASCII look-alike
    if not latin or not found or letters < 3:
        return
    sk = "".join(skeleton)
    scripts = list(dict.fromkeys(sc for _, sc in found))
    chars = ", ".join(f"{c} ({cp_id(c)})" for c in dict.fromkeys(c for c, _ in found))
    reasons = []
    if scan.in_fm(s):
        reasons.append("in the frontmatter")
    if scan.in_code(s):
        reasons.append("in code")
    ls, le, lt, _ = scan.line_info(s)
    if any(u.start() <= s - ls < u.end() for u in _URL.finditer(lt)) or ("." in tok and _HOSTISH.search(sk)):
        reasons.append("in a URL or host name")
    sev = ERROR if reasons else WARNING
    msg = f"{quote(tok)} mixes Latin with {' and '.join(scripts)} {chars}; looks like {quote(sk)}"
    if reasons:
        msg += " (" + ", ".join(reasons) + ")"
    revealed = "".join(f"<{cp_id(c)}>" if c in CONFUSABLES else c for c in tok)
    fix = Fix(f"Replace with ASCII {quote(sk)}", (Edit(s, e, sk),), kind="replace-confusable")
    scan.emit(
        "HID013",
        sev,
        s,
        e,
        msg,
        hidden=revealed,
        fixes=(fix,),
        data={"skeleton": sk, "codepoints": [cp_id(c) for c in dict.fromkeys(c for c, _ in found)]},
    )
