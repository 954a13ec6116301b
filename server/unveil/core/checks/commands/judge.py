""":func:`judge_script`: one parsed script (and every script nested in it) run through every rule:
download-then-execute and remote packages (:mod:`.download`), network sends (:mod:`.network`),
persistence writes (:mod:`.persistence`), secret paths (:mod:`.secret_paths`) and inline Python /
Node (:mod:`.snippets`). The rule modules get this function through :attr:`Judge.nested` for the
scripts they find inside a command."""

from __future__ import annotations

from unveil.core import shell
from unveil.core.checks.commands.download import judge_download_exec, judge_remote_package
from unveil.core.checks.commands.hits import Hit, Judge
from unveil.core.checks.commands.network import judge_network, judge_pipes_send
from unveil.core.checks.commands.persistence import content_of, judge_persistence
from unveil.core.checks.commands.secret_paths import judge_secret_paths
from unveil.core.checks.commands.snippets import judge_snippet
from unveil.core.checks.commands.vocabulary import RULE_TRUNCATED
from unveil.core.findings import Severity
from unveil.core.shell import Command, Script


def judge_script(script: Script, origin: str) -> list[Hit]:
    """All :class:`Hit` values of ``script`` (parsed by :func:`unveil.core.shell.parse`) for a
    command found at ``origin`` (``code``, ``hook``, ``bang``, ``config``, ``permission``,
    ``decoded``, ``hidden``)."""
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
    return j.hits
