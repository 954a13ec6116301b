"""What a pattern rule's regex can match, read from its parse tree (stdlib ``re`` parser, which
reads the `regex` V0 syntax of the rules the same way):

* :func:`required_literals` — literals every match must contain (the prefilter's clauses);
* :func:`single_line` — whether no match can cross a line break (run on candidate lines only);
* :func:`match_width` — a bound on a match's length in code points (run on windows around the
  literals instead of the whole text).

Pure functions of the pattern source and flags, memoised; each returns "unknown" (``()``,
``False``, ``None``) rather than guess. Used by :mod:`unveil.core.checks.directives`.
"""

from __future__ import annotations

import re
import sys
from functools import lru_cache

import regex

FLAGS = regex.IGNORECASE | regex.MULTILINE | regex.V0
"""The flags every rule pattern is compiled with (``verbose = true`` adds VERBOSE)."""
_FLAGS = FLAGS

# A literal prefilter: most rules need words ("exfiltrate", "webhook.site", ".ssh") that a given
# document does not contain; testing those words with ``str.__contains__`` on the case-folded
# model view is far cheaper than running the `regex` pattern over the whole text.
if sys.version_info >= (3, 11):
    from re import _constants as _sre_c
    from re import _parser as _sre_parse
else:  # Python 3.10
    import sre_constants as _sre_c
    import sre_parse as _sre_parse

