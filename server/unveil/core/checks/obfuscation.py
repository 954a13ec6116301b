"""Decode-and-rescan: encoded payloads the model can read but a reviewer cannot.

Implements the code-backed rules of ``rules/obfuscation.toml`` (category ``obfuscation``):

* ``OBF001`` base64 / base64url runs, ``OBF002`` hex runs (plain, ``0x``-prefixed or byte lists),
  ``OBF003`` ``\\xNN`` / ``\\uNNNN`` / ``\\u{…}`` / octal escape runs that spell ASCII text,
  ``OBF004`` HTML numeric / named character references that spell ASCII text,
  ``OBF006`` rot13 and reversed text, ``OBF007`` percent-encoding of plain letters,
  ``OBF008`` leetspeak spellings of injection keywords.
  (``OBF005``, the "decode and follow" framing, is a pattern rule run by the directives engine.)

Gates follow hiding-techniques.md T21 (skillsaw's defaults, tightened by decodability):

* base64: a run of at least ``LONG_RUN`` (120) code points, or ``SHORT_RUN`` (24) when a word such as
  *decode, base64, atob, b64decode, eval, exec, execute* is on the same line or the line before;
  entropy of at least 3.5 bits per character (4.0 for long runs without a keyword); the decoded bytes must be
  UTF-8 and ≥ 90 % printable and look like text (letters, digits, spaces, punctuation). Mid-length runs
  (≥ 32) without a keyword are reported only when they decode to clean multi-word text.
* hex: ≥ 24 hex digits (16 with a keyword) containing a letter a–f; decode ≥ 90 % printable ASCII.
* escapes / entities / percent-encoding: at least 4 escapes in one run that decode to ASCII letters or
  digits (characters nobody needs to escape).
* Exempt: ``data:image/…;base64,`` URIs, SRI / ``sha256-`` / ``@sha256:`` digests, git SHAs and other
  hashes (they do not decode to text), UUIDs (hyphens split the run), JWT examples (``eyJ…`` dotted
  triples; the secrets rules judge them), PEM blocks.

Detection runs on the model view (NFKC, Default_Ignorable removed, tag characters decoded), so payloads
split by zero-width characters or carried in tag characters are found; ranges map back to the document.

Each finding's ``hidden_text`` is the decoded text; its message quotes it (≤ 160 characters). The decoded
text (for escapes, entities and percent-encoding: the whole line with the run decoded) is rescanned with
every pattern rule through :data:`rescan` (the directives engine), and with this module's own decoders
(nested encodings, depth ≤ 2). Any rescan finding at warning or above raises the finding to ERROR and is
named in the message; ``Finding.data`` holds ``encoding``, ``decoded_findings`` (rule ids) and ``keyword``.
Without rescan hits a finding is a WARNING.

All offsets are code-point offsets into ``ctx.doc.text``. Nothing here raises on any input.
"""

from __future__ import annotations

import base64
import binascii
import html.entities
import math
import re
import string
from bisect import bisect_left as _bisect_left
from collections import Counter
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable, Iterator

from unveil.core import scope as _scope
from unveil.core.checks.literal_index import line_chunks, occurs
from unveil.core.findings import Finding, Severity

CATEGORY = "obfuscation"

LONG_RUN = 120  # base64 run length reported without a nearby keyword (code points)
MID_RUN = 32  # shorter runs without a keyword: only when they decode to clean multi-word text
SHORT_RUN = 24  # base64 run length reported when a decode keyword is near
QUIET_RUN = 16  # shortest base64 run decoded and rescanned (reported only when the rescan hits)
HEX_RUN = 24  # hex digits without a keyword
HEX_SHORT_RUN = 16  # hex digits with a keyword
MIN_ESCAPES = 4  # escapes / entities / %XX that decode to ASCII alphanumerics, per run
MAX_DEPTH = 2  # nested decoding below the first level (base64 of hex of …): 3 levels in all
MAX_PREVIEW = 160  # characters of decoded text quoted in a message

_KEYWORDS = re.compile(
    r"(?i)decod|base-?64|\bb64|atob\b|\beval\b|\bexec\b|execut|\bfromhex\b|unhexlify|\bxxd\b|\bhex\b|"
    r"\bpayload\b|\bencoded\b|\bdeobfuscat|\bunescape\b|\bobfuscat"
)
_B64 = re.compile(r"(?<![A-Za-z0-9+/_\-=])[A-Za-z0-9+/]{16,}={0,2}(?![A-Za-z0-9+/=_\-])")
_B64URL = re.compile(r"(?<![A-Za-z0-9+/_\-=])[A-Za-z0-9_\-]{16,}={0,2}(?![A-Za-z0-9+/=_\-])")
_HEX = re.compile(r"(?<![0-9A-Za-z])(?:0x)?((?:[0-9A-Fa-f]{2}){8,})(?![0-9A-Za-z])")
_HEX_LIST = re.compile(
    r"(?<![0-9A-Za-z])(?:0x)?[0-9A-Fa-f]{2}(?:(?:,\s?|;\s?|\s|:|-)(?:0x)?[0-9A-Fa-f]{2}(?![0-9A-Za-z])){7,}"
)
_ESCAPE = re.compile(r"\\(?:x([0-9A-Fa-f]{2})|u([0-9A-Fa-f]{4})|u\{([0-9A-Fa-f]{1,6})\}|([0-3][0-7]{2}))")
_ENTITY = re.compile(r"&(?:#[xX]([0-9A-Fa-f]{1,6})|#([0-9]{1,7})|([A-Za-z][A-Za-z0-9]{1,31}));")
_PERCENT = re.compile(r"%([0-9A-Fa-f]{2})")
_DATA_URI = re.compile(r"(?i)data:[a-z]+/[a-z0-9.+-]+(?:;[a-z0-9=.-]+)*;base64,\s*$")
_DIGEST_PREFIX = re.compile(r"(?i)(?:sha(?:1|224|256|384|512)[-:=]|@sha256:|integrity=\"?|md5[-:=]|sum[:=]\s*)$")
_PEM = re.compile(r"-----BEGIN [A-Z0-9 ]{1,40}-----.{0,20000}?-----END [A-Z0-9 ]{1,40}-----", re.S)  # terminated only
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*")
_WORD = re.compile(r"[A-Za-z]+")
_ROT_FRAME = re.compile(r"(?i)\brot-?13\b|\bcaesar\b|\brot-?\d{1,2}\b")
_REV_FRAME = re.compile(r"(?i)\brevers(?:e|ed)\b|\bbackwards?\b|\bright[- ]to[- ]left\b|\bmirror(?:ed)?\b")

# Common English words (function words and agent-instruction vocabulary) used to tell text from noise.
_COMMON = frozenset(
    """the be to of and a in that have i it for not on with he as you do at this but his by from they we say
    her she or an will my one all would there their what so up out if about who get which go me when make can
    like time no just him know take people into year your good some could them see other than then now look
    only come its over think also back after use two how our work first well way even new want because any
    these give day most us is are was were been has had did does done should must never always please ignore
    previous instructions instruction prompt system user assistant file files send read write run execute
    command secret secrets key keys token password data output print reveal tell show hide delete remove
    rules rule above below before follow following disregard forget everything anything nothing without
    ask asking confirmation mention note important now here where why each every more less into onto""".split()
)

_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s", "!": "i"})
_LEET_KEYWORDS = frozenset(
    """ignore ignoring disregard previous prior instructions instruction system prompt jailbreak bypass
    override forget rules safety restrictions unrestricted filter filters secret secrets credentials exfiltrate
    reveal execute admin guidelines""".split()
)
_LEET_TOKEN = re.compile(r"(?<![\w@$!])[A-Za-z0-9@$!]*[A-Za-z][A-Za-z0-9@$!]*(?![\w@$!])")


@dataclass(frozen=True)
class Decoded:
    """One encoded run: ``[start, end)`` code points in the scanned text, the rule id, the encoding's
    name (for messages), the decoded text, and whether a decode keyword was near."""

    rule: str
    start: int
    end: int
    encoding: str
    text: str
    keyword: bool = False
    strong: bool = False  # passed a gate that makes it worth a warning even without rescan hits
    context: str | None = None  # what is rescanned, when more than ``text`` (the line, decoded)
    quiet: bool = False  # below every gate but decodable to text: reported only when its rescan hits
    in_url: bool = False  # inside a URL (a query string, a path with %20): English there is ordinary
    obey: bool = False  # the text next to it says to decode it and act on it (:func:`obey_frame`)
    executed: str | None = None  # the code around it runs what it decodes (``eval``, ``exec`` …)


# --------------------------------------------------------------------------- rescan hook


def _no_rescan(text: str) -> list[Finding]:
    """Until the directives engine registers itself (:func:`set_rescan`): no pattern rules."""
    return []


rescan: Callable[[str], list[Finding]] = _no_rescan
"""The one call that rescans decoded text with all pattern rules: ``rescan(text) -> [Finding]``
(offsets into ``text``). :mod:`unveil.core.checks.directives` registers
:func:`~unveil.core.checks.directives.scan_text` here when it is imported (it imports this module,
never the other way round, so the two form no import circle). Tests may replace it."""


def set_rescan(fn: Callable[[str], list[Finding]]) -> None:
    """Register the rescan engine (see :data:`rescan`); a failing engine never loses the
    obfuscation finding itself."""
    global rescan

    def safe(text: str) -> list[Finding]:
        try:
            return list(fn(text))
        except Exception:  # noqa: BLE001 - a failing rescan must not lose the obfuscation finding
            return []

    rescan = safe


# --------------------------------------------------------------------------- helpers


def entropy(s: str) -> float:
    """Shannon entropy of ``s`` in bits per character (0.0 for an empty string)."""
    if not s:
        return 0.0
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


def _printable_ratio(s: str) -> float:
    if not s:
        return 0.0
    ok = sum(1 for ch in s if ch.isprintable() or ch in "\n\r\t")
    return ok / len(s)


def _textlike(s: str) -> bool:
    """Decoded text looks like words or commands: ≥ 90 % printable, ≥ 70 % letters, digits, spaces and
    common punctuation, at least one letter run of 2+. Letters are Unicode letters, so a payload
    in Russian, Chinese or Korean reads as text too."""
    if len(s) < 4 or _printable_ratio(s) < 0.9:
        return False
    common = sum(1 for ch in s if ch.isalnum() or ch in " \n\t.,:;!?'\"-_/|&=()[]{}<>@#$%*+~`")
    if common / len(s) < 0.7:
        return False
    return bool(_LETTERS2.search(s))


_LETTERS2 = re.compile(r"[^\W\d_]{2,}")
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
"""Kana, CJK ideographs and Hangul syllables: scripts written without spaces between words."""


def _clean_words(s: str) -> bool:
    """Clean multi-word text: ≥ 97 % printable, and at least 3 words and two spaces (Unicode
    words), or at least 6 characters of a script written without spaces (kana, Han, Hangul)."""
    if _printable_ratio(s) < 0.97:
        return False
    words = re.findall(r"[^\W\d_]+", s)
    return (len(words) >= 3 and s.count(" ") >= 2) or len(_UNSPACED.findall(s)) >= 6


