"""Approval bypass and privilege escalation by evidence (rules PRV011–PRV013).

The catalogue is data, ``unveil/data/escalation_forms.toml``: ``[[command]]`` forms (a command name,
leading sub-command words, flags, arguments) judged on commands parsed by :mod:`unveil.core.shell`
(``gh pr merge --admin``, ``git commit --no-verify``, ``sudo -n``, ``chmod 777``, ``aws sts
assume-role`` of an admin role, ``terraform apply -auto-approve`` …), and ``[[prose]]`` forms, a
sentence outside code naming the same act ("repeat the command as root", "commit with
``--no-verify``", "pick 'don't ask again'", "answer its own go/no-go prompts in the affirmative").

Where: fenced blocks whose info string names a shell (or none, or plain text), inline code spans
whose first word is a catalogue command (after ``$ `` / ``sudo``), and, for prose forms, every
sentence of the body outside fenced blocks (inline code included: the prose names the flag).

A prose form counts only in a sentence with a directive word (a base-form verb or a modal,
:func:`unveil.core.instruction.has_directive_word`): a checklist item "`sudo`, `chmod 777`, setuid
bits" or a table row "`--no-verify` | Skips hooks" names the form without telling anyone to use it.

Severity is the form's (what the agent would do). Only evidence next to the hit lowers it: a
prohibition before the hit in the same sentence ("never use ``--no-verify``", "do not run as root")
makes it info, and so does an item of a deny-list — a list whose own lead-in line opens it ("Flag
these patterns — they are things we do not do:"), the context judge's rule
(:func:`unveil.core.context.in_denylist`). Nothing elsewhere in the file lowers it. A parsed finding carries
``data["parsed"] = True`` so :func:`unveil.core.checks.commands.supersede.supersede` merges it into
an overlapping regex finding its rule lists in ``supersedes``.

Cost: the check returns at once when none of the catalogue's trigger literals occurs in the
case-folded text (one Aho–Corasick pass, ``ahocorasick_rs``).
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import regex

from unveil.core import context as cx
from unveil.core import shell
from unveil.core.checks.commands.locate import SHELL_LANGS
from unveil.core.checks.literal_index import MEMO_MAX_TEXT, Lines, near_literals, occurs
from unveil.core.checks.splice import casefolded
from unveil.core.findings import Finding, Severity
from unveil.core.incremental import relocatable
from unveil.core.instruction import has_directive_word

log = logging.getLogger(__name__)

CATEGORY = "privilege-escalation"

_SEV = {"error": Severity.ERROR, "warning": Severity.WARNING, "info": Severity.INFO}

_SHELLISH = SHELL_LANGS | frozenset({"", "text", "txt", "plain", "powershell", "ps1"})
"""Fence info strings whose lines are judged as commands: the shell languages of the command
checks plus untagged or plain-text fences and PowerShell."""

_PROHIBITION = regex.compile(
    r"\b(?:never|don'?t|do not|does not|must not|mustn'?t|should not|shouldn'?t|cannot|can'?t|may not|avoid|"
    r"forbid\w*|prohibit\w*|not (?:allowed|permitted)|no longer|refuse|instead of|rather than|without)\b",
    regex.I,
)
"""Negations: count anywhere in the sentence before the hit."""

_PREVENTING = regex.compile(
    r"\b(?:block\w*|prevent\w*|reject\w*|den(?:y|ies)|disallow\w*|guard(?:s|ing)? against|"
    r"protect\w* against|stop\w*|catch\w*|detect\w*)\b[^,;:\n]*$",
    regex.I,
)
"""Verbs that stop the act: count when in the same clause as the hit (no comma or semicolon between),
"a hook to prevent agents from skipping hooks with --no-verify", not "if the hook blocks a commit,
commit with --no-verify"."""

