"""Character-level hidden-content checks: rules HID001–HID013 (see ``rules/hidden-content.toml``).

Pipeline (research notes ``hiding-techniques.md`` §5):

1. **Fast path** — pure-ASCII text without C0 controls (other than TAB/LF/CRLF) returns nothing.
2. **Candidates** — one compiled ``regex`` class (Unicode 17 data: Default_Ignorable, Bidi_Control,
   Co, Cn, Cs, Cc, Zl/Zp, a few blank look-alikes) finds runs of suspicious code points. For speed
   it runs only over the non-ASCII stretches of the text; ASCII controls come from a separate
   ``re`` scan.
3. **Buckets and context** — each run is split by technique (tags, zero-width, bidi, …); each
   piece is judged in context (emoji sequences, scripts, right-to-left text, code, frontmatter)
   and becomes at most one :class:`Finding` covering exactly its code points.
4. **Confusables** — words mixing Latin letters with Cyrillic/Greek/Armenian/Cherokee look-alikes
   whose skeleton is ASCII.

All offsets are code-point offsets into ``ctx.doc.text``. Every finding carries
``data["codepoints"]`` (distinct ``"U+XXXX"`` strings in order of appearance).
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from typing import Iterable, Iterator

import regex

from unveil.core.findings import Edit, Finding, Fix, Severity
from unveil.core.unicode_data import CONFUSABLES, CONTROL_NAMES, RGI_TAG_FLAGS, cp_id, cp_label, registered_variation

ERROR, WARNING, INFO, HINT = Severity.ERROR, Severity.WARNING, Severity.INFO, Severity.HINT
PREVIEW = 200  # characters of decoded text quoted in a message
MAX_FINDINGS = 2000  # per document; the rest is summarised in one finding
MAX_FINDINGS_BINARY = 20  # per binary-looking document (besides the "looks binary" finding)
BINARY_SAMPLE = 8192  # code points judged by :func:`looks_binary`
_CONCEAL_END = re.compile(r"\x1b\[|\n|\r")
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

# --------------------------------------------------------------------------------------------
# Scanners
# --------------------------------------------------------------------------------------------
# ASCII controls that matter (everything in C0 but TAB/LF, CR only when not part of CRLF, DEL).
_ASCII_CTRL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]+|\r(?!\n)")
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
# Non-ASCII candidates (Unicode 17 properties from `regex`).
# ZWJ inside an emoji sequence is excluded here already, so emoji-heavy text yields few candidates
# (the handlers check the same contexts again); VS16 is always a candidate and the handler keeps
# registered emoji variation sequences quiet (unicode_data.registered_variation).
_CANDIDATE_CLASS = r"\p{DI}\p{Bidi_C}\p{Co}\p{Cn}\p{Cs}\x80-\x9f\u2028\u2029\u2800\u3000\ufffc"
_CANDIDATE = regex.compile(
    r"(?V1)(?:[[" + _CANDIDATE_CLASS + r"]--[\ufe0f\u200d]]"
    r"|\ufe0f"  # every VS16: registered emoji sequences are told apart in the handler
    r"|(?<![\p{ExtPict}\p{EMod}\ufe0f\u20e3])\u200d|\u200d(?!\p{ExtPict}))+"
)

_P = {
    name: regex.compile(pat)
    for name, pat in {
        "emoji": r"\p{Emoji}",
        "extpict": r"\p{ExtPict}",
        "emod": r"\p{Emoji_Modifier}",
        "han": r"\p{scx=Han}",
        "cjk": r"[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}\p{scx=Bopomofo}\uff00-\uffef]",
        "sea": r"[\p{scx=Thai}\p{scx=Lao}\p{scx=Khmer}\p{scx=Myanmar}\p{scx=Tai_Tham}\p{scx=Tai_Viet}"
        r"\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}\p{scx=Bopomofo}]",
        "joining": r"[\p{scx=Arabic}\p{scx=Syriac}\p{scx=Nko}\p{scx=Mongolian}\p{scx=Devanagari}"
        r"\p{scx=Bengali}\p{scx=Gurmukhi}\p{scx=Gujarati}\p{scx=Oriya}\p{scx=Tamil}"
        r"\p{scx=Telugu}\p{scx=Kannada}\p{scx=Malayalam}\p{scx=Sinhala}\p{scx=Tibetan}"
        r"\p{scx=Myanmar}\p{scx=Khmer}\p{scx=Phags_Pa}\p{scx=Kaithi}\p{scx=Sharada}\p{scx=Grantha}]",
        "virama": r"\p{ccc=9}",
        "mongolian": r"\p{scx=Mongolian}",
        "duployan": r"\p{scx=Duployan}",
        "jamo": r"[\p{Hangul_Syllable_Type=L}\p{Hangul_Syllable_Type=V}\p{Hangul_Syllable_Type=T}]",
        "mark": r"\p{M}",
        "hebrew": r"\p{scx=Hebrew}",
        "std_variant_base": r"[\p{Sm}\p{scx=Han}\p{scx=Myanmar}\p{scx=Phags_Pa}\p{scx=Manichaean}"
        r"\p{scx=Egyptian_Hieroglyphs}\p{Emoji}\u2200-\u22ff]",
        "cn": r"\p{Cn}",
        "nonchar": r"\p{Noncharacter_Code_Point}",
        "latin": r"\p{scx=Latin}",
        "letter": r"\p{L}",
    }.items()
}
_RTL = regex.compile(r"(?V1)[[\p{bc=R}\p{bc=AL}]--\p{Bidi_C}]")
_DI = regex.compile(r"\p{DI}")
_URL = regex.compile(r"(?:[A-Za-z][A-Za-z0-9+.\-]*://|www\.)[^\s<>\"'`)\]]+")
_HOSTISH = regex.compile(r"\.[A-Za-z]{2,6}$")
_FOREIGN = r"[[\p{L}\p{M}]--[\p{scx=Latin}\p{scx=Zinh}\p{scx=Zyyy}]]"
# runs of look-alike letters not touching a letter of another script (Привет cannot look ASCII)
_CONF_RUN = regex.compile(r"(?V1)(?<!" + _FOREIGN + ")[" + "".join(sorted(CONFUSABLES)) + "]+(?!" + _FOREIGN + ")")
_WORD_L = regex.compile(r"(?r)\w*")
_WORD_R = regex.compile(r"\w*")


def _is(prop: str, ch: str) -> bool:
    return bool(ch) and _P[prop].match(ch) is not None


# --------------------------------------------------------------------------------------------
# Code-point classes (buckets)
# --------------------------------------------------------------------------------------------
ZERO_WIDTH = frozenset("\u200b\u200c\u200d\u2060\ufeff\u180e")
BIDI_OPEN = {
    "\u202a": "\u202c",
    "\u202b": "\u202c",
    "\u202d": "\u202c",
    "\u202e": "\u202c",
    "\u2066": "\u2069",
    "\u2067": "\u2069",
    "\u2068": "\u2069",
}
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
BIDI_MARKS = frozenset("\u200e\u200f\u061c")
MONGOLIAN_FVS = frozenset("\u180b\u180c\u180d\u180f")
HANGUL_FILLERS = frozenset("\u115f\u1160\u3164\uffa0")


def _bucket(ch: str) -> str:
    """The technique a candidate code point belongs to (see the module docstring)."""
    cp = ord(ch)
    if cp < 0xA0:
        if cp == 0x85:
            return "ls"
        return "cc"
    if 0xE0000 <= cp <= 0xE007F:
        return "tag"
    if ch in ZERO_WIDTH:
        return "zw"
    if ch in BIDI_CONTROLS:
        return "bidi"
    if ch in BIDI_MARKS:
        return "mark"
    if 0xFE00 <= cp <= 0xFE0F or 0xE0100 <= cp <= 0xE01EF or ch in MONGOLIAN_FVS:
        return "vs"
    if 0x2061 <= cp <= 0x2064:
        return "math"
    if cp in (0x2028, 0x2029):
        return "ls"
    if cp == 0xAD:
        return "shy"
    if cp == 0x34F:
        return "cgj"
    if ch in HANGUL_FILLERS:
        return "hangul"
    if cp in (0x17B4, 0x17B5):
        return "khmer"
    if 0x206A <= cp <= 0x206F:
        return "deprecated"
    if cp == 0x2065 or 0xFFF0 <= cp <= 0xFFF8 or 0xE0080 <= cp <= 0xE0FFF:
        return "reserved"
    if 0x1BCA0 <= cp <= 0x1BCA3:
        return "shorthand"
    if 0x1D173 <= cp <= 0x1D17A:
        return "music"
    if ch in "\u00a0\u202f":
        return "nbsp"
    if cp == 0x2800:
        return "braille"
    if cp == 0x3000:
        return "idsp"
    if cp == 0xFFFC:
        return "objrep"
    if 0xD800 <= cp <= 0xDFFF:
        return "surrogate"
    if _P["cn"].match(ch):
        return "cn"
    if 0xE000 <= cp <= 0xF8FF or cp >= 0xF0000:
        return "pua"
    return "di"  # any other Default_Ignorable (future additions)


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------
def _codepoints(s: str) -> list[str]:
    return list(dict.fromkeys(cp_id(c) for c in s))


def _labels(s: str) -> str:
    names = list(dict.fromkeys(cp_label(c) for c in s))
    if len(names) <= 3:
        return " and ".join(names) if len(names) <= 2 else f"{names[0]}, {names[1]} and {names[2]}"
    return ", ".join(names[:3]) + f" and {len(names) - 3} more"


def _counted_labels(chars: str) -> str:
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


def _quote(s: str, limit: int = PREVIEW) -> str:
    shown = s if len(s) <= limit else s[:limit] + "…"
    return '"' + shown.replace("\n", "\\n").replace("\r", "\\r").replace('"', '\\"') + '"'


def _remove_fix(start: int, end: int) -> tuple[Fix, ...]:
    n = end - start
    return (Fix(title=f"Remove {n} invisible character(s)", edits=(Edit(start, end, ""),), kind="remove-invisible"),)


def _remove_spans_fix(spans: list[tuple[int, int]]) -> tuple[Fix, ...]:
    """One fix deleting every ``[start, end)`` in ``spans`` (sorted, non-overlapping): one edit each."""
    n = sum(e - s for s, e in spans)
    edits = tuple(Edit(s, e, "") for s, e in spans)
    return (Fix(title=f"Remove {n} invisible character(s)", edits=edits, kind="remove-invisible"),)


def looks_binary(text: str) -> tuple[bool, int, int]:
    """Whether ``text`` looks like binary data rather than text: ``(binary, nul, invalid)``.

    ``nul`` is the number of U+0000 NUL and ``invalid`` the number of invalid UTF-8 bytes (code
    points U+DC80–U+DCFF from ``surrogateescape`` decoding) in the whole text. The verdict is
    taken on the first :data:`BINARY_SAMPLE` code points (≈ bytes for binary data, which decodes
    mostly to ASCII and escaped bytes): binary when the sample holds 4 or more NULs, or when it
    is at least 16 code points long and more than 30% of it are NUL, other C0 controls (not TAB,
    LF, CR, FF or ESC), DEL, C1 controls or invalid bytes. One stray NUL or a few escape
    sequences in real text do not make it binary (they are reported one by one)."""
    nul = text.count("\x00")
    invalid = len(_INVALID_BYTE.findall(text))
    sample = text[:BINARY_SAMPLE]
    if sample.count("\x00") >= 4:
        return True, nul, invalid
    if len(sample) >= 16 and len(_BINARYISH.findall(sample)) * 10 > len(sample) * 3:
        return True, nul, invalid
    return False, nul, invalid


_INVALID_BYTE = re.compile("[\udc80-\udcff]")
_BINARYISH = re.compile("[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f\x7f-\x9f\udc80-\udcff]")


def _printable(s: str) -> bool:
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
    return text if _printable(text) else None


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


# ASCII characters a split "word" may contain: letters, digits and path/identifier punctuation.
_WORDISH = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-/~$@:")
_JOINER_CLASS = "\u00ad\u200b\u200c\u200d\u2060\ufeff\u180e"
_JOINERS = re.compile("[" + _JOINER_CLASS + "]")
_WORDISH_L = regex.compile(r"(?r)[A-Za-z0-9_.\-/~$@:" + _JOINER_CLASS + "]*")
_WORDISH_R = regex.compile(r"[A-Za-z0-9_.\-/~$@:" + _JOINER_CLASS + "]*")
_NBSP = re.compile("[\u00a0\u202f]+")


class _Scan:
    """State for one document: text, context helpers, findings."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.doc = ctx.doc
        self.text = ctx.doc.text
        self.md = ctx.markdown
        self.out: list[Finding] = []
        self._line_cache: dict[int, tuple] = {}
        self._bidi_cache: dict[int, tuple[set[int], dict[int, int]]] = {}
        self._instr_cache: dict[int, bool] = {}
        self.segments: list[tuple[int, int]] = [(0, len(self.text))]
        self.pieces: list[tuple[int, int, str]] = []
        self.absorbed: set[int] = set()  # starts of pieces already reported with an earlier one
        self.cr_file = False  # lone CR is the file's only line ending (see run())
        self._starts: list[int] = []

    # -- context -------------------------------------------------------------------------
    def ch(self, i: int) -> str:
        return self.text[i] if 0 <= i < len(self.text) else ""

    def in_code(self, off: int) -> bool:
        try:
            return bool(self.md.in_code(off))
        except Exception:  # noqa: BLE001 - a broken markdown layer must not stop the scan
            return False

    def in_fm(self, off: int) -> bool:
        try:
            return bool(self.md.in_frontmatter(off))
        except Exception:  # noqa: BLE001
            return False

    def line_info(self, off: int) -> tuple[int, int, str, bool]:
        """``(line_start, line_end, line_text, has_rtl)`` of the line holding ``off``."""
        line = self.doc.line_of(off)
        info = self._line_cache.get(line)
        if info is None:
            s, e = self.doc.line_span(line)
            t = self.text[s:e]
            info = (s, e, t, _RTL.search(t) is not None)
            self._line_cache[line] = info
        return info

    def line_is_instruction(self, off: int) -> bool:
        """Whether the line holding ``off``, with Default_Ignorable code points removed (what
        the model reads), is instruction-like per :func:`unveil.core.instruction.classify`.
        Cached per line; very long lines are judged on their first 2,000 characters."""
        line = self.doc.line_of(off)
        verdict = self._instr_cache.get(line)
        if verdict is None:
            text = _DI.sub("", self.line_info(off)[2][:2000])
            try:
                from unveil.core.instruction import classify

                verdict = classify(text).level == "instruction"
            except Exception:  # noqa: BLE001 - a failing classifier only lowers severity
                verdict = False
            self._instr_cache[line] = verdict
        return verdict

    def rejoin_word(self, start: int, end: int) -> tuple[int, int, str]:
        """Expand ``[start, end)`` over adjacent ASCII word characters and invisible joiners
        (zero-width characters, soft hyphens), at most 40 code points each way; return the
        expanded span and the word with the invisible characters removed."""
        t = self.text
        s = _WORDISH_L.match(t, max(0, start - 40), start).start()
        e = _WORDISH_R.match(t, end, min(len(t), end + 40)).end()
        left = _JOINERS.sub("", t[s:start]).lstrip(".:-/")
        right = _JOINERS.sub("", t[end:e]).rstrip(".:-/")
        if len(left) > 30:
            left = "…" + left[-30:]
        if len(right) > 30:
            right = right[:30] + "…"
        return s, e, left + right

    def emit(
        self,
        rule: str,
        sev: Severity,
        start: int,
        end: int,
        message: str,
        *,
        hidden: str | None = None,
        fix: bool = True,
        data: dict | None = None,
        fixes: tuple[Fix, ...] | None = None,
    ) -> None:
        d = {"codepoints": _codepoints(self.text[start:end])}
        if data:
            d.update(data)
        if fixes is None:
            fixes = _remove_fix(start, end) if fix else ()
        self.out.append(Finding(rule, sev, start, end, message, hidden_text=hidden, fixes=fixes, data=d))

    # -- driver --------------------------------------------------------------------------
    def run(self) -> list[Finding]:
        """All findings of the document, in order of offset within each pass (candidate runs, then
        look-alike letters). Per-document caps: :data:`MAX_FINDINGS` runs, or
        :data:`MAX_FINDINGS_BINARY` after a leading "looks binary" HID010 finding when
        :func:`looks_binary` says so; the runs past the cap are counted in one summary finding
        (HID013 is then not run, and the summary says so)."""
        pieces = self.pieces = self.candidate_pieces()
        self._starts = [p[0] for p in pieces]
        t = self.text
        cap = MAX_FINDINGS
        binary, nul, invalid = looks_binary(t)
        if binary:
            cap = MAX_FINDINGS_BINARY + 1
            self.out.append(
                Finding(
                    "HID010",
                    ERROR,
                    0,
                    min(1, len(t)),
                    f"This file looks binary ({nul} NUL byte{'s' if nul != 1 else ''}, {invalid} invalid UTF-8 "
                    f"byte{'s' if invalid != 1 else ''}): it is not agent text",
                    data={"codepoints": _codepoints(t[:1]), "binary": True, "nul": nul, "invalid": invalid},
                )
            )
        # lone CR as the file's only line ending (old Mac): one finding per file, not per line
        self.cr_file = "\n" not in t and t.count("\r") >= 2
        handlers = {
            "tag": self.tags,
            "zw": self.zero_width,
            "bidi": self.bidi,
            "mark": self.bidi_mark,
            "vs": self.variation,
            "math": self.math_op,
            "cc": self.control,
            "ls": self.line_sep,
            "nbsp": self.blank,
            "braille": self.blank,
            "idsp": self.blank,
            "objrep": self.blank,
            "pua": self.pua,
            "cn": self.unassigned,
            "surrogate": self.surrogate,
        }
        skip_to = -1
        capped = False
        for s, e, b in pieces:
            if s < skip_to or s in self.absorbed:  # part of an escape sequence or of a split word
                continue
            if len(self.out) >= cap:
                rule = _BUCKET_RULE.get(b, "HID007")
                rest = sum(1 for p in pieces if p[0] >= s and p[0] not in self.absorbed)
                listed = cap - 1 if binary else cap
                where = " in a binary-looking file" if binary else ""
                self.out.append(
                    Finding(
                        rule,
                        WARNING,
                        s,
                        e,
                        f"More than {listed} hidden-character findings{where}: {rest} more runs of suspicious "
                        "characters from here on are not listed one by one, and look-alike letters (HID013) "
                        "were not checked",
                        data={"codepoints": _codepoints(self.text[s:e]), "unlisted": rest},
                    )
                )
                capped = True
                break
            h = handlers.get(b, self.other_di)
            r = h(s, e, b)
            if isinstance(r, int):
                skip_to = r
        if not capped and not self.text.isascii():
            self.confusables()
        return self.out

    def _following(self, s: int, until: int, bucket: str) -> Iterator[tuple[int, int]]:
        """Pieces of ``bucket`` that start after ``s`` and before ``until``, in order."""
        k = bisect.bisect_right(self._starts, s)
        while k < len(self.pieces) and self.pieces[k][0] < until:
            ps, pe, pb = self.pieces[k]
            if pb == bucket:
                yield ps, pe
            k += 1

    def candidate_pieces(self) -> list[tuple[int, int, str]]:
        """Maximal runs of candidate code points, split where the bucket changes, in order."""
        text = self.text
        spans: list[tuple[int, int]] = [m.span() for m in _ASCII_CTRL.finditer(text)]
        extra = len(text.encode("utf-8", "surrogatepass")) - len(text)
        if extra * 20 > len(text):  # dense non-ASCII text: one pass over everything
            self.segments = [(0, len(text))]
        else:  # mostly ASCII: only look inside the non-ASCII stretches
            self.segments = [m.span() for m in _NON_ASCII.finditer(text)]
        for a, b in self.segments:
            spans.extend(c.span() for c in _CANDIDATE.finditer(text, a, b))
        # no-break spaces matter only inside code (French typography elsewhere)
        for span in getattr(self.md, "code", None) or ():
            try:
                spans.extend(m.span() for m in _NBSP.finditer(text, span.start, span.end))
            except (AttributeError, TypeError):
                continue
        spans.sort()
        pieces: list[tuple[int, int, str]] = []
        for s, e in spans:
            i = s
            while i < e:
                bucket = "cr" if text[i] == "\r" else _bucket(text[i])
                j = i + 1
                if bucket != "cr":
                    while j < e and text[j] != "\r" and _bucket(text[j]) == bucket:
                        j += 1
                if bucket == "cr":
                    bucket = "cc"
                # merge with a touching piece of the same bucket (C0 next to C1, …)
                if pieces and pieces[-1][1] == i and pieces[-1][2] == bucket and bucket != "cc":
                    pieces[-1] = (pieces[-1][0], j, bucket)
                else:
                    pieces.append((i, j, bucket))
                i = j
        return pieces

    # -- HID001 tags -----------------------------------------------------------------------
    def tags(self, s: int, e: int, _b: str) -> None:
        run = self.text[s:e]
        if self.ch(s - 1) == "\U0001f3f4":
            for flag in RGI_TAG_FLAGS:
                if run.startswith(flag):
                    s += len(flag)
                    run = run[len(flag) :]
                    break
            if not run:
                return
        decoded = decode_tags(run)
        n = len(run)
        if decoded.strip():
            msg = f"Hidden Unicode tag characters ({n}) spell: {_quote(decoded)}"
        else:
            msg = f"Hidden Unicode tag characters ({n}) with no printable payload ({_labels(run)})"
        self.emit("HID001", ERROR, s, e, msg, hidden=decoded or None, data={"decoded": decoded})

    # -- HID002 zero-width ---------------------------------------------------------------
    def zero_width(self, s: int, e: int, _b: str) -> None:
        t = self.text
        run = t[s:e]
        n = len(run)
        if run == "\ufeff" and s == 0:
            return  # byte order mark
        distinct = set(run)
        prev, nxt = self.ch(s - 1), self.ch(e)
        if n >= 8 or (n >= 4 and len(distinct) >= 2):
            dec = decode_two_symbol_run(run)
            if dec:
                text, zero, one = dec
                msg = (
                    f"Run of {n} zero-width characters encodes binary data ({cp_id(zero)}=0, {cp_id(one)}=1) "
                    f"that decodes to: {_quote(text)}"
                )
                self.emit("HID002", ERROR, s, e, msg, hidden=text, data={"decoded": text})
            else:
                msg = f"Run of {n} zero-width characters ({_labels(run)}): invisible data the model reads"
                self.emit("HID002", ERROR, s, e, msg)
            return
        # legitimate contexts
        if distinct == {"\u200d"} and n == 1 and self._emoji_zwj(s, e):
            return
        ascii_alnum = lambda c: bool(c) and c.isascii() and c.isalnum()  # noqa: E731
        if distinct <= {"\u200c", "\u200d"} and self._script_context(prev, nxt, "joining"):
            return
        if distinct == {"\u200b"} and self._script_context(prev, nxt, "sea"):
            return
        if distinct == {"\u180e"} and (_is("mongolian", prev) or _is("mongolian", nxt)):
            return
        # a split ASCII word: one finding for all the zero-width characters inside the word
        if self._zw_splits_word(s, e):
            ws, we, word = self.rejoin_word(s, e)
            spans = [(s, e)]
            for ps, pe in self._following(e - 1, we, "zw"):
                if not self._zw_splits_word(ps, pe):
                    break
                spans.append((ps, pe))
                self.absorbed.add(ps)
            self._split_word("HID002", ERROR if self.line_is_instruction(s) else WARNING, spans, word)
            return
        if run == "\ufeff":
            msg = "U+FEFF ZERO WIDTH NO-BREAK SPACE (byte order mark) in the middle of the text"
            self.emit("HID002", WARNING, s, e, msg)
            return
        near_ascii = (
            (prev == "" or prev.isascii()) and (nxt == "" or nxt.isascii()) or ascii_alnum(prev) or ascii_alnum(nxt)
        )
        sev = WARNING if near_ascii else INFO
        where = "next to ASCII text" if near_ascii else "outside an emoji or script context that uses it"
        self.emit("HID002", sev, s, e, f"Invisible {_labels(run)} {where}")

    def _zw_splits_word(self, s: int, e: int) -> bool:
        """Whether the zero-width run ``[s, e)`` is short (not a data run) and sits inside an ASCII
        word (both neighbours word characters, one of them an ASCII letter or digit)."""
        run = self.text[s:e]
        if len(run) >= 8 or (len(run) >= 4 and len(set(run)) >= 2):
            return False
        prev, nxt = self.ch(s - 1), self.ch(e)
        alnum = lambda c: bool(c) and c.isascii() and c.isalnum()  # noqa: E731
        return prev in _WORDISH and nxt in _WORDISH and (alnum(prev) or alnum(nxt))

    def _split_word(self, rule: str, sev: Severity, spans: list[tuple[int, int]], word: str) -> None:
        """One finding for invisible characters at ``spans`` splitting ``word``: range from the
        first to the last invisible character (the letters between are inside the range), one
        fix with one deletion per span; ``data["codepoints"]`` lists the invisible ones only."""
        chars = "".join(self.text[a:b] for a, b in spans)
        msg = (
            f"{_quote(word)} is split by {_counted_labels(chars)}: invisible, but it defeats search and keyword review"
        )
        self.emit(
            rule,
            sev,
            spans[0][0],
            spans[-1][1],
            msg,
            hidden=word,
            fixes=_remove_spans_fix(spans),
            data={"word": word, "codepoints": _codepoints(chars), "count": len(chars)},
        )

    def _emoji_zwj(self, s: int, e: int) -> bool:
        """ZWJ between pictographs: ExtPict [VS16 | skin-tone modifier | keycap] ZWJ ExtPict."""
        p = s - 1
        while p >= 0 and (self.text[p] in "\ufe0f\u20e3" or _is("emod", self.text[p])):
            p -= 1
        return p >= 0 and (_is("extpict", self.text[p]) or _is("emoji", self.text[p])) and _is("extpict", self.ch(e))

    def _script_context(self, prev: str, nxt: str, prop: str) -> bool:
        """One neighbour is in the script family ``prop`` and neither is an ASCII letter/digit."""
        if (prev.isascii() and prev.isalnum()) or (nxt.isascii() and nxt.isalnum()):
            return False
        return _is(prop, prev) or _is(prop, nxt)

    # -- HID003 / HID004 bidi ----------------------------------------------------------------
    def _bidi_pairs(self, line_start: int, line_text: str) -> tuple[set[int], dict[int, int]]:
        """Unmatched bidi control offsets on a line and the opener → closer offset map."""
        stack: list[int] = []
        unmatched: set[int] = set()
        pairs: dict[int, int] = {}
        for i, c in enumerate(line_text):
            if c in BIDI_OPEN:
                stack.append(line_start + i)
            elif c in ("\u202c", "\u2069"):
                # close the innermost opener of the matching kind
                for k in range(len(stack) - 1, -1, -1):
                    if BIDI_OPEN[self.text[stack[k]]] == c:
                        for extra in stack[k + 1 :]:
                            unmatched.add(extra)
                        pairs[stack[k]] = line_start + i
                        del stack[k:]
                        break
                else:
                    unmatched.add(line_start + i)
        unmatched.update(stack)
        return unmatched, pairs

    def bidi(self, s: int, e: int, _b: str) -> None:
        ls, le, lt, rtl = self.line_info(s)
        cached = self._bidi_cache.get(ls)
        if cached is None:
            cached = self._bidi_cache[ls] = self._bidi_pairs(ls, lt)
        unmatched, pairs = cached
        run = self.text[s:e]
        bad_balance = any(i in unmatched for i in range(s, e))
        in_code, in_fm = self.in_code(s), self.in_fm(s)
        opener = next((i for i in range(s, e) if self.text[i] in BIDI_OPEN), None)
        affected = ""
        if opener is not None:
            close = min(pairs.get(opener, le), opener + 1 + 2 * PREVIEW)
            affected = "".join(c for c in self.text[opener + 1 : close] if c not in BIDI_CONTROLS)
        reasons = []
        if not rtl:
            reasons.append("there is no right-to-left text on this line")
        if bad_balance:
            reasons.append("it is not closed on this line" if opener is not None else "it closes nothing")
        if in_code:
            reasons.append("it is inside code")
        if in_fm:
            reasons.append("it is inside the frontmatter")
        sev = ERROR if reasons else INFO
        what = (
            f"{_labels(run)} reorders the displayed text"
            if opener is not None
            else f"{_labels(run)} ends a bidi embedding, override or isolate"
        )
        if affected:
            what += f": {_quote(affected)} is shown reordered while the model reads it in this order"
        msg = what + (" (" + "; ".join(reasons) + ")" if reasons else " (balanced, in right-to-left text)")
        self.emit("HID003", sev, s, e, msg, hidden=affected or None)

    def bidi_mark(self, s: int, e: int, _b: str) -> None:
        run = self.text[s:e]
        n = len(run)
        if n >= 8:
            dec = decode_two_symbol_run(run)
            extra = f" that decodes to {_quote(dec[0])}" if dec else ""
            self.emit(
                "HID004",
                ERROR,
                s,
                e,
                f"Run of {n} bidi marks ({_labels(run)}) encodes data{extra}",
                hidden=dec[0] if dec else None,
            )
            return
        if self.line_info(s)[3]:
            return  # right-to-left context: normal
        prev, nxt = self.ch(s - 1), self.ch(e)
        near_ascii = (prev.isascii() and prev not in "\n") or (nxt.isascii() and nxt not in "\n")
        sev = WARNING if near_ascii else INFO
        self.emit("HID004", sev, s, e, f"Invisible {_labels(run)} with no right-to-left text on the line")

    # -- HID005 variation selectors ----------------------------------------------------------
    def variation(self, s: int, e: int, _b: str) -> None:
        run = self.text[s:e]
        n = len(run)
        base = self.ch(s - 1)
        data = [b for b in (vs_byte(c) for c in run) if b is not None]
        if n >= 2:
            raw = bytes(data)
            text = raw.decode("utf-8", "replace")
            if "\ufffd" in text and run[0] == "\ufe0f":
                alt = raw[1:].decode("utf-8", "replace")
                if "\ufffd" not in alt:
                    text = alt
            msg = f"Run of {n} variation selectors after {_quote(base)} hides {len(data)} bytes"
            if _printable(text):
                msg += f" that decode to: {_quote(text)}"
            else:
                msg += f" (bytes {raw[:32].hex(' ')}{'…' if len(raw) > 32 else ''})"
            self.emit("HID005", ERROR, s, e, msg, hidden=text, data={"decoded": text, "bytes": raw.hex()})
            return
        c = run
        cp = ord(c)
        if registered_variation(base, c):
            return  # a registered emoji, standardized or ideographic variation sequence
        if c in MONGOLIAN_FVS:
            if not _is("mongolian", base):
                self.emit("HID005", WARNING, s, e, f"{cp_label(c)} after {_quote(base)}, not after a Mongolian letter")
            return  # Mongolian shaping uses FVS beyond the registered list: not reported
        if cp >= 0xE0100:
            b = vs_byte(c)
            shown = chr(b) if b is not None and 32 <= b < 127 else f"0x{b:02x}"
            if _is("han", base):
                self.emit(
                    "HID005",
                    WARNING,
                    s,
                    e,
                    f"Ideographic variation selector {cp_id(c)} after {_quote(base)} is not a registered "
                    f"sequence in the Ideographic Variation Database (carries byte {shown!s})",
                    hidden=shown,
                )
                return
            self.emit(
                "HID005",
                ERROR,
                s,
                e,
                f"Supplementary variation selector {cp_id(c)} after non-ideograph {_quote(base)} "
                f"(not a variation sequence; carries byte {shown!s})",
                hidden=shown,
            )
            return
        if c in "\ufe0e\ufe0f" and _is("emoji", base):
            # an emoji with a presentation selector it has no registered sequence for (common
            # when typed on phones: "✅️"); renders the same, carries at most one nibble
            self.emit(
                "HID005",
                INFO,
                s,
                e,
                f"{cp_label(c)} after {_quote(base)}, which has no registered emoji variation sequence",
            )
            return
        self.emit(
            "HID005",
            WARNING,
            s,
            e,
            f"{cp_label(c)} after {_quote(base)} is not a registered variation sequence "
            "(StandardizedVariants.txt, emoji-variation-sequences.txt)",
        )

    # -- HID006 invisible math operators ----------------------------------------------------
    def math_op(self, s: int, e: int, _b: str) -> None:
        run = self.text[s:e]
        n = len(run)
        if n >= 8 and set(run) <= {"\u2062", "\u2064"}:
            text = decode_bits(run, "\u2062", "\u2064") or decode_bits(run, "\u2064", "\u2062")
            msg = f'Run of {n} invisible math operators (U+2062=0, U+2064=1: "Sneaky Bits" encoding)'
            msg += f" decodes to: {_quote(text)}" if text else " hides binary data"
            self.emit("HID006", ERROR, s, e, msg, hidden=text, data={"decoded": text} if text else None)
            return
        self.emit("HID006", WARNING, s, e, f"Invisible math operator {_labels(run)} outside a formula")

    # -- HID007 other Default_Ignorable --------------------------------------------------------
    def other_di(self, s: int, e: int, b: str) -> None:
        t = self.text
        run = t[s:e]
        prev, nxt = self.ch(s - 1), self.ch(e)
        label = _labels(run)
        if b == "shy":
            if len(run) == 1 and prev.isalpha() and nxt.isalpha():
                ws, we, word = self.rejoin_word(s, e)
                if not (prev.isascii() and nxt.isascii()):
                    return  # hyphenation hint in a non-ASCII word
                spans = [(s, e)]
                for ps, pe in self._following(s, we, "shy"):
                    p2, n2 = self.ch(ps - 1), self.ch(pe)
                    if pe - ps != 1 or not (p2.isalpha() and n2.isalpha() and p2.isascii() and n2.isascii()):
                        break
                    spans.append((ps, pe))
                self.absorbed.update(a for a, _ in spans[1:])
                if self.line_is_instruction(s):
                    sev = ERROR
                elif len(word) >= 12 and all(self.ch(a - 1).islower() and self.ch(a + 1).islower() for a, _ in spans):
                    return  # hyphenation points in a long word (German compounds, converted HTML)
                else:
                    sev = WARNING
                self._split_word("HID007", sev, spans, word)
                return
            self.emit("HID007", WARNING, s, e, f"Invisible {label} outside a word")
            return
        if b == "cgj":
            if _is("mark", prev) or _is("hebrew", prev):
                return
            self.emit("HID007", WARNING, s, e, f"Invisible {label} not between combining marks")
            return
        if b == "hangul":
            if set(run) <= {"\u115f", "\u1160"} and (_is("jamo", prev) or _is("jamo", nxt)):
                return
            self.emit("HID007", ERROR, s, e, f"{label}: renders as a blank letter (used for invisible names and code)")
            return
        if b == "deprecated":
            self.emit("HID007", ERROR, s, e, f"Deprecated invisible format control {label}")
            return
        if b == "reserved":
            self.emit("HID007", ERROR, s, e, f"Reserved invisible code point(s) {label}: no legitimate use")
            return
        if b == "shorthand" and (_is("duployan", prev) or _is("duployan", nxt)):
            return
        if b == "music" and (0x1D100 <= ord(prev or " ") <= 0x1D1FF or 0x1D100 <= ord(nxt or " ") <= 0x1D1FF):
            return
        self.emit("HID007", WARNING, s, e, f"Invisible {label}")

    # -- HID008 blank look-alikes ---------------------------------------------------------------
    def blank(self, s: int, e: int, b: str) -> None:
        run = self.text[s:e]
        prev, nxt = self.ch(s - 1), self.ch(e)
        if b == "nbsp":
            if self.in_code(s) and prev.isascii() and nxt.isascii() and prev.strip() and nxt.strip():
                self.emit(
                    "HID008",
                    WARNING,
                    s,
                    e,
                    f"{_labels(run)} inside code: looks like a space but is not one to a shell or parser",
                    fixes=(Fix("Replace with a space", (Edit(s, e, " "),), kind="replace-space"),),
                )
            return
        if b == "braille":
            if 0x2801 <= ord(prev or " ") <= 0x28FF or 0x2801 <= ord(nxt or " ") <= 0x28FF:
                return
            self.emit(
                "HID008", WARNING, s, e, f"{len(run)} × U+2800 BRAILLE PATTERN BLANK: looks blank, is not whitespace"
            )
            return
        if b == "objrep":
            self.emit(
                "HID008", WARNING, s, e, f"{len(run)} × U+FFFC OBJECT REPLACEMENT CHARACTER: renders blank or as a box"
            )
            return
        if b == "idsp":
            if _is("cjk", prev) or _is("cjk", nxt):
                return
            self.emit(
                "HID008",
                INFO,
                s,
                e,
                f"{len(run)} × U+3000 IDEOGRAPHIC SPACE outside CJK text",
                fix=False,
                fixes=(Fix("Replace with a space", (Edit(s, e, " "),), kind="replace-space"),),
            )

    # -- HID009 private use -----------------------------------------------------------------------
    def pua(self, s: int, e: int, _b: str) -> None:
        run = self.text[s:e]
        n = len(run)
        if n == 1:
            return  # an icon-font glyph (Nerd Fonts, Powerline, Font Awesome)
        if n < 8:
            self.emit(
                "HID009",
                HINT,
                s,
                e,
                f"Private-use character(s) {_labels(run)}: an icon-font glyph or nothing, depending on the font",
                fix=False,
            )
            return
        decoded = None
        for base in (0xE000, 0xF0000, 0x100000):
            if all(0x20 <= ord(c) - base < 0x7F for c in run):
                decoded = "".join(chr(ord(c) - base) for c in run)
                break
        msg = f"Run of {n} private-use characters: renders as boxes, icons or nothing"
        if decoded:
            msg += f"; offset-ASCII decoding gives {_quote(decoded)}"
        self.emit("HID009", WARNING, s, e, msg, hidden=decoded)

    # -- HID010 unassigned / noncharacters / invalid bytes ------------------------------------
    def unassigned(self, s: int, e: int, _b: str) -> None:
        run = self.text[s:e]
        non = [c for c in run if _is("nonchar", c)]
        kind = (
            "Noncharacter"
            if len(non) == len(run)
            else "Unassigned code point"
            if not non
            else "Unassigned code points and noncharacters"
        )
        ids = ", ".join(dict.fromkeys(cp_id(c) for c in run))
        self.emit("HID010", ERROR, s, e, f"{kind} {ids} (Unicode 17): no glyph, no legitimate use in text")

    def surrogate(self, s: int, e: int, _b: str) -> None:
        run = self.text[s:e]
        if all(0xDC80 <= ord(c) <= 0xDCFF for c in run):
            bs = " ".join(f"0x{ord(c) - 0xDC00:02X}" for c in run[:16]) + (" …" if len(run) > 16 else "")
            msg = f"invalid UTF-8 byte{'s' if len(run) > 1 else ''} {bs}: the file is not valid UTF-8 here"
        else:
            msg = f"lone surrogate {', '.join(dict.fromkeys(cp_id(c) for c in run))}: not valid text"
        self.emit("HID010", ERROR, s, e, msg[0].upper() + msg[1:])

    # -- HID011 control characters --------------------------------------------------------------
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

    @staticmethod
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
        if len(seq) == 2 and seq[1] in _Scan._ESC_FINAL:
            return _Scan._ESC_FINAL[seq[1]]
        if len(seq) >= 3 and seq[1] in "()*+-./":
            return "switches the terminal character set: later text can show as other symbols"
        return "is a control command to the terminal, not text"

    @staticmethod
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

    def control(self, s: int, e: int, _b: str) -> int | None:
        t = self.text
        run = t[s:e]
        if run == "\r" and self.cr_file:
            if s != t.index("\r"):
                return None  # reported once, with the first CR
            n = t.count("\r")
            lines = n + (0 if t.endswith("\r") else 1)
            fix = Fix(
                "Convert line endings to LF",
                tuple(Edit(m.start(), m.end(), "\n") for m in re.finditer("\r", t)),
                kind="line-endings",
            )
            self.emit(
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
            self.emit(
                "HID011",
                WARNING,
                s,
                e,
                "Lone carriage return (CR without LF): editors show a line break, but terminals return to the "
                "start of the line and overwrite the text before it",
            )
            return None
        if run == "\f":
            self.emit("HID011", INFO, s, e, "Form feed (FF, U+000C): a page break in old text files, invisible here")
            return None
        # escape sequence at the end of the run (its parameters are ordinary ASCII)
        last = run[-1]
        if last in "\x1b\x9b":
            m = self._ESC_SEQ.match(t, e - 1)
            if m:
                seq = m.group()
                new_e = m.end()
                desc = self.describe_escape(seq)
                shown = self.show_controls(seq)
                hidden = None
                prefix = t[s : e - 1]
                if prefix:
                    msg = (
                        f"Control character{'s' if len(prefix) > 1 else ''} {self.show_controls(prefix)} before "
                        f"terminal escape sequence {shown}, which {desc}"
                    )
                else:
                    msg = f"Terminal escape sequence {shown} {desc}"
                if "conceals" in desc:
                    stop = _CONCEAL_END.search(t, new_e, new_e + 4 * PREVIEW)
                    hidden = t[new_e : stop.start() if stop else min(len(t), new_e + 4 * PREVIEW)]
                    if hidden:
                        msg += f": {_quote(hidden)}"
                elif seq.startswith("\x1b]8;"):
                    hidden = seq
                ctrl = [cp_id(c) for c in dict.fromkeys(t[s:new_e]) if ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0]
                self.emit(
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
        self.emit("HID011", sev, s, e, msg)
        return None

    # -- HID012 line separators -----------------------------------------------------------------
    def line_sep(self, s: int, e: int, _b: str) -> None:
        run = self.text[s:e]
        in_fm, in_code = self.in_fm(s), self.in_code(s)
        sev = ERROR if (in_fm or in_code) else WARNING
        if in_fm:
            msg = (
                f"{_labels(run)} inside the frontmatter: a line break for YAML 1.1 parsers (PyYAML) and "
                "Python's splitlines(), an ordinary character for YAML 1.2, editors and LSP"
            )
        else:
            msg = (
                f"{_labels(run)}{' inside code' if in_code else ''}: a line break for Python's splitlines(), "
                "an ordinary character for editors, LSP and CommonMark"
            )
        self.emit("HID012", sev, s, e, msg)

    # -- HID013 confusables -----------------------------------------------------------------------
    def confusables(self) -> None:
        t = self.text
        done_to = -1
        hits = (m.span() for a, b in self.segments for m in _CONF_RUN.finditer(t, a, b))
        for s, _e in hits:
            if s < done_to:
                continue
            ts, te = self._token(s)
            done_to = te
            self._judge_token(ts, te)

    def _token(self, i: int) -> tuple[int, int]:
        """Word around offset ``i``: ``\\w`` runs joined by single ``-`` or ``.``."""
        t = self.text
        s = _WORD_L.match(t, 0, i).start()
        e = _WORD_R.match(t, i).end()
        while s >= 2 and t[s - 1] in "-." and _WORD_L.match(t, 0, s - 1).start() < s - 1:
            s = _WORD_L.match(t, 0, s - 1).start()
        while e + 1 < len(t) and t[e] in "-." and _WORD_R.match(t, e + 1).end() > e + 1:
            e = _WORD_R.match(t, e + 1).end()
        return s, e

    def _judge_token(self, s: int, e: int) -> None:
        tok = self.text[s:e]
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
            if _is("latin", c):
                base = unicodedata.normalize("NFD", c)[0]
                if not base.isascii():
                    return
                skeleton.append(base)
                letters += 1
                latin = True
                continue
            if _is("mark", c):
                continue
            return  # a letter of another script: not an ASCII look-alike
        if not latin or not found or letters < 3:
            return
        sk = "".join(skeleton)
        scripts = list(dict.fromkeys(sc for _, sc in found))
        chars = ", ".join(f"{c} ({cp_id(c)})" for c in dict.fromkeys(c for c, _ in found))
        reasons = []
        if self.in_fm(s):
            reasons.append("in the frontmatter")
        if self.in_code(s):
            reasons.append("in code")
        ls, le, lt, _ = self.line_info(s)
        if any(u.start() <= s - ls < u.end() for u in _URL.finditer(lt)) or ("." in tok and _HOSTISH.search(sk)):
            reasons.append("in a URL or host name")
        sev = ERROR if reasons else WARNING
        msg = f"{_quote(tok)} mixes Latin with {' and '.join(scripts)} {chars}; looks like {_quote(sk)}"
        if reasons:
            msg += " (" + ", ".join(reasons) + ")"
        revealed = "".join(f"<{cp_id(c)}>" if c in CONFUSABLES else c for c in tok)
        fix = Fix(f"Replace with ASCII {_quote(sk)}", (Edit(s, e, sk),), kind="replace-confusable")
        self.emit(
            "HID013",
            sev,
            s,
            e,
            msg,
            hidden=revealed,
            fixes=(fix,),
            data={"skeleton": sk, "codepoints": [cp_id(c) for c in dict.fromkeys(c for c, _ in found)]},
        )


def check(ctx) -> Iterable[Finding]:
    """Run the character checks on ``ctx.doc.text``; returns findings for HID001–HID013.

    Pure-ASCII text without control characters (other than TAB, LF and CRLF) returns ``[]``
    without further work. Never raises for any text (lone surrogates from undecodable input
    included).
    """
    text = ctx.doc.text
    if text.isascii() and not _ASCII_CTRL.search(text):
        return []
    return _Scan(ctx).run()


def iter_candidates(text: str) -> Iterator[tuple[int, int, str]]:
    """``(start, end, bucket)`` for each run of suspicious code points in ``text`` (for tools and
    tests; the buckets are the technique names used internally: tag, zw, bidi, mark, vs, …)."""
    from unveil.core.document import Document
    from unveil.core.markdown import MarkdownLayer

    class _Ctx:
        doc = Document(text)
        markdown = MarkdownLayer()

    return iter(_Scan(_Ctx()).candidate_pieces())