def _utf8(b: bytes) -> str | None:
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _b64decode(run: str, urlsafe: bool) -> str | None:
    body = run.rstrip("=")
    if len(body) % 4 == 1:
        body = body[:-1]
    body += "=" * (-len(body) % 4)
    try:
        raw = base64.urlsafe_b64decode(body) if urlsafe else base64.b64decode(body, validate=True)
    except (binascii.Error, ValueError):
        return None
    return _utf8(raw)


def common_word_rate(s: str) -> float:
    """Share of the words of ``s`` (ASCII letter runs of 2+ letters) that are common English words of
    3+ letters or the two-letter words of the list (one-letter words are ignored: rot13 maps ``v`` to
    ``i`` and ``n`` to ``a``)."""
    words = [w.lower() for w in _WORD.findall(s) if len(w) >= 2]
    if len(words) < 3:
        return 0.0
    return sum(1 for w in words if w in _COMMON) / len(words)


def _line_bounds(text: str, pos: int) -> tuple[int, int]:
    start = max(text.rfind("\n", 0, pos), text.rfind("\r", 0, pos)) + 1
    m = re.compile(r"[\r\n]").search(text, pos)
    return start, (m.start() if m else len(text))


def _keyword_near(text: str, start: int, end: int) -> bool:
    """A decode keyword on the run's line (outside the run) or on the previous non-blank line."""
    ls, le = _line_bounds(text, start)
    if _KEYWORDS.search(text[ls:start]) or _KEYWORDS.search(text[end:le]):
        return True
    for prev in reversed(re.split(r"\r\n|\r|\n", text[max(0, ls - 400) : ls])):
        if prev.strip():
            return bool(_KEYWORDS.search(prev))
    return False


def _exempt_spans(text: str) -> list[tuple[int, int]]:
    spans = [(m.start(), m.end()) for m in _PEM.finditer(text)]
    spans += [(m.start(), m.end()) for m in _JWT.finditer(text)]
    return spans


