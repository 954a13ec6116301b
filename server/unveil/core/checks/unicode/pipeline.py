""":func:`check` (the character checks' entry point) and :func:`run_scan`: candidate pieces
dispatched by bucket to the rule modules' handlers, the per-document caps, then look-alike
letters."""

from __future__ import annotations

from typing import Iterable, Iterator

from unveil.core.checks.unicode.bidi import bidi, bidi_mark
from unveil.core.checks.unicode.blanks import blank
from unveil.core.checks.unicode.candidates import ascii_control_spans
from unveil.core.checks.unicode.confusables import confusables
from unveil.core.checks.unicode.controls import control, line_sep
from unveil.core.checks.unicode.invisible import math_op, other_di, tags, zero_width
from unveil.core.checks.unicode.messages import ERROR, WARNING, codepoint_ids
from unveil.core.checks.unicode.scan import Scan
from unveil.core.checks.unicode.unassigned import looks_binary, pua, surrogate, unassigned
from unveil.core.checks.unicode.variation import variation
from unveil.core.findings import Finding

MAX_FINDINGS = 2000  # per document; the rest is summarised in one finding


MAX_FINDINGS_BINARY = 20  # per binary-looking document (besides the "looks binary" finding)


_BUCKET_RULE = {
    "tag": "HID001",
    "zw": "HID002",
    "bidi": "HID003",
    "mark": "HID004",
    "vs": "HID005",
    "math": "HID006",
    "nbsp": "HID008",
    "braille": "HID008",
    "idsp": "HID008",
    "objrep": "HID008",
    "pua": "HID009",
    "cn": "HID010",
    "surrogate": "HID010",
    "cc": "HID011",
    "ls": "HID012",
}


def run_scan(scan: Scan) -> list[Finding]:
    """All findings of the document, in order of offset within each pass (candidate runs, then
    look-alike letters). Per-document caps: :data:`MAX_FINDINGS` runs, or
    :data:`MAX_FINDINGS_BINARY` after a leading "looks binary" HID010 finding when
    :func:`looks_binary` says so; the runs past the cap are counted in one summary finding
    (HID013 is then not run, and the summary says so)."""
    pieces = scan.pieces = scan.candidate_pieces()
    scan.starts = [p[0] for p in pieces]
    t = scan.text
    cap = MAX_FINDINGS
    binary, nul, invalid = looks_binary(t)
    if binary:
        cap = MAX_FINDINGS_BINARY + 1
        scan.out.append(
            Finding(
                "HID010",
                ERROR,
                0,
                min(1, len(t)),
                f"This file looks binary ({nul} NUL byte{'s' if nul != 1 else ''}, {invalid} invalid UTF-8 "
                f"byte{'s' if invalid != 1 else ''}): it is not agent text",
                data={"codepoints": codepoint_ids(t[:1]), "binary": True, "nul": nul, "invalid": invalid},
            )
        )
    # lone CR as the file's only line ending (old Mac): one finding per file, not per line
    scan.cr_file = "\n" not in t and t.count("\r") >= 2
    handlers = {
        "tag": tags,
        "zw": zero_width,
        "bidi": bidi,
        "mark": bidi_mark,
        "vs": variation,
        "math": math_op,
        "cc": control,
        "ls": line_sep,
        "nbsp": blank,
        "braille": blank,
        "idsp": blank,
        "objrep": blank,
        "pua": pua,
        "cn": unassigned,
        "surrogate": surrogate,
    }
    skip_to = -1
    capped = False
    for s, e, b in pieces:
        if s < skip_to or s in scan.absorbed:  # part of an escape sequence or of a split word
            continue
        if len(scan.out) >= cap:
            rule = _BUCKET_RULE.get(b, "HID007")
            rest = sum(1 for p in pieces if p[0] >= s and p[0] not in scan.absorbed)
            listed = cap - 1 if binary else cap
            where = " in a binary-looking file" if binary else ""
            scan.out.append(
                Finding(
                    rule,
                    WARNING,
                    s,
                    e,
                    f"More than {listed} hidden-character findings{where}: {rest} more runs of suspicious "
                    "characters from here on are not listed one by one, and look-alike letters (HID013) "
                    "were not checked",
                    data={"codepoints": codepoint_ids(scan.text[s:e]), "unlisted": rest},
                )
            )
            capped = True
            break
        h = handlers.get(b, other_di)
        r = h(scan, s, e, b)
        if isinstance(r, int):
            skip_to = r
    if not capped and not scan.text.isascii():
        confusables(
            scan,
        )
    return scan.out


def check(ctx) -> Iterable[Finding]:
    """Run the character checks on ``ctx.doc.text``; returns findings for HID001–HID013.

    Pure-ASCII text without control characters (other than TAB, LF and CRLF) returns ``[]``
    without further work. Never raises for any text (lone surrogates from undecodable input
    included).
    """
    text = ctx.doc.text
    if text.isascii() and not ascii_control_spans(text):
        return []
    return run_scan(Scan(ctx))


def iter_candidates(text: str) -> Iterator[tuple[int, int, str]]:
    """``(start, end, bucket)`` for each run of suspicious code points in ``text`` (for tools and
    tests; the buckets are the technique names used internally: tag, zw, bidi, mark, vs, …)."""
    from unveil.core.document import Document
    from unveil.core.markdown import MarkdownLayer

    class _Ctx:
        doc = Document(text)
        markdown = MarkdownLayer()

    return iter(Scan(_Ctx()).candidate_pieces())
