"""EXF011 (secrets or the environment sent out), EXF012 (files or command output sent out, sockets
wired to a shell) and EXF013 (command output in a DNS name or a request URL): what HTTP clients,
sockets, ``scp``/``rsync``, mail and ``gh gist`` send, and what a pipeline feeds into a sender."""

from __future__ import annotations

import re
from typing import Iterable

from unveil.core import shell
from unveil.core.checks.commands.hits import Judge, clip, is_local, severity_for
from unveil.core.checks.commands.locations import public_sink, secret_in
from unveil.core.checks.commands.vocabulary import (
    DNS_TOOLS,
    ENV_DUMPS,
    RECON,
    RULE_SEND_SECRET,
    RULE_SUB_NETWORK,
    RULE_UPLOAD,
    SECRET_VAR,
    SENDERS,
    SOCKETS,
    URL,
)
from unveil.core.findings import Severity
from unveil.core.shell import Command, Script, Word


def _destination(cmd: Command) -> str | None:
    name, args, _w = cmd.effective()
    for a in args:
        if URL.match(a.text):
            return a.text
    if name in ("scp", "rsync", "sftp"):
        ops = [a.text for a in args if not a.text.startswith("-")]
        remote = [t for t in ops[1:] if ":" in t and not t.startswith("/")]
        return remote[-1] if remote else None
    if name in SOCKETS:
        for a in args:
            t = a.text
            if not t.startswith("-") and (":" in t or "." in t or t.isalnum()):
                return t
    return None


_HARMLESS_IN_URL = frozenset(
    {
        "uname",
        "arch",
        "date",
        "dpkg",
        "lsb_release",
        "sw_vers",
        "nproc",
        "basename",
        "dirname",
        "echo",
        "printf",
        "tr",
        "sed",
        "cut",
        "jq",
        "grep",
        "head",
        "tail",
        "awk",
        "python",
        "python3",
        "node",
        "go",
        "rustc",
        "getconf",
        "dpkg-architecture",
        "xcrun",
    }
)
"""Commands whose output in a URL path picks a platform or version build (not data)."""


_SENDING_OPTS_CURL = {
    "-d",
    "--data",
    "--data-binary",
    "--data-urlencode",
    "--data-ascii",
    "-F",
    "--form",
    "--form-string",
    "-T",
    "--upload-file",
    "--json",
}


def _sources_of(commands: Iterable[Command]) -> tuple[list[str], list[str]]:
    """``(secret labels, other facts)`` a set of commands reads: secret paths, environment dumps,
    reconnaissance output."""
    secrets: list[str] = []
    other: list[str] = []
    for c in commands:
        name, args, _w = c.effective()
        if name in ENV_DUMPS and (
            not args
            or name in ("env", "printenv")
            and all(a.text.startswith("-") for a in args)
            or name in ("export", "declare", "typeset")
            and any(a.text in ("-p", "-x") for a in args)
        ):
            secrets.append("the environment")
        for w in list(args) + [r.target for r in c.redirects if r.reads and r.target is not None]:
            loc = secret_in(w.text)
            if loc is not None:
                secrets.append(loc.label)
            m = SECRET_VAR.search(w.raw)
            if m and name in ("echo", "printf", "cat"):
                secrets.append(f"${m.group(1)}")
        if name in RECON:
            other.append(name)
    return secrets, other


