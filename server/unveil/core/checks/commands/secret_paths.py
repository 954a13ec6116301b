"""SNP015: a secret location (``unveil/data/secret_paths.toml``) used as a path argument of a command
that is not a sender (those are EXF011's)."""

from __future__ import annotations

from unveil.core.checks.commands.hits import Judge, clip, severity_for
from unveil.core.checks.commands.locations import secret_in
from unveil.core.checks.commands.persistence import written_paths
from unveil.core.checks.commands.vocabulary import READ_LIKE_SKIP, RULE_SECRET_PATH, SENDERS
from unveil.core.findings import Severity
from unveil.core.shell import Command

_SEARCHERS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "zgrep"})
_PATTERN_OPTS = frozenset({"-e", "--regexp", "-f", "--file"})
_VALUE_OPTS = frozenset(
    {
        "-m",
        "--max-count",
        "-A",
        "-B",
        "-C",
        "--context",
        "--after-context",
        "--before-context",
        "-g",
        "--glob",
        "-t",
        "--type",
        "--include",
        "--exclude",
        "--exclude-dir",
        "-d",
        "-D",
        "--color",
        "--colour",
    }
)


def _search_pattern(name: str, args) -> object | None:
    """The word of a grep-like command that is its search pattern (the first operand when no
    ``-e``/``-f`` gives one): a name in it (``grep .env``, ``grep -E '\\.env$'``) is searched
    for, not read."""
    if name not in _SEARCHERS:
        return None
    skip = False
    for a in args:
        t = a.text
        if skip:
            skip = False
            continue
        if t in _PATTERN_OPTS:
            return None  # the pattern is an option's value; every operand is a file
        if t in _VALUE_OPTS:
            skip = True
            continue
        if t.startswith("-") and t != "-":
            continue
        return a
    return None


def judge_secret_paths(j: Judge, c: Command) -> None:
    name, args, _w = c.effective()
    if not name:
        return
    written = {id(w) for w in written_paths(c)}
    pattern = _search_pattern(name, args)
    for w in list(args) + [r.target for r in c.redirects if r.reads and r.target is not None]:
        if id(w) in written or w is pattern or w.text.startswith("-") and "=" not in w.text and "@" not in w.text:
            continue
        loc = secret_in(w.text)
        if loc is None:
            continue
        if name in SENDERS:
            continue  # judged as sending (EXF011)
        manage = name in READ_LIKE_SKIP
        if manage and not j.auto:
            continue
        sev = Severity.WARNING if manage else severity_for(j.auto, False)
        j.add(
            RULE_SECRET_PATH,
            sev,
            c.start,
            c.end,
            f"{'Uses' if manage else 'Reads'} {loc.label}: {name} {clip(w.text, 60)}",
            location=loc.id,
        )
        return
