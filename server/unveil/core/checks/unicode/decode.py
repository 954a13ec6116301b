"""Decoders of data hidden in invisible characters: two-symbol binary runs (zero-width, bidi
marks, invisible math operators), variation-selector bytes and tag-character ASCII."""

from __future__ import annotations


def printable(s: str) -> bool:
    return bool(s) and all(c.isprintable() or c in "\t\n\r" for c in s) and any(c.isalnum() for c in s)


def decode_bits(symbols: str, zero: str, one: str) -> str | None:
    """Decode a string of two invisible symbols as bits (``zero`` → 0, ``one`` → 1), 8 bits per
    byte, most significant bit first, then UTF-8. Returns the text when it is printable (and has
    at least one letter or digit), else ``None``. Trailing bits short of a byte are ignored."""
    bits = "".join("0" if c == zero else "1" if c == one else "" for c in symbols)
    if len(bits) < 8:
        return None
    data = bytes(int(bits[i : i + 8], 2) for i in range(0, len(bits) - 7, 8))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if printable(text) else None


def decode_two_symbol_run(run: str) -> tuple[str, str, str] | None:
    """Try a binary decode of a run drawn from two symbols, with optional framing characters at
    either end (e.g. U+2060 around U+200B/U+200C). Returns ``(text, zero_symbol, one_symbol)``
    for the first printable decode (both assignments tried), else ``None``."""
    core = run
    counts: dict[str, int] = {}
    for c in core:
        counts[c] = counts.get(c, 0) + 1
    if len(counts) > 2:
        main = sorted(counts, key=lambda c: counts[c], reverse=True)[:2]
        core = core.strip("".join(c for c in counts if c not in main))
    symbols = list(dict.fromkeys(core))
    if len(symbols) != 2 or any(c not in symbols for c in core):
        return None
    a, b = symbols
    for zero, one in ((a, b), (b, a)):
        text = decode_bits(core, zero, one)
        if text is not None:
            return text, zero, one
    return None


def vs_byte(ch: str) -> int | None:
    """Byte carried by a variation selector in Paul Butler's encoding: U+FE00+b for b < 16,
    U+E0100+(b−16) otherwise. ``None`` for other code points (e.g. Mongolian FVS)."""
    cp = ord(ch)
    if 0xFE00 <= cp <= 0xFE0F:
        return cp - 0xFE00
    if 0xE0100 <= cp <= 0xE01EF:
        return cp - 0xE0100 + 16
    return None


def decode_tags(run: str) -> str:
    """ASCII text carried by tag characters: U+E0020–E007E → ' '–'~'; U+E0001 LANGUAGE TAG and
    U+E007F CANCEL TAG (framing) are dropped; anything else becomes U+FFFD."""
    out = []
    for c in run:
        cp = ord(c)
        if 0xE0020 <= cp <= 0xE007E:
            out.append(chr(cp - 0xE0000))
        elif cp in (0xE0001, 0xE007F):
            continue
        else:
            out.append("\ufffd")
    return "".join(out)
