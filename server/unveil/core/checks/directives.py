r"""Pattern rules from ``rules/*.toml``: risky directives judged in context.

Every rule whose table says ``check = "directives"`` is run by this module. The rule file format
(TOML, one file per category, loaded by :mod:`unveil.core.rules`; keys other than the common ones
are read from ``Rule.raw``)::

    category = "data-exfiltration"

    [[rule]]
    id = "EXF001"            # 3-letter category prefix + 3 digits (see below); stable, never renumbered
    name = "kebab-name"
    severity = "error"       # error | warning | info | hint: the severity of a plain imperative hit
    check = "directives"
    summary = "one line"
    description = '''markdown: what, why, how to fix'''
    references = ["https://…"]
    applies = ["prose", "hidden", "code"]   # regions where it may fire; default these three.
                             # Also "frontmatter" (the YAML block incl. fences). Region of a hit is
                             # the first of: hidden > frontmatter > code > prose.
    kinds = ["*"]            # file kind ids (unveil.core.kinds) or "*" (default)
    patterns = ['''regex''', ...]
                             # `regex` module syntax, compiled IGNORECASE (+ VERBOSE if verbose = true)
                             # and MULTILINE. Matched on the *normalised reading*
                             # (unveil.core.normalize: emphasis stripped, soft wraps joined,
                             # character references and escapes decoded, NFKC, zalgo and
                             # invisibles dropped, confusables folded); secrets rules and patterns
                             # naming `*`, a backtick, `&#`, `%XX` or `\x` also on the model view.
                             # Ranges map back exactly to the original text. Decoded payloads
                             # (base64, hex, rot13 …) are rescanned with every rule and their hits
                             # reported at the encoded span.
                             # A named group `hit` narrows the reported range (e.g. to a YAML value);
                             # `\K` works too. Keep patterns linear: bounded repeats ({0,80}), no
                             # nested quantifiers.
    requires = ['''regex''']  # optional: every one must also match in the same sentence (a line in
                             # code blocks and frontmatter) — co-occurrence
    excludes = ['''regex''']  # optional: a hit whose sentence matches any of these is not a finding
                             # (pattern precision, e.g. a well-known safe host; not for context)
    verbose = false
    message = "text with {match}"   # {match} = matched text, whitespace collapsed, ≤ 80 chars
    combo = "input"          # optional: role in the combination post-pass: "input" (untrusted input /
                             # injection), "secrets" (credential or private-data access), "egress"
                             # (sending data out). Default from the category: prompt-injection →
                             # input; agent-snooping, secrets → secrets; data-exfiltration → egress.
    floor = "warning"        # optional: context never lowers a hit below this severity (a rule
                             # whose own severity is lower keeps it). Default from the category:
                             # data-exfiltration, concealment → warning; download-and-run rules
                             # (SUP001-003, SUP007, OBF005) set it. See docs/context.md.

    [rule.context]           # optional; defaults shown
    prohibition = "lower"    # "never run curl | sh", "`curl | sh` is forbidden" → lowered
    denylist = "lower"       # an item of a list led in by "Never:" / "Avoid:" (its own lead-in line,
                             # not a heading) or in a permissions deny array
    quoted = "lower"         # quoted/inline-code with "e.g."/"such as"/"detect"/"flag"… in the same
                             # sentence, or a code block whose own caption (the line just before
                             # the fence, or its info string) introduces examples
    code = "keep"            # "lower": any hit inside code is lowered (prose-like rules)
    hidden = "raise"         # hits in hidden text (HTML comments, [//]: # comments, tag payloads)
                             # go up one step; "keep" to disable
    raise_if = ['''regex''']  # any matching the sentence raises one step (e.g. "silently")
    lower_if = ['''regex''']  # any matching the sentence lowers (like a prohibition)

    [[rule.bad]]             # must fire, starting on this 1-based line (any severity)
    text = "…"
    line = 1
    path = "SKILL.md"        # optional file name the example is analysed as
    [[rule.good]]            # must produce no finding of this rule at all
    text = "…"

Prefixes: PIN prompt-injection, REF anti-refusal, CON concealment, EXF data-exfiltration,
PRV privilege-escalation, SUP supply-chain, SNP agent-snooping, LEK system-prompt-leakage,
SRF ssrf, AGY excessive-agency, SEC secrets, PER persistence, OBF obfuscation.

Severity in context (see :mod:`unveil.core.context`): lowering is one level (error → info,
warning → hint); raising one step (hint → info → warning → error). A lowered hit is still
reported, with the reason in its message. Combination post-pass: when one file has an "input",
a "secrets" and an "egress" finding at warning or above, each of those gets "(combined with …)"
appended and becomes an error.

Patterns run with a time bound (:func:`pattern_timeout`: :data:`PATTERN_TIMEOUT` seconds per
pattern, plus :data:`TIMEOUT_PER_MB` per MB for large documents; the `regex` module's
``timeout=``). On timeout the check emits ``UNV002`` naming the rule and where it may have
missed text, so nothing is skipped silently. A rule with an invalid
pattern is not loaded; :func:`load_pattern_rules` reports it in ``errors`` naming the file and the
rule, and the other rules keep working.
"""

from __future__ import annotations

import heapq
import logging
import time
import weakref
from array import array
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import regex

from unveil.core import context as cx
from unveil.core import folding as _folding
from unveil.core import rxcache
from unveil.core import scope as _scope
from unveil.core.checks import obfuscation
from unveil.core.checks.literal_index import MEMO_MAX_TEXT as _MEMO_MAX_TEXT
from unveil.core.checks.literal_index import WINDOW_MIN_TEXT as _WINDOW_MIN_TEXT
from unveil.core.checks.literal_index import Lines as _Lines
from unveil.core.checks.literal_index import LiteralIndex as _LiteralIndex
from unveil.core.checks.literal_index import MatchMemo as _MatchMemo
from unveil.core.checks.literal_index import digest as _span_digest
from unveil.core.checks.literal_index import in_spans as _in_spans
from unveil.core.checks.literal_index import in_windows as _in_windows
from unveil.core.checks.literal_index import may_match as _may_match
from unveil.core.checks.literal_index import records as _records
from unveil.core.checks.literal_index import word_index as _word_index
from unveil.core.checks.pattern_analysis import (  # noqa: F401
    lookbehind_reach,
    match_width,
    reach_bound,
    required_literals,
    single_line,
    start_literals,
)
from unveil.core.checks.splice import EMPTY as _EMPTY_ENTRY
from unveil.core.checks.splice import Session as _SpliceSession
from unveil.core.checks.splice import SpliceLog as _SpliceLog
from unveil.core.checks.splice import carried_absent as _carried_absent
from unveil.core.checks.splice import casefolded as _casefolded
from unveil.core.checks.splice import entry as _splice_entry
from unveil.core.checks.splice import splice as _splice
from unveil.core.findings import Finding, Severity
from unveil.core.rules import Rule, RuleSet, bundled_rules, load_rule_files

log = logging.getLogger(__name__)

CHECK_NAME = "directives"
TIMEOUT_RULE = "UNV002"
PATTERN_TIMEOUT = 0.25
"""Seconds allowed per pattern per document of up to 100 KB (wall clock, `regex` ``timeout=``)."""
TIMEOUT_PER_MB = 1.0
"""Extra seconds per pattern for each MB of text beyond the first 100 KB: a linear pattern
needs time in proportion to the text, so a fixed bound would cut it off on a large file (a
padded 10 MB file would hide its payload from every rule); a catastrophic pattern still stops."""


USER_BUDGET_S = 2.0
"""Most seconds all user (non-bundled) patterns together may take on one file; the rest of the user
patterns are then skipped for that file with one ``UNV023`` finding."""
DISABLE_AFTER = 3
"""A pattern that timed out on this many files is disabled for the rest of the run (process):
each later file gets one ``UNV024`` finding, and the disabling is logged once."""
_timeouts: dict[tuple[str, str], int] = {}


_BUNDLED_DIR: list[str] = []


def _is_user(pr) -> bool:
    if not _BUNDLED_DIR:
        from unveil.core.rules import bundled_rules_dir

        _BUNDLED_DIR.append(str(bundled_rules_dir()))
    src = str(pr.rule.source or "")
    return bool(src) and not src.startswith(_BUNDLED_DIR[0])


def pattern_timeout(n_chars: int) -> float:
    """Time bound (seconds) for one pattern over a document of ``n_chars`` code points."""
    return PATTERN_TIMEOUT + max(0, n_chars - 100_000) / 1_000_000 * TIMEOUT_PER_MB


REGIONS = ("prose", "hidden", "code", "frontmatter")
DEFAULT_APPLIES = ("prose", "hidden", "code")
COMBO_DEFAULTS = {
    "prompt-injection": "input",
    "agent-snooping": "secrets",
    "secrets": "secrets",
    "data-exfiltration": "egress",
}
_FLAGS = regex.IGNORECASE | regex.MULTILINE | regex.V0