# `regex`-only syntax that the stdlib parser would misread as literals (fuzzy "{e<=1}", POSIX
# classes "[[:alpha:]]", branch reset, version/full-case/reverse flags, \p{..}, \K …): no prefilter for these.
# (An escape counts only after an even run of backslashes: ``\\Programs`` is a backslash and "P".)
_NO_PREFILTER = regex.compile(r"\{[^}]*[<>=]|\[\[:|\(\?\||\(\?[a-zA-Z]*[Vfr]|(?<!\\)(?:\\\\)*\\[pPXmMGKNhL]")
_REPEATS = tuple(getattr(_sre_c, n) for n in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") if hasattr(_sre_c, n))
_ATOMIC = getattr(_sre_c, "ATOMIC_GROUP", None)


@lru_cache(maxsize=1024)
def _parse(pattern: str, flags: int):
    """The stdlib parse of ``pattern`` (shared by the analyses below; raises on error)."""
    return _sre_parse.parse(pattern, (re.VERBOSE if flags & regex.VERBOSE else 0) | re.IGNORECASE | re.MULTILINE)


def _best_clause(clauses: list[frozenset[str]]) -> frozenset[str]:
    return max(clauses, key=lambda c: (min(map(len, c)), -len(c)))


def _clauses(items) -> list[frozenset[str]]:
    """Conjunctive normal form of the literals a match of the parsed sequence ``items`` contains:
    each clause is a set of case-folded strings of which at least one occurs in the match."""
    clauses: list[frozenset[str]] = []
    run: list[str] = []

    def flush():
        if run:
            s = "".join(run).casefold()
            if s.strip():
                clauses.append(frozenset([s]))
            run.clear()

    for op, av in items:
        if op is _sre_c.LITERAL:
            run.append(chr(av))
            continue
        if op is _sre_c.AT:  # zero-width anchors keep neighbouring literals adjacent
            continue
        flush()
        if op is _sre_c.SUBPATTERN:
            clauses += _clauses(av[-1])
        elif _ATOMIC is not None and op is _ATOMIC:
            clauses += _clauses(av)
        elif op in _REPEATS:
            if av[0] >= 1:
                clauses += _clauses(av[2])
        elif op is _sre_c.BRANCH:
            alts: set[str] = set()
            for branch in av[1]:
                sub = _clauses(branch)
                if not sub:
                    alts = set()
                    break
                alts |= _best_clause(sub)
            if alts:
                clauses.append(frozenset(alts))
        elif op is _sre_c.IN:
            lits = [chr(a) for o, a in av if o is _sre_c.LITERAL]
            if lits and len(lits) == len(av) and len(lits) <= 4:
                clauses.append(frozenset(c.casefold() for c in lits))
        # Anything else (any char, classes, lookarounds, back-references) requires no literal.
    flush()
    return clauses


@lru_cache(maxsize=4096)
def required_literals(pattern: str, flags: int = 0) -> tuple[frozenset[str], ...]:
    """Literals that any match of ``pattern`` (compiled case-insensitively) must contain, as a
    tuple of clauses: every clause has at least one member (a case-folded string) occurring in
    the match. The most selective clauses come first. ``()`` when nothing is known (the
    pattern then always runs); never raises. Parsed with the stdlib ``re`` parser, which reads
    the `regex` V0 syntax used by the rules the same way; `regex`-only syntax is left alone."""
    try:
        if _NO_PREFILTER.search(pattern):
            return ()
        parsed = _parse(pattern, flags)
        clauses = set(_clauses(list(parsed)))
    except Exception:  # noqa: BLE001 - any doubt: no prefilter
        return ()
    return tuple(sorted(clauses, key=lambda c: (-min(map(len, c)), len(c), sorted(c))))


def _starts(items) -> set[str] | None:
    """Strings one of which every match of the parsed sequence ``items`` starts with (after
    zero-width anchors and lookarounds): its first consuming item's literal run, the union over
    the branches of an alternation, a small literal class; ``None`` when a match may start
    otherwise."""
    for idx, (op, av) in enumerate(items):
        if op is _sre_c.AT or op in (_sre_c.ASSERT, _sre_c.ASSERT_NOT):
            continue  # zero-width: the match starts at the next consuming item
        if op is _sre_c.LITERAL:
            run = []
            for op2, av2 in items[idx:]:
                if op2 is _sre_c.LITERAL:
                    run.append(chr(av2))
                elif op2 is not _sre_c.AT:
                    break
            return {"".join(run)}
        if op is _sre_c.SUBPATTERN:
            return _starts(list(av[-1]))
        if _ATOMIC is not None and op is _ATOMIC:
            return _starts(list(av))
        if op in _REPEATS:
            return _starts(list(av[2])) if av[0] >= 1 else None
        if op is _sre_c.BRANCH:
            out: set[str] = set()
            for branch in av[1]:
                got = _starts(list(branch))
                if got is None:
                    return None
                out |= got
            return out
        if op is _sre_c.IN:
            lits = [chr(a) for o, a in av if o is _sre_c.LITERAL]
            return set(lits) if lits and len(lits) == len(av) and len(lits) <= 4 else None
        return None
    return None


@lru_cache(maxsize=4096)
def start_literals(pattern: str, flags: int = 0) -> frozenset[str] | None:
    """Case-folded strings one of which every match of ``pattern`` starts with (its first
    consuming element, after zero-width assertions, is a literal, an alternation of literals or a
    small literal class), so a search need only try the positions where one of them occurs in
    the case-folded text; ``None`` when a match may start otherwise or when unsure (`regex`-only
    syntax, a parse error). Never raises."""
    try:
        if _NO_PREFILTER.search(pattern) or _FLAG_CHANGE.search(pattern):
            return None
        # parsed without :func:`_parse`'s cache: this runs while documents are analysed, and the
        # parse trees (about 1.5 MiB for the bundled rules) would stay in memory for nothing
        parsed = _sre_parse.parse(pattern, (re.VERBOSE if flags & regex.VERBOSE else 0) | re.IGNORECASE | re.MULTILINE)
        got = _starts(list(parsed.data))
    except Exception:  # noqa: BLE001 - any doubt: search everywhere
        return None
    if not got or not all(got):
        return None
    return frozenset(s.casefold() for s in got)


_NL = ord("\n")
_SPACE_LIKE = {
    "CATEGORY_SPACE",
    "CATEGORY_NOT_DIGIT",
    "CATEGORY_NOT_WORD",
    "CATEGORY_LINEBREAK",
    "CATEGORY_UNI_SPACE",
    "CATEGORY_UNI_NOT_DIGIT",
    "CATEGORY_UNI_NOT_WORD",
    "CATEGORY_UNI_LINEBREAK",
    "CATEGORY_LOC_NOT_WORD",
}
_NO_NL = {
    "CATEGORY_DIGIT",
    "CATEGORY_NOT_SPACE",
    "CATEGORY_WORD",
    "CATEGORY_NOT_LINEBREAK",
    "CATEGORY_UNI_DIGIT",
    "CATEGORY_UNI_NOT_SPACE",
    "CATEGORY_UNI_WORD",
    "CATEGORY_UNI_NOT_LINEBREAK",
    "CATEGORY_LOC_WORD",
}


def _name(code) -> str:
    return getattr(code, "name", None) or str(code)


def _class_has_newline(items) -> bool:
    negate = False
    has = False
    for op, av in items:
        if op is _sre_c.NEGATE:
            negate = True
        elif op is _sre_c.LITERAL:
            has = has or av == _NL
        elif op is _sre_c.RANGE:
            has = has or av[0] <= _NL <= av[1]
        elif op is _sre_c.CATEGORY and _name(av) in _SPACE_LIKE:
            has = True
        elif op is _sre_c.CATEGORY and _name(av) in _NO_NL:
            pass
        else:
            raise ValueError("unknown class item")
    return has != negate


def _no_newline(items, dotall: bool) -> bool:
    """Whether nothing in the parsed ``items`` can consume a line feed."""
    for op, av in items:
        if op is _sre_c.LITERAL:
            if av == _NL:
                return False
        elif op is _sre_c.NOT_LITERAL:
            if av != _NL:
                return False
        elif op is _sre_c.ANY:
            if dotall:
                return False
        elif op is _sre_c.IN:
            if _class_has_newline(av):
                return False
        elif op is _sre_c.AT:
            if _name(av) in ("AT_BEGINNING_STRING", "AT_END_STRING"):
                return False
        elif op is _sre_c.SUBPATTERN:
            add, rem = av[1], av[2]
            sub_dotall = (dotall or bool(add & re.DOTALL)) and not (rem & re.DOTALL)
            if not _no_newline(av[-1], sub_dotall):
                return False
        elif _ATOMIC is not None and op is _ATOMIC:
            if not _no_newline(av, dotall):
                return False
        elif op in _REPEATS:
            if not _no_newline(av[2], dotall):
                return False
        elif op is _sre_c.BRANCH:
            if not all(_no_newline(b, dotall) for b in av[1]):
                return False
        elif op in (_sre_c.ASSERT, _sre_c.ASSERT_NOT):
            if not _no_newline(av[1], dotall):
                return False
        elif op is _sre_c.GROUPREF:
            pass  # repeats a group that itself cannot hold a line feed
        else:
            return False
    return True


@lru_cache(maxsize=4096)
def single_line(pattern: str, flags: int = 0) -> bool:
    """Whether no match of ``pattern`` (compiled with MULTILINE, without DOTALL), nor any of
    its lookarounds, can consume a line feed: its matches then lie within one line and it finds
    the same matches when run line by line (``pos``/``endpos``, the line feed included).
    ``False`` when unsure; never raises."""
    try:
        if _NO_PREFILTER.search(pattern) or "(?-" in pattern or "(?^" in pattern or flags & regex.DOTALL:
            return False
        parsed = _parse(pattern, flags)
        return _no_newline(list(parsed), bool(parsed.state.flags & re.DOTALL))
    except Exception:  # noqa: BLE001 - any doubt: whole text
        return False


# Bounded match width: a pattern whose matches are at most W code points long and contain a
# required literal can only match near an occurrence of that literal, so it may run on windows
# around those occurrences instead of the whole text. An unbounded repeat of one character class
# is bounded per document by the longest run of characters of that class (a class within `\s`
# by the longest whitespace run, one without whitespace by the longest run of `\S`, one without
# a line feed by the longest line; others by their own longest run). A width is a dict
# {class source: coefficient} with "" for the constant: sum(coef * longest run) code points.
# ``None`` = unbounded.
_MAXREPEAT = _sre_c.MAXREPEAT
_SPACE_CATS = {"CATEGORY_SPACE", "CATEGORY_UNI_SPACE"}
_CAT_SRC = {
    "CATEGORY_DIGIT": r"\d",
    "CATEGORY_NOT_DIGIT": r"\D",
    "CATEGORY_SPACE": r"\s",
    "CATEGORY_NOT_SPACE": r"\S",
    "CATEGORY_WORD": r"\w",
    "CATEGORY_NOT_WORD": r"\W",
}
_CAT_SRC.update({k.replace("CATEGORY_", "CATEGORY_UNI_"): v for k, v in list(_CAT_SRC.items())})
_NO_WS_CATS = {
    "CATEGORY_DIGIT",
    "CATEGORY_NOT_SPACE",
    "CATEGORY_WORD",
    "CATEGORY_UNI_DIGIT",
    "CATEGORY_UNI_NOT_SPACE",
    "CATEGORY_UNI_WORD",
}
_WS = regex.compile(r"\s", _FLAGS)
_WS_RUN = regex.compile(r"\s+", _FLAGS)
_WS_CHARS = frozenset(ord(c) for c in _WS.findall("".join(map(chr, range(0x3100)))))
"""Every code point `regex` ``\\s`` matches (all White_Space characters are below U+3100)."""
_LINE = r"[^\n]"
LINE = _LINE
"""The class of a run bounded by the longest line (see :func:`match_width`)."""


def _w_add(a, b):
    if a is None or b is None:
        return None
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + v
    return out


def _w_max(a, b):
    if a is None or b is None:
        return None
    out = dict(a)
    for k, v in b.items():
        out[k] = max(out.get(k, 0), v)
    return out


def _char_item(op, av, dotall: bool) -> tuple[str, bool, bool, bool] | None:
    """For the one-character item ``(op, av)``: ``(regex source, only whitespace, no
    whitespace, no line feed)``, or ``None`` when unknown."""
    if op is _sre_c.LITERAL:
        return "\\U%08x" % av, av in _WS_CHARS, av not in _WS_CHARS, av != _NL
    if op is _sre_c.NOT_LITERAL:
        return "[^\\U%08x]" % av, False, False, av == _NL
    if op is _sre_c.ANY:
        return None if dotall else (".", False, False, True)
    if op is not _sre_c.IN:
        return None
    parts: list[str] = []
    negate = False
    for o, a in av:
        if o is _sre_c.NEGATE and not parts:
            negate = True
            parts.append("^")
        elif o is _sre_c.LITERAL:
            parts.append("\\U%08x" % a)
        elif o is _sre_c.RANGE:
            parts.append("\\U%08x-\\U%08x" % a)
        elif o is _sre_c.CATEGORY and _name(a) in _CAT_SRC:
            parts.append(_CAT_SRC[_name(a)])
        else:
            return None
    items = [(o, a) for o, a in av if o is not _sre_c.NEGATE]
    ws_only = not negate and all(
        (o is _sre_c.LITERAL and a in _WS_CHARS) or (o is _sre_c.CATEGORY and _name(a) in _SPACE_CATS) for o, a in items
    )
    if negate:
        no_ws = any(o is _sre_c.CATEGORY and _name(a) in _SPACE_CATS for o, a in items)
    else:
        no_ws = all(
            (o is _sre_c.LITERAL and a not in _WS_CHARS)
            or (o is _sre_c.RANGE and not any(a[0] <= c <= a[1] for c in _WS_CHARS))
            or (o is _sre_c.CATEGORY and _name(a) in _NO_WS_CATS)
            for o, a in items
        )
    return "[" + "".join(parts) + "]", ws_only, no_ws, not _class_has_newline(av)


def _alphabet(items, dotall: bool, out: list) -> bool:
    """Append to ``out`` the :func:`_char_item` of every character the parsed ``items`` can
    consume (lookarounds consume nothing); ``False`` when unknown."""
    for op, av in items:
        if op is _sre_c.AT or op in (_sre_c.ASSERT, _sre_c.ASSERT_NOT):
            continue
        if op is _sre_c.SUBPATTERN:
            add, rem = av[1], av[2]
            if not _alphabet(av[-1], (dotall or bool(add & re.DOTALL)) and not (rem & re.DOTALL), out):
                return False
        elif _ATOMIC is not None and op is _ATOMIC:
            if not _alphabet(av, dotall, out):
                return False
        elif op in _REPEATS:
            if not _alphabet(av[2], dotall, out):
                return False
        elif op is _sre_c.BRANCH:
            if not all(_alphabet(b, dotall, out) for b in av[1]):
                return False
        else:
            info = _char_item(op, av, dotall)
            if info is None:
                return False
            out.append((*info, (op, av)))
    return True


def _run_key(items, dotall: bool) -> str | None:
    """Class whose longest run bounds an unbounded repeat of the parsed ``items``: ``\\s``
    when they consume only whitespace, ``\\S`` when no whitespace, ``[^\\n]`` when no line
    feed, else the union of the characters they consume (``None`` when unknown)."""
    chars: list = []
    if not _alphabet(items, dotall, chars) or not chars:
        return None
    if all(c[1] for c in chars):
        return r"\s"
    if all(c[2] for c in chars):
        return r"\S"
    if all(c[3] for c in chars):
        return _LINE
    # A longest-run scan of an arbitrary class costs about as much as running the pattern, so
    # only two more shared classes: word characters and whitespace, and non-word characters.
    if all(_in_class(c[4][0], c[4][1], _WORD_OR_WS) for c in chars):
        return r"[\s\w]"
    if all(_in_class(c[4][0], c[4][1], _NON_WORD) for c in chars):
        return r"\W"
    if all(_in_class(c[4][0], c[4][1], _NON_WORD, _UNDERSCORE) for c in chars):
        return r"[\W_]"  # markdown lead-ins: "^[\s>*_-]*", "[\s*_#>-]*"
    if all(_in_class(c[4][0], c[4][1], _WORD_OR_WS, _HYPHEN) for c in chars):
        return r"[\s\w-]"  # options: "sudo -u x -H cmd", "(?:-\w+\s+)*"
    return None


_HYPHEN = frozenset({ord("-")})
_UNDERSCORE = frozenset({ord("_")})


_WORD_OR_WS = regex.compile(r"[\s\w]", _FLAGS)
_NON_WORD = regex.compile(r"\W", _FLAGS)
_WORDS = {"CATEGORY_WORD", "CATEGORY_UNI_WORD", "CATEGORY_DIGIT", "CATEGORY_UNI_DIGIT"}


def _in_class(op, av, cls, extra: frozenset[int] = frozenset()) -> bool:
    """Whether every character the one-character item ``(op, av)`` matches (case variants
    included: only letters have them, and they are letters too) is matched by ``cls``
    (``_WORD_OR_WS``: ``[\\s\\w]``; ``_NON_WORD``: ``\\W``) or is one of ``extra`` (code
    points without case variants)."""
    word = cls is _WORD_OR_WS

    def char_ok(c: int) -> bool:
        if c in extra:
            return True
        m = (
            _WORD_OR_WS.match(chr(c)) is not None
            if word
            else (_WS.match(chr(c)) is not None or regex.match(r"\w", chr(c)) is None)
        )
        return m

    if op is _sre_c.LITERAL:
        return char_ok(av)
    if op is not _sre_c.IN:
        return False
    if any(o is _sre_c.NEGATE for o, _ in av):
        return not word and any(
            o is _sre_c.CATEGORY and _name(a) in ("CATEGORY_WORD", "CATEGORY_UNI_WORD") for o, a in av
        )
    for o, a in av:
        if o is _sre_c.LITERAL:
            if not char_ok(a):
                return False
        elif o is _sre_c.RANGE:
            if a[1] - a[0] > 4096 or not all(char_ok(c) for c in range(a[0], a[1] + 1)):
                return False
        elif o is _sre_c.CATEGORY:
            if not (
                _name(a) in (_WORDS | _SPACE_CATS)
                if word
                else _name(a) in _SPACE_CATS | {"CATEGORY_NOT_WORD", "CATEGORY_UNI_NOT_WORD"}
            ):
                return False
        else:
            return False
    return True


def _width(items, dotall: bool, ahead: bool) -> dict[str, int] | None:
    """Most code points a match of the parsed ``items`` consumes (``ahead``: or reads, counting
    lookahead contents as consumed), as a width dict, or ``None``."""
    total: dict | None = {}
    for op, av in items:
        w: dict[str, int] | None
        if op in (_sre_c.LITERAL, _sre_c.NOT_LITERAL, _sre_c.ANY, _sre_c.IN):
            w = {"": 1}
        elif op is _sre_c.AT:
            w = {}
        elif op is _sre_c.SUBPATTERN:
            add, rem = av[1], av[2]
            w = _width(av[-1], (dotall or bool(add & re.DOTALL)) and not (rem & re.DOTALL), ahead)
        elif _ATOMIC is not None and op is _ATOMIC:
            w = _width(av, dotall, ahead)
        elif op in _REPEATS:
            lo, hi, sub = av
            if hi >= _MAXREPEAT:
                key = _run_key(sub, dotall)
                w = None if key is None else {key: 1, "": 1 if ahead else 0}
            else:
                one = _width(sub, dotall, ahead)
                w = None if one is None else {k: v * hi for k, v in one.items()}
        elif op is _sre_c.BRANCH:
            w = {}
            for b in av[1]:
                w = _w_max(w, _width(b, dotall, ahead))
        elif op in (_sre_c.ASSERT, _sre_c.ASSERT_NOT):
            w = _width(av[1], dotall, ahead) if (ahead and av[0] == 1) else {}
        else:  # back-references, conditionals, anything unknown
            return None
        total = _w_add(total, w)
        if total is None:
            return None
    return total


_FLAG_CHANGE = regex.compile(r"\(\?\^|\(\?[a-zA-Z]*-(?![im]*[:)])")
"""A scoped flag change that :func:`match_width` does not bound: ``(?^…)`` and a removal of any
flag but ``i`` or ``m``. Removing ``i`` only narrows a class (the runs, computed case-blind, still
bound it) and ``m`` only moves the anchors, which consume nothing; a removed ``s`` or ``x`` would
change what ``.`` or the parse means."""


@lru_cache(maxsize=4096)
def match_width(pattern: str, flags: int = 0):
    """``(width, reach)`` of ``pattern``: the most code points a match consumes and the most
    it reads from its start (lookaheads included), each a tuple of ``(class source,
    coefficient)`` pairs meaning sum(coefficient * longest run of that class in the document)
    (class ``""``: 1); ``None`` when unbounded or unsure. Never raises."""
    try:
        if _NO_PREFILTER.search(pattern) or _FLAG_CHANGE.search(pattern) or flags & regex.DOTALL:
            return None
        parsed = _parse(pattern, flags)
        dotall = bool(parsed.state.flags & re.DOTALL)
        items = list(parsed)
        w, r = _width(items, dotall, False), _width(items, dotall, True)
        if w is None or r is None:
            return None
        for k in [*w, *r]:
            if k:
                regex.compile(k, _FLAGS)
    except Exception:  # noqa: BLE001 - any doubt: whole text
        return None
    return tuple(sorted(w.items())), tuple(sorted(r.items()))


# How far before its start a match reads: only lookbehinds read text before the position a match
# starts at (a lookbehind at offset q of a match reads [q - its width, q), q >= the match start;
# one nested in another reads further back by the outer one's width). A search from ``pos`` then
# reads nothing before ``pos - lookbehind_reach - 1`` (the extra code point: ``\b``, ``\B`` and a
# multiline ``^`` look at the character before the farthest point a lookbehind reaches).
_LEAVES = frozenset(
    op
    for op in (
        _sre_c.LITERAL,
        _sre_c.NOT_LITERAL,
        _sre_c.ANY,
        _sre_c.IN,
        _sre_c.AT,
        _sre_c.CATEGORY,
        _sre_c.GROUPREF,
    )
)


def _reach(items) -> int | None:
    """Most code points the lookbehinds of the parsed ``items`` read before the match start
    (0 without lookbehinds), or ``None`` when unbounded or unsure."""
    best = 0
    for op, av in items:
        if op in (_sre_c.ASSERT, _sre_c.ASSERT_NOT):
            direction, sub = av
            r = _reach(sub)
            if r is None:
                return None
            if direction < 0:
                hi = sub.getwidth()[1]
                if hi >= _MAXREPEAT - 1:
                    return None
                r += hi
            best = max(best, r)
            continue
        if op in _LEAVES:
            continue
        if op is _sre_c.SUBPATTERN:
            subs = [av[-1]]
        elif _ATOMIC is not None and op is _ATOMIC:
            subs = [av]
        elif op in _REPEATS:
            subs = [av[2]]
        elif op is _sre_c.BRANCH:
            subs = av[1]
        elif op is _sre_c.GROUPREF_EXISTS:
            subs = [s for s in av[1:] if s is not None]
        else:  # anything unknown
            return None
        for s in subs:
            r = _reach(s)
            if r is None:
                return None
            best = max(best, r)
    return best


def _reach_width(items, dotall: bool) -> dict[str, int] | None:
    """:func:`_reach` as a width dict (see :func:`match_width`): the most code points the
    lookbehinds of the parsed ``items`` read before the match start, with an unbounded repeat
    bounded by the longest run of its class; ``None`` when unknown."""
    best: dict[str, int] | None = {}
    for op, av in items:
        if op in (_sre_c.ASSERT, _sre_c.ASSERT_NOT):
            direction, sub = av
            r = _reach_width(sub, dotall)
            if direction < 0:
                r = _w_add(r, _width(sub, dotall, False))
            best = _w_max(best, r)
        elif op in _LEAVES:
            continue
        else:
            if op is _sre_c.SUBPATTERN:
                add, rem = av[1], av[2]
                subs, d = [av[-1]], (dotall or bool(add & re.DOTALL)) and not (rem & re.DOTALL)
            elif _ATOMIC is not None and op is _ATOMIC:
                subs, d = [av], dotall
            elif op in _REPEATS:
                subs, d = [av[2]], dotall
            elif op is _sre_c.BRANCH:
                subs, d = av[1], dotall
            elif op is _sre_c.GROUPREF_EXISTS:
                subs, d = [s for s in av[1:] if s is not None], dotall
            else:  # anything unknown
                return None
            for s in subs:
                best = _w_max(best, _reach_width(s, d))
        if best is None:
            return None
    return best


@lru_cache(maxsize=4096)
def reach_bound(pattern: str, flags: int = 0) -> int | tuple[tuple[str, int], ...] | None:
    """How far before its start a match of ``pattern`` reads: :func:`lookbehind_reach` (an
    ``int``, code points) when that is known; else, for a variable-width lookbehind such as
    ``(?<=^[\\s>*_-]*)``, a tuple of ``(class source, coefficient)`` pairs as in
    :func:`match_width` (sum(coefficient * longest run of that class in the searched text)
    code points); ``None`` when unbounded or unsure. Never raises."""
    r = lookbehind_reach(pattern, flags)
    if r is not None:
        return r
    try:
        if _NO_PREFILTER.search(pattern) or _FLAG_CHANGE.search(pattern) or flags & regex.DOTALL:
            return None
        parsed = _parse(pattern, flags)
        w = _reach_width(list(parsed), bool(parsed.state.flags & re.DOTALL))
        if w is None:
            return None
        for k in w:
            if k:
                regex.compile(k, _FLAGS)
    except Exception:  # noqa: BLE001 - any doubt: no memo
        return None
    return tuple(sorted(w.items()))


@lru_cache(maxsize=4096)
def lookbehind_reach(pattern: str, flags: int = 0) -> int | None:
    """The most code points a match of ``pattern`` reads before its start (through
    lookbehinds, nested ones added up): a search from ``pos`` then depends on no text before
    ``pos - lookbehind_reach(…) - 1``. ``None`` when unbounded (a variable-width `regex`
    lookbehind such as ``(?<=^\\s*)``) or unsure (`regex`-only syntax, ``\\G``, a scoped flag
    change, a parse error). Never raises."""
    try:
        if _NO_PREFILTER.search(pattern) or _FLAG_CHANGE.search(pattern):
            return None
        return _reach(list(_parse(pattern, flags)))
    except Exception:  # noqa: BLE001 - any doubt: no memo
        return None