def judge_network(j: Judge, c: Command) -> None:
    """HTTP clients and sockets sending files, the environment or command output."""
    name, args, _w = c.effective()
    if name in DNS_TOOLS:
        for a in args:
            if a.text.startswith("-") or a.text.startswith("@"):
                continue
            if a.subs:
                secrets, other = _sources_of(cmd for s in a.subs for cmd in s.commands())
                j.add(
                    RULE_SUB_NETWORK,
                    Severity.ERROR,
                    c.start,
                    c.end,
                    f"Command output sent in a DNS/network lookup ({name} {clip(a.raw, 50)}): the host name "
                    "carries data to whoever runs its DNS" + (f"; it includes {', '.join(secrets)}" if secrets else ""),
                )
                return
        return
    for r in c.redirects:  # `bash -i >& /dev/tcp/host/port 0>&1`, `cat f > /dev/udp/host/53`
        t = r.target.text if r.target is not None else ""
        if t.startswith(("/dev/tcp/", "/dev/udp/")) and not is_local(t[9:]):
            loc = secret_in(t)
            j.add(
                RULE_UPLOAD,
                Severity.ERROR,
                c.start,
                c.end,
                f"Connects {name or 'the shell'}'s input/output to the network socket {clip(t, 50)}"
                + (" (an interactive shell: a reverse shell)" if name in shell.SHELLS else ""),
            )
            return
    if name not in SENDERS:
        return
    dest = _destination(c)
    local = is_local(dest)
    texts = [a.text for a in args]
    sent: list[tuple[str, Word]] = []  # (description, word)
    stdin_sent = False
    for k, t in enumerate(texts):
        nxt = args[k + 1] if k + 1 < len(args) else None
        if name in ("curl", "curlie"):
            opt, val = (t, nxt) if t in _SENDING_OPTS_CURL else (None, None)
            if opt is None:
                for o in ("--data=", "--data-binary=", "--form=", "--upload-file=", "--json=", "--data-urlencode="):
                    if t.startswith(o):
                        opt, val = o[:-1], args[k]
            if opt is not None and val is not None:
                v = val.text.split("=", 1)[1] if val is args[k] else val.text
                if opt in ("-T", "--upload-file"):
                    if v in ("-", "."):
                        stdin_sent = True
                    else:
                        sent.append((v, val))
                elif (
                    v.startswith("@")
                    or (opt in ("-F", "--form") and re.match(r"^[^=]*=[@<]", v))
                    or (opt == "--data-urlencode" and re.match(r"^[^=@]*@", v))
                ):
                    f = re.split(r"[@<]", v, maxsplit=1)[1].split(";", 1)[0]
                    if f in ("-", "/dev/stdin"):
                        stdin_sent = True
                    elif f:
                        sent.append((f, val))
                elif val.subs or SECRET_VAR.search(val.raw):
                    sent.append(("", val))
        elif name in ("wget", "wget2"):
            for o in ("--post-file", "--body-file"):
                if t == o and nxt is not None:
                    sent.append((nxt.text, nxt))
                elif t.startswith(o + "="):
                    sent.append((t.split("=", 1)[1], args[k]))
            if t.startswith("--post-data") or t.startswith("--body-data"):
                w = args[k] if "=" in t else nxt
                if w is not None and (w.subs or SECRET_VAR.search(w.raw)):
                    sent.append(("", w))
        elif name in ("http", "https", "xh", "xhs", "httpie"):
            if k and ("=@" in t or ":=@" in t or (t.startswith("@") and len(t) > 1)):
                sent.append((re.split(r"@", t, maxsplit=1)[1], args[k]))
        elif name in ("scp", "rsync", "sftp"):
            if k < len(texts) - 1 and not t.startswith("-") and dest and args[k] is not None and t != dest:
                sent.append((t, args[k]))
        elif name == "gh" and texts[:2] == ["gist", "create"] and k >= 2 and not t.startswith("-"):
            sent.append((t, args[k]))
        elif name in ("mail", "mailx", "sendmail") and t == "-A" and nxt is not None:
            sent.append((nxt.text, nxt))
    for r in c.redirects:
        if r.reads and r.target is not None and name in SOCKETS | {"mail", "mailx", "sendmail", "http", "xh"}:
            sent.append((r.target.text, r.target))
        if r.op == "<<<" and r.target is not None and (r.target.subs or SECRET_VAR.search(r.target.raw)):
            sent.append(("", r.target))
    # URL carrying a substitution or a secret variable
    for k, a in enumerate(args):
        prev = args[k - 1].text if k else ""
        option_value = (
            prev.startswith("-")
            and not prev.startswith("--")
            and len(prev) == 2
            or prev
            in (
                "--header",
                "--data",
                "--data-raw",
                "--data-binary",
                "--user",
                "--cookie",
                "--form",
                "--json",
                "--user-agent",
                "--referer",
                "--output",
                "--upload-file",
                "--proxy",
                "--request",
            )
        )
        url_like = bool(URL.match(a.text)) or (
            not option_value and not a.text.startswith("-") and bool(re.match(r"^[^\s/]*[.:/]", a.text))
        )
        if url_like and (a.subs or SECRET_VAR.search(a.raw)):
            if a.subs and not local:
                inner = [cmd for s in a.subs for cmd in s.commands()]
                if all(cmd.effective()[0] in _HARMLESS_IN_URL for cmd in inner):
                    continue  # `…/releases/download/$(uname -s)_$(uname -m).tar.gz`
                secrets, other = _sources_of(inner)
                host = a.text.split("://", 1)[-1].split("/", 1)[0]
                in_host = "$(" in host or "`" in host
                strong = bool(secrets) or in_host or bool(other)
                what = ", ".join(secrets + other) or "command output"
                j.add(
                    RULE_SUB_NETWORK,
                    Severity.ERROR if (strong or j.auto) else Severity.WARNING,
                    c.start,
                    c.end,
                    f"Command output ({clip(what, 40)}) sent in a request URL: {clip(a.raw, 60)}",
                )
            elif (m := SECRET_VAR.search(a.raw)) and not local and URL.match(a.text):
                j.add(
                    RULE_SEND_SECRET,
                    severity_for(j.auto, False),
                    c.start,
                    c.end,
                    f"Sends ${m.group(1)} in a request URL to {clip(dest or a.text, 60)}",
                )
    # any other argument (a header, a user agent, a query) carrying a substitution that reads a
    # secret; an API's own token in its auth header is how the API is meant to be called
    sent_ids = {id(w) for _d, w in sent}
    for a in args:
        if a.subs and id(a) not in sent_ids and not local and not URL.match(a.text) and not _AUTH_HEADER.match(a.text):
            s2, _o2 = _sources_of(cmd for sub in a.subs for cmd in sub.commands())
            if s2:
                sent.append(("", a))
    sink = public_sink(dest)
    if sink is not None and (sent or stdin_sent or _sends_data(name, texts)):
        j.add(
            RULE_UPLOAD,
            Severity.ERROR,
            c.start,
            c.end,
            f"Sends data to a public {sink.replace('-', ' ')} service: {clip(dest or '', 60)} ({name}); anyone "
            "with the link, or whoever runs it, can read it",
            sink=sink,
        )
    for desc, w in sent:
        if desc in ("/dev/null", "/dev/zero", "-"):
            continue
        secrets = []
        if desc:
            loc = secret_in(desc)
            if loc is not None:
                secrets.append(loc.label)
        for sub in w.subs:
            s2, o2 = _sources_of(sub.commands())
            secrets.extend(s2)
        m = SECRET_VAR.search(w.raw)
        var_only = not secrets and bool(m)
        if m:
            secrets.append(f"${m.group(1)}")
        if var_only:  # `-d "token=$API_TOKEN"` is how many APIs take their own key: a warning
            j.add(
                RULE_SEND_SECRET,
                Severity.WARNING if not j.auto else Severity.ERROR,
                c.start,
                c.end,
                f"Sends {secrets[0]} to {clip(dest or 'a remote host', 60)} ({name})",
            )
        elif secrets:
            j.add(
                RULE_SEND_SECRET,
                Severity.WARNING if local else Severity.ERROR,
                c.start,
                c.end,
                f"Sends {', '.join(dict.fromkeys(secrets))} to {clip(dest or 'a remote host', 60)} ({name})",
            )
        elif desc and not local and sink is None:  # (a public sink was reported above)
            j.add(
                RULE_UPLOAD,
                severity_for(j.auto, False),
                c.start,
                c.end,
                f"Sends the file {clip(desc, 50)} to {clip(dest or 'a remote host', 60)} ({name})",
            )
    if stdin_sent or (name in SOCKETS and (name != "openssl" or "s_client" in texts)):
        j.stdin_sent[id(c)] = dest  # judged with the pipeline in judge_pipes_send


