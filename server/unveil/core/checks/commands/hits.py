""":class:`Hit` (one judged fact, before it becomes a finding), :class:`Judge` (the hits of one
script judgement and the facts its rules pass each other) and the helpers every rule module uses:
the severity of a hit by origin, message clipping, the URLs of a command, why a source is
unambiguous (plain HTTP, raw IP, TLS checks off, a paste or tunnel host) and whether a
destination is local."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from unveil.core.checks.commands.vocabulary import AUTO_ORIGINS, LOCAL_HOST, RAW_IP_URL, SHADY_HOST, URL
from unveil.core.findings import Severity
from unveil.core.shell import Command, Script, Word


@dataclass
class Hit:
    """One judged fact, before it becomes a :class:`Finding`."""

    rule: str
    severity: Severity
    start: int
    end: int
    message: str
    facts: dict[str, object] = field(default_factory=dict)


def severity_for(auto: bool, strong: bool, base: Severity = Severity.WARNING) -> Severity:
    return Severity.ERROR if (auto or strong) else base


ScriptJudge = Callable[[Script, str], "list[Hit]"]
"""``judge_script(script, origin) -> hits``: how a judgement of one command judges the scripts
inside it (a decoded payload, what a persistence write writes, a shell string in Python)."""


@dataclass
class Judge:
    """The hits of one script judgement at ``origin``. ``nested`` judges scripts found inside it
    (:func:`unveil.core.checks.commands.judge.judge_script`, handed in so the rule modules do not
    import the module that calls them). ``stdin_content`` (text a pipeline stage receives on
    standard input, by ``id()`` of the :class:`~unveil.core.shell.Command`) and ``stdin_sent``
    (stages that send their standard input to the network, by ``id()``, with the destination) are
    facts one rule records for another within this judgement."""

    origin: str
    nested: ScriptJudge
    hits: list[Hit] = field(default_factory=list)
    stdin_content: dict[int, str] = field(default_factory=dict)
    stdin_sent: dict[int, str | None] = field(default_factory=dict)

    @property
    def auto(self) -> bool:
        return self.origin in AUTO_ORIGINS

    def add(self, rule: str, sev: Severity, start: int, end: int, msg: str, **facts: object) -> None:
        self.hits.append(Hit(rule, sev, start, end, msg, facts))


def clip(s: str, n: int = 80) -> str:
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"


def urls_in(cmd: Command) -> list[str]:
    """The URLs in ``cmd``'s words, in order."""
    out: list[str] = []
    for w in cmd.argv:
        out.extend(m.group(0) for m in URL.finditer(w.text))
    return out


def strong_source(urls: Sequence[str], args: Sequence[Word]) -> str | None:
    """Why a download is unambiguous: plain HTTP, raw IP, TLS checks off, a shortener or paste host."""
    for u in urls:
        if LOCAL_HOST.match(u.split("://", 1)[-1]):
            continue
        if RAW_IP_URL.match(u):
            return "from a raw IP address"
        if u.lower().startswith("http://"):
            return "over plain HTTP"
        if SHADY_HOST.search(u):
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


def is_local(dest: str | None) -> bool:
    if not dest:
        return False
    d = dest.split("://", 1)[-1]
    d = d.split("@", 1)[-1]
    return bool(LOCAL_HOST.match(d))
