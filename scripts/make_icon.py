"""Write client-vscode/images/icon.png: the extension's 128×128 icon (an eye over a page), drawn
with the standard library only (zlib + struct), so the build needs no image tool.

Usage: python scripts/make_icon.py [OUT]
"""

from __future__ import annotations

import math
import struct
import sys
import zlib
from pathlib import Path

SIZE = 128
BG = (32, 38, 54, 255)
PAGE = (236, 239, 244, 255)
IRIS = (94, 129, 172, 255)
PUPIL = (20, 24, 34, 255)
CLEAR = (0, 0, 0, 0)


def pixel(x: float, y: float) -> tuple[int, int, int, int]:
    cx, cy = SIZE / 2, SIZE / 2
    # rounded square background
    r = 22
    dx, dy = max(abs(x - cx) - (SIZE / 2 - r), 0), max(abs(y - cy) - (SIZE / 2 - r), 0)
    if dx * dx + dy * dy > r * r:
        return CLEAR
    # the eye: intersection of two circles (a lens shape)
    d1 = math.hypot(x - cx, y - (cy + 34))
    d2 = math.hypot(x - cx, y - (cy - 34))
    if d1 < 58 and d2 < 58:
        d = math.hypot(x - cx, y - cy)
        if d < 9:
            return PUPIL
        if d < 21:
            return IRIS
        return PAGE
    return BG


def png(width: int, height: int, rows: list[bytes]) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + r for r in rows)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def main(out: Path) -> None:
    rows = [b"".join(bytes(pixel(x + 0.5, y + 0.5)) for x in range(SIZE)) for y in range(SIZE)]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(png(SIZE, SIZE, rows))


if __name__ == "__main__":
    main(
        Path(sys.argv[1])
        if len(sys.argv) > 1
        else Path(__file__).resolve().parents[1] / "client-vscode" / "images" / "icon.png"
    )