@dataclass
class PatternRule:
    """A compiled rule: the metadata plus compiled patterns and context options."""

    rule: Rule
    patterns: list
    requires: list
    excludes: list
    applies: frozenset[str]
    kinds: frozenset[str]
    message: str
    options: cx.ContextOptions
    raise_if: list
    lower_if: list
    combo: str | None
    prefilters: list = field(default_factory=list)
    """Per pattern (same order as ``patterns``): the literals a match needs (see
    :func:`required_literals`); empty = always run the pattern."""
    widths: list = field(default_factory=list)
    """Per pattern: its :func:`match_width` (``None``: unbounded, run on the whole text)."""
    single_line: list = field(default_factory=list)
    """Per pattern: ``True`` when no match (lookarounds included) can cross a line break (see
    :func:`single_line`), so the pattern may run on candidate lines only."""
    reaches: list = field(default_factory=list)
    """Per pattern: its :func:`reach_bound` (code points, or class runs for a variable-width
    lookbehind; ``None``: unknown, its matches are not memoised)."""
    raw_too: bool | None = None
    """Whether the rule also runs on the model view (:func:`needs_raw`; computed on first use)."""

    @property
    def id(self) -> str:
        return self.rule.id


@dataclass
class PatternRules:
    """Compiled pattern rules and the problems met compiling them (one line each, naming the
    file and the rule)."""

    rules: list[PatternRule] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def _strings(value, what: str, rid: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"rule {rid}: '{what}' must be a list of strings")
    return list(value)


def _compile_list(items: Sequence[str], flags: int, what: str, rid: str) -> list:
    out = []
    for i, pat in enumerate(items):
        try:
            with rxcache.recording():  # rule patterns: kept in the compiled-pattern cache
                out.append(regex.compile(pat, flags))
        except (regex.error, TypeError, ValueError, OverflowError, RecursionError) as exc:
            raise ValueError(f"rule {rid}: invalid {what}[{i}] {pat!r}: {exc}") from None
    return out


class _LazyPattern:
    """A `regex` pattern compiled on first use: ``pattern`` and ``flags`` are plain attributes,
    any other attribute (``finditer``, ``search`` …) compiles it once and forwards. Only for
    patterns already known to compile (the bundled rules, checked when their analysis was
    cached; see :func:`load_pattern_rules`): a rule whose literals never occur in a document
    costs no compilation."""

    __slots__ = ("pattern", "flags", "_compiled")

    def __init__(self, pattern: str, flags: int) -> None:
        self.pattern, self.flags, self._compiled = pattern, flags, None

    def __getattr__(self, name: str):
        compiled = self._compiled
        if compiled is None:
            with rxcache.recording():
                compiled = self._compiled = regex.compile(self.pattern, self.flags)
        return getattr(compiled, name)


def _lazy_list(items: Sequence[str], flags: int, what: str, rid: str) -> list:
    return [_LazyPattern(p, flags) for p in items]


def compile_rule(rule: Rule, analysis: tuple | None = None) -> PatternRule:
    """Compile one rule with ``check = "directives"``. Raises ``ValueError`` naming the rule
    and the bad field.

    ``analysis`` — ``(prefilters, single_line, widths, reaches)`` of its patterns as cached by
    :func:`load_pattern_rules`: given, the patterns are :class:`_LazyPattern` (compiled on first
    use) and the analyses are not recomputed; the caller vouches that they compile."""
    raw = rule.raw or {}
    rid = rule.id
    flags = _FLAGS | (regex.VERBOSE if raw.get("verbose") else 0)
    pats = _strings(raw.get("patterns"), "patterns", rid)
    if not pats:
        raise ValueError(f"rule {rid}: no 'patterns'")
    applies = _strings(raw.get("applies"), "applies", rid) or list(DEFAULT_APPLIES)
    bad = [a for a in applies if a not in REGIONS]
    if bad:
        raise ValueError(f"rule {rid}: unknown region(s) {bad} in 'applies' (expected {list(REGIONS)})")
    ctx = raw.get("context") or {}
    if not isinstance(ctx, dict):
        raise ValueError(f"rule {rid}: [rule.context] must be a table")
    kw = {}
    for key, allowed in (
        ("prohibition", ("lower", "keep")),
        ("quoted", ("lower", "keep")),
        ("denylist", ("lower", "keep")),
        ("code", ("lower", "keep")),
        ("hidden", ("raise", "keep")),
    ):
        if key in ctx:
            if ctx[key] not in allowed:
                raise ValueError(f"rule {rid}: context.{key} must be one of {list(allowed)}")
            kw[key] = ctx[key]
    unknown = set(ctx) - {"prohibition", "quoted", "denylist", "code", "hidden", "raise_if", "lower_if"}
    if unknown:
        raise ValueError(f"rule {rid}: unknown context key(s) {sorted(unknown)}")
    floor = raw.get("floor", cx.FLOOR_DEFAULTS.get(rule.category))
    if floor is not None:
        if floor not in ("error", "warning", "info", "hint"):
            raise ValueError(f"rule {rid}: floor must be one of error, warning, info, hint")
        kw["floor"] = Severity.parse(floor)
    combo = raw.get("combo", COMBO_DEFAULTS.get(rule.category))
    if combo not in (None, "input", "secrets", "egress"):
        raise ValueError(f"rule {rid}: combo must be input, secrets or egress")
    comp = _compile_list if analysis is None else _lazy_list
    compiled = comp(pats, flags, "patterns", rid)
    if analysis is None:
        analysis = (
            [required_literals(p.pattern, p.flags) for p in compiled],
            [single_line(p.pattern, p.flags) for p in compiled],
            [match_width(p.pattern, p.flags) for p in compiled],
            [reach_bound(p.pattern, p.flags) for p in compiled],
        )
    return PatternRule(
        rule=rule,
        patterns=compiled,
        requires=comp(_strings(raw.get("requires"), "requires", rid), flags, "requires", rid),
        excludes=comp(_strings(raw.get("excludes"), "excludes", rid), flags, "excludes", rid),
        applies=frozenset(applies),
        kinds=frozenset(_strings(raw.get("kinds"), "kinds", rid) or ["*"]),
        message=str(raw.get("message") or rule.summary),
        options=cx.ContextOptions(**kw),
        raise_if=comp(_strings(ctx.get("raise_if"), "raise_if", rid), flags, "context.raise_if", rid),
        lower_if=comp(_strings(ctx.get("lower_if"), "lower_if", rid), flags, "context.lower_if", rid),
        combo=combo,
        prefilters=list(analysis[0]),
        single_line=list(analysis[1]),
        widths=list(analysis[2]),
        reaches=list(analysis[3]) if len(analysis) > 3 else [reach_bound(p.pattern, p.flags) for p in compiled],
    )


def compile_rules(rules: Iterable[Rule], errors: list[str] | None = None, analyses: dict | None = None) -> PatternRules:
    """Compile every ``directives`` rule of ``rules``; bad ones go to ``errors``
    (``"<file>: rule <id>: <problem>"``). ``analyses``: cached ``{rule id: (prefilters,
    single_line, widths)}`` of rules known to compile (see :func:`compile_rule`)."""
    out = PatternRules(errors=list(errors or []))
    for r in rules:
        if r.check != CHECK_NAME:
            continue
        try:
            out.rules.append(compile_rule(r, (analyses or {}).get(r.id)))
        except ValueError as exc:
            out.errors.append(f"{r.source}: {exc}")
    out.rules.sort(key=lambda p: p.id)
    return out


def _bundled_key() -> str:
    """Cache key of the bundled rules' analysis: the unveil version, the source of this module
    and of :mod:`~unveil.core.checks.pattern_analysis` (which computes the analysis), and every
    bundled rule file's name and bytes (:mod:`unveil.core.cache`)."""
    from unveil.core import cache
    from unveil.core.checks import pattern_analysis
    from unveil.core.rules import bundled_rules_dir

    parts: list[bytes | str] = [
        cache.version_tag(),
        Path(__file__).read_bytes(),
        Path(pattern_analysis.__file__).read_bytes(),
        regex.__version__,
    ]
    for f in sorted(bundled_rules_dir().glob("*.toml")):
        parts += [f.name, f.read_bytes()]
    return "directives-" + cache.digest(parts)[:32]


def _bundled_analyses(base: RuleSet) -> tuple[dict, PatternRules | None]:
    """``({rule id: (prefilters, single_line, widths)}, compiled)`` for the bundled rules: from
    the user cache when the rule files and this module are unchanged (``compiled`` is then
    ``None`` and the patterns compile on first use), else computed with every pattern compiled
    (``compiled``: those rules) and stored. Only rules that compiled are in the dict."""
    from unveil.core import cache

    try:
        key = _bundled_key()
    except OSError:
        key = None
    if key is not None:
        got = cache.load_marshal("rules", key)
        if isinstance(got, dict) and isinstance(got.get("analyses"), dict):
            if isinstance(got.get("vocabulary"), (list, tuple)):
                _VOCABULARY[:] = [frozenset(str(w) for w in got["vocabulary"])]
            return {rid: tuple(a) for rid, a in got["analyses"].items()}, None
    compiled = compile_rules(list(base))
    analyses = {
        pr.id: (tuple(pr.prefilters), tuple(pr.single_line), tuple(pr.widths), tuple(pr.reaches))
        for pr in compiled.rules
    }
    vocabulary = _vocabulary(compiled.rules)
    _VOCABULARY[:] = [vocabulary]
    if key is not None:
        cache.store_marshal("rules", key, {"analyses": analyses, "vocabulary": sorted(vocabulary)})
    return analyses, compiled