def _inside(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    return any(s <= start and end <= e for s, e in spans)


# --------------------------------------------------------------------------- detectors


_PATHLIKE = re.compile(r"/?(?:[A-Za-z0-9_.-]+/)+[A-Za-z0-9_.-]*")
_MIXED = re.compile(r"[0-9+/_\-=]|[A-Z][a-z]+[A-Z]|[a-z][A-Z]")


def _find_base64(text: str, exempt: list[tuple[int, int]]) -> list[Decoded]:
    """Base64 / base64url runs. A run that decodes to text but misses the gates of the module
    docstring (short, low entropy, path-like, no keyword) is kept as ``quiet``: rescanned, and
    reported only when the decoded text triggers a rule (:data:`QUIET_RUN` code points at least)."""
    out: dict[tuple[int, int], Decoded] = {}
    windows = _b64_windows(text)
    for pattern, urlsafe in ((_B64, False), (_B64URL, True)):
        for m in (m for a, b in windows for m in pattern.finditer(text, a, b)):
            run, start, end = m.group(0), m.start(), m.end()
            n = len(run)
            if n < QUIET_RUN or (start, end) in out:
                continue
            if urlsafe and "_" not in run and "-" not in run:
                continue  # plain alphabet: handled by the standard pass
            decoded = _b64_text(run, urlsafe)
            if decoded is None:
                continue
            if _inside(exempt, start, end):
                continue
            before = text[max(0, start - 80) : start]
            if _DATA_URI.search(before) or _DIGEST_PREFIX.search(before):
                continue
            body = run.rstrip("=")
            keyword = _keyword_near(text, start, end)
            ent = entropy(body)
            if n < SHORT_RUN:
                strong = False
            elif not keyword and "/" in body and "+" not in body and _PATHLIKE.fullmatch(body):
                strong = False  # shaped like a path: a payload only if what it says is one
            elif keyword or n >= LONG_RUN:
                strong = not (ent < (3.0 if n < 64 else 3.5) or (not keyword and ent < 4.0))
            else:
                strong = n >= MID_RUN and _clean_words(decoded) and ent >= 3.5
            out[(start, end)] = Decoded(
                "OBF001",
                start,
                end,
                "base64url" if urlsafe else "base64",
                decoded,
                keyword,
                strong=strong,
                quiet=not strong,
            )
    return list(out.values())


_B64_TEXT_MAX = 20_000


def _b64_text(run: str, urlsafe: bool) -> str | None:
    """The text a base64 (``urlsafe``: base64url) run decodes to, or ``None`` when the run is a
    word or a number, does not decode, or decodes to something that is not text
    (:func:`_textlike`): a function of the run alone, memoised (an edited document has the same
    runs again; the memo is emptied past :data:`_B64_TEXT_MAX` runs)."""
    key = (run, urlsafe)
    memo = _scope.memo("base64 runs")
    if memo is not None and key in memo:
        return memo[key]
    decoded = None
    if _MIXED.search(run) and not run.isdigit() and not (run.isalpha() and (run.islower() or run.isupper())):
        decoded = _b64decode(run, urlsafe)
        if decoded is not None and not _textlike(decoded):
            decoded = None
    if memo is not None:
        _scope.keep(memo, key, decoded, _B64_TEXT_MAX)
    return decoded


def _runs(mapped: bytes, minimum: int) -> list[tuple[int, int]]:
    """``(start, end)`` of each maximal run of at least ``minimum`` ``x`` bytes in ``mapped``, a
    class-mapped text (:func:`_byte_class`: every byte ``x`` or a space), in order: the matches
    of ``re.finditer(rb"x{minimum,}", mapped)``. Each run is found with a fixed-string search
    for ``minimum`` ``x`` bytes and ended at the next space: a regular expression tries
    ``x{16,}`` at every ``x`` (3 ms for the 294 KB benchmark file, against about 0.1 ms)."""
    out: list[tuple[int, int]] = []
    needle = b"x" * minimum
    n = len(mapped)
    i = mapped.find(needle)
    while i >= 0:
        j = mapped.find(b" ", i + minimum)
        if j < 0:
            j = n
        out.append((i, j))
        i = mapped.find(needle, j)
    return out


_B64_RUN = 16
"""Shortest run of base64 alphabet characters :data:`_B64` and :data:`_B64URL` can match."""


def _b64_windows(text: str) -> list[tuple[int, int]]:
    """``(pos, endpos)`` for :data:`_B64` and :data:`_B64URL`: every match of either starts where
    a run of 16 or more base64 / base64url alphabet characters starts (the lookbehind allows no
    such character, nor ``=``, before it) and reads at most the run, two ``=`` and one more code
    point. The runs are found in the text's ASCII bytes (any other code point a ``?``), one byte
    per code point: the same matches as one ``finditer`` over the text, at a fraction of its cost."""
    mapped = _scope.ascii_bytes(text).translate(_B64_CLASS)
    n = len(text)
    return [(a, min(n, b + 3)) for a, b in _runs(mapped, _B64_RUN)]


def _byte_class(chars: str) -> bytes:
    """A ``bytes.translate`` table: the ASCII ``chars`` to ``x``, every other byte to a space."""
    return bytes(ord("x") if chr(b) in chars else ord(" ") for b in range(256))


_HEX_BYTES = _byte_class(string.hexdigits)
"""``bytes.translate`` table: ASCII hex digits to ``x``, every other byte to a space."""


_HEX_RUN_CLASS = _byte_class(string.hexdigits + "xX,;:-?" + "".join(c for c in map(chr, range(128)) if c.isspace()))
"""``bytes.translate`` table: what a match of :data:`_HEX_LIST` or :data:`_HEX` can hold (hex
digits, ``x``, its separators, every ASCII space: what ``\\s`` matches there) to ``x``, every other byte
to a space; ``?`` too, which stands for every non-ASCII code point (a Unicode space is ``\\s``)."""
_HEX_WINDOW = 16
"""Shortest run of :data:`_HEX_RUN_CLASS` characters a match of :data:`_HEX_LIST` or :data:`_HEX` lies in."""


def _hex_windows(text: str, raw: bytes) -> list[tuple[int, int]]:
    """``(pos, endpos)`` for :data:`_HEX_LIST` and :data:`_HEX`: every match of either lies in a
    run of 16 or more code points of :data:`_HEX_RUN_CLASS` (the shortest match is 16 hex digits)
    and reads one code point past it (the lookahead); the lookbehind reads the text before
    ``pos``, as in one ``finditer`` over the whole text. Runs are disjoint and no match crosses
    a code point outside them, so searching each window gives the same matches in the same order.
    ``raw``: ``text.encode("ascii", "replace")``."""
    mapped = raw.translate(_HEX_RUN_CLASS)
    n = len(text)
    return [(a, min(n, b + 1)) for a, b in _runs(mapped, _HEX_WINDOW)]


def _hex_matches(pattern: re.Pattern[str], text: str, windows: list[tuple[int, int]]):
    """The matches of ``pattern`` (:data:`_HEX_LIST` or :data:`_HEX`) in ``text``, as one
    ``finditer`` gives them, searched only in ``windows`` (:func:`_hex_windows`)."""
    for a, b in windows:
        yield from pattern.finditer(text, a, b)


def _find_hex(text: str, exempt: list[tuple[int, int]]) -> list[Decoded]:
    out = []
    seen: list[tuple[int, int]] = []
    # _HEX needs 16 hex digits in a row (ASCII only): look for them in the translated bytes first
    raw = _scope.ascii_bytes(text)
    dense = b"x" * 16 in raw.translate(_HEX_BYTES)
    windows = _hex_windows(text, raw)
    for pattern in (_HEX_LIST, _HEX) if dense else (_HEX_LIST,):
        for m in _hex_matches(pattern, text, windows):
            start, end = m.start(), m.end()
            if any(s <= start < e for s, e in seen) or _inside(exempt, start, end):
                continue
            digits = re.sub(r"0x|[\s,:]", "", m.group(0))
            if len(digits) % 2 or not re.search(r"[A-Fa-f]", digits):
                continue
            before = text[max(0, start - 80) : start]
            if _DIGEST_PREFIX.search(before):
                continue
            keyword = _keyword_near(text, start, end)
            if len(digits) < HEX_SHORT_RUN:
                continue
            try:
                raw = bytes.fromhex(digits)
            except ValueError:
                continue
            decoded = _utf8(raw)
            if decoded is None or not _textlike(decoded):
                continue
            # strong: long enough (or keyword-framed), ASCII and mostly letters, or clean words in
            # any script; otherwise quiet (reported only when the decoded text triggers a rule)
            strong = len(digits) >= (HEX_SHORT_RUN if keyword else HEX_RUN) and (
                (decoded.isascii() and sum(ch.isalpha() for ch in decoded) >= len(decoded) * 0.4)
                or _clean_words(decoded)
            )
            seen.append((start, end))
            out.append(Decoded("OBF002", start, end, "hex", decoded, keyword, strong=strong, quiet=not strong))
    return out


def _group_runs(matches: list[re.Match], max_gap: int) -> list[list[re.Match]]:
    groups: list[list[re.Match]] = []
    for m in matches:
        if groups and m.start() - groups[-1][-1].end() <= max_gap:
            gap = m.string[groups[-1][-1].end() : m.start()]
            if "\n" not in gap and "\r" not in gap and '"' not in gap and "'" not in gap:
                groups[-1].append(m)
                continue
        groups.append([m])
    return groups


def _decode_group(text: str, group: list[re.Match], decode_one: Callable[[re.Match], str | None]) -> tuple[str, int]:
    """Decoded text of a run (escapes replaced, literal characters in between kept) and the number of
    escapes that decode to ASCII letters or digits."""
    parts = []
    alnum = 0
    pos = group[0].start()
    for m in group:
        parts.append(text[pos : m.start()])
        ch = decode_one(m)
        if ch is None:
            ch = m.group(0)
        elif len(ch) == 1 and ch.isascii() and ch.isalnum():
            alnum += 1
        parts.append(ch)
        pos = m.end()
    return "".join(parts), alnum


def _chr(cp: int) -> str | None:
    if 0 <= cp <= 0x10FFFF and not 0xD800 <= cp <= 0xDFFF:
        return chr(cp)
    return None


def _esc_one(m: re.Match) -> str | None:
    x, u, ub, octal = m.groups()
    if x is not None:
        return chr(int(x, 16))
    if u is not None:
        return _chr(int(u, 16))
    if ub is not None:
        return _chr(int(ub, 16))
    return chr(int(octal, 8))


def _entity_one(m: re.Match) -> str | None:
    hexa, dec, name = m.groups()
    if hexa is not None:
        return _chr(int(hexa, 16))
    if dec is not None:
        return _chr(int(dec))
    return html.entities.html5.get(name + ";")


def _pct_one(m: re.Match) -> str | None:
    return chr(int(m.group(1), 16))


def _find_char_escapes(
    text: str, pattern: re.Pattern, decode_one: Callable[[re.Match], str | None], rule: str, name: str, max_gap: int
) -> list[Decoded]:
    out = []
    for group in _group_runs(list(pattern.finditer(text)), max_gap):
        if len(group) < MIN_ESCAPES:
            continue
        decoded, alnum = _decode_group(text, group, decode_one)
        if alnum < MIN_ESCAPES:
            continue
        if rule == "OBF007":
            # percent-decode the whole run (multi-byte UTF-8 sequences) for the preview
            try:
                from urllib.parse import unquote

                decoded = unquote(text[group[0].start() : group[-1].end()])
            except Exception:  # noqa: BLE001
                pass
        start, end = group[0].start(), group[-1].end()
        ls, le = _line_bounds(text, start)
        context = text[ls:start] + decoded + text[end:le] if end <= le else None
        out.append(Decoded(rule, start, end, name, decoded, _keyword_near(text, start, end), True, context))
    return out


_ROT13 = str.maketrans(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
    "NOPQRSTUVWXYZABCDEFGHIJKLMnopqrstuvwxyzabcdefghijklm",
)
_LINE_RE = re.compile(r"[^\r\n]+")
_WORD3 = re.compile(r"[A-Za-z]{3,}")
_QUOTED = re.compile(r"[\"“'`]([^\"”'`]{12,})[\"”'`]")
_AFTER_COLON = re.compile(r":\s*(\S.{11,})$")


WEAK_RATE = 0.3
"""Common-word rate at which rot13 / reversed text is decoded and rescanned; below the English bar
(0.6, or 0.45 when framed) it is reported only when the rescan finds a directive."""


def _rate(words: list[str]) -> float:
    return sum(1 for w in words if w in _COMMON) / len(words) if words else 0.0


extra_rescans: list[Callable[[str], list[Finding]]] = []
"""Further judges of decoded text beside :data:`rescan` (``fn(text) -> [Finding]``, offsets into
``text``): :mod:`unveil.core.checks.commands.prose` registers its sentence judge (secret paths
sent out, persistence written, in words) with :func:`add_rescan`."""


def add_rescan(fn: Callable[[str], list[Finding]]) -> None:
    """Register one more judge of decoded text (see :data:`extra_rescans`); a failing judge
    counts as no findings, and registering the same function twice adds it once."""
    if any(getattr(f, "__wrapped__", None) is fn for f in extra_rescans):
        return

    def safe(text: str) -> list[Finding]:
        try:
            return list(fn(text))
        except Exception:  # noqa: BLE001
            return []

    safe.__wrapped__ = fn  # type: ignore[attr-defined]
    extra_rescans.append(safe)


def _no_vocabulary() -> frozenset[str]:
    return frozenset()


vocabulary: Callable[[], frozenset[str]] = _no_vocabulary
"""``() -> words``: the lower-case words (3+ ASCII letters) of the rules' required literals, in
every language the rules cover. :mod:`unveil.core.checks.directives` registers it with
:func:`set_vocabulary` (it owns the rules); until then rot13 is judged on :data:`_COMMON` only."""


def set_vocabulary(fn: Callable[[], frozenset[str]]) -> None:
    """Register the rule vocabulary (see :data:`vocabulary`); a failing one counts as empty."""
    global vocabulary

    def safe() -> frozenset[str]:
        try:
            return frozenset(fn())
        except Exception:  # noqa: BLE001
            return frozenset()

    vocabulary = safe


VOCAB_RATE = 0.4
"""Share of a chunk's words (3+ letters) its rot13 must have in the rule vocabulary (five words or
more; 0.5 for three or four), while the chunk itself has under :data:`VOCAB_PLAIN`."""
VOCAB_PLAIN = 0.2


def _rot13_vocabulary_span(line: str, spans: list[tuple[int, int]], known: frozenset[str]) -> tuple[int, int] | None:
    """The first span of ``line`` whose rot13 reads as the rules' vocabulary (commands, URLs,
    secret names, other languages' directive words) while the span does not: at least 3 words,
    rot13 vocabulary rate ≥ :data:`VOCAB_RATE` and 0.3 above the span's own, and at least half of
    its visible characters letters (a quarter when every rot13 word is known). Such a span is only
    a candidate: it is reported when its rot13 triggers a rule. The best span by :func:`_best`."""
    hits: list[tuple[float, int, int, int, tuple[int, int]]] = []
    for s, e in spans:
        chunk = line[s:e]
        cw = [w.lower() for w in _WORD3.findall(chunk)]
        if len(cw) < 3:
            continue
        plain = sum(1 for w in cw if w in known or w in _COMMON) / len(cw)
        if plain >= VOCAB_PLAIN:
            continue  # reads as the vocabulary already (most prose): its rot13 is not looked at
        rot = sum(1 for w in cw if (r := w.translate(_ROT13)) in known or r in _COMMON) / len(cw)
        if rot < (VOCAB_RATE if len(cw) >= 5 else 0.5) or rot < plain + 0.3:
            continue
        visible = re.sub(r"\s", "", chunk)
        if sum(ch.isalpha() for ch in visible) < (0.25 if rot == 1.0 else 0.5) * len(visible):
            continue
        hits.append((rot, len(cw), s, e, (s, e)))
    return _best(hits)


def _find_rot_and_reversed(text: str) -> list[Decoded]:
    """rot13 / reversed text: a line (or a quoted or code span on it) whose rot13 or reversal reads as
    English while the original does not. Framing words (rot13, reverse, backwards) on the line lower
    the bar (3 words, 45 % common words instead of 5 words and 60 %). A line that fails that test is
    still a rot13 candidate (``quiet``: reported only when its rot13 triggers a rule) when its rot13
    reads as the rules' vocabulary (:func:`_rot13_vocabulary_span`).

    Each line's result is a function of the line, the previous non-blank line and whether the text
    has a rot13 or reversal frame anywhere (:func:`_rot_line`, memoised): an editor re-analysing a
    document after one edit judges only the edited lines again, and for the text of an open
    document (:func:`_rot_document`) looks at no other line."""
    cache = _scope.document_cache()
    if cache is not None and _DOCUMENT_TEXT.get() is text:
        return _rot_document(cache, text)
    # a frame word anywhere in the text (no frame pattern crosses a line break, so per line)
    any_rot = any_rev = False
    for _, line in _iter_lines(text):
        fr = _frames(line)
        any_rot, any_rev = any_rot or fr[0], any_rev or fr[1]
        if any_rot and any_rev:
            break
    any_rev = any_rev or "//:ptth" in text or "//:sptth" in text  # a reversed URL frames its line
    return _rot_out(_rot_lines(_iter_lines(text), any_rot, any_rev, ""))


_DOCUMENT_TEXT: ContextVar[str | None] = ContextVar("unveil_obfuscation_document_text", default=None)
"""The text :func:`_decode_document` is finding encoded runs in (the document's model view),
while it does: :func:`_find_rot_and_reversed` keeps an open document's lines for that text
only (not for the decoded payloads rescanned after it)."""

_ROT_KEPT = "rot13 document lines"
_SEPARATORS = ("\n", "\r")


def _rot_frames(lines: list[tuple[int, str]], text: str) -> tuple[int, int, int]:
    """How many of ``lines`` have a rot13 frame word and a reversal frame word, and how many
    reversed URLs (``//:ptth``, ``//:sptth``; neither crosses a line break) ``text`` holds."""
    rot = rev = 0
    for _, line in lines:
        fr = _frames(line)
        rot += fr[0]
        rev += fr[1]
    return rot, rev, text.count("//:ptth") + text.count("//:sptth")


def _rot_document(cache, text: str) -> list[Decoded]:
    """:func:`_find_rot_and_reversed` of an open document's text, from its previous version's:
    ``(text, frame counts, [(line start, results)] of the lines with results)`` kept in the
    document cache. Only the lines an edit touched (whole lines between the line breaks around
    it) are judged again, with the lines after them up to the first non-blank one (their
    previous non-blank line may have changed); the other lines keep their results, those after
    the edit moved by the change in length. The frame flags are the previous counts less the
    touched lines' old ones plus their new ones; when a flag changes, every line is judged
    again. Exact: a line's result is a function of the line, the previous non-blank line and
    the two flags (:func:`_rot_line`); lines end at ``\\n`` or ``\\r`` on both sides."""
    from unveil.core.checks.splice import text_delta

    prev = cache.kept.get(_ROT_KEPT)
    voc = vocabulary
    if prev is None or prev[0] is not voc:
        lines = _lines_of(text)
        counts = _rot_frames(lines, text)
        kept = _rot_lines(lines, *_rot_flags(counts), "")
        cache.kept[_ROT_KEPT] = (voc, text, counts, kept)
        return _rot_out(kept)
    _, old, old_counts, old_kept = prev
    d = text_delta(old, text)
    zs = max(text.rfind(c, 0, d.prefix) for c in _SEPARATORS) + 1  # lines before end in the prefix
    j = _line_break(text, d.new_len - d.suffix)
    ze = j + 1 if j < d.new_len else d.new_len  # lines from here start after a separator of the suffix
    shift = d.new_len - d.old_len
    old_zone = _lines_of(old[zs : ze - shift])
    new_zone = _lines_of(text[zs:ze])
    was = _rot_frames(old_zone, old[zs : ze - shift])
    now = _rot_frames(new_zone, text[zs:ze])
    counts = tuple(c - w + n for c, w, n in zip(old_counts, was, now))
    if _rot_flags(old_counts) != _rot_flags(counts):
        lines = _lines_of(text)
        kept = _rot_lines(lines, *_rot_flags(counts), "")
        cache.kept[_ROT_KEPT] = (voc, text, counts, kept)
        return _rot_out(kept)
    starts = [b for b, _ in old_kept]
    head = old_kept[: _bisect_left(starts, zs)]
    tail_from = _bisect_left(starts, ze - shift)
    # the lines after the zone up to the first non-blank one: their previous non-blank line
    after: list[tuple[int, str]] = []
    pos = ze
    while pos < d.new_len:
        end = _line_break(text, pos)
        if end > pos:
            after.append((pos, text[pos:end]))
            if text[pos:end].strip():
                break
        pos = end + 1
    redo = [(zs + b, line) for b, line in new_zone] + after
    last = redo[-1][0] if redo else zs
    prev_line = _prev_nonblank(text, zs)
    mid = _rot_lines(redo, *_rot_flags(counts), prev_line)
    tail = [(b + shift, got) for b, got in old_kept[tail_from:] if b + shift > last]
    kept = head + mid + tail
    cache.kept[_ROT_KEPT] = (voc, text, counts, kept)
    return _rot_out(kept)


def _line_break(text: str, pos: int) -> int:
    """Offset of the first line break (``\\n`` or ``\\r``) at or after ``pos``, or ``len(text)``."""
    ends = [i for i in (text.find(c, pos) for c in _SEPARATORS) if i >= 0]
    return min(ends) if ends else len(text)


def _prev_nonblank(text: str, pos: int) -> str:
    """The last line of ``text`` before offset ``pos`` (a line start) that is not blank
    (``""`` when none is)."""
    end = pos - 1
    while end > 0:
        start = max(text.rfind(c, 0, end) for c in _SEPARATORS) + 1
        line = text[start:end]
        if line.strip():
            return line
        end = start - 1
    return ""


def _rot_lines(lines: Iterable[tuple[int, str]], any_rot: bool, any_rev: bool, prev: str) -> list:
    """``[(line start, results)]`` of the lines of ``lines`` with results (:func:`_rot_line`),
    ``prev`` the non-blank line before the first of them."""
    out = []
    for base, line in lines:
        prev_line = prev
        if line.strip():
            prev = line
        got = _rot_line(line, prev_line, any_rot, any_rev)
        if got:
            out.append((base, got))
    return out


def _rot_flags(counts: tuple[int, int, int]) -> tuple[bool, bool]:
    """Whether the text has a rot13 frame and a reversal frame (a frame word or a reversed URL),
    from :func:`_rot_frames`' counts."""
    return counts[0] > 0, counts[1] + counts[2] > 0


def _rot_out(kept: list) -> list[Decoded]:
    return [replace(d, start=base + d.start, end=base + d.end) for base, got in kept for d in got]


def _lines_of(text: str) -> list[tuple[int, str]]:
    """``(start, line)`` of each non-empty line of ``text`` (code points; lines end at ``\n``,
    ``\r\n`` or ``\r``): the matches of :data:`_LINE_RE`, found by ``str.split``."""
    flat = text.replace("\r", "\n") if "\r" in text else text
    out = []
    pos = 0
    for line in flat.split("\n"):
        if line:
            out.append((pos, line))
        pos += len(line) + 1
    return out


def _iter_lines(text: str) -> Iterator[tuple[int, str]]:
    """:func:`_lines_of` ``(text)``, read in the pieces of
    :func:`~unveil.core.checks.literal_index.line_chunks` (each cut after a line feed, so no line
    and no ``\r\n`` spans two): the same lines, without all of a long text's lines listed at once
    (the padded 10 MB ``AGENTS.md``'s 200,000 lines and their pairs: 26 MB)."""
    a = 0
    for piece in line_chunks(text):
        for pos, line in _lines_of(piece):
            yield a + pos, line
        a += len(piece)


def _frames(line: str) -> tuple[bool, bool]:
    """Whether ``line`` has a rot13 frame word and a reversal frame word (memoised per line)."""
    memo = _scope.memo("rot13 frames")
    got = memo.get(line) if memo is not None else None
    if got is None:
        got = (bool(_ROT_FRAME.search(line)), bool(_REV_FRAME.search(line)))
        if memo is not None:
            _scope.keep(memo, line, got, _ROT_MEMO_MAX)
    return got


_ROT_MEMO_MAX = 20_000
"""Most lines whose :func:`_rot_line` result is kept (the memo is emptied when full)."""


def _rot_line(line: str, prev_line: str, any_rot: bool, any_rev: bool) -> tuple[Decoded, ...]:
    """The rot13 / reversed candidates of one line of :func:`_find_rot_and_reversed`, offsets
    relative to the line's start (code points). Memoised by its arguments and the registered
    :data:`vocabulary` (a pure function of them)."""
    key = (line, prev_line, any_rot, any_rev, vocabulary)
    memo = _scope.memo("rot13 lines")
    got = memo.get(key) if memo is not None else None
    if got is not None:
        return got
    out: list[Decoded] = []
    words = [w.lower() for w in _WORD3.findall(line)]
    if len(words) >= 3:
        # a frame on the line or the line before ("The note below was scrambled with ROT13; …")
        frame_rot = any_rot and bool(_ROT_FRAME.search(line) or _ROT_FRAME.search(prev_line))
        frame_rev = (any_rev and bool(_REV_FRAME.search(line))) or "//:ptth" in line or "//:sptth" in line
        framed = frame_rot or frame_rev
        # the whole line, a quoted span, what follows a label's colon: the best that decodes wins
        spans = [(0, len(line))] + [(m.start(1), m.end(1)) for m in _QUOTED.finditer(line)]
        after_colon = _AFTER_COLON.search(line)
        if after_colon:
            spans.append((after_colon.start(1), after_colon.end(1)))
        english = framed or (
            len(words) >= 5
            and _rate(words) < 0.15
            and (
                _rate([w.translate(_ROT13) for w in words]) >= WEAK_RATE
                or _rate([w[::-1] for w in words]) >= WEAK_RATE
                or (
                    dictionary_rate(words) <= RAW_DICT_MAX
                    and dictionary_rate([w.translate(_ROT13) for w in words]) >= DICT_RATE
                )
            )
        )
        if not english or not _rot_english(line, 0, spans, framed, frame_rot, frame_rev, out):
            got_span = _rot13_vocabulary_span(line, spans, vocabulary())
            if got_span is not None:
                s, e = got_span
                decoded = line[s:e].translate(_ROT13).strip()
                out.append(Decoded("OBF006", s, e, "rot13", decoded, framed, quiet=True))
    result = tuple(out)
    if memo is not None:
        _scope.keep(memo, key, result, _ROT_MEMO_MAX)
    return result


def _rot_english(
    line: str, base: int, spans: list[tuple[int, int]], framed: bool, frame_rot: bool, frame_rev: bool, out: list
) -> bool:
    """The English test of :func:`_find_rot_and_reversed` on the spans of one line (``base``: the
    line's offset); appends the best hit (:func:`_best`) to ``out`` and says whether there was one."""
    hits: list[tuple[float, int, int, int, Decoded]] = []
    for s, e in spans:
        chunk = line[s:e]
        cw = [w.lower() for w in _WORD3.findall(chunk)]
        if len(cw) < 3 or _rate(cw) >= (0.35 if framed else 0.15):
            continue
        visible = re.sub(r"\s", "", chunk)
        if sum(ch.isalpha() for ch in visible) < (0.5 if framed else 0.75) * len(visible):
            continue  # code, formulas, tables
        need = 0.45 if framed else 0.6
        found = None
        rot_rate = _rate([w.translate(_ROT13) for w in cw])
        rev_rate = _rate([w[::-1] for w in cw])
        if rot_rate < WEAK_RATE and rev_rate < WEAK_RATE and len(cw) >= 4:
            rot_dict = dictionary_rate([w.translate(_ROT13) for w in cw])
            if rot_dict >= DICT_RATE and dictionary_rate(cw) <= RAW_DICT_MAX:
                rot_rate = max(WEAK_RATE, rot_rate)  # English by the dictionary, if not by the common words
        if len(cw) >= (3 if frame_rot else 5) and rot_rate >= WEAK_RATE and rot_rate >= rev_rate:
            found = ("rot13", chunk.translate(_ROT13), rot_rate >= need)
        elif len(cw) >= (3 if frame_rev else 5) and rev_rate >= WEAK_RATE:
            found = ("reversed text", chunk[::-1], rev_rate >= need)
        if found:
            start, end = base + s, base + e
            # below the English bar ("weak"): reported only when the rescan finds a directive
            rate = rot_rate if found[0] == "rot13" else rev_rate
            hits.append(
                (rate, len(cw), s, e, Decoded("OBF006", start, end, found[0], found[1].strip(), framed, found[2]))
            )
    best = _best(hits)
    if best is not None:
        out.append(best)
    return best is not None


def _best(hits: list):
    """Of ``(rate, words, start, end, item)`` candidates, the item with the highest rate; among
    those within 0.1 of it the one with the most words, then the narrowest (a line that all
    decodes is one payload; a plain label or the quotes around an encoded part are not part of
    it). ``None`` for no candidates."""
    if not hits:
        return None
    top = max(h[0] for h in hits)
    return max((h for h in hits if h[0] >= top - 0.1), key=lambda h: (h[1], h[2] - h[3]))[4]


_LEET_HINT = re.compile(r"[A-Za-z][0-9@$!]|[0-9@$!][A-Za-z]")
_LEET_PAIRS = (b"a0", b"0a")
""":data:`_LEET_HINT` in the bytes its class table maps a text to (letters ``a``, digits and
``@ $ !`` ``0``): a line holds a match of one exactly when it holds one of these."""


def _find_leet(text: str) -> list[Decoded]:
    """Leetspeak spellings of injection keywords ("1gn0r3 pr3v10u5 1n5truct10n5"). A line qualifies
    when at least two tokens that contain leet characters map to keywords. Each line's result is
    a function of the line alone (:func:`_leet_line`, memoised): an editor re-analysing a
    document after one edit judges only the edited lines again."""
    out: list[Decoded] = []
    # _LEET_HINT (an ASCII letter next to a digit or @ $ !) found in the ASCII bytes mapped to
    # classes, one byte per code point (line breaks map to neither class, so no pair crosses a
    # line): only the lines of _LINE_RE holding one are judged, in order
    mapped = _scope.ascii_bytes(text).translate(_FAST_TRIGGERS[_LEET_HINT.pattern][0])
    n = len(text)
    breaks = ("\n", "\r") if "\r" in text else ("\n",)
    # each line's first "a0" or "0a" (a pair never crosses a line: a line break is in neither
    # class), the two found with bytes.find from where the last line judged ended, in order:
    # the alternation a0|0a read the 294 KB benchmark file at about 70 MB/s (4 ms)
    pair_a, pair_b = _LEET_PAIRS
    nxt_a, nxt_b = mapped.find(pair_a), mapped.find(pair_b)
    while nxt_a >= 0 or nxt_b >= 0:
        i = nxt_b if nxt_a < 0 else nxt_a if nxt_b < 0 else min(nxt_a, nxt_b)
        a = max(text.rfind(brk, 0, i) for brk in breaks) + 1
        b = n
        for brk in breaks:
            j = text.find(brk, i, b)
            if j >= 0:
                b = j
        got = _leet_line(text[a:b])
        if got is not None:
            out.append(Decoded("OBF008", a + got[0], a + got[1], "leetspeak", got[2], False, True))
        if 0 <= nxt_a < b:
            nxt_a = mapped.find(pair_a, b)
        if 0 <= nxt_b < b:
            nxt_b = mapped.find(pair_b, b)
    return out


def _leet_line(line: str) -> tuple[int, int, str] | None:
    """``(start, end, plain text)`` of the leetspeak run of one line (offsets in the line), or
    ``None``; memoised per line (at most :data:`_ROT_MEMO_MAX` lines, then emptied)."""
    memo = _scope.memo("leetspeak lines")
    if memo is not None and line in memo:
        return memo[line]
    hits = []
    for tm in _LEET_TOKEN.finditer(line):
        tok = tm.group(0)
        if not re.search(r"[0-9@$!]", tok) or not re.search(r"[A-Za-z]", tok):
            continue
        plain = tok.lower().translate(_LEET)
        if plain in _LEET_KEYWORDS or plain.rstrip("s") in _LEET_KEYWORDS:
            hits.append(tm)
    got = None
    if len(hits) >= 2:
        start, end = hits[0].start(), hits[-1].end()
        segment = line[start:end]
        plain = _LEET_TOKEN.sub(
            lambda m: m.group(0).lower().translate(_LEET) if re.search(r"[A-Za-z]", m.group(0)) else m.group(0),
            segment,
        )
        got = (start, end, plain)
    if memo is not None:
        _scope.keep(memo, line, got, _ROT_MEMO_MAX)
    return got


# --------------------------------------------------------------------------- English by the dictionary

DICT_WORDS = 30000
"""Most frequent English words (of wordfreq's ``small_en`` list) that count as dictionary words."""
DICT_RATE = 0.75
"""Share of a decoded text's words (3+ letters) in the dictionary for it to read as English."""
RAW_DICT_MAX = 0.35
"""Largest dictionary share of the raw (encoded) words for a rot13 run: the reader cannot read it."""
MIN_PROSE_WORDS = 4


def english_word_list() -> list[str]:
    """The most frequent English words (lower case, ASCII letters, 3+), most frequent first: the
    first :data:`DICT_WORDS` entries of the ``wordfreq`` package's ``small_en`` list (Speer et
    al., wordfreq 3.1.1, data CC BY-SA 4.0), bundled as ``unveil/data/english-words.txt.gz`` by
    ``scripts/gen_english_words.py`` (27,476 words, one per line; see
    ``unveil/data/README.md``), which keeps only such words (a test checks the bundled file), so
    they are taken as they are. Read anew on each call, about 10 ms. Empty when the file cannot
    be read."""
    import gzip

    path = Path(__file__).resolve().parents[2] / "data" / "english-words.txt.gz"
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            return f.read().split()
    except (OSError, EOFError, UnicodeDecodeError):
        return []


class WordSet:
    """Membership in a fixed set of words, kept as the sorted ``hash()`` of each word in one
    ``array('q')`` (8 bytes a word) instead of a ``frozenset`` of strings: 0.2 MB instead of
    3.6 MB for :func:`english_word_list` (``tracemalloc``), in every process that decodes text
    (the language server, each ``unveil check`` worker). A lookup is a binary search (C,
    ``bisect``) on the word's hash, which a ``str`` computes once and keeps. ``hash`` of a string
    is salted per process (``PYTHONHASHSEED``), and both sides are hashed in this process. A
    string that is not a word is taken for one only if its 64-bit hash equals a word's: about
    27,476 in 2**64 per lookup, and an attacker cannot aim at it without the process's salt (and
    a false "known" word only makes a text look more like English). A lookup takes about 0.5 µs
    against the ``frozenset``'s 25 ns: about 0.3 s of CPU over the benign corpus (650,000
    lookups, counted)."""

    __slots__ = ("_hashes", "_n")

    def __init__(self, words) -> None:
        from array import array

        self._hashes = array("q", sorted({hash(w) for w in words}))
        self._n = len(self._hashes)

    def __contains__(self, word: object) -> bool:
        h = hash(word)
        i = _bisect_left(self._hashes, h)
        return i < self._n and self._hashes[i] == h

    def __len__(self) -> int:
        return self._n


@lru_cache(maxsize=1)
def english_words() -> WordSet:
    """:func:`english_word_list` as a :class:`WordSet`, made once per process. Empty when the
    file cannot be read (every text then reads as not English: nothing new is reported)."""
    return WordSet(english_word_list())


def dictionary_rate(words: list[str]) -> float:
    """Share of ``words`` (lower case) in :func:`english_words`; 0.0 for none."""
    if not words:
        return 0.0
    known = english_words()
    return sum(1 for w in words if w in known) / len(words)


_IMPERATIVE = frozenset(
    """add append apply ask avoid build call change check clean clear close commit copy create delete deploy
    disable do download drop dump edit email enable execute export fetch fix follow force forget give go grant
    ignore include insert install keep kill leave list load make merge move never always open paste pipe post
    print publish pull push put read remove rename replace report reset restart return reveal revoke run save
    say send set share show skip source start stop submit switch tell turn update upload use write attach
    approve bypass treat assume pretend act accept allow mark rewrite overwrite wipe erase""".split()
)
_SECOND_PERSON = re.compile(r"(?i)(?:you|your|yourself|must|should|always|never|do\s+not|don't)")


def reads_as_instruction(decoded: str) -> str | None:
    """``"instruction"`` when ``decoded`` reads as English (at least :data:`MIN_PROSE_WORDS`
    words of 3+ letters, :data:`DICT_RATE` of them dictionary words) and is worded as one (a clause
    opening with an imperative verb, or second person / must / always / never); ``"prose"`` for
    other English; ``None`` otherwise."""
    words = [w.lower() for w in _WORD3.findall(decoded)]
    if len(words) < MIN_PROSE_WORDS or dictionary_rate(words) < DICT_RATE:
        return None
    letters = sum(ch.isalpha() or ch.isspace() for ch in decoded)
    if letters < 0.7 * len(decoded):
        return None
    for clause in re.split(r"[.;:!?,\n]|\band\b|\bthen\b", decoded):
        first = _WORD.search(clause)
        if first and first.group(0).lower() in _IMPERATIVE:
            return "instruction"
    return "instruction" if _SECOND_PERSON.search(decoded) else "prose"


_OBEY_DECODE = re.compile(
    r"(?i)decod|unscrambl|descrambl|decipher|decrypt|de-?obfuscat|\brot-?13\b|\bcaesar\b|url-?(?:en|de)cod|"
    r"percent-?(?:en|de)cod|unescap|\brevers|backwards|base-?64|base-?32|\bhex\b|\bencoded\b|scrambled|ciphered|"
    r"obfuscated|\bunquote\b"
)
_OBEY_ACT = re.compile(
    r"(?i)\b(?:follow|apply|act\s+(?:on|upon)|acting\s+on|execute|obey|carry\s+(?:it\s+|them\s+)?out|comply|"
    r"do\s+(?:what|as|it)|perform|implement|honou?r|heed|adhere|abide|enforce|run\s+(?:it|them|that|this)|"
    r"treat\s+(?:it|this|them)\s+as\s+(?:an?\s+|the\s+)?(?:instructions?|rules?|directives?|orders?))\b"
)


def obey_frame(text: str, start: int, end: int) -> bool:
    """Whether the run's line or the non-empty line before it tells the model to decode it and
    act on it: a decoding word (decode, unscramble, rot13, URL-encoded, reversed …) and an
    obeying verb (follow, apply, act on, execute, obey, carry out, comply …) in that text."""
    ls, le = _line_bounds(text, start)
    _ls2, le2 = _line_bounds(text, max(start, end - 1))
    frame = text[ls:start] + " " + text[end:le2]
    p = ls - 1
    while p > 0 and text[p - 1] in "\r\n":
        p -= 1
    if p > 0:
        ps, pe = _line_bounds(text, p - 1)
        frame = text[ps:pe] + " " + frame
    return bool(_OBEY_DECODE.search(frame) and _OBEY_ACT.search(frame))


_PCT_TOKEN = re.compile(r"[^\s`'\"<>]*%[0-9A-Fa-f]{2}[^\s`'\"<>]*")


def _PCT_STOP(ch: str) -> bool:
    return ch.isspace() or ch in "`'\"<>"


def _find_percent_prose(text: str, exempt: list[tuple[int, int]]) -> list[Decoded]:
    """Percent-encoded text whose escapes are spaces and punctuation (``Append%20the%20contents…``),
    which :data:`_PERCENT` runs (escapes of letters) do not cover: a run without whitespace holding
    at least three ``%XX`` escapes that decodes to at least three words. Inside a URL (``://``, a
    query string) it is marked ``in_url``: English there is ordinary (``?q=how%20to%20install``)."""
    from urllib.parse import unquote

    out = []
    tokens: list[tuple[int, int]] = []
    for pm in _PERCENT.finditer(text):  # the escapes, then the run without whitespace around each
        if tokens and pm.start() < tokens[-1][1]:
            continue
        a = pm.start()
        while a > 0 and not _PCT_STOP(text[a - 1]) and pm.start() - a < 4096:
            a -= 1
        b = pm.end()
        while b < len(text) and not _PCT_STOP(text[b]) and b - pm.end() < 4096:
            b += 1
        tokens.append((a, b))
    for a, b in tokens:
        m = _PCT_TOKEN.fullmatch(text, a, b)
        if m is None:
            continue
        tok = m.group(0)
        escapes = _PERCENT.findall(tok)
        if len(escapes) < 3 or _inside(exempt, m.start(), m.end()):
            continue
        if sum(1 for x in escapes if chr(int(x, 16)).isalnum()) >= MIN_ESCAPES:
            continue  # escaped letters: the percent-encoding decoder's run (OBF007)
        try:
            decoded = unquote(tok, errors="strict")
        except Exception:  # noqa: BLE001
            continue
        if len(_WORD3.findall(decoded)) < 3:
            continue
        start, end = m.start(), m.end()
        ls, le = _line_bounds(text, start)
        context = text[ls:start] + decoded + text[end:le] if end <= le else None
        in_url = "://" in tok or tok.startswith(("?", "www.")) or bool(re.search(r"[?&][\w.-]+=", tok))
        out.append(
            Decoded(
                "OBF007",
                start,
                end,
                "percent-encoding",
                decoded,
                _keyword_near(text, start, end),
                False,
                context,
                quiet=True,  # reported when it reads as an instruction, is framed, or its rescan hits
                in_url=in_url,
            )
        )
    return out


# --------------------------------------------------------------------------- new decoders

_B32 = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Z2-7]{24,}={0,6}(?![A-Za-z0-9+/=_-])")


