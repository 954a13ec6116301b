"""How the character findings read and what they fix: severities, ``data["codepoints"]`` ids,
code-point names in messages, quoted previews and the remove-invisible fixes."""

from __future__ import annotations

from unveil.core.findings import Edit, Fix, Severity
from unveil.core.unicode_data import cp_id, cp_label

ERROR, WARNING, INFO, HINT = Severity.ERROR, Severity.WARNING, Severity.INFO, Severity.HINT


PREVIEW = 200  # characters of decoded text quoted in a message


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------
def codepoint_ids(s: str) -> list[str]:
    return list(dict.fromkeys(cp_id(c) for c in s))


def labels(s: str) -> str:
    names = list(dict.fromkeys(cp_label(c) for c in s))
    if len(names) <= 3:
        return " and ".join(names) if len(names) <= 2 else f"{names[0]}, {names[1]} and {names[2]}"
    return ", ".join(names[:3]) + f" and {len(names) - 3} more"


def counted_labels(chars: str) -> str:
    """``"U+200B ZERO WIDTH SPACE"`` for one character, ``"4 × U+200B ZERO WIDTH SPACE"`` for
    four of the same, ``"2 × U+200B ZERO WIDTH SPACE and 1 × U+2060 WORD JOINER"`` for a mix
    (at most three names, then ``"and N more"``)."""
    counts: dict[str, int] = {}
    for c in chars:
        counts[c] = counts.get(c, 0) + 1
    if len(chars) == 1:
        return cp_label(chars)
    parts = [f"{n} × {cp_label(c)}" for c, n in counts.items()]
    if len(parts) <= 2:
        return " and ".join(parts)
    if len(parts) == 3:
        return f"{parts[0]}, {parts[1]} and {parts[2]}"
    return ", ".join(parts[:3]) + f" and {len(parts) - 3} more"


def quote(s: str, limit: int = PREVIEW) -> str:
    shown = s if len(s) <= limit else s[:limit] + "…"
    return '"' + shown.replace("\n", "\\n").replace("\r", "\\r").replace('"', '\\"') + '"'


def remove_fix(start: int, end: int) -> tuple[Fix, ...]:
    n = end - start
    return (Fix(title=f"Remove {n} invisible character(s)", edits=(Edit(start, end, ""),), kind="remove-invisible"),)


def remove_spans_fix(spans: list[tuple[int, int]]) -> tuple[Fix, ...]:
    """One fix deleting every ``[start, end)`` in ``spans`` (sorted, non-overlapping): one edit each."""
    n = sum(e - s for s, e in spans)
    edits = tuple(Edit(s, e, "") for s, e in spans)
    return (Fix(title=f"Remove {n} invisible character(s)", edits=edits, kind="remove-invisible"),)
