""":func:`judge_script`: one parsed script (and every script nested in it) run through every rule:
download-then-execute and remote packages (:mod:`.download`), network sends (:mod:`.network`),
persistence writes (:mod:`.persistence`), secret paths (:mod:`.secret_paths`) and inline Python /
Node (:mod:`.snippets`). The rule modules get this function through :attr:`Judge.nested` for the
scripts they find inside a command."""

from __future__ import annotations

import re

from unveil.core import shell
from unveil.core.checks.commands.download import judge_download_exec, judge_remote_package
from unveil.core.checks.commands.hits import Hit, Judge, clip
from unveil.core.checks.commands.network import judge_git_push, judge_network, judge_pipes_send
from unveil.core.checks.commands.persistence import content_of, judge_persistence
from unveil.core.checks.commands.secret_paths import judge_secret_paths
from unveil.core.checks.commands.snippets import judge_snippet
from unveil.core.checks.commands.vocabulary import (
    RULE_DOWNLOAD_EXEC,
    RULE_SEND_SECRET,
    RULE_SUB_NETWORK,
    RULE_TRUNCATED,
    RULE_UPLOAD,
)
from unveil.core.findings import Severity
from unveil.core.shell import Command, Script


def judge_script(script: Script, origin: str) -> list[Hit]:
    """All :class:`Hit` values of ``script`` (parsed by :func:`unveil.core.shell.parse`) for a
    command found at ``origin`` (``code``, ``hook``, ``bang``, ``config``, ``permission``,
    ``decoded``, ``hidden``).

    De-obfuscation: a reading of ``script`` that runs a command name its literal reading does not
    (:attr:`Script.new_names`: ``${c}rl``, ``curl${IFS}-s``, ``eval "$a$b …"``, ``eval
    "$(printf '%s' 'cu' 'rl' …)"``), and a command whose name is split by quotes or backslashes
    (``c''url``, ``"cu"rl``, ``c\\url``), raise their download-and-run and secret-to-network hits
    to error with "after de-obfuscation: <normalised command>" in the message: obfuscating a
    command is itself evidence of intent."""
    alts = [s for s in script.line_scripts if s.reading]
    if alts:
        script.line_scripts = [s for s in script.line_scripts if not s.reading]
        try:
            hits = judge_script(script, origin)
        finally:
            script.line_scripts = script.line_scripts + alts
        for a in alts:
            for h in judge_script(a, origin):
                if a.new_names and h.rule in DEOBFUSCATED_RULES:
                    _raise_deobfuscated(h, _reading_line(a, h.start))
                hits.append(h)
        return hits
    hits = _judge_literal(script, origin)
    split = _quote_split(script)
    if split:
        for h in hits:
            if h.rule in DEOBFUSCATED_RULES:
                for b, e, norm in split:
                    if h.start < e and b < h.end:
                        _raise_deobfuscated(h, norm)
                        break
    return hits


DEOBFUSCATED_RULES = frozenset({RULE_DOWNLOAD_EXEC, RULE_SEND_SECRET, RULE_UPLOAD, RULE_SUB_NETWORK})
"""Rules whose hits in an obfuscated command are raised to error (see :func:`judge_script`)."""
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_.+-]+")


def _raise_deobfuscated(h: Hit, norm: str) -> None:
    h.severity = Severity.ERROR
    if "after de-obfuscation" not in h.message:
        h.message += f" (after de-obfuscation: {clip(norm, 90)})"


def _reading_line(a: Script, start: int) -> str:
    """The line of a de-obfuscated reading whose text maps to offset ``start`` (or after)."""
    text, m = a.reading, a.reading_map
    k = 0
    if m is not None:
        k = next((i for i in range(len(text)) if m(i) >= start), 0)
    ls = text.rfind("\n", 0, k) + 1
    le = text.find("\n", k)
    return text[ls : le if le >= 0 else len(text)].strip()


def _quote_split(script: Script) -> list[tuple[int, int, str]]:
    """``(start, end, normalised pipeline)`` of every pipeline with a command name written with
    quotes or backslashes inside it (``c''url``, ``"cu"rl``, ``c\\url``; not a wholly quoted
    ``"curl"``)."""
    out = []
    for s in script.scripts():
        for p in s.pipelines:
            for c in p.stages:
                names = [c.argv[0]] if c.argv else []
                name, _args, wrappers = c.effective()
                if wrappers:
                    names.extend(w for w in c.argv if w.text == name or shell.basename(w.text) == name)
                if any(
                    w.raw != w.text
                    and _PLAIN_NAME.fullmatch(w.text)
                    and any(q in w.raw for q in "'\"\\")
                    and w.raw not in (f"'{w.text}'", f'"{w.text}"')
                    for w in names
                ):
                    norm = " | ".join(" ".join(w.text for w in st.argv) for st in p.stages)
                    out.append((p.start, p.end, norm))
                    break
    return out


def _judge_literal(script: Script, origin: str) -> list[Hit]:
    """:func:`judge_script` of one reading."""
    j = Judge(origin, judge_script)
    scripts = list(script.scripts())
    for s in scripts:
        judge_download_exec(j, s)
        if s.truncated is not None:
            j.add(
                RULE_TRUNCATED,
                Severity.WARNING,
                s.truncated,
                s.truncated + 1,
                f"shell nested deeper than {shell.MAX_DEPTH} levels (sh -c / eval / $(…)): the innermost "
                "commands were not parsed",
            )
    for s in scripts:
        for p in s.pipelines:
            for k, st in enumerate(p.stages[1:], 1):
                before: list[Command] = []
                for c in p.stages[:k]:
                    before.append(c)
                    if c.body is not None:
                        before.extend(c.body.commands())
                j.stdin_content[id(st)] = "\n".join(content_of(j, c) for c in before)
    seen_cmds: set[int] = set()
    for c in script.commands():
        if id(c) in seen_cmds:
            continue
        seen_cmds.add(id(c))
        judge_remote_package(j, c)
        judge_network(j, c)
        judge_persistence(j, c)
        judge_secret_paths(j, c)
        for sn in c.snippets:
            for h in judge_snippet(sn, origin, judge_script):
                j.hits.append(h)
    for s in scripts:
        judge_pipes_send(j, s)
        judge_git_push(j, s)
    return j.hits