def _sends_data(name: str, texts: list[str]) -> bool:
    """Whether an HTTP client's options send a request body (``-d``, ``--data*``, ``-F``,
    ``--json``, ``-T``, ``-X POST/PUT``; httpie ``key=value`` items)."""
    if name in ("curl", "curlie"):
        return any(
            t in _SENDING_OPTS_CURL or t.startswith(("--data", "--form", "--json", "--upload-file")) for t in texts
        ) or any(
            t in ("-X", "--request") and k + 1 < len(texts) and texts[k + 1].upper() in ("POST", "PUT", "PATCH")
            for k, t in enumerate(texts)
        )
    if name in ("wget", "wget2"):
        return any(t.startswith(("--post-", "--body-")) for t in texts)
    if name in ("http", "https", "xh", "xhs", "httpie"):
        return any("=" in t and not t.startswith("-") for t in texts[1:])
    return name in ("nc", "ncat", "netcat", "socat", "scp", "rsync", "sftp", "ftp", "tftp")


_AUTH_HEADER = re.compile(r"(?i)\s*(?:authorization|proxy-authorization|x-api-key|private-token|x-auth-token)\s*:")


def judge_pipes_send(j: Judge, s: Script) -> None:
    """``cat ~/.aws/credentials | curl --data-binary @- …``, ``env | nc host 80``."""
    for p in s.pipelines:
        for k, st in enumerate(p.stages):
            if id(st) not in j.stdin_sent or k == 0:
                continue
            before = []
            for c in p.stages[:k]:
                before.append(c)
                if c.body is not None:
                    before.extend(c.body.commands())
                for w in c.words():
                    for sub in w.subs:
                        before.extend(sub.commands())
            secrets, other = _sources_of(before)
            dest = j.stdin_sent[id(st)]
            if secrets:
                j.add(
                    RULE_SEND_SECRET,
                    Severity.WARNING if is_local(dest) else Severity.ERROR,
                    p.start,
                    p.end,
                    f"Sends {', '.join(dict.fromkeys(secrets))} to {clip(dest or 'a remote host', 60)} "
                    f"(piped into {st.effective()[0]})",
                )
            elif not is_local(dest) and st.effective()[0] in SOCKETS:
                j.add(
                    RULE_UPLOAD,
                    severity_for(j.auto, False),
                    p.start,
                    p.end,
                    f"Pipes command output to {clip(dest or 'a remote host', 60)} ({st.effective()[0]})",
                )