@lru_cache(maxsize=8)
def load_pattern_rules(extra_paths: tuple[str, ...] = ()) -> PatternRules:
    """The bundled pattern rules plus those in ``extra_paths`` (rule files or folders of
    ``*.toml``; user rules). Cached per tuple of paths. Never raises: unreadable files, TOML
    errors, bad rules, duplicate ids and invalid regexes become lines in ``errors``."""
    base = bundled_rules()
    errors: list[str] = []
    rules: list[Rule] = list(base)
    analyses, done = _bundled_analyses(base)
    if extra_paths:
        user = RuleSet(rules=dict(base.rules))
        load_rule_files([Path(p) for p in extra_paths], into=user)
        errors.extend(user.errors)
        rules = list(user)
        # bundled rules (the same objects) reuse their analysis; user rules compile eagerly
        analyses = {r.id: analyses[r.id] for r in rules if r.id in analyses and base.rules.get(r.id) is r}
    if done is not None and not extra_paths:
        compiled = PatternRules(rules=list(done.rules), errors=errors + done.errors)
    else:
        compiled = compile_rules(rules, errors, analyses)
    if extra_paths:
        _drop_slow_user_rules(compiled, frozenset(base.rules))
    for e in compiled.errors:
        log.info("rule load error: %s", e)  # callers report these to the user, once
    return compiled


#: Inputs that make catastrophically backtracking patterns (``(a+)+$``, ``(\w+\s?)*:``) blow up.
_PROBES = ("a" * 4000 + "!", ("word " * 1500) + "!", "x" * 4000 + "\n", "-" * 4000 + "\n")
PROBE_TIMEOUT = 0.2
"""Seconds a user pattern may spend on one probe at load time before it is rejected as slow."""


def _drop_slow_user_rules(compiled: PatternRules, bundled_ids: frozenset[str]) -> None:
    """Reject user rules (ids not in ``bundled_ids``) with a pattern that takes longer than
    :data:`PROBE_TIMEOUT` on one of :data:`_PROBES` (4 KB strings): each becomes one error line
    naming the file, the rule and the pattern; the other rules keep working."""
    kept = []
    for pr in compiled.rules:
        if pr.id in bundled_ids:
            kept.append(pr)
            continue
        slow = None
        for pat in [*pr.patterns, *pr.requires, *pr.excludes]:
            try:
                for probe in _PROBES:
                    pat.search(probe, timeout=PROBE_TIMEOUT)
            except TimeoutError:
                slow = pat
                break
        if slow is None:
            kept.append(pr)
        else:
            compiled.errors.append(
                f"{pr.rule.source}: rule {pr.id}: pattern {_clip(slow.pattern, 60)!r} is catastrophically slow "
                f"(over {PROBE_TIMEOUT:g} s on a 4 KB probe string); rule not loaded"
            )
    compiled.rules[:] = kept


def _clip(s: str, n: int = 80) -> str:
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"


_REASON_TEXT = {
    "prohibition": "lowered: stated as a prohibition",
    "deny-list": "lowered: in a deny-list",
    "quoted example": "lowered: quoted as an example",
    "code": "lowered: inside code",
    "context": "lowered by context",
    "floor": "kept at its floor: this rule never goes lower in context",
    "hidden": "raised: hidden from a reader",
    "raised by context": "raised by context",
}


RAW_CATEGORIES = frozenset({"secrets"})
"""Rule families that also run on the model view (exact key formats; see :mod:`unveil.core.normalize`)."""
_RAW_SENSITIVE = regex.compile(r"\\\*|`|&#|&\[?[a-z]|%\[?[0-9a-f]|\\\\[xu]|~~", regex.I)
"""A pattern naming what the normalised reading rewrites (a literal ``*``, ``~~`` or backtick, a
character reference, a percent or backslash escape) also runs on the model view."""


def needs_raw(pr: PatternRule) -> bool:
    """Whether ``pr`` runs on the model view as well as on the normalised reading."""
    if pr.raw_too is None:
        pr.raw_too = pr.rule.category in RAW_CATEGORIES or any(_RAW_SENSITIVE.search(p.pattern) for p in pr.patterns)
    return pr.raw_too