_SENTENCE_END = regex.compile(
    r"[.!?](?=\s)|(?:\r\n?|\n)[ \t]*(?:\r\n?|\n)|(?:\r\n?|\n)(?=[ \t]*(?:[-*+]|\d+[.)]|#)\s)"
    r"|(?:\r\n?|\n)(?=[ \t]*\|)|\|[ \t]*(?=\r|\n)"
)
"""Where a sentence ends: a full stop, question or exclamation mark before white space, a blank
line, a list item, heading or table row starting on the next line, a table row's end. Line
breaks are ``\n``, ``\r\n`` or ``\r``."""


@dataclass(frozen=True)
class CommandForm:
    """One ``[[command]]`` entry of the catalogue (see the data file for the fields)."""

    id: str
    rule: str
    severity: Severity
    names: frozenset[str]
    sub: tuple[str, ...]
    flags: frozenset[str]
    args: frozenset[str]
    arg_regex: re.Pattern[str] | None
    all: bool
    raw: bool
    what: str
    min_positionals: int = 0


@dataclass(frozen=True)
class ProseForm:
    """One ``[[prose]]`` entry: ``pattern`` searched in one sentence."""

    id: str
    rule: str
    severity: Severity
    pattern: regex.Pattern
    what: str


def _soft_wrapped(pattern: str) -> str:
    """``pattern`` with each in-sentence window ``[^.!?\n]`` also crossing a single line break
    (a soft-wrapped sentence), never a blank line. Line breaks are ``\n``, ``\r\n`` or ``\r``
    (a CRLF file's blank line was crossed: the window read ``\r`` as a character)."""
    return pattern.replace("[^.!?\\n]", "(?:[^.!?\\n\\r]|(?:\\r\\n?|\\n)(?![ \\t]*[\\r\\n]))")


def _data_path() -> Path:
    return Path(__file__).resolve().parents[2] / "data" / "escalation_forms.toml"


@lru_cache(maxsize=1)
def catalogue() -> tuple[tuple[CommandForm, ...], tuple[ProseForm, ...]]:
    """The parsed catalogue. Raises ``OSError``/``tomllib.TOMLDecodeError``/``KeyError``/``re.error``
    on a broken data file (a packaging bug, caught by the tests)."""
    from unveil.core import cache, rxcache

    data = cache.load_toml(_data_path())
    with rxcache.recording():  # bundled patterns: kept in the compiled-pattern cache
        return _forms(data)


def _forms(data: dict) -> tuple[tuple[CommandForm, ...], tuple[ProseForm, ...]]:
    cmds = tuple(
        CommandForm(
            c["id"],
            c["rule"],
            _SEV[c["severity"]],
            frozenset(c["names"]),
            tuple(c.get("sub", ())),
            frozenset(c.get("flags", ())),
            frozenset(c.get("args", ())),
            re.compile(c["arg_regex"], re.I) if c.get("arg_regex") else None,
            bool(c.get("all", False)),
            bool(c.get("raw", False)),
            c["what"],
            int(c.get("min_positionals", 0)),
        )
        for c in data.get("command", ())
    )
    prose = tuple(
        ProseForm(
            p["id"], p["rule"], _SEV[p["severity"]], regex.compile(_soft_wrapped(p["pattern"]), regex.I), p["what"]
        )
        for p in data.get("prose", ())
    )
    return cmds, prose


_TRIGGERS = (
    "--admin",
    "--auto",
    "auto-merge",
    "automerge",
    "--no-verify",
    "commit",
    "--force",
    "-f",
    "auto-approve",
    "dangerously",
    "--yolo",
    "--full-auto",
    "--yes",
    "-y",
    "sudo",
    "root",
    "chmod",
    "777",
    "666",
    "rwx",
    "o+w",
    "world-writable",
    "chown",
    "ownership",
    "owner",
    "assum",
    "ask again",
    "always allow",
    "affirmative",
    "behalf",
    "admin",
    "branch protection",
    "elevat",
    "superuser",
    "kubectl",
    "helm",
    "terraform",
    "tofu",
)


_LONGEST_TRIGGER = max(len(t) for t in _TRIGGERS)