def _find_base32(text: str, exempt: list[tuple[int, int]]) -> list[Decoded]:
    """Base32 (RFC 4648, upper case) that decodes to text: strong when a decode keyword is near or
    the text is clean multi-word prose, else ``quiet`` (reported only when its rescan hits)."""
    out = []
    for m in _B32.finditer(text):
        run = m.group(0)
        if not re.search(r"[2-7]", run) or _inside(exempt, m.start(), m.end()):
            continue
        body = run.rstrip("=")
        try:
            raw = base64.b32decode(body + "=" * (-len(body) % 8))
        except (binascii.Error, ValueError):
            continue
        decoded = _utf8(raw)
        if decoded is None or not _textlike(decoded):
            continue
        keyword = (
            _keyword_near(text, m.start(), m.end()) or "base32" in text[max(0, m.start() - 200) : m.start()].lower()
        )
        strong = keyword or _clean_words(decoded)
        out.append(Decoded("OBF010", m.start(), m.end(), "base32", decoded, keyword, strong=strong, quiet=not strong))
    return out


_B64_LINE = re.compile(
    r"(?m)(?:^|(?<=\r))[ \t]*(?:[-*+][ \t]+|>[ \t]*|\d{1,3}[.)][ \t]+)?[\"'`]?([A-Za-z0-9+/_-]{8,}={0,2})[\"'`]?"
    r"[ \t]*[,+\\]?[ \t]*(?=\r|$)"
)
"""A line that is one base64 piece (a list item, a quote, a string with a joining comma or plus
allowed around it). Lines end at ``\n``, ``\r\n`` or ``\r`` (``re``'s ``^`` and ``$`` know only
``\n``: a payload split across CRLF lines was not joined)."""
_B64_LINE_LF = re.compile(
    r"(?m)^[ \t]*(?:[-*+][ \t]+|>[ \t]*|\d{1,3}[.)][ \t]+)?[\"'`]?([A-Za-z0-9+/_-]{8,}={0,2})[\"'`]?"
    r"[ \t]*[,+\\]?[ \t]*$"
)
""":data:`_B64_LINE` for a text without ``\r``, where it matches exactly the same (``(?<=\r)``
and ``(?=\r)`` never hold there)."""
_B64_LINE_NL = re.compile(
    r"\n[ \t]*(?:[-*+][ \t]+|>[ \t]*|\d{1,3}[.)][ \t]+)?[\"'`]?([A-Za-z0-9+/_-]{8,}={0,2})[\"'`]?"
    r"[ \t]*[,+\\]?[ \t]*(?=\n|\Z)"
)
""":data:`_B64_LINE_LF` for every line but the first, its match starting at the line feed before
the line: a pattern that starts with a literal is tried only where it occurs (the 294 KB corpus
file: 5.9 ms with the alternation, 1.8 with ``^``, 0.9 this way)."""


