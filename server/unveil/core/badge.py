"""The unveil badge: a flat 20 px SVG and a shields.io endpoint JSON, offline and deterministic.

* Message: ``"<worst grade> · <tokens per session> tok/session"`` plus ``" · reviewed"`` when the
  review lock verifies, e.g. ``"A · 2.1k tok/session · reviewed"``. Colour by the worst grade:
  A brightgreen, B green, C yellow, D orange, F red (skillsaw's and shields' convention; hex values
  are shields' named colours).
* SVG: shields' "flat" layout (20 px high, 3 px radius, #555 label side, a light gradient, a 1 px
  text shadow), accessible (``role="img"``, ``<title>``, ``aria-label``). Text widths come from a
  fixed table of Verdana 11 px advance widths (``unveil/data/verdana-11px.json``, from anafanafo
  2.0.0, MIT), never from an installed font, so the same input gives the same bytes everywhere.
* JSON: shields' endpoint schema (``schemaVersion`` 1, ``label``, ``message``, ``color``) plus an
  ``unveil`` object: ``grade``, ``tokens`` (``session``/``invoke``, o200k tokens), ``tokenizer``,
  ``files``, ``findings`` (count per severity) and ``lock`` (``"reviewed"``, ``"changed"`` or
  ``"none"``). Keys sorted, indent 2, LF, final newline.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from xml.sax.saxutils import escape

GRADE_COLOURS = {"A": "brightgreen", "B": "green", "C": "yellow", "D": "orange", "F": "red"}
HEX = {
    "brightgreen": "#4c1",
    "green": "#97ca00",
    "yellow": "#dfb317",
    "orange": "#fe7d37",
    "red": "#e05d44",
    "lightgrey": "#9f9f9f",
}
LABEL = "unveil"
TOKENIZER = "o200k_base"
_WIDTHS_FILE = Path(__file__).resolve().parent.parent / "data" / "verdana-11px.json"


@dataclass
class BadgeData:
    """What the badge shows. ``grade`` is the worst grade over ``files`` (``None`` without files);
    tokens are sums of o200k tokens; ``lock`` is ``"reviewed"``, ``"changed"`` or ``"none"``."""

    grade: str | None
    session: int
    invoke: int
    files: int
    findings: dict[str, int] = field(default_factory=dict)
    lock: str = "none"


@lru_cache(maxsize=1)
def _widths() -> tuple[dict[int, int], int]:
    data = json.loads(_WIDTHS_FILE.read_text(encoding="utf-8"))
    table: dict[int, int] = {}
    for lo, hi, w in data["ranges"]:
        for cp in range(lo, hi + 1):
            table[cp] = round(w * 100)  # hundredths of a px: integer sums, no float drift
    return table, table[ord(data["fallback_char"])]


def text_width(text: str) -> float:
    """Width in px of ``text`` in Verdana 11 px (fixed table, summed in exact hundredths of a
    px; unknown characters count as "m")."""
    table, fallback = _widths()
    return sum(table.get(ord(ch), fallback) for ch in text) / 100


def format_tokens(n: int) -> str:
    """``950``, ``2.1k``, ``21k``, ``1.2M`` (one decimal below ten, rounded half up)."""
    if n < 1000:
        return str(n)
    if n < 999_500:
        size, unit = 1000, "k"
    else:
        size, unit = 1_000_000, "M"
    tenths = (n * 10 + size // 2) // size  # rounded half up, exact integers
    if tenths < 100:
        return f"{tenths // 10}{unit}" if tenths % 10 == 0 else f"{tenths // 10}.{tenths % 10}{unit}"
    return f"{(n + size // 2) // size}{unit}"


def message(data: BadgeData) -> str:
    """The badge message (module docstring)."""
    if data.grade is None:
        return "no agent files"
    out = f"{data.grade} · {format_tokens(data.session)} tok/session"
    if data.lock == "reviewed":
        out += " · reviewed"
    return out


def colour(data: BadgeData) -> str:
    """The shields colour name for the worst grade (``lightgrey`` without files)."""
    return GRADE_COLOURS.get(data.grade or "", "lightgrey")


def endpoint_json(data: BadgeData) -> str:
    """The shields.io endpoint JSON text (module docstring)."""
    doc = {
        "schemaVersion": 1,
        "label": LABEL,
        "message": message(data),
        "color": colour(data),
        "unveil": {
            "grade": data.grade,
            "tokens": {"session": data.session, "invoke": data.invoke},
            "tokenizer": TOKENIZER,
            "files": data.files,
            "findings": {k: data.findings.get(k, 0) for k in ("error", "warning", "info", "hint")},
            "lock": data.lock,
        },
    }
    return json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def svg(data: BadgeData) -> str:
    """The flat badge SVG text (module docstring). Coordinates are in the 10× text space shields
    uses (``transform="scale(.1)"``), so every number is an integer."""
    label, msg, fill = LABEL, message(data), HEX[colour(data)]
    lw = math.ceil(text_width(label)) + 10
    mw = math.ceil(text_width(msg)) + 10
    total = lw + mw
    title = escape(f"{label}: {msg}")
    aria = escape(f"{label}: {msg}", {'"': "&quot;"})
    lx, mx = lw * 5, (lw * 10) + mw * 5
    ltl, mtl = (lw - 10) * 10, (mw - 10) * 10
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total}" height="20" role="img" aria-label="{aria}">'
        f"<title>{title}</title>"
        '<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/>'
        '<stop offset="1" stop-opacity=".1"/></linearGradient>'
        f'<clipPath id="r"><rect width="{total}" height="20" rx="3" fill="#fff"/></clipPath>'
        f'<g clip-path="url(#r)"><rect width="{lw}" height="20" fill="#555"/>'
        f'<rect x="{lw}" width="{mw}" height="20" fill="{fill}"/>'
        f'<rect width="{total}" height="20" fill="url(#s)"/></g>'
        '<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" '
        'text-rendering="geometricPrecision" font-size="110">'
        f'<text aria-hidden="true" x="{lx}" y="150" fill="#010101" fill-opacity=".3" transform="scale(.1)" '
        f'textLength="{ltl}">{escape(label)}</text>'
        f'<text x="{lx}" y="140" transform="scale(.1)" fill="#fff" textLength="{ltl}">{escape(label)}</text>'
        f'<text aria-hidden="true" x="{mx}" y="150" fill="#010101" fill-opacity=".3" transform="scale(.1)" '
        f'textLength="{mtl}">{escape(msg)}</text>'
        f'<text x="{mx}" y="140" transform="scale(.1)" fill="#fff" textLength="{mtl}">{escape(msg)}</text>'
        "</g></svg>\n"
    )


def worst_grade(grades) -> str | None:
    """The worst of ``grades`` (A best, F worst); ``None`` for none."""
    order = "ABCDF"
    grades = [g for g in grades if g in order]
    return max(grades, key=order.index) if grades else None
