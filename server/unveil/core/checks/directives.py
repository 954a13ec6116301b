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
                             # and MULTILINE. Matched on the *model view*: NFKC per character,
                             # Default_Ignorable code points removed, Unicode tag characters decoded
                             # to ASCII; ranges map back exactly to the original text.
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

    [rule.context]           # optional; defaults shown
    prohibition = "lower"    # "never run curl | sh", "`curl | sh` is forbidden" → lowered
    denylist = "lower"       # a list item under "## Never" / "Avoid:" or in a permissions deny array
    quoted = "lower"         # quoted/inline-code with "e.g."/"such as"/"detect"/"flag"…, or a code
                             # block in a security-review file or after an example lead-in
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

Patterns run with a time bound (:data:`PATTERN_TIMEOUT` seconds per pattern per document, the
`regex` module's ``timeout=``). On timeout the check emits ``UNV002`` naming the rule and the
offset after which that rule did not look, so nothing is skipped silently. A rule with an invalid
pattern is not loaded; :func:`load_pattern_rules` reports it in ``errors`` naming the file and the
rule, and the other rules keep working.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Sequence

import regex

from unveil.core import context as cx
from unveil.core.findings import Finding, Severity
from unveil.core.rules import Rule, RuleSet, bundled_rules, load_rule_files

log = logging.getLogger(__name__)

CHECK_NAME = "directives"
TIMEOUT_RULE = "UNV002"
PATTERN_TIMEOUT = 0.25
"""Seconds allowed per pattern per document (wall clock, `regex` ``timeout=``)."""
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
            out.append(regex.compile(pat, flags))
        except (regex.error, TypeError, ValueError, OverflowError, RecursionError) as exc:
            raise ValueError(f"rule {rid}: invalid {what}[{i}] {pat!r}: {exc}") from None
    return out


def compile_rule(rule: Rule) -> PatternRule:
    """Compile one rule with ``check = "directives"``. Raises ``ValueError`` naming the rule
    and the bad field."""
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
    for key, allowed in (("prohibition", ("lower", "keep")), ("quoted", ("lower", "keep")),
                         ("denylist", ("lower", "keep")), ("code", ("lower", "keep")),
                         ("hidden", ("raise", "keep"))):
        if key in ctx:
            if ctx[key] not in allowed:
                raise ValueError(f"rule {rid}: context.{key} must be one of {list(allowed)}")
            kw[key] = ctx[key]
    unknown = set(ctx) - {"prohibition", "quoted", "denylist", "code", "hidden", "raise_if", "lower_if"}
    if unknown:
        raise ValueError(f"rule {rid}: unknown context key(s) {sorted(unknown)}")
    combo = raw.get("combo", COMBO_DEFAULTS.get(rule.category))
    if combo not in (None, "input", "secrets", "egress"):
        raise ValueError(f"rule {rid}: combo must be input, secrets or egress")
    return PatternRule(
        rule=rule,
        patterns=_compile_list(pats, flags, "patterns", rid),
        requires=_compile_list(_strings(raw.get("requires"), "requires", rid), flags, "requires", rid),
        excludes=_compile_list(_strings(raw.get("excludes"), "excludes", rid), flags, "excludes", rid),
        applies=frozenset(applies),
        kinds=frozenset(_strings(raw.get("kinds"), "kinds", rid) or ["*"]),
        message=str(raw.get("message") or rule.summary),
        options=cx.ContextOptions(**kw),
        raise_if=_compile_list(_strings(ctx.get("raise_if"), "raise_if", rid), flags, "context.raise_if", rid),
        lower_if=_compile_list(_strings(ctx.get("lower_if"), "lower_if", rid), flags, "context.lower_if", rid),
        combo=combo,
    )


def compile_rules(rules: Iterable[Rule], errors: list[str] | None = None) -> PatternRules:
    """Compile every ``directives`` rule of ``rules``; bad ones go to ``errors``
    (``"<file>: rule <id>: <problem>"``)."""
    out = PatternRules(errors=list(errors or []))
    for r in rules:
        if r.check != CHECK_NAME:
            continue
        try:
            out.rules.append(compile_rule(r))
        except ValueError as exc:
            out.errors.append(f"{r.source}: {exc}")
    out.rules.sort(key=lambda p: p.id)
    return out


@lru_cache(maxsize=8)
def load_pattern_rules(extra_paths: tuple[str, ...] = ()) -> PatternRules:
    """The bundled pattern rules plus those in ``extra_paths`` (rule files or folders of
    ``*.toml``; user rules). Cached per tuple of paths. Never raises: unreadable files, TOML
    errors, bad rules, duplicate ids and invalid regexes become lines in ``errors``."""
    base = bundled_rules()
    errors: list[str] = []
    rules: list[Rule] = list(base)
    if extra_paths:
        user = RuleSet(rules=dict(base.rules))
        load_rule_files([Path(p) for p in extra_paths], into=user)
        errors.extend(user.errors)
        rules = list(user)
    compiled = compile_rules(rules, errors)
    for e in compiled.errors:
        log.warning("rule load error: %s", e)
    return compiled


def _clip(s: str, n: int = 80) -> str:
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"


_REASON_TEXT = {
    "prohibition": "lowered: stated as a prohibition",
    "deny-list": "lowered: in a deny-list",
    "quoted example": "lowered: quoted as an example",
    "code": "lowered: inside code",
    "context": "lowered by context",
    "hidden": "raised: hidden from a reader",
    "raised by context": "raised by context",
}


def run_rules(ctx, prules: PatternRules, timeout: float = PATTERN_TIMEOUT) -> list[Finding]:
    """Run ``prules`` on the document of ``ctx`` (a :class:`unveil.core.checks.Context`).
    Returns findings in original code-point offsets, before the combination pass."""
    text = ctx.doc.text
    if not text:
        return []
    dc = cx.doc_context(text, getattr(ctx, "markdown", None))
    vt = dc.view.text
    kind = getattr(ctx, "kind", "*") or "*"
    out: list[Finding] = []
    for pr in prules.rules:
        if "*" not in pr.kinds and kind not in pr.kinds:
            continue
        seen: list[tuple[int, int]] = []  # one finding per overlapping stretch, whichever pattern hit first
        for pat in pr.patterns:
            last = 0
            try:
                for m in pat.finditer(vt, timeout=timeout):
                    last = m.end()
                    try:
                        vs, ve = m.span("hit")
                        if vs < 0:
                            vs, ve = m.span()
                    except (IndexError, regex.error):
                        vs, ve = m.span()
                    if ve <= vs:
                        continue
                    f = _finding(pr, dc, vs, ve, timeout)
                    if f is not None and not any(s < f.end and f.start < e for s, e in seen):
                        seen.append((f.start, f.end))
                        out.append(f)
            except TimeoutError:
                o = dc.view.orig_start(last)
                out.append(
                    Finding(
                        TIMEOUT_RULE,
                        Severity.WARNING,
                        o,
                        o,
                        f"rule {pr.id} timed out on this file; text after offset {o} not checked by it "
                        f"(pattern {_clip(pat.pattern, 60)!r})",
                        category="internal",
                        data={"rule": pr.id, "offset": o},
                    )
                )
    return out


def _finding(pr: PatternRule, dc: cx.DocContext, vs: int, ve: int, timeout: float) -> Finding | None:
    view = dc.view
    ostart, oend = view.orig_start(vs), view.orig_end(ve)
    region = dc.regions.region(ostart)
    if region not in pr.applies:
        return None
    if pr.requires or pr.excludes:
        line_only = region in ("frontmatter", "code")
        us, ue = cx.unit_bounds(view.text, vs, ve, line_only=line_only)
        unit = view.text[us:ue]
        try:
            for p in pr.requires:
                if not p.search(unit, timeout=timeout):
                    return None
            for p in pr.excludes:
                if p.search(unit, timeout=timeout):
                    return None
        except TimeoutError:
            pass  # keep the hit rather than miss it
    j = cx.judge(dc, pr.options, pr.rule.severity, vs, ve, pr.raise_if, pr.lower_if, timeout)
    matched = view.text[vs:ve]
    try:
        msg = pr.message.format(match=_clip(matched))
    except (KeyError, IndexError, ValueError):
        msg = pr.message
    notes = [_REASON_TEXT.get(r, r) for r in j.reasons]
    if notes:
        msg += " (" + "; ".join(notes) + ")"
    original = dc.original[ostart:oend]
    return Finding(
        pr.id,
        j.severity,
        ostart,
        oend,
        msg,
        category=pr.rule.category,
        hidden_text=matched if (j.region == "hidden" and matched != original) else None,
        data={"region": j.region, "context": list(j.reasons), "base_severity": pr.rule.severity.label,
              "combo": pr.combo},
    )


_COMBO_LABEL = {"input": "untrusted input/injection", "secrets": "secret or private-data access",
                "egress": "sending data out"}


def combine(findings: list[Finding], doc=None) -> list[Finding]:
    """Combination post-pass: if the file has an ``input``, a ``secrets`` and an ``egress``
    finding at warning or above, raise each such finding to error and append
    "(combined with …)" naming the other two roles with their rule ids and 1-based lines."""
    active = [f for f in findings if f.data.get("combo") and f.severity <= Severity.WARNING]
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