def _b64_lines(text: str):
    """``(line start, end, piece start, piece end, piece)`` of each :data:`_B64_LINE` match in
    ``text``, in order: for a text without ``\r``, from :data:`_B64_LINE_LF` at the start and
    :data:`_B64_LINE_NL` after each line feed (the same matches)."""
    if "\r" in text:
        for m in _B64_LINE.finditer(text):
            yield m.start(), m.end(), m.start(1), m.end(1), m.group(1)
        return
    first = _B64_LINE_LF.match(text)
    if first is not None:
        yield first.start(), first.end(), first.start(1), first.end(1), first.group(1)
    for m in _B64_LINE_NL.finditer(text):
        yield m.start() + 1, m.end(), m.start(1), m.end(1), m.group(1)


_B64_QUOTED = re.compile(r"([\"'])([A-Za-z0-9+/_=-]{4,})\1")
_QUOTE_JOIN = re.compile(r"\s*(?:\+|\.\.?|,|\|\||&)?\s*\Z")
_B64_QUOTE_CLASS = bytes(
    ord("q") if chr(b) in "\"'" else ord("x") if chr(b) in string.ascii_letters + string.digits + "+/_-=" else ord(" ")
    for b in range(256)
)
"""``bytes.translate`` table for :data:`_B64_QUOTED`: the two quotes to ``q``, what the quotes
enclose (the base64 and base64url alphabets and ``=``) to ``x``, every other byte to a space."""


