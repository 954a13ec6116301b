"""Write ``server/unveil/data/unicode-14-assigned.txt``: the code points assigned in Unicode 14.0
(general category other than Cn), as ranges, from Python 3.11's :mod:`unicodedata` (Unicode
14.0.0). Run with Python 3.11; see :mod:`unveil.core.bpe` for what the file is for."""

from __future__ import annotations

import sys
import unicodedata
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "server" / "unveil" / "data" / "unicode-14-assigned.txt"


def ranges() -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for cp in range(0x110000):
        if unicodedata.category(chr(cp)) == "Cn":
            continue
        if out and out[-1][1] == cp - 1:
            out[-1] = (out[-1][0], cp)
        else:
            out.append((cp, cp))
    return out


def main() -> int:
    if unicodedata.unidata_version != "14.0.0":
        print(f"needs Unicode 14.0.0 data (Python 3.11), this is {unicodedata.unidata_version}", file=sys.stderr)
        return 2
    lines = [
        "# Code points assigned in Unicode 14.0.0 (general category other than Cn), one range a line.",
        "# Written by scripts/gen_unicode_assigned.py from Python 3.11's unicodedata; read by unveil.core.bpe.",
    ]
    lines += [f"{lo:04X}" if lo == hi else f"{lo:04X}..{hi:04X}" for lo, hi in ranges()]
    OUT.write_text("\n".join(lines) + "\n", encoding="ascii")
    print(f"{OUT}: {len(lines) - 2} ranges")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