@lru_cache(maxsize=1)
def _automaton():
    try:
        import ahocorasick_rs

        return ahocorasick_rs.AhoCorasick(list(_TRIGGERS))
    except Exception:  # noqa: BLE001 - no library: fall back to str.find
        return None


def may_apply(folded: str) -> bool:
    """Whether any trigger literal occurs in the case-folded text (the literal prefilter)."""
    ac = _automaton()
    if ac is not None:
        try:
            return occurs(ac, folded, _LONGEST_TRIGGER)
        except (UnicodeError, ValueError):  # lone surrogates (undecodable bytes): scan per literal
            pass
    return any(t in folded for t in _TRIGGERS)


# -- parsed commands ----------------------------------------------------------------------------


def _positionals(args) -> list[str]:
    return [a.text for a in args if not a.text.startswith("-")]


def _has_flag(texts: list[str], flag: str) -> bool:
    for t in texts:
        if t == flag or (flag.startswith("--") and t.startswith(flag + "=")):
            return True
        if (
            len(flag) == 2
            and flag[0] == "-"
            and flag[1].isalpha()
            and re.fullmatch(r"-[A-Za-z]{2,}", t)
            and flag[1] in t[1:]
        ):
            return True
    return False


def match_command(form: CommandForm, argv_texts: list[str], name: str, args) -> bool:
    """Whether a parsed command (``name`` and its ``args`` words) is ``form``."""
    if name not in form.names:
        return False
    texts = [a.text for a in args]
    pos = _positionals(args)
    if len(pos) < form.min_positionals:
        return False
    if form.sub and [p.lower() for p in pos[: len(form.sub)]] != list(form.sub):
        return False
    checks = []
    if form.flags:
        checks.append(any(_has_flag(texts, f) for f in form.flags))
    if form.args:
        checks.append(any(t in form.args for t in texts))
    if form.arg_regex is not None:
        checks.append(any(form.arg_regex.search(t) for t in texts))
    if not checks:
        return True
    return all(checks) if form.all else any(checks)


def _command_hits(script, forms) -> list[tuple[CommandForm, int, int]]:
    out = []
    for s in [script, *script.line_scripts]:
        for c in s.commands():
            if not c.argv:
                continue
            name, args, _w = c.effective()
            raw_name = c.name
            raw_args = c.argv[1:]
            for form in forms:
                if form.raw:
                    ok = match_command(form, [], raw_name, raw_args) and name != raw_name
                else:
                    ok = match_command(form, [], name, args)
                if ok:
                    out.append((form, c.start, c.end))
    return out


def _first_word(code: str) -> str:
    """The command name an inline code span starts with (a leading ``$ `` prompt skipped), as a
    base name. A function of ``code`` alone, cached for spans of at most
    :data:`FIRST_WORD_CACHE_MAX` code points (a long document asks again for every inline code
    span on every edit)."""
    return _first_word_cached(code) if len(code) <= FIRST_WORD_CACHE_MAX else _first_word_now(code)


FIRST_WORD_CACHE_MAX = 1024


@lru_cache(maxsize=8192)
def _first_word_cached(code: str) -> str:
    return _first_word_now(code)


def _first_word_now(code: str) -> str:
    s = re.sub(r"^\$\s+", "", code.strip())
    return shell.basename(re.split(r"[\s|;&()<>]", s, maxsplit=1)[0])


# -- prose --------------------------------------------------------------------------------------


def _sentence_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """``[a, b)`` of the sentence around ``[start, end)``: back to the previous sentence end, a blank
    line or a list item / heading start, forward to the next."""
    a = 0
    for m in _SENTENCE_END.finditer(text, max(0, start - 600), start):
        a = m.end()
    m = _SENTENCE_END.search(text, end, min(len(text), end + 600))
    b = m.start() if m else min(len(text), end + 600)
    return a, b