def _b64_quoted_matches(text: str):
    """The matches of :data:`_B64_QUOTED` in ``text``, as one ``finditer`` gives them: a match
    starts at a quote followed by four alphabet characters (found in the text's class-mapped
    ASCII bytes), and the pattern, without lookaround, is tried there as ``finditer`` would:
    in order, from the end of the last match on."""
    mapped = _scope.ascii_bytes(text).translate(_B64_QUOTE_CLASS)
    end = 0
    i = mapped.find(b"qxxxx")
    while i >= 0:
        if i >= end:
            m = _B64_QUOTED.match(text, i)
            if m is not None:
                end = m.end()
                yield m
        i = mapped.find(b"qxxxx", i + 1)


def _b64_chain(text: str, chunks: list[tuple[int, int, str]], exempt, out: list, how: str) -> None:
    if len(chunks) < 2:
        return
    joined = "".join(c for _, _, c in chunks)
    start, end = chunks[0][0], chunks[-1][1]
    if len(joined) < SHORT_RUN or _inside(exempt, start, end) or not _MIXED.search(joined):
        return
    before = text[max(0, start - 200) : start]
    if "data:image/" in before or "-----BEGIN" in before:
        return
    for urlsafe in (False, True):
        decoded = _b64decode(joined, urlsafe)
        if decoded is not None and _textlike(decoded):
            break
    else:
        return
    keyword = _keyword_near(text, start, end)
    strong = keyword or _clean_words(decoded) or len(joined) >= LONG_RUN
    out.append(Decoded("OBF001", start, end, f"base64 ({how})", decoded, keyword, strong=strong, quiet=not strong))


def _line_breaks(text: str, a: int, b: int) -> int:
    """How many line breaks (``\n``, ``\r\n``, ``\r``) ``text[a:b]`` holds."""
    return text.count("\n", a, b) + text.count("\r", a, b) - text.count("\r\n", a, b)


def _find_base64_split(text: str, exempt: list[tuple[int, int]]) -> list[Decoded]:
    """Base64 split across consecutive lines or list items, or across quoted strings joined by
    ``+``, ``.``, ``..``, ``,``, ``||`` or nothing (``"SWdu" + "b3Jl"``)."""
    out: list[Decoded] = []
    chunks: list[tuple[int, int, str]] = []
    prev_end = -2
    for ls, le, ps, pe, piece in _b64_lines(text):
        if chunks and text[prev_end:ls].strip("\r\n") == "" and _line_breaks(text, prev_end, ls) <= 1:
            chunks.append((ps, pe, piece))
        else:
            _b64_chain(text, chunks, exempt, out, "split across lines")
            chunks = [(ps, pe, piece)]
        prev_end = le
    _b64_chain(text, chunks, exempt, out, "split across lines")
    chunks = []
    last = None
    for m in _b64_quoted_matches(text):
        if last is not None and _QUOTE_JOIN.match(text[last.end() : m.start()]) and m.start() - last.end() <= 40:
            chunks.append((m.start(2), m.end(2), m.group(2)))
        else:
            _b64_chain(text, chunks, exempt, out, "quoted strings joined")
            chunks = [(m.start(2), m.end(2), m.group(2))]
        last = m
    _b64_chain(text, chunks, exempt, out, "quoted strings joined")
    return out


_DATA = re.compile(
    r"(?i)\bdata:(?P<mime>[a-z]+/[a-z0-9.+-]+)?(?P<params>(?:;[a-z0-9_=.-]+)*?)(?P<b64>;base64)?,"
    r"(?P<body>[^\s\"'<>)\]]{4,})"
)
_TAG = re.compile(r"<[^>]*>")
_SVG_TEXT = re.compile(r"<!--(.*?)-->|<(?:text|tspan|title|desc|textPath)\b[^>]*>(.*?)</", re.S | re.I)


_DATA_AT = re.compile(rb"[dD][aA][tT][aA]:")
"""``data:`` in any case, in a text's :func:`unveil.core.scope.ascii_bytes`: no other code point
lowers, case-folds or matches under ``re.IGNORECASE`` to ``d``, ``a``, ``t`` or ``:`` (checked
over every code point by ``tests/unit/test_obfuscation_data_at.py``), so these are where
:data:`_DATA` can start."""


def _data_matches(text: str):
    """The matches of :data:`_DATA` in ``text``, as one ``finditer`` gives them: each starts at
    an occurrence of ``data:`` in any case (:data:`_DATA_AT`), so only those are tried, past the
    end of the last match. Found in the text's ASCII bytes (one byte a code point): no
    lower-cased copy of the text."""
    cursor = 0
    for at in _DATA_AT.finditer(_scope.ascii_bytes(text)):
        i = at.start()
        if i >= cursor:
            m = _DATA.match(text, i)
            if m is not None:
                yield m
                cursor = m.end()


def _find_data_uris(text: str, exempt: list[tuple[int, int]]) -> list[Decoded]:
    """``data:`` URIs with text: ``text/*``, JSON, or an SVG (its text, title, desc and comments).
    Raster images (``image/png`` …) are skipped."""
    from urllib.parse import unquote_to_bytes

    out = []
    for m in _data_matches(text):
        mime = (m.group("mime") or "text/plain").lower()
        if mime.startswith(("image/", "audio/", "video/", "font/")) and mime != "image/svg+xml":
            continue
        if not (mime.startswith("text/") or mime in ("image/svg+xml", "application/json", "application/xml")):
            continue
        body = m.group("body")
        try:
            raw = base64.b64decode(body + "=" * (-len(body) % 4)) if m.group("b64") else unquote_to_bytes(body)
        except (binascii.Error, ValueError):
            continue
        decoded = _utf8(raw)
        if decoded is None:
            continue
        if mime in ("image/svg+xml", "text/html", "application/xml"):
            parts = [x or y for x, y in _SVG_TEXT.findall(decoded)]
            shown = " ".join(_TAG.sub(" ", p).strip() for p in parts if p and p.strip())
            decoded = shown or " ".join(_TAG.sub(" ", decoded).split())
        decoded = decoded.strip()
        if len(decoded) < 4 or _printable_ratio(decoded) < 0.9:
            continue
        out.append(
            Decoded(
                "OBF011",
                m.start(),
                m.end(),
                f"data: URI ({mime})",
                decoded,
                True,
                strong=len(_WORD.findall(decoded)) >= 3,
            )
        )
    return out


# --------------------------------------------------------------------------- character codes

_CODE_NUM = r"(?:0[xX][0-9A-Fa-f]{1,6}|\d{1,7})"
_CODE_LIST = re.compile(r"(?<![\w.])" + _CODE_NUM + r"(?:\s*,\s*" + _CODE_NUM + r"(?![\w.])){3,}")
"""Four or more integers separated by commas: the arguments or array of a char-code call."""
_CHR_CHAIN = re.compile(
    r"(?:\bchr|\[char\]|\bChr\$?|\bString\.fromCharCode)\s*\(?\s*" + _CODE_NUM + r"\s*\)?"
    r"(?:\s*(?:\+|&|\.|,)\s*(?:\bchr|\[char\]|\bChr\$?|\bString\.fromCharCode)\s*\(?\s*" + _CODE_NUM + r"\s*\)?){3,}"
)
"""``chr(102)+chr(101)+…`` (Python), ``[char]102+[char]101`` (PowerShell), ``Chr(102) & Chr(101)``
(VBScript)."""
_CHR_CHAIN_STARTS = ("chr", "[char]", "Chr", "String.fromCharCode")
"""What every match of :data:`_CHR_CHAIN` starts with (its first item's alternatives)."""


def _matches_from(pat, text: str, starts: tuple[str, ...]):
    """The matches of ``pat.finditer(text)`` for a pattern that never matches empty and whose
    every match starts with one of the literals ``starts``: ``pat.match`` is tried only where one
    occurs, in order, from the end of the last match on, as ``finditer`` goes (a match attempt
    at a position reads the text before it as ``finditer``'s does: ``\\b``). A scan of
    :data:`_CHR_CHAIN` over a 294 KB file took 14 ms, the literals' ``str.find`` a fraction."""
    found: set[int] = set()
    for lit in starts:
        i = text.find(lit)
        while i >= 0:
            found.add(i)
            i = text.find(lit, i + 1)
    end = 0
    for i in sorted(found):
        if i < end:
            continue
        m = pat.match(text, i)
        if m is not None:
            yield m
            end = m.end()


