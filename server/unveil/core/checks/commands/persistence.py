"""PER011: writes to persistence locations (shell start-up files, cron, launchd, systemd, git hooks
and config keys, Windows Run keys, scheduled tasks …), raised to error when what is written runs
code or sends data."""

from __future__ import annotations

import re

from unveil.core import shell
from unveil.core.checks.commands.hits import Judge, ScriptJudge, clip, severity_for
from unveil.core.checks.commands.locations import match_location, path_candidates
from unveil.core.checks.commands.vocabulary import (
    FETCHERS,
    RULE_DOWNLOAD_EXEC,
    RULE_PERSISTENCE,
    RULE_REMOTE_PACKAGE,
    RULE_SEND_SECRET,
    RULE_SUB_NETWORK,
    URL,
)
from unveil.core.checks.commands.words import downloaded_files
from unveil.core.shell import Command, Word

_GIT_PERSIST_KEYS = re.compile(
    r"(?i)^(?:core\.(?:hookspath|sshcommand|fsmonitor|pager|editor|askpass)|"
    r"alias\..+|credential\..*helper|include\.path|includeif\..+|filter\..+\.(?:clean|smudge|process)|"
    r"diff\..+\.(?:textconv|command)|merge\..+\.driver|gpg\.program|sequence\.editor|"
    r"url\..+\.insteadof|http\.proxy|init\.templatedir)$"
)


def written_paths(c: Command) -> list[Word]:
    name, args, _w = c.effective()
    out = [r.target for r in c.redirects if r.writes and r.target is not None]
    ops = [a for a in args if not a.text.startswith("-")]
    if name == "tee":
        out.extend(ops)
    elif name in ("cp", "mv", "install", "rsync", "ln", "scp", "ditto") and len(ops) >= 2:
        out.append(ops[-1])
    elif name in ("sed", "perl") and any(a.text.startswith("-i") or a.text.startswith("-pi") for a in args):
        out.extend(ops[1:] if name == "sed" else ops[1:])
    elif name == "dd":
        out.extend(a for a in args if a.text.startswith("of="))
    elif name == "chmod" and any(
        "x" in a.text
        for a in args
        if a.text.startswith("+") or a.text[:1].isdigit() or a.text.startswith("u+") or a.text.startswith("a+")
    ):
        out.extend(ops[1:])
    elif name in FETCHERS:
        out.extend(Word(f, f, c.start, c.end) for f in downloaded_files(c) if f)
    return out


def content_of(j: Judge, c: Command) -> str:
    """What ``c`` writes: its standard input as :attr:`Judge.stdin_content` recorded (for ``tee``,
    ``crontab``, ``cat``, ``dd``, ``sudo``), ``echo``/``printf`` arguments, here-documents and
    here-strings, one per line."""
    name, args, _w = c.effective()
    parts = []
    piped = j.stdin_content.get(id(c), "")
    if name in ("tee", "crontab", "cat", "dd", "sudo") and piped:
        parts.append(piped)
    if name in ("echo", "printf"):
        parts.extend(a.text for a in args)
    for r in c.redirects:
        if r.body is not None:
            parts.append(r.body)
        elif r.op == "<<<" and r.target is not None:
            parts.append(r.target.text)
    return "\n".join(parts)


def _dangerous_content(text: str, nested: ScriptJudge) -> str | None:
    if not text.strip():
        return None
    text = (
        re.sub(r"(?m)^\s*(?:@\w+|(?:\S+\s+){5})(?=\S)", "", text)
        if re.match(r"^\s*(?:@\w+|[\d*/,-]+\s)", text)
        else text
    )
    sub = shell.parse(text, 0, depth=1)
    for h in nested(sub, "code"):
        if h.rule in (RULE_DOWNLOAD_EXEC, RULE_SEND_SECRET, RULE_SUB_NETWORK, RULE_REMOTE_PACKAGE):
            return clip(h.message, 70)
    if URL.search(text) and re.search(r"\b(?:curl|wget|nc|bash|sh)\b", text):
        return "a network command"
    return None


def judge_persistence(j: Judge, c: Command) -> None:
    name, args, _w = c.effective()
    texts = [a.text for a in args]
    hit: tuple[str, int, int] | None = None
    for w in written_paths(c):
        loc = next((x for x in (match_location(t, "persistence_paths") for t in path_candidates(w.text)) if x), None)
        if loc is not None:
            hit = (f"writes {loc.label} {clip(w.text, 50)}", c.start, c.end)
            break
    if hit is None and name == "crontab" and texts and not any(t in ("-l", "-r", "-e") for t in texts):
        hit = ("installs a crontab", c.start, c.end)
    if hit is None and name == "crontab" and "-e" in texts:
        hit = ("edits the crontab", c.start, c.end)
    if hit is None and name == "git" and "config" in texts[:3]:
        keys = [t for t in texts if not t.startswith("-") and t != "config"]
        if keys and _GIT_PERSIST_KEYS.match(keys[0]) and len(keys) >= 2:
            if not (keys[0].lower().startswith("alias.") and not keys[1].startswith("!")):
                hit = (f"sets git {keys[0]}", c.start, c.end)
    if hit is None and name == "systemctl" and "enable" in texts:
        hit = ("enables a systemd unit", c.start, c.end)
    if hit is None and name == "launchctl" and any(t in ("load", "bootstrap", "submit", "enable") for t in texts):
        hit = ("loads a launchd job", c.start, c.end)
    if hit is None and name == "schtasks" and any(t.lower() == "/create" for t in texts):
        hit = ("creates a scheduled task", c.start, c.end)
    if (
        hit is None
        and name == "reg"
        and texts[:1]
        and texts[0].lower() == "add"
        and any("\\run" in t.lower() for t in texts)
    ):
        hit = ("adds a Windows Run key", c.start, c.end)
    if hit is None:
        return
    what, a, b = hit
    content = content_of(j, c)
    why = _dangerous_content(content, j.nested) if content else None
    sev = severity_for(j.auto, why is not None)
    j.add(RULE_PERSISTENCE, sev, a, b, f"Persistence: {what}" + (f"; what it writes: {why}" if why else ""))