class _Target:
    """One reading the rules run on: its text, case-folded text, literal memo, word index and line
    index, and its map back to source code points (``orig_start``/``orig_end``)."""

    def __init__(self, name: str, text: str, orig_start, orig_end, fold_key: str | None = None):
        self.name = name
        self.text = text
        # (an open document folds only what an edit changed: unveil.core.checks.splice.casefolded)
        self.folded = _casefolded(fold_key, text) if fold_key is not None else _folding.casefold(text)
        self.present: dict[str, bool] = {}
        self._words: str | None | bool = False  # the word index, built on first use (False: not yet)
        self.lines: _Lines | None = None
        self.positions: dict[str, array[int]] = {}  # offsets of the literals a _LiteralIndex scanned
        self.indexed: set[str] = set()  # those literals
        self.scanned: set[int] = set()  # id()s of the _LiteralIndex objects already run on folded
        self.orig_start = orig_start
        self.orig_end = orig_end
        # for the model view: () -> set of its lines the reading rewrote
        self.changed: Callable[[], set[int]] | None = None
        self.memo: _MatchMemo | None = None  # the open document's memo (set by run_rules)
        self.spliced = False  # no whole-text literal index: an open document after its first version (_run)
        self.session: _SpliceSession | None = None  # the open document's splice session (_run)
        self.index: _LiteralIndex | None = None  # the rules' literal index (_run)
        self.near: frozenset | None = None  # _near_candidates of this version (computed on first use)
        self._slices: dict[tuple[int, int], tuple[str, dict]] = {}  # folded stretches (splice prefilter)

    @property
    def words(self) -> str | None:
        """The :func:`~unveil.core.checks.literal_index.word_index` of :attr:`folded` (``None``
        for a short text), built on first use."""
        if self._words is False:
            self._words = _word_index(self.folded) if len(self.folded) > _WINDOW_MIN_TEXT else None
        return self._words  # type: ignore[return-value]

    def exact_run(self, cls: str) -> int:
        """The longest run of the class ``cls`` in the text (:meth:`~unveil.core.checks.literal_index.Lines.longest_run`)."""
        return self.line_index().longest_run(cls)

    def may_contain(self, clauses, a: int, b: int) -> bool:
        """Whether every clause of ``clauses`` has a member in ``text[a:b]``, case-folded: looked
        up in :attr:`folded` between those offsets when case folding kept every offset (no copy
        of the stretch: a pattern's stretch can be most of a long document), else in the folded
        stretch (kept for the other patterns of this version)."""
        folded = self.folded
        if len(folded) == len(self.text):
            find = folded.find
            return all(any(find(lit, a, b) >= 0 for lit in clause) for clause in clauses)
        got = self._slices.get((a, b))
        if got is None:
            got = self._slices[(a, b)] = (self.text[a:b].casefold(), {})
        return _may_match(clauses, got[0], got[1])

    def set_changed(self, source_spans, view) -> None:
        """Mark this target (the model view) as a second pass: ``source_spans`` are the source
        ranges the reading rewrote or deleted; their lines are computed on first use. (The
        function holds this target weakly: a cycle would keep each version's target, its texts and
        its indexes alive until the collector's next full pass.)"""
        memo: list = []
        me = weakref.ref(self)

        def changed() -> set[int]:
            if not memo:
                target = me()
                if target is None:  # pragma: no cover - the target is alive while it is searched
                    return set()
                lines = target.line_index()
                starts = lines.starts
                got: set[int] = set()
                add = got.add
                vos = view.view_offsets([x for span in source_spans for x in span])
                for k in range(0, len(vos), 2):
                    va = vos[k]
                    vb = max(va, vos[k + 1] - 1)
                    la = bisect_right(starts, va) - 1
                    if starts[la + 1 if la + 1 < len(starts) else la] > vb:  # one line (the usual case)
                        add(max(0, la))
                    else:
                        got.update(range(max(0, la), bisect_right(starts, vb)))
                memo.append(got)
            return memo[0]

        self.changed = changed

    def changed_spans(self, pad: int = 3) -> list[tuple[int, int]]:
        """``(pos, endpos)`` of the rewritten lines (:meth:`set_changed`), each widened by ``pad``
        lines on either side, merged and in order."""
        got = getattr(self, "_near", None)
        if got is None:
            changed = self.changed
            if changed is None:  # set only by set_changed (the model view pass)
                raise TypeError("changed_spans() needs set_changed() first")
            lines = self.line_index()
            got = []
            for ln in sorted(changed()):
                a = lines.span(max(0, ln - pad))[0]
                b = lines.span(min(lines.n - 1, ln + pad))[1]
                if got and a <= got[-1][1]:
                    got[-1] = (got[-1][0], max(got[-1][1], b))
                else:
                    got.append((a, b))
            self._near = got
        return got

    def may_match_changed(self, clauses) -> bool:
        """The literal prefilter of the model view pass: whether every clause of ``clauses``
        has a member in the text around what the reading rewrote (:meth:`changed_spans`), the
        only text that pass searches."""
        got = getattr(self, "_changed_text", None)
        if got is None:
            f = self.folded
            parts = [f[a:b] for a, b in self.changed_spans()]
            text = "\x00".join(parts)
            seen: dict[str, bool] = {}
            index = self.index
            self._part_literals = None
            if index is not None and len(text) > _WINDOW_MIN_TEXT:
                # the long literals through the Aho–Corasick automaton, stretch by stretch; an
                # open document keeps each stretch's literals (an edit changes one stretch)
                present: set[str] = set()
                per_part: list[frozenset[str]] = []
                shorts: list[tuple[dict, dict]] = []  # per part: its other lookups (see below)
                canon: dict[frozenset[str], frozenset[str]] = {}
                memo = self.memo
                for part in parts:
                    dig = _span_digest(part)
                    key = ("literals", id(index), dig, len(part))
                    lits = memo.get(key) if memo is not None else None
                    if lits is None:
                        scanned = index.scan(part)
                        if scanned is None:
                            present = set()
                            break
                        lits = frozenset(scanned[1])
                        if memo is not None:
                            memo.put(key, lits)
                    present |= lits
                    per_part.append(canon.setdefault(lits, lits))  # (one object per distinct set)
                    # kept with the part, for the parts a later version's edit leaves alone: the
                    # lookups of the literals the automaton leaves out, and which clause lists
                    # the part satisfies (changed_spans_for)
                    skey = ("part lookups", dig, len(part))
                    short = memo.get(skey) if memo is not None else None
                    if short is None:
                        short = ({}, {})
                        if memo is not None:
                            memo.put(skey, short)
                    shorts.append(short)
                else:
                    seen = dict.fromkeys(index.literals, False)
                    seen.update(dict.fromkeys(present, True))
                    self._part_literals = (per_part, frozenset(index.literals), shorts)
            got = self._changed_text = (text, seen)
        return _may_match(clauses, got[0], got[1])

    def changed_spans_for(self, clauses) -> list[tuple[int, int]]:
        """The stretches of :meth:`changed_spans` in which every clause of ``clauses`` has a
        member (case-folded): a match holds a member of each clause in what it matches
        (:func:`~unveil.core.checks.pattern_analysis.required_literals`), and a search limited
        to a stretch matches inside it, so the other stretches cannot add a match. Looked up in
        the literals :meth:`may_match_changed` found per stretch (a search of the stretch for a
        literal the automaton does not hold); every stretch when it found none. Those searches
        and each clause list's answer are kept with the stretch (by its digest, in the open
        document's memo), so a stretch the next edit leaves alone is not looked at again."""
        spans = self.changed_spans()
        self.may_match_changed(clauses)
        got = getattr(self, "_part_literals", None)
        folded = self.folded
        if not clauses or got is None or len(folded) != len(self.text):
            return spans
        per_part, indexed, shorts = got
        find = folded.find
        key = tuple(clauses)
        out = []
        for (a, b), lits, (short, sat) in zip(spans, per_part, shorts):
            hit = sat.get(key)
            if hit is None:
                hit = True
                for clause in clauses:
                    for m in clause:
                        if m in indexed:
                            if m in lits:
                                break
                        else:
                            h = short.get(m)
                            if h is None:
                                h = short[m] = find(m, a, b) >= 0
                            if h:
                                break
                    else:
                        hit = False
                        break
                sat[key] = hit
            if hit:
                out.append((a, b))
        return out

    def line_index(self) -> "_Lines":
        if self.lines is None:
            self.lines = _Lines(self.text, self.folded)
            self.lines.memo = self.memo
            self.lines.present = self.present
            # (a later version's reading splices and the model view pass searches only what
            # the reading rewrote: neither looks literals up in the word index)
            self.lines.words = None if self.spliced or self.changed is not None else self.words
            self.lines.positions, self.lines.indexed = self.positions, self.indexed
        return self.lines

    def index_literals(self, index: "_LiteralIndex") -> None:
        """One Aho–Corasick pass of ``index`` over :attr:`folded` (once per index): presence and
        offsets of its literals, shared with :func:`_may_match` and the line index."""
        if id(index) in self.scanned:
            return
        self.scanned.add(id(index))
        got = index.scan(self.folded)
        if got is None:
            return
        present, positions = got
        self.present.update(present)
        self.positions.update(positions)
        self.indexed.update(present)


@dataclass
class DocState:
    """Per-document inputs of the rules, built once per analysis: the :class:`~unveil.core.context.DocContext`
    (model view, regions), the normalised :class:`~unveil.core.normalize.Reading` and the
    :class:`_Target` readings: ``reading``, and ``view`` when the model view differs from it, a
    document's only while :func:`run_rules` runs (:func:`_add_view_target`). ``decoded``: the
    text is a decoded payload (every rule applies; it is hidden from a reader). ``memo``: the
    :class:`~unveil.core.checks.literal_index.MatchMemo` of the open document, when the language
    server analyses a version of one (matches in windows and lines reused across versions)."""

    dc: cx.DocContext
    reading: object
    targets: dict
    decoded: bool = False
    memo: _MatchMemo | None = None  # the open document's match memo (language server), else None
    splices: _SpliceLog | None = None  # the open document's previous matches (language server), else None
    prules: PatternRules | None = None  # the rules being run (set by _run)
    markdown: object = None  # the markdown layer it was built with (kept: the cache key holds its id)


def doc_state(text: str, markdown=None, decoded: bool = False) -> DocState:
    """The :class:`DocState` of ``text``, built once per analysis (by identity of the text and
    markdown layer: :func:`unveil.core.scope.shared`), so the directives, clauses, prose and
    obfuscation checks of one analysis share it; nothing outlives the analysis."""
    if decoded:  # a payload's state: shared by its rescans, which run one after another
        return _scope.shared("decoded state", text, id(markdown), lambda: _build_state(text, markdown, True), keep=6)
    return _scope.shared("doc_state", text, id(markdown), lambda: _build_state(text, markdown, False))


def _build_state(text: str, markdown, decoded: bool) -> DocState:
    from unveil.core.normalize import normalise

    dc = cx.doc_context(text, markdown)
    if decoded:
        dc.regions.hidden = [(0, len(text))]
    _scope.checkpoint()
    reading = normalise(text, dc.regions.code, dc.regions.frontmatter, reuse=None if decoded else "directives")
    _scope.checkpoint()
    fold = None if decoded else "directives "  # (a payload's texts are not the document's next version)
    targets = {
        "reading": _Target("reading", reading.text, reading.orig_start, reading.orig_end, fold and fold + "reading")
    }
    state = DocState(dc, reading, targets, decoded, markdown=markdown)
    if decoded:  # (a document's model view pass is set up by run_rules, for its run only)
        _add_view_target(state)
    return state


def _add_view_target(state: DocState) -> None:
    """Add the model view pass's :class:`_Target` to ``state.targets`` (after the reading's), when
    the model view differs from the normalised reading. Only the pattern rules read it: for a
    document it lives while :func:`run_rules` runs (its case-folded copy, its literal offsets
    and the folded text around what the reading rewrote: 34 MiB of the padded 10 MB
    ``AGENTS.md`` that the later checks held for nothing), for a payload as long as its state."""
    reading, view = state.reading, state.dc.view
    if reading.text == view.text:  # type: ignore[attr-defined]
        return
    fold = None if state.decoded else "directives view"
    vt = _Target("view", view.text, view.orig_start, view.orig_end, fold)
    vt.set_changed(_rewritten(reading, state.dc.original), view)
    state.targets["view"] = vt


def _rewritten(reading, source: str) -> list[tuple[int, int]]:
    """Source ranges the reading changed: its non-copy segments and the text it deleted, but for
    a ``\r\n`` or ``\r`` read as ``\n`` (``normalize._line_break_edits``): that changes no
    character a pattern could need in the model view instead (its ``\n``, ``$`` and ``^`` hold
    in the reading), and counting it made the model view pass search every line of a CRLF file
    (the 294 KB corpus file saved with CRLF: 324 ms an edit)."""
    out = []
    prev = 0
    text, outs, n = reading.text, reading.out_starts, len(reading.out_starts)
    for k, (s, e, copy) in enumerate(zip(reading.src_starts, reading.src_ends, reading.copies)):
        if s > prev:
            out.append((prev, s))
        if not copy and not (
            e - s <= 2
            and source[s:e] in ("\r\n", "\r")
            and text[outs[k] : outs[k + 1] if k + 1 < n else len(text)] == "\n"
        ):
            out.append((s, e))
        prev = max(prev, e)
    if prev < reading.source_length:
        out.append((prev, reading.source_length))
    return out