_CHAR_CALL = re.compile(
    r"(?i)fromCharCode|fromCodePoint|\bchr\b|\[char(?:\[\])?\]|\bbytes\s*\(|\bbytearray\s*\(|Buffer\.from\s*\("
    r"|Uint8Array|TextDecoder|\.decode\s*\(|\bpack\s*\(\s*['\"][cCU]\*|\bChr\$?\s*\("
)
"""A call that turns numbers into characters, on the same line as the list."""
_RUNS_IT = re.compile(
    r"(?i)\beval\b|\bexec\b|\bFunction\s*\(|\bsetTimeout\s*\(\s*String|\bsetInterval\s*\(\s*String"
    r"|\bInvoke-Expression\b|\biex\b|\bexecScript\b|\bvm\.run\w*|\bcompile\s*\("
)
"""What runs decoded text as code: ``eval`` (also ``(0, eval)(…)``), ``exec``, ``new Function``,
``Invoke-Expression``."""


def _codes_text(nums: list[str]) -> str | None:
    """The text the integers ``nums`` spell as code points (``None``: a value outside Unicode, a
    control character other than tab / newline, or a surrogate)."""
    out = []
    for n in nums:
        v = int(n, 16) if n[:2] in ("0x", "0X") else int(n)
        if v in (9, 10, 13) or 32 <= v < 0xD800 or 0xE000 <= v <= 0x10FFFF:
            out.append(chr(v))
        else:
            return None
    return "".join(out)


def _find_charcodes(text: str, exempt: list[tuple[int, int]]) -> list[Decoded]:
    """Character codes turned into text by a call on the same line: ``String.fromCharCode(102,101,…)``,
    ``bytes([105, 103, …]).decode()``, ``''.join(map(chr, [...]))``, ``[char[]](73,103,…) -join ''``,
    ``chr(102)+chr(101)+…``. At least four codes that spell text (letters, ≥ 90 % printable).
    Reported when the decoded text triggers a rule (quiet otherwise), or always — an error — when
    the same line runs what it decodes (``eval``, ``(0, eval)``, ``exec``, ``new Function``,
    ``Invoke-Expression``): code that hides itself as numbers and runs is the payload."""
    out: list[Decoded] = []
    seen: list[tuple[int, int]] = []
    for m in _matches_from(_CHR_CHAIN, text, _CHR_CHAIN_STARTS):
        nums = re.findall(_CODE_NUM, re.sub(r"(?i)\[char\]|chr\$?|fromCharCode", " ", m.group(0)))
        _charcode_run(text, m.start(), m.end(), nums, exempt, out, seen)
    for m in _CODE_LIST.finditer(text):
        if any(a <= m.start() < b for a, b in seen):
            continue
        ls, le = _line_bounds(text, m.start())
        if not _CHAR_CALL.search(text, ls, le):
            continue
        _charcode_run(text, m.start(), m.end(), re.findall(_CODE_NUM, m.group(0)), exempt, out, seen)
    return out


def _charcode_run(
    text: str, start: int, end: int, nums: list[str], exempt, out: list[Decoded], seen: list[tuple[int, int]]
) -> None:
    if len(nums) < 4 or _inside(exempt, start, end):
        return
    decoded = _codes_text(nums)
    if decoded is None or not _textlike(decoded) or not re.search(r"[^\W\d_]{2}", decoded):
        return
    ls, le = _line_bounds(text, start)
    runs = _RUNS_IT.search(text, ls, le)
    seen.append((start, end))
    out.append(
        Decoded(
            "OBF012",
            start,
            end,
            "character codes",
            decoded,
            True,
            strong=runs is not None,
            quiet=runs is None,
            executed=runs.group(0).strip() if runs is not None else None,
        )
    )


# --------------------------------------------------------------------------- the registry


@dataclass(frozen=True)
class Decoder:
    """One decoder: ``find(text, exempt) -> [Decoded]``, run only when ``trigger`` (a compiled
    pattern, or ``None`` for always) occurs in the text."""

    name: str
    find: Callable[[str, list], list]
    trigger: "re.Pattern | None" = None


DECODERS: list[Decoder] = []
"""The decoders, in priority order (an overlapping run keeps the first found). Adding an encoding
is one function plus a :func:`register` call (and its tests)."""


def register(name: str, trigger: str | None = None):
    """Decorator: add ``find(text, exempt) -> [Decoded]`` to :data:`DECODERS`."""

    def deco(fn):
        DECODERS.append(Decoder(name, fn, re.compile(trigger) if trigger else None))
        return fn

    return deco


register("base64", r"[A-Za-z0-9+/_-]{16}")(_find_base64)
register("base64-split", r"[A-Za-z0-9+/_-]{4}")(_find_base64_split)
register("base32", r"[A-Z2-7]{24}")(_find_base32)
register("data-uri", r"(?i)data:")(_find_data_uris)
register("hex", r"[0-9A-Fa-f]{2}")(_find_hex)
register("escapes", r"\\[xu0-3]")(
    lambda t, ex: _find_char_escapes(t, _ESCAPE, _esc_one, "OBF003", "escape sequences", max_gap=3)
)
register("charrefs", r"&#?[A-Za-z0-9]+;")(
    lambda t, ex: _find_char_escapes(t, _ENTITY, _entity_one, "OBF004", "HTML character references", max_gap=3)
)
register("percent", r"%[0-9A-Fa-f]{2}")(
    lambda t, ex: _find_char_escapes(t, _PERCENT, _pct_one, "OBF007", "percent-encoding", max_gap=3)
)
register("percent-prose", r"%[0-9A-Fa-f]{2}")(_find_percent_prose)
register("rot13-reversed")(lambda t, ex: _find_rot_and_reversed(t))
register("leetspeak", r"[A-Za-z][0-9@$!]|[0-9@$!][A-Za-z]")(lambda t, ex: _find_leet(t))
register(
    "charcodes",
    # case-sensitive spellings (a case-insensitive alternation costs a millisecond per file)
    r"fromCharCode|fromCodePoint|chr[(, )]|\[[Cc]har|bytes\(|bytearray\(|Buffer\.from|Uint8Array|TextDecoder|\.decode\(|pack\(|Chr\$?\(|CHR\(",
)(_find_charcodes)


_B64_CHARS = string.ascii_letters + string.digits + "+/_-"
_B64_CLASS = _byte_class(_B64_CHARS)
_FAST_TRIGGERS: dict[str, tuple[bytes, tuple[bytes, ...]]] = {
    r"[A-Za-z0-9+/_-]{16}": (_B64_CLASS, (b"x" * 16,)),
    r"[A-Z2-7]{24}": (_byte_class(string.ascii_uppercase + "234567"), (b"x" * 24,)),
    r"[A-Za-z][0-9@$!]|[0-9@$!][A-Za-z]": (
        bytes(
            ord("a") if chr(b) in string.ascii_letters else ord("0") if chr(b) in string.digits + "@$!" else ord(" ")
            for b in range(256)
        ),
        (b"a0", b"0a"),
    ),
}
"""Decoder triggers that are runs or pairs of ASCII character classes, tested on the text's ASCII
bytes (every other code point becomes ``?``, in none of the classes) mapped by a translation
table: the same answer as the regular expression at a fraction of its cost."""


_LITERAL_TRIGGERS: dict[str, tuple[str, ...]] = {
    r"fromCharCode|fromCodePoint|chr[(, )]|\[[Cc]har|bytes\(|bytearray\(|Buffer\.from|Uint8Array|TextDecoder|\.decode\(|pack\(|Chr\$?\(|CHR\(": (
        "fromC",
        "chr(",
        "chr,",
        "chr ",
        "chr)",
        "[Char",
        "[char",
        "bytes(",
        "bytearray(",
        "Buffer.from",
        "Uint8Array",
        "TextDecoder",
        ".decode(",
        "pack(",
        "Chr(",
        "Chr$(",
        "CHR(",
    ),
}
"""Decoder triggers that are alternations of literals: one of these substrings occurs in every
match, so a text without any is answered by ``in`` tests (a search of the alternation reads a
300 KB text at about 160 MB/s, the ``in`` tests at memory speed)."""


_LITERAL_AUTOMATA: dict[tuple[str, ...], object] = {}


def _any_literal(literals: tuple[str, ...], text: str) -> bool:
    """Whether one of ``literals`` occurs in ``text``: one Aho–Corasick pass (``ahocorasick-rs``,
    about three times faster than an ``in`` test per literal on a 294 KB text with 17
    literals), or those ``in`` tests for a text the automaton refuses (lone surrogates from
    undecodable bytes) and without the library."""
    ac = _LITERAL_AUTOMATA.get(literals)
    if ac is None:
        try:
            import ahocorasick_rs

            ac = ahocorasick_rs.AhoCorasick(list(literals))
        except Exception:  # noqa: BLE001 - the in tests give the same answer
            ac = False
        _LITERAL_AUTOMATA[literals] = ac
    if ac:
        try:
            return occurs(ac, text, max(map(len, literals), default=0))
        except (UnicodeError, ValueError):
            pass
    return any(lit in text for lit in literals)


