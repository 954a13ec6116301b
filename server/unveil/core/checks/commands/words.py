"""What a command's words say, for the rules: whether a fetcher writes to standard output, the files
it downloads to, whether a shell or interpreter runs its standard input as a program, its script
operand and option values, and which nested script downloads."""

from __future__ import annotations

import re
from typing import Sequence

from unveil.core import shell
from unveil.core.checks.commands.hits import urls_in
from unveil.core.checks.commands.vocabulary import EXEC_WORDS, FETCHERS, SOCKETS
from unveil.core.shell import Command, Script, Word


def fetches_to_stdout(cmd: Command) -> bool:
    """Whether ``cmd`` (unwrapped) downloads to standard output."""
    name, args, _w = cmd.effective()
    if name in SOCKETS:
        return name != "openssl" or any(a.text == "s_client" for a in args)
    if name not in FETCHERS:
        return False
    texts = [a.text for a in args]
    if name in ("curl", "curlie"):
        for k, t in enumerate(texts):
            if t in ("-o", "--output") and k + 1 < len(texts) and texts[k + 1] not in ("-", "/dev/stdout"):
                return False
            if t.startswith("--output=") and t[9:] not in ("-", "/dev/stdout"):
                return False
            if t in ("-O", "--remote-name", "--remote-name-all", "-J"):
                return False
            if t.startswith("-") and not t.startswith("--") and t[1:].isalpha() and ("O" in t[1:]):
                return False
            if t.startswith("-") and not t.startswith("--") and t[1:].isalpha() and t.endswith("o"):
                nxt = texts[k + 1] if k + 1 < len(texts) else ""
                if nxt not in ("-", "/dev/stdout"):
                    return False
        return True
    if name in ("wget", "wget2"):
        for k, t in enumerate(texts):
            if t in ("-O", "--output-document") and k + 1 < len(texts) and texts[k + 1] in ("-", "/dev/stdout"):
                return True
            if t.startswith("--output-document=") and t.split("=", 1)[1] in ("-", "/dev/stdout"):
                return True
            if re.fullmatch(r"-[a-zA-Z]*O-?", t) and (t.endswith("-") or (k + 1 < len(texts) and texts[k + 1] == "-")):
                return True
            if t in ("-qO-", "-O-"):
                return True
        return False
    if name == "fetch":
        return any(t == "-o" for t in texts) and "-" in texts
    if name == "aria2c":
        return False
    return True


def downloaded_files(cmd: Command) -> list[str]:
    """Files a fetcher command writes (``-o f``, ``-O`` from the URL, wget's default name, ``> f``)."""
    name, args, _w = cmd.effective()
    if name not in FETCHERS:
        return []
    texts = [a.text for a in args]
    out = []
    urls = urls_in(cmd)
    for k, t in enumerate(texts):
        nxt = texts[k + 1] if k + 1 < len(texts) else ""
        if name in ("curl", "curlie"):
            if t in ("-o", "--output") or (
                t.startswith("-") and not t.startswith("--") and t[1:].isalpha() and t.endswith("o")
            ):
                if nxt and nxt != "-":
                    out.append(nxt)
            elif t.startswith("--output="):
                out.append(t[9:])
            elif t in ("-O", "--remote-name") or (
                t.startswith("-") and not t.startswith("--") and t[1:].isalpha() and "O" in t[1:]
            ):
                out.extend(u.rstrip("/").rsplit("/", 1)[-1].split("?")[0] for u in urls)
        elif name in ("wget", "wget2"):
            if t in ("-O", "--output-document") or re.fullmatch(r"-[a-zA-Z]*O", t):
                if nxt and nxt != "-":
                    out.append(nxt)
            elif t.startswith("--output-document="):
                out.append(t.split("=", 1)[1])
            elif re.fullmatch(r"-[a-zA-Z]*O[^-].*", t):
                out.append(t[t.index("O") + 1 :])
    if name in ("wget", "wget2") and not out and not fetches_to_stdout(cmd):
        out.extend(u.rstrip("/").rsplit("/", 1)[-1].split("?")[0] for u in urls)
    for r in cmd.redirects:
        if r.writes and r.target is not None:
            out.append(r.target.text)
    return [o for o in out if o]


def script_operand(args: Sequence[Word], lang: str | None) -> Word | None:
    """The script file operand of a shell or interpreter (first non-option argument), or ``None``
    when it reads its program from standard input."""
    skip_next = {"-o", "-O", "+O", "--rcfile", "--init-file", "-W", "-X", "-m"} if lang in (None, "python") else set()
    k = 0
    while k < len(args):
        t = args[k].text
        if t == "--":
            return args[k + 1] if k + 1 < len(args) else None
        if t in ("-", "/dev/stdin", "-s"):
            return None
        if t in skip_next:
            if t == "-m":
                return args[k]  # python -m module: not stdin
            k += 2
            continue
        if t.startswith("-") or t.startswith("+"):
            k += 1
            continue
        return args[k]
    return None


def reads_stdin_program(cmd: Command) -> bool:
    """Whether ``cmd`` executes its standard input as a program (``sh``, ``bash -s``, ``python -``,
    ``node``, ``xargs sh -c``, ``eval "$(cat)"``, ``source /dev/stdin``)."""
    name, args, wrappers = cmd.effective()
    if not name:
        return False
    if "xargs" in wrappers and (name in shell.SHELLS or name in shell.INTERPRETERS or name in EXEC_WORDS):
        return True
    if name in EXEC_WORDS:
        return any(
            a.text in ("/dev/stdin", "-", "/proc/self/fd/0") or "$(cat)" in a.text or "`cat`" in a.text for a in args
        )
    if name in shell.SHELLS:
        if has_flag(args, "c"):
            return any("$(cat)" in a.text or "$(cat -)" in a.text for a in args)
        return script_operand(args, None) is None or any(a.text == "/dev/stdin" for a in args)
    lang = shell.INTERPRETERS.get(name)
    if lang:
        if any(a.text in shell.CODE_FLAGS.get(lang, ()) for a in args):
            return any("$(cat)" in a.text for a in args)
        if name == "deno" or name == "bun":
            return any(a.text in ("-", "/dev/stdin") for a in args)
        op = script_operand(args, lang)
        return op is None or op.text in ("-", "/dev/stdin")
    return False


def has_flag(args: Sequence[Word], letter: str) -> bool:
    for a in args:
        t = a.text
        if t.startswith("-") and not t.startswith("--") and t[1:].isalpha() and letter in t[1:]:
            return True
        if not t.startswith("-"):
            return False
    return False


def script_fetches(s: Script) -> Command | None:
    """A command in ``s`` (nested included) that downloads to standard output."""
    for c in s.commands():
        if fetches_to_stdout(c):
            return c
    return None


def flag_word(args: Sequence[Word], letter: str) -> Word | None:
    for k, a in enumerate(args):
        t = a.text
        if t.startswith("-") and not t.startswith("--") and t[1:].isalpha() and letter in t[1:]:
            return args[k + 1] if k + 1 < len(args) else None
        if not t.startswith("-"):
            return None
    return None