def run_rules(ctx, prules: PatternRules, timeout: float | None = None) -> list[Finding]:
    """Run ``prules`` on the document of ``ctx`` (a :class:`unveil.core.checks.Context`).
    Returns findings in original code-point offsets, before the combination pass.
    ``timeout`` (seconds per pattern) defaults to :func:`pattern_timeout` of the text's size.

    Every rule runs on the normalised reading (:func:`unveil.core.normalize.normalise`); rules for
    which :func:`needs_raw` holds also run on the model view. Then every decoded payload of the
    document (:func:`unveil.core.checks.obfuscation.decode_document`) contributes the findings of
    its rescan, reported at the encoded span. Findings of one rule that overlap in the original
    text are merged (the first kept), so one payload gives one finding per rule."""
    text = ctx.doc.text
    if not text:
        return []
    state = doc_state(text, getattr(ctx, "markdown", None))
    _add_view_target(state)
    try:
        return _run_document(ctx, state, prules, timeout)
    finally:
        state.targets.pop("view", None)  # (see _add_view_target)


def _run_document(ctx, state: DocState, prules: PatternRules, timeout: float | None) -> list[Finding]:
    text = ctx.doc.text
    memo = getattr(getattr(ctx, "incremental", None), "matches", None)
    if memo is not None and len(text) > _MEMO_MAX_TEXT:
        memo = None  # a huge document: each version is searched as in the CLI (see MEMO_MAX_TEXT)
    if memo is not None:
        memo.next_version()
    state.memo = memo
    state.splices = getattr(getattr(ctx, "incremental", None), "splices", None)
    for t in state.targets.values():
        if t is not None:
            t.memo = memo
            if t.lines is not None:
                t.lines.memo = memo
    kind = getattr(ctx, "kind", "*") or "*"
    seen: dict[str, list[tuple[int, int]]] = {}
    out = _run(
        state,
        prules,
        kind,
        timeout if timeout is not None else pattern_timeout(len(text)),
        seen,
        line_of=ctx.doc.line_of,
    )
    try:
        for d, hits in obfuscation.decode_document(text).payloads:
            for h in hits:
                if h.category == "internal" or (h.category == "obfuscation" and h.message.startswith("nested ")):
                    continue  # timeouts of the rescan; nested-run markers (the obfuscation check reports those)
                spans = seen.setdefault(h.rule, [])
                if any(s < d.end and d.start < e for s, e in spans):
                    continue
                spans.append((d.start, d.end))
                out.append(
                    Finding(
                        h.rule,
                        h.severity,
                        d.start,
                        d.end,
                        f'{h.message} — in {d.encoding}-decoded text "{obfuscation.preview(d.text)}"',
                        category=h.category,
                        hidden_text=d.text,
                        data={**h.data, "region": "hidden", "decoded": d.encoding},
                    )
                )
    except Exception:  # noqa: BLE001 - the decoded rescan never loses the direct findings
        log.exception("decoded rescan failed")
    return out


def scan_text(text: str, prules: PatternRules | None = None, timeout: float | None = None) -> list[Finding]:
    """Every pattern rule (whatever its ``kinds`` and ``applies``) on ``text``, a decoded payload:
    findings in code-point offsets into ``text``, judged as hidden text (raised one step)."""
    if not text:
        return []
    prules = prules or load_pattern_rules()
    state = doc_state(text, None, decoded=True)
    return _run(
        state,
        prules,
        None,
        timeout if timeout is not None else pattern_timeout(len(text)),
        {},
        line_of=lambda o: text.count("\n", 0, o),
    )


def _literal_index(prules: PatternRules) -> _LiteralIndex:
    """The :class:`~unveil.core.checks.literal_index.LiteralIndex` of ``prules``' prefilter
    literals, built once per rule list (rebuilt if the list changed)."""
    index = getattr(prules, "_literal_index", None)
    if index is None or index.rules_key != (id(prules.rules), len(prules.rules)):
        index = _LiteralIndex(
            lit for pr in prules.rules for clauses in pr.prefilters for clause in clauses for lit in clause
        )
        index.rules_key = (id(prules.rules), len(prules.rules))
        prules._literal_index = index  # type: ignore[attr-defined]
    return index


def _run(state: DocState, prules: PatternRules, kind: str | None, timeout: float, seen: dict, line_of) -> list[Finding]:
    out: list[Finding] = []
    index = _literal_index(prules)
    log = state.splices
    state.prules = prules
    for t in state.targets.values():
        if t is None:
            continue
        if log is not None:
            # a later version of an open document's reading splices: it needs no whole-text literal index
            t.spliced = log.has_base(t.name)
            if t.changed is None:  # the normalised reading: its matches are kept and spliced
                t.session = log.begin(t.name, t.text, t.exact_run)
                t.session.reuse_bounds()
                _carry_presence(t, t.session)
        t.index = index
        if not t.spliced and t.changed is None:  # (the model view pass searches only what the reading rewrote)
            t.index_literals(index)  # one Aho–Corasick pass over the long literals
            _scope.checkpoint()
    out += _run_rules(state, prules, kind, timeout, seen, line_of)
    if log is not None:
        for t in state.targets.values():
            if t is not None and t.session is not None:
                # literal presence is kept where the next version carries it (_carry_presence)
                carry = len(t.folded) == len(t.text) >= CARRY_PRESENCE_MIN
                t.session.present = t.present if carry else None
                log.commit(t.name, t.session)
    return out


def _carry_presence(t: _Target, sess: _SpliceSession) -> None:
    """Fill ``t.present`` (literal → whether it occurs in ``t.folded``) for the literals the
    previous version of this reading found absent, by looking only around the edit
    (:func:`unveil.core.checks.splice.carried_absent`); a later version otherwise looked each of
    them up in the whole folded text (294 KB corpus file: about 4 ms of an edit,
    ``benchmarks/profile.md``, issue 10, session 18). Only for a text of at least
    :data:`CARRY_PRESENCE_MIN` code points, and where case folding kept every offset in both
    versions, so that the text's delta is the folded text's (``str.casefold`` folds each code
    point on its own: equal lengths mean one code point for one)."""
    base = sess.base
    if base is None or base.present is None or sess.delta is None or len(t.folded) != len(t.text):
        return
    if len(t.folded) < CARRY_PRESENCE_MIN:
        return
    t.present.update(_carried_absent(base.present, t.folded, sess.delta))


CARRY_PRESENCE_MIN = 100_000
"""Code points from which :func:`_carry_presence` pays: carrying costs about half a microsecond
per literal found absent before (some 2,500 once the rules' literal index has run), whatever
the text's length, while a whole-text lookup grows with it (the 300-line benchmark file: 1.2 ms
to carry, more than the lookups it saves; the 294 KB file: 1.2 ms to save about 4 ms)."""


