"""What the CLI reporters share: one scanned file's result and finding positions for humans.

Positions shown by the CLI (text, JSON and SARIF with ``columnKind: unicodeCodePoints``) are
1-based lines and 1-based columns counted in Unicode code points. Lines split only on ``\\n``,
``\\r\\n`` and ``\\r`` (the document model's LSP line index), so a U+2028 in a line does not
start a new line here either. The end position is exclusive: ``end_column`` is the column of
the first code point after the finding (SARIF's ``endColumn`` has the same meaning).
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from dataclasses import dataclass
from json.encoder import encode_basestring as _json_string
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from unveil.core.analyze import Analysis
    from unveil.core.findings import Finding


@dataclass(frozen=True)
class FileResult:
    """One scanned file: ``path`` as shown to the user (relative to the working directory when
    the file is under it, with ``/`` separators) and its :class:`~unveil.core.analyze.Analysis`."""

    path: str
    analysis: "Analysis"


@dataclass(frozen=True)
class Span:
    """1-based ``line``/``column`` of the first code point and exclusive ``end_line``/``end_column``."""

    line: int
    column: int
    end_line: int
    end_column: int


def span(analysis: "Analysis", finding: "Finding") -> Span:
    """The finding's range as 1-based lines and code-point columns (end exclusive).

    Offsets are clamped to the document so a malformed finding never raises.
    """
    doc = analysis.doc
    n = len(doc.text)
    start = min(max(finding.start, 0), n)
    end = min(max(finding.end, start), n)
    a = doc.position(start)
    b = doc.position(end)
    return Span(a.line + 1, a.character + 1, b.line + 1, b.character + 1)


def tokens_of(analysis: "Analysis") -> tuple[int | None, int | None]:
    """``(session, invoke)`` o200k token counts, or ``(None, None)`` when not counted."""
    report = analysis.tokens
    if report is None:
        return None, None
    return report.session, report.invoke


def kind_label(analysis: "Analysis") -> str:
    """Human label of the file kind (e.g. "Claude Code subagent"), falling back to the kind id."""
    if analysis.tokens is not None and getattr(analysis.tokens, "kind_label", None):
        return analysis.tokens.kind_label
    try:
        from unveil.core import kinds

        info = getattr(kinds, "kind_info", None)
        if info is not None:
            label = getattr(info(analysis.kind), "label", None)
            if label:
                return str(label)
    except Exception:  # noqa: BLE001 - a label is cosmetic; never fail a report for it
        pass
    return analysis.kind


_SAFE_CATEGORIES_EXCLUDED = {"Cc", "Cf", "Co", "Cn", "Cs", "Zl", "Zp"}


def printable(text: str) -> str:
    """``text`` made safe for a terminal line: every control, format (bidi, zero-width, tag),
    private-use, unassigned, surrogate or line/paragraph-separator code point is written as an
    escape (``\\x1b``, ``\\u202e``, ``\\U000e0041``); bytes kept with ``surrogateescape`` are
    shown as ``\\xNN`` of the original byte. Printing a finding must never execute an ANSI
    sequence or reorder the line it is on."""
    if text.isascii() and text.isprintable():
        return text
    out = []
    for ch in text:
        cp = ord(ch)
        if ch == " " or (ch.isprintable() and unicodedata.category(ch) not in _SAFE_CATEGORIES_EXCLUDED):
            out.append(ch)
        elif 0xDC80 <= cp <= 0xDCFF:
            out.append(f"\\x{cp - 0xDC00:02x}")
        elif cp <= 0xFF:
            out.append(f"\\x{cp:02x}")
        elif cp <= 0xFFFF:
            out.append(f"\\u{cp:04x}")
        else:
            out.append(f"\\U{cp:08x}")
    return "".join(out)


def no_lone_surrogates(text: str | None) -> str | None:
    """``text`` with lone surrogates (undecodable bytes kept with ``surrogateescape``) replaced
    by U+FFFD so it can be written as UTF-8 JSON; ``None`` stays ``None``."""
    if text is None:
        return None
    return _SURROGATE.sub("\ufffd", text)


_SURROGATE = re.compile("[\ud800-\udfff]")


def json_text(data: object) -> str:
    """``json.dumps(data, ensure_ascii=False, indent=2)``, the same characters, about twice as
    fast: with an ``indent``, CPython (before 3.14) encodes in Python, one generator per
    nesting level, and a warm ``unveil check --format json`` of the corpus's 3,349 files spent
    36 ms there (``benchmarks/profile.md``, issue 10, session 18). Strings are escaped by the
    standard library's own encoder (:func:`json.encoder.encode_basestring`); ``dict``, ``list``,
    ``tuple``, ``str``, ``int``, ``float``, ``bool`` and ``None`` are written here, any other
    value (a subclass, a non-``str`` key) by ``json.dumps`` itself, so the result never differs.
    Raises what ``json.dumps`` raises (``TypeError`` for a value JSON has no form for,
    ``ValueError`` for a circular reference)."""
    out: list[str] = []
    put = out.append

    def emit(o: object, pad: str) -> None:
        t = type(o)
        if t is str:
            put(_json_string(o))
        elif o is None:
            put("null")
        elif o is True:
            put("true")
        elif o is False:
            put("false")
        elif t is int:
            put(int.__repr__(o))
        elif t is float:
            put(_float_text(o))  # type: ignore[arg-type]
        elif (t is dict or t is list or t is tuple) and o:
            if len(pad) >= 2 * _JSON_MAX_DEPTH:
                raise _Fallback  # a cycle, or data deeper than a report
            inner = pad + "  "
            sep = ("{\n" if t is dict else "[\n") + inner
            if t is dict:
                for k, v in o.items():  # type: ignore[attr-defined]
                    put(sep)
                    if type(k) is not str:
                        raise _Fallback
                    put(_json_string(k))
                    put(": ")
                    emit(v, inner)
                    sep = ",\n" + inner
                put("\n" + pad + "}")
            else:
                for v in o:  # type: ignore[attr-defined]
                    put(sep)
                    emit(v, inner)
                    sep = ",\n" + inner
                put("\n" + pad + "]")
        elif t is dict:
            put("{}")
        elif t is list or t is tuple:
            put("[]")
        else:
            raise _Fallback

    try:
        emit(data, "")
    except _Fallback:
        return json.dumps(data, ensure_ascii=False, indent=2)
    return "".join(out)


class _Fallback(Exception):
    """A value :func:`json_text` leaves to ``json.dumps``."""


_JSON_MAX_DEPTH = 200
"""Nesting :func:`json_text` writes itself; deeper data (or a circular reference) goes to
``json.dumps``, which raises ``ValueError`` for a cycle (a report is a few levels deep)."""


def _float_text(o: float) -> str:
    """A float as ``json.dumps`` writes it (``allow_nan=True``: ``NaN``, ``Infinity``)."""
    if o != o:
        return "NaN"
    if o == math.inf:
        return "Infinity"
    if o == -math.inf:
        return "-Infinity"
    return float.__repr__(o)


def config_summary(results) -> dict:
    """Which project configuration the run applied and what it turned off or lowered, from
    each result's ``analysis.extra["config"]`` (set by the CLI): ``{"isolated": bool,
    "applied": [{"path": str, "files": int, "effects": [str, ...]}]}`` (``applied`` in path
    order; ``effects`` empty when the configuration weakens nothing). JSON's top-level
    ``config``, SARIF's invocation ``properties.config``, and the text report's summary lines."""
    isolated = False
    applied: dict[str, dict] = {}
    for r in results:
        info = r.analysis.extra.get("config") or {}
        isolated = isolated or bool(info.get("isolated"))
        path = info.get("path")
        if path:
            entry = applied.setdefault(
                path,
                {
                    "path": no_lone_surrogates(path),
                    "files": 0,
                    "effects": [no_lone_surrogates(e) for e in info.get("effects", ())],
                },
            )
            entry["files"] += 1
    return {"isolated": isolated, "applied": [applied[k] for k in sorted(applied)]}


def config_lines(summary: dict) -> list[str]:
    """The text report's lines for :func:`config_summary` (none when no project configuration
    was found and ``--isolated`` was not given)."""
    if summary["isolated"]:
        return ["Project configuration: ignored (--isolated)."]
    out = []
    for a in summary["applied"]:
        files = f"{a['files']:,} file" + ("" if a["files"] == 1 else "s")
        if a["effects"]:
            out.append(
                f"Project configuration {printable(a['path'])} applied to {files}; it turns off or lowers: "
                + "; ".join(printable(e) for e in a["effects"])
                + "."
            )
        else:
            out.append(f"Project configuration {printable(a['path'])} applied to {files}; it turns nothing off.")
    return out