class _TriggerProbe:
    """Whether a decoder's trigger occurs in one text (:func:`find_encoded`)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._ascii: bytes | None = None

    def occurs(self, trigger) -> bool:
        fast = _FAST_TRIGGERS.get(trigger.pattern)
        if fast is not None:
            if self._ascii is None:
                self._ascii = _scope.ascii_bytes(self.text)
            mapped = self._ascii.translate(fast[0])
            return any(needle in mapped for needle in fast[1])
        needed = _LITERAL_TRIGGERS.get(trigger.pattern)
        if needed is not None and not _carried_presence(
            self.text, needed, max(map(len, needed), default=1), lambda t: _any_literal(needed, t)
        ):
            return False  # (every match holds one of these: no search)
        if trigger.pattern == "(?i)data:":  # no other code point case-folds to d, a, t or ":"
            return _carried_presence(self.text, "data:", 5, self._has_data)
        return bool(trigger.search(self.text))

    def _has_data(self, t: str) -> bool:
        if t is self.text:
            if self._ascii is None:
                self._ascii = _scope.ascii_bytes(self.text)
            return _DATA_AT.search(self._ascii) is not None
        return "data:" in t.lower()


CARRY_MIN = 32_768
"""Code points from which an open document's model view carries a decoder trigger's absence from
one version to the next (:func:`_carried_presence`)."""
_PRESENCE_KEPT = "decoder trigger presence"


def _carried_presence(text: str, key, longest: int, find) -> bool:
    """``find(text)``: whether a trigger (literals of at most ``longest`` code points, named by
    ``key``) occurs in ``text``. For an open document's model view of at least
    :data:`CARRY_MIN` code points (the text :func:`_decode_document` is finding runs in), when
    the previous version had none: ``find`` of the stretch around the edit only, its longest
    literal less one code point on either side. Exact: an occurrence in the new text lies in the
    common prefix or suffix of the two versions, where the previous one had it too, or overlaps
    the edited stretch (:func:`unveil.core.checks.splice.around_edit`). A trigger
    the previous version had is looked for in the whole text."""
    cache = _scope.document_cache()
    if cache is None or len(text) < CARRY_MIN or _DOCUMENT_TEXT.get() is not text:
        return find(text)
    kept = cache.kept.get(_PRESENCE_KEPT)
    if kept is None or kept[0] is not text:  # this version's first look: the last one's is the base
        kept = (text, {}, kept[0] if kept is not None else None, kept[1] if kept is not None else {})
        cache.kept[_PRESENCE_KEPT] = kept
    now, old_text, old = kept[1], kept[2], kept[3]
    got = now.get(key)
    if got is None:
        if old_text is not None and old.get(key) is False:
            from unveil.core.checks.splice import around_edit, text_delta

            lo, hi = around_edit(text_delta(old_text, text), longest)
            got = bool(find(text[lo:hi])) if hi > lo else False
        else:
            got = bool(find(text))
        now[key] = got
    return got


def find_encoded(text: str) -> list[Decoded]:
    """Every encoded run in ``text`` that passes its gates, sorted by position.

    Decoders run in :data:`DECODERS` order, each only when its trigger occurs; overlapping runs
    keep the earliest start (the longer run on a tie). Never raises.
    """
    exempt = _exempt_spans(text)
    found: list[Decoded] = []
    probe = _TriggerProbe(text)
    with _scope.ascii_kept(text):  # (the probe and each decoder read the same ASCII bytes)
        for dec in DECODERS:
            _scope.checkpoint()  # a background analysis may wait between two decoders
            if dec.trigger is not None and not probe.occurs(dec.trigger):
                continue
            try:
                found += dec.find(text, exempt)
            except Exception:  # noqa: BLE001 - one failing decoder must not stop the others
                continue
    found.sort(key=lambda d: (d.start, -(d.end - d.start)))
    kept: list[Decoded] = []
    for d in found:
        if kept and d.start < kept[-1].end:
            continue
        kept.append(d)
    return kept


# --------------------------------------------------------------------------- bounds

MAX_RUNS = 200
"""Encoded runs decoded and rescanned per document (nested ones included)."""
MAX_DECODED_CHARS = 400_000
"""Decoded code points rescanned per document (nested ones included)."""
LIMIT_RULE = "OBF009"


@dataclass
class Budget:
    """What is left of the per-document decode bounds; ``skipped`` runs were not rescanned and
    ``first_skipped`` is the offset (in the top-level text) of the first, or ``None``."""

    runs: int = field(default_factory=lambda: MAX_RUNS)
    chars: int = field(default_factory=lambda: MAX_DECODED_CHARS)
    skipped: int = 0
    first_skipped: int | None = None
    depth_hit: bool = False

    def take(self, d: Decoded, where: int) -> bool:
        n = len(d.context or d.text)
        if self.runs <= 0 or self.chars < n:
            self.skipped += 1
            if self.first_skipped is None:
                self.first_skipped = where
            return False
        self.runs -= 1
        self.chars -= n
        return True


def preview(s: str) -> str:
    """``s`` on one line, control characters escaped, at most :data:`MAX_PREVIEW` characters."""
    s = s.replace("\r\n", "\n").replace("\n", "⏎").replace("\t", " ")
    s = "".join(ch if ch.isprintable() else f"\\u{ord(ch):04x}" for ch in s)
    return s if len(s) <= MAX_PREVIEW else s[: MAX_PREVIEW - 1] + "…"


_preview = preview


def _rescan_all(decoded: str, depth: int, budget: Budget | None = None, where: int = 0) -> list[Finding]:
    budget = budget if budget is not None else Budget()
    hits = list(rescan(decoded))
    for extra in extra_rescans:
        hits.extend(extra(decoded))
    inner_runs = find_encoded(decoded)
    if inner_runs and depth >= MAX_DEPTH:
        budget.depth_hit = True
        return hits
    for inner in inner_runs:
        if not budget.take(inner, where):
            continue
        nested = _rescan_all(inner.context or inner.text, depth + 1, budget, where)
        if inner.quiet and not nested:
            continue  # a quiet run counts only when what it decodes to triggers a rule
        hits.append(
            Finding(
                inner.rule,
                Severity.ERROR if nested else Severity.WARNING,
                inner.start,
                inner.end,
                f"nested {inner.encoding}",
                category=CATEGORY,
                hidden_text=inner.text,
                data={"decoded_findings": sorted({f.rule for f in nested})},
            )
        )
        hits.extend(nested)
    return hits


def finding_for(d: Decoded, depth: int = 0, hits: list[Finding] | None = None) -> Finding | None:
    """The :class:`Finding` for one decoded run, after rescanning its text (``hits``: the rescan's
    findings when already computed). ``None`` for rot13 that does not read as a directive."""
    if hits is None:
        hits = _rescan_all(d.context or d.text, depth)
    hits = [h for h in hits if h.severity <= Severity.WARNING]
    rule_ids = sorted({h.rule for h in hits})
    text = f'{d.encoding} decoding to "{preview(d.text)}"'
    dropped = d.quiet or d.encoding == "rot13" or (d.rule == "OBF006" and not d.strong)
    if not rule_ids and (dropped or not d.strong):
        # what would be dropped or information only: an encoded instruction is a hidden one
        got = _encoded_instruction(d, text)
        if got is not None:
            return got
    if (d.quiet or d.encoding == "rot13" or (d.rule == "OBF006" and not d.strong)) and not rule_ids:
        # rot13, weakly English reversed text and quiet runs: only where the decoded text reads as a directive
        return None
    if rule_ids:
        named = ", ".join(rule_ids)
        msgs = "; ".join(dict.fromkeys(h.message for h in hits if h.message and not h.message.startswith("nested ")))
        message = f"Encoded instruction: {text}; the decoded text triggers {named}"
        if msgs:
            message += f" ({preview(msgs)})"
        severity = Severity.ERROR
    elif d.executed:
        message = f"Encoded code: {text}; the code around it runs what it decodes ({d.executed})"
        severity = Severity.ERROR
    elif d.obey:
        message = f"Encoded content: {text}; the text next to it tells the model to decode and act on it"
        severity = Severity.ERROR
    else:
        message = f"Encoded content: {text}"
        severity = Severity.WARNING if d.strong else Severity.INFO
    return Finding(
        d.rule,
        severity,
        d.start,
        d.end,
        message,
        category=CATEGORY,
        hidden_text=d.text,
        data={"encoding": d.encoding, "decoded_findings": rule_ids, "keyword": d.keyword},
    )


RULE_ENCODED_INSTRUCTION = "OBF040"
RULE_DECODE_AND_OBEY = "OBF041"


def _encoded_instruction(d: Decoded, text: str) -> Finding | None:
    """OBF041 (error) when the text next to the run says to decode it and act on it and the run
    decodes to words; OBF040 (warning) when the decoded text reads as an English instruction
    (:func:`reads_as_instruction`) outside a URL; ``None`` otherwise (the run keeps its own rule).
    An encoded instruction is a hidden instruction whatever it says: the reader cannot read it,
    the model can."""
    reading = reads_as_instruction(d.text)
    data = {"encoding": d.encoding, "decoded_findings": [], "keyword": d.keyword, "encoded_rule": d.rule}
    if d.obey and (reading is not None or (d.strong and len(_WORD.findall(d.text)) >= 3)):
        return Finding(
            RULE_DECODE_AND_OBEY,
            Severity.ERROR,
            d.start,
            d.end,
            f"Decode-and-obey: the text next to it tells the model to decode and act on {text}",
            category=CATEGORY,
            hidden_text=d.text,
            data={**data, "reading": reading or "text"},
        )
    if reading == "instruction" and not d.in_url:
        return Finding(
            RULE_ENCODED_INSTRUCTION,
            Severity.WARNING,
            d.start,
            d.end,
            f"Encoded instruction (the reader cannot read it, the model can): {text}",
            category=CATEGORY,
            hidden_text=d.text,
            data={**data, "reading": reading},
        )
    return None


@dataclass
class DecodedDocument:
    """The decoded payloads of one document: ``payloads`` pairs each run (offsets mapped to the
    document, code points) with its rescan findings (offsets into the decoded text); ``budget``
    says what the bounds left."""

    payloads: list[tuple[Decoded, list[Finding]]]
    budget: Budget


def decode_document(text: str) -> DecodedDocument:
    """Find, decode and rescan every encoded run of ``text`` (on its model view, so payloads split
    by zero-width characters or carried in tag characters are found), within :data:`MAX_RUNS`,
    :data:`MAX_DECODED_CHARS` and :data:`MAX_DEPTH`. Built once per analysis (by identity of the
    text: :func:`unveil.core.scope.shared`) so the directives and obfuscation checks of one
    analysis decode once. Never raises."""
    return _scope.shared("decoded", text, id(rescan), lambda: _decode_document(text))


def _decode_document(text: str) -> DecodedDocument:
    budget = Budget()
    payloads: list[tuple[Decoded, list[Finding]]] = []
    try:
        from unveil.core.normalize import model_view  # noqa: PLC0415

        view = model_view(text)
    except Exception:  # noqa: BLE001 - fall back to the raw text
        view = None
    vt = text if view is None or view.omap is None else view.text
    token = _DOCUMENT_TEXT.set(vt)
    try:
        found = find_encoded(vt)
    finally:
        _DOCUMENT_TEXT.reset(token)
    for d in found:
        try:
            obey = obey_frame(vt, d.start, d.end)
        except Exception:  # noqa: BLE001
            obey = False
        if view is not None and view.omap is not None:
            d = replace(d, start=view.orig_start(d.start), end=view.orig_end(d.end))
        if obey:
            d = replace(d, obey=True)
        if not budget.take(d, d.start):
            continue
        try:
            hits = _rescan_all(d.context or d.text, 0, budget, d.start)
        except Exception:  # noqa: BLE001
            hits = []
        payloads.append((d, hits))
    return DecodedDocument(payloads, budget)


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def scan_text(text: str) -> list[Finding]:
    """Findings for every encoded run in ``text`` (code-point offsets into ``text``), plus one
    ``OBF009`` warning when a decode bound left runs undecoded or nesting unexplored."""
    doc = decode_document(text)
    out = []
    for d, hits in doc.payloads:
        f = finding_for(d, hits=hits)
        if f is not None:
            out.append(f)
    b = doc.budget
    if b.skipped or b.depth_hit:
        parts = []
        if b.skipped:
            parts.append(
                f"{b.skipped} encoded run(s) from line {_line(text, b.first_skipped or 0)} on were not decoded "
                f"and rescanned (limits: {MAX_RUNS} runs, {MAX_DECODED_CHARS:,} decoded characters per file)"
            )
        if b.depth_hit:
            parts.append(f"encodings nested deeper than {MAX_DEPTH + 1} levels were not decoded further")
        o = b.first_skipped or 0
        out.append(
            Finding(
                LIMIT_RULE,
                Severity.WARNING,
                o,
                o,
                "Decode limit reached: " + "; ".join(parts),
                category=CATEGORY,
                data={"skipped": b.skipped, "depth_hit": b.depth_hit},
            )
        )
    return out


def check(ctx) -> Iterable[Finding]:
    """The obfuscation check over the whole document (prose, code, hidden markup and frontmatter)."""
    return scan_text(ctx.doc.text)