def _run_rules(
    state: DocState, prules: PatternRules, kind: str | None, timeout: float, seen: dict, line_of
) -> list[Finding]:
    """Every rule of ``prules`` that applies to ``kind`` on every reading of ``state``.

    An open document's later version skips, with one set lookup each, the rules it would find
    empty one pattern at a time (:func:`_quiet_keys`, kept with the reading's matches): a bundled
    rule run on the normalised reading only, every pattern of which had no match in the previous
    version, bounds that carried over and no literal near this version's edit
    (:func:`_near_candidates`)."""
    out: list[Finding] = []
    user_spent = 0.0  # seconds all user (non-bundled) patterns took on this text: USER_BUDGET_S
    budget_noted = False
    reading = state.targets.get("reading")
    sess = reading.session if reading is not None else None
    quiet: dict[str, tuple] | None = {} if sess is not None else None
    # rules with a pattern disabled after time-outs report that (UNV024) in every version: never skipped
    disabled = {key[0] for key, n in _timeouts.items() if n >= DISABLE_AFTER} if _timeouts else set()
    fast: dict[str, tuple] | None = None
    hot: set[str] = set()
    if quiet is not None and sess is not None and sess.base is not None and sess.reused:
        kept = sess.base.quiet
        if kept is not None and kept[0] is prules.rules and kept[1] == len(prules.rules):
            fast = kept[2]
            near = reading.near if reading.near is not None else _near_candidates(reading, sess, prules)  # type: ignore[union-attr,arg-type]
            hot = {key[0] for key in near}
    for pr in prules.rules:
        if kind is not None and "*" not in pr.kinds and kind not in pr.kinds:
            continue
        if fast is not None and pr.id not in hot and pr.id not in disabled:
            keys = fast.get(pr.id)
            if keys is not None:
                entries = sess.entries  # type: ignore[union-attr]
                for key in keys:
                    entries[key] = _EMPTY_ENTRY
                quiet[pr.id] = keys  # type: ignore[index]
                if state.splices is not None:
                    state.splices.skipped += len(keys)
                    state.splices.quiet_rules += 1
                continue
        _scope.checkpoint()  # a background analysis may wait here (never inside a timed search)
        user = _is_user(pr)
        if user and user_spent > USER_BUDGET_S:
            if not budget_noted:
                budget_noted = True
                out.append(
                    Finding(
                        "UNV023",
                        Severity.WARNING,
                        0,
                        0,
                        f"user pattern rules took more than {USER_BUDGET_S:.1f} s on this file; rule "
                        f"{pr.id} and the user rules after it were not run on it",
                        category="internal",
                        data={"rule": pr.id},
                    )
                )
            continue
        spans = seen.setdefault(pr.id, [])  # one finding per overlapping stretch, whichever pattern hit first
        names = ["reading", "view"] if needs_raw(pr) else ["reading"]
        timed_out: set[int] = set()
        for name in names:
            t = state.targets.get(name)
            if t is None:
                continue
            for i, pat in enumerate(pr.patterns):
                if i in timed_out:
                    continue
                tkey = (pr.id, pat.pattern)
                if _timeouts.get(tkey, 0) >= DISABLE_AFTER:
                    timed_out.add(i)
                    out.append(
                        Finding(
                            "UNV024",
                            Severity.WARNING,
                            0,
                            0,
                            f"rule {pr.id} ({pr.rule.source}): pattern {_clip(pat.pattern, 60)!r} timed out "
                            f"on {DISABLE_AFTER} files and is disabled for this run; it did not check this file",
                            category="internal",
                            data={"rule": pr.id},
                        )
                    )
                    continue
                started = time.monotonic()
                try:
                    f_or_timeout = _scan_pattern(pr, i, pat, t, state, timeout, spans, out)
                finally:
                    if user:
                        user_spent += time.monotonic() - started
                if f_or_timeout is not None:
                    timed_out.add(i)
                    _timeouts[tkey] = _timeouts.get(tkey, 0) + 1
                    if _timeouts[tkey] == DISABLE_AFTER:
                        log.warning(
                            "rule %s: pattern %r timed out on %d files; disabled for this run",
                            pr.id,
                            _clip(pat.pattern, 60),
                            DISABLE_AFTER,
                        )
                    o = f_or_timeout
                    where = f"after its last match on line {line_of(o) + 1}" if o else "anywhere in the file"
                    out.append(
                        Finding(
                            TIMEOUT_RULE,
                            Severity.WARNING,
                            o,
                            o,
                            f"rule {pr.id} ({pr.rule.source}) timed out after {timeout:.2f} s on this file: this "
                            f"pattern may have missed text {where} (pattern {_clip(pat.pattern, 60)!r})",
                            category="internal",
                            data={"rule": pr.id, "offset": o},
                        )
                    )
        if quiet is not None and not user and len(names) == 1 and not timed_out and pr.id not in disabled:
            keys = _quiet_keys(pr, sess)  # type: ignore[arg-type]
            if keys is not None:
                quiet[pr.id] = keys
    if sess is not None:
        sess.quiet = (prules.rules, len(prules.rules), quiet) if quiet is not None else None
    return out


def _quiet_keys(pr: PatternRule, sess: _SpliceSession) -> tuple | None:
    """The keys of the patterns of ``pr`` when the next version may skip the whole rule
    (:func:`_run_rules`): each pattern has a prefilter, no match in this version and splice
    bounds within :data:`_NEAR_LB` and :data:`_NEAR_REACH`; else ``None``. A later version
    whose bounds carry over (:meth:`~unveil.core.checks.splice.Session.reuse_bounds`) and with
    none of these patterns among its :func:`_near_candidates` would find each of them empty
    without a search in :func:`_scan_pattern`."""
    keys = []
    for i, pat in enumerate(pr.patterns):
        if not (pr.prefilters[i] if i < len(pr.prefilters) else ()):
            return None
        b = sess.bounds.get((pr.id, i))
        if b is None or b[0] > _NEAR_LB or b[1] > _NEAR_REACH:
            return None
        key = (pr.id, i, pat.pattern, pat.flags)
        e = sess.entries.get(key)
        if e is None or e.records:
            return None
        keys.append(key)
    return tuple(keys)


def _scan_pattern(
    pr: PatternRule, i: int, pat, t: _Target, state: DocState, timeout: float, spans: list, out: list
) -> int | None:
    """Run pattern ``i`` of ``pr`` on ``t``, appending new findings to ``out``. Returns ``None``,
    or on timeout the source offset after the last match.

    An open document's normalised reading (``state.splices``): the pattern's matches are spliced
    from the previous version's (:func:`unveil.core.checks.splice.splice`) when its searches read
    a bounded stretch, else searched as below; either way the whole list is kept for the next
    version."""
    vt = t.text
    clauses = pr.prefilters[i] if i < len(pr.prefilters) else ()
    sess = t.session
    key = bounds = None
    if sess is not None:
        bounds = _splice_bounds(pr, i, sess)
        key = (pr.id, i, pat.pattern, pat.flags)
        prev = sess.base.entries.get(key) if bounds is not None and sess.base is not None else None
        if prev is not None and bounds is not None:
            log = state.splices
            if clauses and not prev.records and bounds[0] <= _NEAR_LB and bounds[1] <= _NEAR_REACH:
                # no match before, and no match can start near the edit unless every clause has
                # a literal in the stretch around it (one scan for all patterns of this shape)
                near = t.near if t.near is not None else _near_candidates(t, sess, state.prules)
                if key not in near:
                    sess.entries[key] = _EMPTY_ENTRY
                    if log is not None:
                        log.skipped += 1
                    return None
            if clauses:
                a, b, may = _window_may(t, sess, clauses, bounds)
                if not may and not prev.records:
                    sess.entries[key] = _EMPTY_ENTRY  # no match before, none can start near the edit
                    if log is not None:
                        log.skipped += 1
                    return None

                def maybe(x: int, y: int) -> bool:
                    return may if a <= x and y <= b else t.may_contain(clauses, x, y)

            else:
                maybe = None  # type: ignore[assignment]
            try:
                got = _splice(pat, prev, vt, sess.delta, bounds[0], bounds[1], timeout, maybe)  # type: ignore[arg-type]
            except TimeoutError:
                got = None  # searched in full below, with that search's own time-out report
            if got is not None:
                if log is not None:
                    log.spliced += 1
                kept = _splice_entry(bounds[0], bounds[1], got)
                if kept is not None:
                    sess.entries[key] = kept
                return _match_pattern(pr, t, state, timeout, spans, out, iter(got))
        if state.splices is not None:
            state.splices.full += 1
    if clauses and not (
        t.may_match_changed(clauses)
        if t.changed is not None
        else _may_match(clauses, t.folded, t.present, None if t.spliced else t.words)
    ):
        if sess is not None and bounds is not None:
            sess.entries[key] = _EMPTY_ENTRY
        return None
    windows_spans = None  # None: the whole text; else (pos, endpos) of the candidate lines
    if clauses and i < len(pr.single_line) and pr.single_line[i]:
        lines = t.line_index()
        if lines.ok:
            cand = lines.candidates(clauses)
            if t.changed is not None:
                # the model view pass: a single-line match on a line the reading left unchanged is
                # found there already; only lines the reading rewrote can add anything
                changed = t.changed()
                cand = sorted(changed) if cand is None else [ln for ln in cand if ln in changed]
            if cand is not None:
                windows_spans = [lines.span(ln) for ln in cand]
    windows = None  # else (pos, stop, endpos) around the literals of a bounded-width pattern
    if clauses and windows_spans is None and len(vt) > _WINDOW_MIN_TEXT and t.changed is None:
        bounds_w = pr.widths[i] if i < len(pr.widths) else None
        if bounds_w is not None:
            lines = t.line_index()
            if lines.ok:
                windows = lines.windows(clauses, bounds_w)
    if t.changed is not None and windows_spans is None:
        # the model view pass: only text around what the reading rewrote can match differently,
        # and only the stretches of it that hold the pattern's literals
        windows_spans = t.changed_spans_for(clauses)
    if (
        state.memo is not None
        and bounds is None  # (a pattern that is spliced keeps its whole list instead)
        and clauses
        and windows is None
        and windows_spans is None
        and len(vt) > _WINDOW_MIN_TEXT
    ):
        # an open document's whole-text search, cut into content-defined stretches whose
        # matches the memo keeps across versions: bounded patterns by their reach, single-line
        # ones at line ends (a match holds a literal, so it is never empty at a stretch's end)
        lines = t.line_index()
        if lines.ok:
            bounds_w = pr.widths[i] if i < len(pr.widths) else None
            if bounds_w is not None:
                windows = lines.chunk_windows(bounds_w)
            elif i < len(pr.single_line) and pr.single_line[i]:
                windows_spans = lines.chunks()
    reach = _reach_in(pr, i, t) if state.memo is not None else None
    starts = _start_positions(pat, t) if windows is None and windows_spans is None and t.changed is None else None
    for attempt in (0, 1):
        cpu0 = time.thread_time()
        collected: list | None = [] if sess is not None and bounds is not None else None
        if starts is not None:
            matches = _records(_anchored(pat, vt, starts, timeout))
        else:
            matches = _matches(pat, t, state, timeout, windows, windows_spans, reach)
        got_t = _match_pattern(pr, t, state, timeout, spans, out, matches, collected)
        if got_t is None:
            if collected is not None:
                kept = _splice_entry(bounds[0], bounds[1], collected)  # type: ignore[index]
                if kept is not None:
                    sess.entries[key] = kept  # type: ignore[union-attr]
            return None
        if attempt:
            return got_t
        # the findings of the first attempt are kept and not repeated (``spans``)
        timeout = retry_limit(timeout, time.thread_time() - cpu0)
    return None