_KEY_FILE = re.compile(r"(?i)(?:^|/)(?:[^/]*\.(?:pem|key|p12|pfx|jks|keystore|ppk|asc|gpg)|\*\.(?:pem|key|p12|pfx))$")
"""Private key and certificate-bundle files by extension: never to be committed (not part of the
secret-read catalogue: reading a public certificate is ordinary; staging one for a push is not)."""


def _git_sub(args: tuple[Word, ...]) -> tuple[str, list[Word]]:
    """``(subcommand, its arguments)`` of a ``git`` command (global options such as ``-C dir``
    skipped)."""
    k = 0
    while k < len(args) and args[k].text.startswith("-"):
        k += 2 if args[k].text in ("-C", "-c", "--git-dir", "--work-tree") else 1
    if k >= len(args):
        return "", []
    return args[k].text, list(args[k + 1 :])


def judge_git_push(j: Judge, s: Script) -> None:
    """Secret files staged (``git add -f .env providers/*.pem``) and pushed, in one script or one
    section's steps: to a remote added in the same steps (``git remote add audit https://…``) or a
    URL, an error (EXF011: the secrets leave the machine for a place the project does not own);
    to any other remote, a warning (secrets committed to the project's history)."""
    remotes: dict[str, tuple[str, int]] = {}  # name -> (url, start of the command that added it)
    staged: list[tuple[str, int]] = []  # (label, start)
    for c in s.commands():
        name, args, _w = c.effective()
        if name != "git":
            continue
        sub, rest = _git_sub(args)
        ops = [a.text for a in rest if not a.text.startswith("-")]
        if sub == "remote" and len(ops) >= 3 and ops[0] in ("add", "set-url"):
            remotes[ops[1]] = (ops[2], c.start)
        elif sub == "add":
            for t in ops:
                loc = secret_in(t)
                label = loc.label if loc is not None else ("private keys" if _KEY_FILE.search(t) else None)
                if label is not None:
                    staged.append((label, c.start))
        elif sub == "push" and staged:
            target = ops[0] if ops else "origin"
            added = remotes.get(target)
            dest = added[0] if added else (target if URL.match(target) or ":" in target else None)
            outside = dest is not None and not is_local(dest)
            what = ", ".join(dict.fromkeys(label for label, _s in staged))
            j.add(
                RULE_SEND_SECRET,
                Severity.ERROR if outside or j.auto else Severity.WARNING,
                min(staged[0][1], added[1]) if added else staged[0][1],
                c.end,
                f"Stages {what} in git and pushes them to "
                + (
                    f"{clip(dest or target, 60)} (a remote added in the same steps)"
                    if target in remotes
                    else clip(dest or target, 60)
                ),
            )
            return
