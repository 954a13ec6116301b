"""SNP015: a secret location (``unveil/data/secret_paths.toml``) used as a path argument of a command
that is not a sender (those are EXF011's)."""

from __future__ import annotations

from unveil.core.checks.commands.hits import Judge, clip, severity_for
from unveil.core.checks.commands.locations import secret_in
from unveil.core.checks.commands.persistence import written_paths
from unveil.core.checks.commands.vocabulary import READ_LIKE_SKIP, RULE_SECRET_PATH, SENDERS
from unveil.core.findings import Severity
from unveil.core.shell import Command


def judge_secret_paths(j: Judge, c: Command) -> None:
    name, args, _w = c.effective()
    if not name:
        return
    written = {id(w) for w in written_paths(c)}
    for w in list(args) + [r.target for r in c.redirects if r.reads and r.target is not None]:
        if id(w) in written or w.text.startswith("-") and "=" not in w.text and "@" not in w.text:
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