STALL_RETRY = 8
"""A pattern that timed out while its thread used under half the limit in CPU time runs once
more with this many times the limit; a second time-out is reported (UNV002)."""


def retry_limit(timeout: float, cpu_used: float) -> float:
    """The time limit (seconds) of the one retry a search gets after its first time-out, which
    took ``cpu_used`` seconds of the thread's CPU time (``time.thread_time``); only a second
    time-out is reported (UNV002).

    * Under half the limit in CPU time: the thread hardly ran (a loaded machine, another thread
      holding the interpreter), so the limit measured the wait, not the pattern:
      :data:`STALL_RETRY` times the limit.
    * Otherwise the same limit once more. The CPU clock of a virtual machine can count time the
      host took from it (steal time) as the running thread's, so one time-out with the CPU time
      spent can still be the host's; a pattern that is slow on this text times out twice.
      Seen in CI: a bundled pattern that takes at most 6 ms on a 1 KB text timed out after
      0.25 s with the CPU time used, on a machine building a virtual environment beside it.

    A pattern that is really slow on the text costs two limits before its UNV002, instead of one."""
    return timeout * STALL_RETRY if cpu_used < timeout / 2 else timeout


def _splice_bounds(pr: PatternRule, i: int, sess: _SpliceSession) -> tuple[int, int] | None:
    """``(lb, reach)`` of pattern ``i`` of ``pr`` for :func:`~unveil.core.checks.splice.splice`
    in the session's text (code points: an attempt at ``x`` reads nothing outside
    ``[x - lb - 1, x + reach)``, the reach as :meth:`~unveil.core.checks.literal_index.Lines.windows`
    takes it; class runs bounded by :meth:`~unveil.core.checks.splice.Session.run`), or ``None``
    when either is unbounded or unknown."""
    w = pr.widths[i] if i < len(pr.widths) else None
    r = _reach(pr, i)
    if w is None or r is None:
        return None
    memo = sess.bounds
    key = (pr.id, i)
    got = memo.get(key)
    if got is None:
        lb = r if not isinstance(r, tuple) else sum(c * sess.run(k) for k, c in r)
        got = memo[key] = (lb, sum(k * sess.run(cls) for cls, k in w[1]) + 2)
    return got


_NEAR_LB = 256
_NEAR_REACH = 2048
"""Patterns whose lookbehind reach and reach (code points, :func:`_splice_bounds`) are at most
these share one literal scan of the stretch around an edit (:func:`_near_candidates`)."""


def _literal_owners(prules: PatternRules) -> tuple[dict[str, list[tuple[tuple, int]]], dict[tuple, int], Any]:
    """``(literal → [(pattern key, clause number)], pattern key → number of clauses, an
    Aho–Corasick automaton of every such literal of two code points or more, or None)`` of the
    prefilter clauses of every pattern of ``prules`` (computed once per rule list; the automaton
    is ``None`` without ``ahocorasick_rs``). The single code points, which occur everywhere,
    are looked up in the set of a stretch's characters instead."""
    got = getattr(prules, "_owners", None)
    if got is None or got[0] != (id(prules.rules), len(prules.rules)):
        owners: dict[str, list[tuple[tuple, int]]] = {}
        counts: dict[tuple, int] = {}
        for pr in prules.rules:
            for i, pat in enumerate(pr.patterns):
                clauses = pr.prefilters[i] if i < len(pr.prefilters) else ()
                key = (pr.id, i, pat.pattern, pat.flags)
                counts[key] = len(clauses)
                for c, clause in enumerate(clauses):
                    for lit in clause:
                        owners.setdefault(lit, []).append((key, c))
        auto = None
        names = [lit for lit in owners if len(lit) > 1]
        if names:
            try:
                import ahocorasick_rs

                auto = ahocorasick_rs.AhoCorasick(names, matchkind=ahocorasick_rs.MatchKind.Standard)
            except Exception:  # noqa: BLE001 - no automaton: each literal is looked for with `in`
                auto = None
        singles = [lit for lit in owners if len(lit) == 1]
        got = ((id(prules.rules), len(prules.rules)), owners, counts, auto, {}, names, singles)
        prules._owners = got  # type: ignore[attr-defined]
    return got[1], got[2], got[3]


_NEAR_MEMO_MAX = 512
"""Most sets of literals present whose candidate patterns :func:`_near_candidates` keeps."""


def _near_candidates(t: _Target, sess: _SpliceSession, prules: PatternRules | None) -> frozenset:
    """The keys of the patterns that may match in the stretch around this version's edit that
    holds every match a splice searches for with bounds up to :data:`_NEAR_LB` and
    :data:`_NEAR_REACH`: those with a literal of each prefilter clause in it (one Aho–Corasick
    pass over the stretch for every prefilter literal); computed once per version, and memoised
    per rule list by the set of literals present (typing in a line seldom changes it).
    A pattern outside this set, with no previous match and such bounds, has no match now."""
    got = sess.scratch.get("near")
    if got is None:
        a, b = sess.window(_NEAR_LB, _NEAR_REACH)
        folded = t.text[a:b].casefold()
        if prules is None:
            got = frozenset()
        else:
            owners, counts, auto = _literal_owners(prules)
            present: frozenset[str] | None = None
            if auto is not None:
                lits, singles = prules._owners[5], prules._owners[6]  # type: ignore[attr-defined]
                try:
                    found = {i for i, _s, _e in auto.find_matches_as_indexes(folded, overlapping=True)}
                    chars = set(folded)
                    present = frozenset([*(lits[i] for i in found), *(c for c in singles if c in chars)])
                except UnicodeError:  # lone surrogates: the library cannot take them
                    present = None
            if present is None:
                present = frozenset(lit for lit in owners if lit in folded)
            memo = prules._owners[4]  # type: ignore[attr-defined]
            got = memo.get(present)
            if got is None:
                sat: dict[tuple, set[int]] = {}
                for lit in present:
                    for key, c in owners.get(lit, ()):
                        sat.setdefault(key, set()).add(c)
                if len(memo) >= _NEAR_MEMO_MAX:
                    memo.clear()
                got = memo[present] = frozenset(key for key, cs in sat.items() if len(cs) == counts[key])
        sess.scratch["near"] = got
        t.near = got
    return got


def _window_may(t: _Target, sess: _SpliceSession, clauses, bounds: tuple[int, int]) -> tuple[int, int, bool]:
    """``(a, b, may)``: the stretch ``[a, b)`` of ``t``'s text that holds every match a splice
    with ``bounds`` searches for in this version (:meth:`~unveil.core.checks.splice.Session.window`),
    and whether every clause of ``clauses`` has a member there (patterns of one shape share the
    stretch and its literal memo)."""
    a, b = sess.window(*bounds)
    return a, b, t.may_contain(clauses, a, b)


_ANCHOR_SHARE = 16
"""A pattern is searched only where its start literals occur (:func:`_start_positions`) while
they occur at most once per this many code points; else by one ``finditer``."""


def _start_positions(pat, t: _Target) -> Sequence[int] | None:
    """Sorted offsets in ``t``'s text where one of the pattern's
    :func:`~unveil.core.checks.pattern_analysis.start_literals` occurs (case-folded), each once:
    the only places a match of it can start. ``None`` when it has none, when case folding moved
    offsets, or when they are too many to be worth it. The literals' sorted offsets are merged
    (:func:`_union`) into an ``array("q")``: a set and a sorted list of Python integers took
    about 60 bytes an offset (one pattern of the padded 10 MB ``AGENTS.md`` starts at a few
    hundred thousand places)."""
    lits = start_literals(pat.pattern, pat.flags)
    if not lits:
        return None
    lines = t.line_index()
    if not lines.ok:
        return None
    limit = len(t.text) // _ANCHOR_SHARE + 1
    found: Sequence[int] = ()
    for lit in lits:
        occ = lines.occurrences(lit, limit - len(found))
        if occ is None:
            return None
        found = _union(found, occ) if found else occ
        if len(found) > limit:
            return None
    return found


def _union(a: Sequence[int], b: Sequence[int]) -> array:
    """The offsets of the sorted sequences ``a`` and ``b``, sorted, each once, as an ``array("q")``."""
    out = array("q")
    last = -1
    for o in heapq.merge(a, b):
        if o != last:
            out.append(o)
            last = o
    return out