def _prohibited(text: str, a: int, start: int, end: int | None = None) -> bool:
    """A prohibition in the sentence starting at ``a`` around the hit ``[start, end)``: a negation
    before the hit ("never …", "do not …", "instead of …"), or a preventing verb in the same clause
    up to the hit's end ("to prevent containers from running as root")."""
    if _PROHIBITION.search(text, a, start):
        return True
    end = start if end is None else end
    return bool(_PREVENTING.search(text[a:end]))


# -- the check ----------------------------------------------------------------------------------


def _finding(
    form, sev: Severity, start: int, end: int, where: str, prohibited: bool, parsed: bool, listed: bool = False
) -> Finding:
    msg = f"{where} {form.what}"
    if listed:
        msg += " (lowered: an item of a deny-list, by its own lead-in line)"
    elif prohibited:
        msg += " (stated as a prohibition in the same sentence)"
    data = {"form": form.id, "region": where, "prohibited": prohibited}
    if parsed:
        data["parsed"] = True
    return Finding(form.rule, sev, start, max(end, start + 1), msg, category=CATEGORY, data=data)


def check(ctx) -> list[Finding]:
    """PRV011–PRV013 over the document's fenced shell blocks, inline code and prose sentences."""
    doc, md = ctx.doc, ctx.markdown
    text = doc.text
    folded = casefolded("escalation", text)  # (an open document folds only what an edit changed)
    if not may_apply(folded):
        return []
    try:
        cmds, prose = catalogue()
    except Exception as exc:  # noqa: BLE001 - a broken data file must not stop the analysis
        log.warning("escalation catalogue unreadable: %s", exc)
        return []
    names = frozenset(n for f in cmds for n in f.names) | {"sudo"}
    out: list[Finding] = []
    dc_box: list = []

    def denied(s: int, e: int) -> bool:
        """An item of a list whose own lead-in line says "Never:", "Flag these patterns … we do not
        do:" (the context judge's deny-list, docs/context.md); the document context is built only
        when a hit needs it."""
        if not dc_box:
            from unveil.core.checks.directives import doc_state

            dc_box.append(doc_state(text, md).dc)
        dc = dc_box[0]
        vs = dc.view.view_offset(s)
        return cx.in_denylist(dc.view.text, vs, max(vs + 1, dc.view.view_offset(e)))

    fences = []
    for fence in md.fences:
        fences.append((fence.start, fence.end))
        if fence.lang.lower() not in _SHELLISH:
            continue
        first = fence.line + 1
        last = doc.line_of(max(fence.start, fence.end - 1))
        if last < first:
            continue
        a = doc.line_starts[first]
        b = doc.line_starts[last] if last > first else a
        body = text[a:b]
        body = re.sub(r"(?m)^(\s*)\$ ", lambda m: m.group(1) + "  ", body)
        try:
            hits = _parsed_hits(body, a, cmds)
        except ImportError:
            raise
        except Exception:  # noqa: BLE001
            continue
        for form, s, e in hits:
            out.append(_finding(form, form.severity, s, e, "A command in a code block", False, True))
    fence_starts = {a for a, _b in fences}
    for span in md.code:
        if span.start in fence_starts:
            continue
        raw = text[span.start : span.end]
        if not raw.startswith("`"):
            continue
        n = len(raw) - len(raw.lstrip("`"))
        inner = raw[n : len(raw) - n] if raw.endswith("`" * n) and len(raw) >= 2 * n else raw[n:]
        if _first_word(inner) not in names:
            continue
        code = re.sub(r"\r\n|\r|\n", " ", inner)
        lead_m = re.match(r"^\s*(?:\$\s+)?", code)
        lead = lead_m.end() if lead_m else 0
        try:
            hits = _parsed_hits(code[lead:], span.start + n + lead, cmds)
        except ImportError:
            raise
        except Exception:  # noqa: BLE001
            continue
        for form, s, e in hits:
            a, _b = _sentence_bounds(text, span.start, span.end)
            banned = _prohibited(text, a, span.start)
            listed = not banned and denied(s, e)
            sev = Severity.INFO if banned or listed else form.severity
            out.append(_finding(form, sev, s, e, "Inline command", banned or listed, True, listed))
    # prose sentences outside fenced blocks
    fences.sort()
    lines = Lines(text, folded)
    memo = getattr(getattr(ctx, "incremental", None), "escalation_matches", None)
    if len(text) > MEMO_MAX_TEXT:
        memo = None
    if memo is not None:
        memo.next_version()
        lines.memo = memo
    # an open document: each form's matches spliced from the previous version's (exact, see
    # unveil.core.checks.splice); searched around its literals otherwise
    splices = getattr(getattr(ctx, "incremental", None), "splices", None)
    sess = splices.begin("escalation", text, lines.longest_run) if splices is not None and lines.ok else None
    for pform in prose:
        found, timed_out = _form_matches(pform, sess, lines, memo)
        for s, e, _hs, _he in found:
            if any(fa <= s < fb for fa, fb in fences):
                continue
            a, b = _sentence_bounds(text, s, e)
            if not has_directive_word(text[a:b]):
                continue  # a checklist or table naming the form, not telling anyone to do it
            banned = _prohibited(text, a, s, e)
            listed = not banned and denied(s, e)
            sev = Severity.INFO if banned or listed else pform.severity
            out.append(_finding(pform, sev, s, e, "The text", banned or listed, False, listed))
        if timed_out:
            out.append(
                Finding(
                    "UNV002",
                    Severity.WARNING,
                    0,
                    min(1, len(text)),
                    f"escalation form {pform.id} timed out on this file: it may have missed text anywhere in the file",
                )
            )
    if sess is not None and splices is not None:
        splices.commit("escalation", sess)
    return _dedupe(out)


