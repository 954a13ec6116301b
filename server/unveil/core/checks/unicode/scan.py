""":class:`Scan`: one document's text, markdown context (code, frontmatter, right-to-left lines,
instruction-like lines), the candidate pieces and the findings; the rule modules' handlers take
it as their first argument."""

from __future__ import annotations

import bisect
import re
from typing import Iterator

import regex

from unveil.core.checks.unicode.candidates import (
    CANDIDATE,
    DEFAULT_IGNORABLE,
    NO_BREAK_SPACES,
    NON_ASCII,
    RTL_LETTER,
    ascii_control_spans,
    bucket_of,
)
from unveil.core.checks.unicode.messages import codepoint_ids, counted_labels, quote, remove_fix, remove_spans_fix
from unveil.core.findings import Finding, Fix, Severity

_JOINER_CLASS = "\u00ad\u200b\u200c\u200d\u2060\ufeff\u180e"


_JOINERS = re.compile("[" + _JOINER_CLASS + "]")


_WORDISH_L = regex.compile(r"(?r)[A-Za-z0-9_.\-/~$@:" + _JOINER_CLASS + "]*")


_WORDISH_R = regex.compile(r"[A-Za-z0-9_.\-/~$@:" + _JOINER_CLASS + "]*")


class Scan:
    """State for one document: text, context helpers, findings."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.doc = ctx.doc
        self.text = ctx.doc.text
        self.md = ctx.markdown
        self.out: list[Finding] = []
        self._line_cache: dict[int, tuple[int, int, str, bool]] = {}
        self.bidi_cache: dict[int, tuple[set[int], dict[int, int]]] = {}
        self._instr_cache: dict[int, bool] = {}
        self.segments: list[tuple[int, int]] = [(0, len(self.text))]
        self.pieces: list[tuple[int, int, str]] = []
        self.absorbed: set[int] = set()  # starts of pieces already reported with an earlier one
        self.cr_file = False  # lone CR is the file's only line ending (see run_scan())
        self.starts: list[int] = []

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
            info = (s, e, t, RTL_LETTER.search(t) is not None)
            self._line_cache[line] = info
        return info

    def line_is_instruction(self, off: int) -> bool:
        """Whether the line holding ``off``, with Default_Ignorable code points removed (what
        the model reads), is instruction-like per :func:`unveil.core.instruction.classify`.
        Cached per line; very long lines are judged on their first 2,000 characters."""
        line = self.doc.line_of(off)
        verdict = self._instr_cache.get(line)
        if verdict is None:
            text = DEFAULT_IGNORABLE.sub("", self.line_info(off)[2][:2000])
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
        d = {"codepoints": codepoint_ids(self.text[start:end])}
        if data:
            d.update(data)
        if fixes is None:
            fixes = remove_fix(start, end) if fix else ()
        self.out.append(Finding(rule, sev, start, end, message, hidden_text=hidden, fixes=fixes, data=d))

    def following(self, s: int, until: int, bucket: str) -> Iterator[tuple[int, int]]:
        """Pieces of ``bucket`` that start after ``s`` and before ``until``, in order."""
        k = bisect.bisect_right(self.starts, s)
        while k < len(self.pieces) and self.pieces[k][0] < until:
            ps, pe, pb = self.pieces[k]
            if pb == bucket:
                yield ps, pe
            k += 1

    def candidate_pieces(self) -> list[tuple[int, int, str]]:
        """Maximal runs of candidate code points, split where the bucket changes, in order."""
        text = self.text
        spans: list[tuple[int, int]] = ascii_control_spans(text)
        extra = len(text.encode("utf-8", "surrogatepass")) - len(text)
        if extra * 20 > len(text):  # dense non-ASCII text: one pass over everything
            self.segments = [(0, len(text))]
        else:  # mostly ASCII: only look inside the non-ASCII stretches
            self.segments = [m.span() for m in NON_ASCII.finditer(text)]
        for a, b in self.segments:
            spans.extend(c.span() for c in CANDIDATE.finditer(text, a, b))
        # no-break spaces matter only inside code (French typography elsewhere)
        for span in getattr(self.md, "code", None) or ():
            try:
                spans.extend(m.span() for m in NO_BREAK_SPACES.finditer(text, span.start, span.end))
            except (AttributeError, TypeError):
                continue
        spans.sort()
        pieces: list[tuple[int, int, str]] = []
        for s, e in spans:
            i = s
            while i < e:
                bucket = "cr" if text[i] == "\r" else bucket_of(text[i])
                j = i + 1
                if bucket != "cr":
                    while j < e and text[j] != "\r" and bucket_of(text[j]) == bucket:
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

    def split_word(self, rule: str, sev: Severity, spans: list[tuple[int, int]], word: str) -> None:
        """One finding for invisible characters at ``spans`` splitting ``word``: range from the
        first to the last invisible character (the letters between are inside the range), one
        fix with one deletion per span; ``data["codepoints"]`` lists the invisible ones only."""
        chars = "".join(self.text[a:b] for a, b in spans)
        msg = f"{quote(word)} is split by {counted_labels(chars)}: invisible, but it defeats search and keyword review"
        self.emit(
            rule,
            sev,
            spans[0][0],
            spans[-1][1],
            msg,
            hidden=word,
            fixes=remove_spans_fix(spans),
            data={"word": word, "codepoints": codepoint_ids(chars), "count": len(chars)},
        )