def _anchored(pat, text: str, starts: Sequence[int], timeout: float):
    """The matches of ``pat`` in ``text``, as one ``finditer`` gives them, for a pattern whose
    matches can start only at ``starts`` (sorted offsets): an anchored ``match`` at each start
    past the end of the last match. Raises ``TimeoutError`` after the matches before it when
    they take longer than ``timeout`` seconds together."""
    deadline = time.monotonic() + timeout
    cursor = 0
    match = pat.match
    for p in starts:
        if p < cursor:
            continue
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("regex timed out")
        m = match(text, p, timeout=left)
        if m is not None:
            yield m
            cursor = m.end() if m.end() > p else p + 1


def _matches(pat, t: _Target, state: DocState, timeout: float, windows, windows_spans, reach=None):
    """The records (:func:`~unveil.core.checks.literal_index.records`) of ``pat`` on ``t``: in
    ``windows`` (``(pos, stop, endpos)``), else in ``windows_spans`` (``(pos, endpos)``), else
    in the whole text; lazily (a time-out raised after the records before it)."""
    vt = t.text
    if windows is not None:
        return _in_windows(pat, vt, windows, timeout, state.memo, reach)
    if windows_spans is None:
        return _records(pat.finditer(vt, timeout=timeout))
    return _in_spans(pat, vt, windows_spans, timeout, state.memo, reach)


def _match_pattern(pr, t: _Target, state: DocState, timeout: float, spans: list, out: list, matches, collected=None):
    """The findings of the records ``matches`` of one pattern of ``pr`` on ``t`` (appended to
    ``out``; ``collected``, when given, gets every record). ``None``, or on timeout the source
    offset after the last match."""
    vt = t.text
    last = 0
    try:
        for rec in matches:
            if collected is not None:
                collected.append(rec)
            _s, e, vs, ve = rec
            last = e
            while vs < ve and vt[vs].isspace():
                vs += 1  # a range starts and ends on what the pattern is about, not on blank lines
            while ve > vs and vt[ve - 1].isspace():
                ve -= 1
            if ve <= vs:
                continue
            f = _finding(pr, state, t, vs, ve, timeout)
            if f is not None and not any(s < f.end and f.start < e for s, e in spans):
                spans.append((f.start, f.end))
                out.append(f)
    except TimeoutError:
        return t.orig_start(last) if last else 0
    return None


def _reach(pr: PatternRule, i: int) -> int | tuple | None:
    """The cached :func:`reach_bound` of pattern ``i`` of ``pr``."""
    return pr.reaches[i] if i < len(pr.reaches) else reach_bound(pr.patterns[i].pattern, pr.patterns[i].flags)


def _reach_in(pr: PatternRule, i: int, t: "_Target") -> int | None:
    """:func:`_reach` of pattern ``i`` in code points for the text of ``t``: a reach in class
    runs is evaluated on its line index (``None`` when that is unusable)."""
    r = _reach(pr, i)
    if not isinstance(r, tuple):
        return r
    lines = t.line_index()
    if not lines.ok:
        return None
    return sum(c * lines.longest_run(k) for k, c in r)


def _collapse(s: str) -> str:
    return "".join(s.split())


def _finding(pr: PatternRule, state: DocState, t: _Target, vs: int, ve: int, timeout: float) -> Finding | None:
    dc = state.dc
    view = dc.view
    ostart, oend = t.orig_start(vs), t.orig_end(ve)
    region = dc.regions.region(ostart)
    # frontmatter values are read every session (a skill's description is in every listing):
    # a rule that applies to prose applies to them too; decoded payloads are read wherever they sit
    if region not in pr.applies and not state.decoded and not (region == "frontmatter" and "prose" in pr.applies):
        return None
    if pr.requires or pr.excludes:
        line_only = region in ("frontmatter", "code")
        us, ue = cx.unit_bounds(t.text, vs, ve, line_only=line_only)
        unit = t.text[us:ue]
        try:
            for p in pr.requires:
                if not p.search(unit, timeout=timeout):
                    return None
            for p in pr.excludes:
                if p.search(unit, timeout=timeout):
                    return None
        except TimeoutError:
            pass  # keep the hit rather than miss it
    # the judgement reads the model view: the same source range there
    jvs = view.view_offset(ostart)
    jve = max(jvs + 1, view.view_offset(oend))
    j = cx.judge(dc, pr.options, pr.rule.severity, jvs, jve, pr.raise_if, pr.lower_if, timeout)
    matched = t.text[vs:ve]
    if pr.rule.category == "secrets":  # never print a secret: CI logs and SARIF uploads are public
        from unveil.core.redact import redact

        matched = redact(matched)
    try:
        msg = pr.message.format(match=_clip(matched))
    except (KeyError, IndexError, ValueError):
        msg = pr.message
    notes = [_REASON_TEXT.get(r, r) for r in j.reasons]
    original = dc.original[ostart:oend]
    normalised = t.name == "reading" and _collapse(matched) != _collapse(original)
    if normalised and j.region != "hidden":
        notes.append("read through markup, encoding or look-alike characters")
    if notes:
        msg += " (" + "; ".join(notes) + ")"
    return Finding(
        pr.id,
        j.severity,
        ostart,
        oend,
        msg,
        category=pr.rule.category,
        hidden_text=matched if (j.region == "hidden" and view.text[vs:ve] != original) else None,
        data={
            "region": j.region,
            "context": list(j.reasons),
            "base_severity": pr.rule.severity.label,
            "combo": pr.combo,
            "reading": t.name,
            **({"normalised": matched} if normalised else {}),
        },
    )


_COMBO_LABEL = {
    "input": "untrusted input/injection",
    "secrets": "secret or private-data access",
    "egress": "sending data out",
}


def combine(findings: list[Finding], doc=None) -> list[Finding]:
    """Combination post-pass: if the file has an ``input``, a ``secrets`` and an ``egress``
    finding at warning or above, raise each such finding to error and append
    "(combined with …)" naming the other two roles with their rule ids and 1-based lines."""
    active = [
        f
        for f in findings
        if f.data.get("combo") and f.severity <= Severity.WARNING and "floor" not in (f.data.get("context") or ())
    ]  # a floored finding was lowered
    roles: dict[str, list[Finding]] = {}
    for f in active:
        roles.setdefault(f.data["combo"], []).append(f)
    if not all(r in roles for r in ("input", "secrets", "egress")):
        return findings

    def where(f: Finding) -> str:
        return f"{f.rule} line {doc.line_of(f.start) + 1}" if doc is not None else f.rule

    active_ids = {id(f) for f in active}
    out = []
    for f in findings:
        role = f.data.get("combo")
        if id(f) in active_ids and role:
            others = [o for o in ("input", "secrets", "egress") if o != role]
            parts = [f"{_COMBO_LABEL[o]} ({where(roles[o][0])})" for o in others]
            f = f.with_(
                severity=Severity.ERROR,
                message=f"{f.message} (combined with {' and '.join(parts)} in this file)",
                data={**f.data, "combined": True},
            )
        out.append(f)
    return out


def check(ctx) -> list[Finding]:
    """Run the bundled pattern rules plus the user's (``ctx.settings.rules_paths``, when that
    setting exists), then the combination pass."""
    extra = tuple(str(p) for p in (getattr(ctx.settings, "rules_paths", None) or ()))
    prules = load_pattern_rules(extra)
    return combine(run_rules(ctx, prules), ctx.doc)


_VOCAB_WORD = regex.compile(r"[A-Za-z]{3,}")
_REGEX_SYNTAX = regex.compile(r"\\[A-Za-z]|\(\?(?:P?<\w+>|<?[=!]|[:>]|[A-Za-z]+[:)])")


@lru_cache(maxsize=1)
def rule_vocabulary() -> frozenset[str]:
    """The lower-case ASCII words (3+ letters) of the bundled pattern rules: the letter runs of
    each pattern's source (escapes such as ``\\b`` and group syntax such as ``(?P<hit>`` removed)
    and of its required literals (:func:`~unveil.core.checks.pattern_analysis.required_literals`).
    What the rules look for, in every language and notation they cover (commands, URL parts,
    secret names); the obfuscation check tells rot13 from noise with it. Kept with the bundled
    rules' cached analysis (:func:`_bundled_analyses`)."""
    rules = load_pattern_rules().rules
    if _VOCABULARY:
        return _VOCABULARY[0]
    return _vocabulary(rules)


_VOCABULARY: list[frozenset[str]] = []
""":func:`rule_vocabulary` as computed or loaded with the bundled rules' analysis (empty until then)."""


def _vocabulary(rules) -> frozenset[str]:
    words: set[str] = set()
    for pr in rules:
        if _is_user(pr):
            continue
        for pat in pr.patterns:
            words.update(w.lower() for w in _VOCAB_WORD.findall(_REGEX_SYNTAX.sub(" ", pat.pattern)))
        for clauses in pr.prefilters:
            for clause in clauses:
                for lit in clause:
                    words.update(w.lower() for w in _VOCAB_WORD.findall(lit))
    return frozenset(words)


obfuscation.set_rescan(scan_text)  # decoded payloads are rescanned with every pattern rule
obfuscation.set_vocabulary(rule_vocabulary)  # rot13 candidates are told from noise by the rules' words