FORM_TIMEOUT = 0.5
"""Seconds one prose form's search may take on one file (the ``regex`` module's ``timeout=``)."""


def _form_matches(pform, sess, lines: Lines, memo) -> tuple[list, bool]:
    """``(records, timed_out)``: the match records of prose form ``pform`` (spliced from the
    previous version's in an open document, ``sess``), and whether its search timed out twice:
    the first time-out is retried once (:func:`unveil.core.checks.directives.retry_limit`), and
    after the second the records found before it are returned."""
    from unveil.core.checks.directives import retry_limit

    limit = FORM_TIMEOUT
    got: list = []
    for attempt in (0, 1):
        cpu0 = time.thread_time()
        got = []
        try:
            if sess is not None:
                got = sess.records(
                    pform.id, pform.pattern, limit, lambda p=pform, t=limit: near_literals(p.pattern, lines, t, memo)
                )
            else:
                for r in near_literals(pform.pattern, lines, limit, memo):
                    got.append(r)
            return got, False
        except TimeoutError:
            if attempt:
                break
            limit = retry_limit(limit, time.thread_time() - cpu0)
    return got, True


def _parsed_hits(code: str, base: int, cmds) -> list:
    """``(form, start, end)`` of the command forms in ``code`` parsed as shell at ``base``;
    in the language server, reused for a block that did not change (moved with it:
    :func:`unveil.core.incremental.relocatable`; ``cmds``, the cached catalogue, is keyed by
    identity)."""
    return relocatable(
        "escalation", (code, id(cmds)), base, lambda: _command_hits(shell.parse(code, base), cmds), _moved_hit
    )


def _moved_hit(hit: tuple, d: int) -> tuple:
    form, s, e = hit
    return (form, s + d, e + d)


def _dedupe(found: list[Finding]) -> list[Finding]:
    """One finding per rule per overlapping range (the most severe, then the first)."""
    found.sort(key=lambda f: (f.start, f.severity, -(f.end - f.start)))
    kept: list[Finding] = []
    for f in found:
        if any(k.rule == f.rule and k.start < f.end and f.start < k.end for k in kept):
            continue
        kept.append(f)
    return kept
