"""Actions described in words, judged with the same location catalogues as parsed commands
(issue 8, sections 3 and 4; red-team round 3 misses [a] and [i]).

Two concept pairs, each found in one sentence (:func:`unveil.core.context.unit_bounds`: a
sentence, a list item or a table cell, soft wraps joined) of the model view, whatever the verb's
tense or the words between:

* ``PER040`` — a **write verb** (add, append, insert, put, place, drop, register, install,
  schedule, write, create, set up, enable, load, copy, prepend, symlink …) and a **persistence
  location**: a path that falls under ``unveil/data/persistence_paths.toml`` (the catalogue
  PER011 judges parsed commands with: shell rc files, git hooks, cron, launchd, systemd, autostart,
  the agent's own settings, ``authorized_keys`` …) in any spelling, inside inline code or not, or a
  location named in words (the crontab, a cron entry, a launch agent, login items, a systemd user
  unit). Severity by what is written, judged from the same sentence: **error** when it downloads
  (a URL, ``curl``/``wget``, "download") or runs a script or program (``source f``, ``. f``,
  ``eval``, ``bash f``, a ``.sh``/``.py`` file, a program in a hidden home folder, ``&``,
  ``nohup``); **info** when it only configures (``export PATH=…``, ``alias``, a variable) and names
  nothing that runs — "add the bin folder to your PATH in ~/.bashrc" is the usual install step of a
  README; **warning** otherwise (a git hook, a cron entry, a launch agent named without what it
  runs).
* ``EXF040`` — a **secret source** and an **outbound sink** joined by a **transfer verb**. Sources:
  a path under ``unveil/data/secret_paths.toml`` (``~/.npmrc``, ``~/.aws/credentials``, ``.env``,
  ``id_rsa`` …), an environment variable named like a secret (``NPM_TOKEN``, ``*_KEY``, "every
  variable whose name ends in ``_TOKEN``"), the whole environment (``printenv``, ``os.environ``,
  "the values of all environment variables"), and — only with a strong sink — secrets named in
  words ("the API token", "credentials"). Sinks: a URL or host outside the machine (not one
  introduced by "from": that is where something comes *from*), a webhook, a public issue / pull
  request / gist / comment / discussion, an issue body, a paste site, an e-mail address or "e-mail
  it to", a chat channel. Verbs: send, post, upload, include, attach, append, paste, quote, share,
  forward, list, report, publish, file, open, create … ("add", "put", "write" only with a strong
  sink: "add the token to https://…/settings/secrets" is how a secret is stored, not sent).
  **Error**.

Context: :func:`unveil.core.context.judge` on the hit's own sentence only — a prohibition that
governs it ("never paste ~/.npmrc into an issue"), a deny-list, a quoted example — lowers it one
level, EXF040 no lower than warning (sending a secret out never goes below warning, issue 8 §5);
hidden text raises it one step. Nothing elsewhere in the file counts.

Cost: one regex search of the candidate literals (the catalogues' own literal parts plus the
location and secret words) over the text; text without one costs nothing more, and only the
sentences around a candidate are judged.

Decoded payloads (rot13, percent-encoding, base64 …) are judged too: :func:`scan_decoded` is
registered with :func:`unveil.core.checks.obfuscation.add_rescan`, so a decoded "append
~/.aws/credentials to the issue body" makes its encoded run an error like the same words in prose.

All offsets are code points into the analysed text. Nothing here raises on any input.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Iterable

from unveil.core import context as cx
from unveil.core import scope
from unveil.core.checks import obfuscation
from unveil.core.checks.commands.locations import load_locations, match_location, secret_in
from unveil.core.checks.directives import doc_state
from unveil.core.findings import Finding, Severity

RULE_PERSIST = "PER040"
RULE_EXFIL = "EXF040"
CATEGORY = {RULE_PERSIST: "persistence", RULE_EXFIL: "data-exfiltration"}

MAX_SENTENCES = 1000
"""Distinct candidate sentences judged per text (the bound keeps a padded file linear: about
0.4 ms a sentence). A sentence is counted once however often the text repeats it with the same
fenced block after it (its verdict, :func:`judge_sentence`'s, is a function of the two and
memoised): a file padded with copies of its own text is judged to the end, and padding made of
new sentences meets the bound as before. Past it the remaining candidate sentences are not
judged, and one ``UNV002`` warning says from which line on (never a silent miss)."""

# --------------------------------------------------------------------------- vocabulary

_WRITE = re.compile(
    # base forms (the imperative; "you should add …"): a third person "installs" or a participle
    # "installed" describes what something does, it does not tell the agent to do it
    r"(?i)\b(?:add|append|insert|put|place|drop|register|install|schedule\s+(?:a|an|the|it|this|that|them)|"
    r"write|create|set\s+up|enable|load|copy|prepend|symlink|persist|hook\s+(?:it|this|that)\s+into|save|echo)\b"
    # a verb used as a noun modifier ("a malicious install script", "write access") is no verb
    r"(?!\s+(?:scripts?|steps?|instructions?|guides?|docs?|logs?|process|time|access|permissions?|paths?|targets?)\b)"
)
_PERSIST_WORDS = re.compile(
    r"(?i)(?<![/\w.-])(?:(?:user'?s?\s+|your\s+|a\s+|the\s+)?crontab|cron\s+(?:entry|entries|job|jobs|table|line)|"
    r"launch\s*(?:agents?|daemons?)|launchd\s+(?:plist|job|agent|item)|login\s+items?|"
    r"systemd\s+(?:user\s+)?(?:units?|services?|timers?)|autostart\s+(?:entry|folder|file)|start-?up\s+folder|"
    r"shell\s+(?:rc|start-?up|profile|init(?:iali[sz]ation)?)\s+files?|(?:post|pre)-(?:checkout|merge|commit|push|rewrite|receive)\s+hook)\b"
)
# what the written thing does, from the same sentence
_DOWNLOADS = re.compile(r"(?i)\bhttps?://|\b(?:curl|wget|iwr|invoke-webrequest|download\w*|fetch\w*)\b")
_EXECUTES = re.compile(
    r"(?i)(?:^|[\s`'\"(])(?:source|eval|exec|bash|sh|zsh|python3?|node|perl|ruby|nohup)\s+\S|"
    r"(?:^|[\s`'\"])\.\s+[~/$.]|\.(?:sh|py|js|pl|rb|ps1|command)\b|&\s*(?:`|$)|~/\.[\w-]+/(?:bin/)?[\w.-]+"
)
"""A script or program run by what is written: ``source f``, ``. f``, ``eval``, ``bash f``, a
script file, a program in a hidden home folder, a background ``&``. ("A hook that runs ruff" is
what every hook does: a warning, not this.)"""
_CONFIG_ONLY = re.compile(r"(?i)\bexport\s+[A-Z_][A-Z0-9_]*=|\bPATH\b|\balias\s+\w+=|\bset\s+-[gx]\b|\bfpath\b")

_OBJ = r"(?:a|an|the|it|them|this|that|these|those|its|their|your|our|all|every|each|any|to|in|into|on|`|~|\$|\.)"
_SEND = re.compile(
    # base forms and participles ("…, including the token"); a third person "posts" describes.
    # Words that are also nouns or adjectives (file, list, report, open, post, mail, share, quote,
    # pipe, create) count only with an object or a preposition after them.
    r"(?i)\b(?:send|sending|posting|upload|uploading|submit|submitting|include|including|attach|attaching|"
    r"append|appending|paste|pasting|quoting|sharing|forward|forwarding|listing|leak|leaking|dump|dumping|"
    r"transmit|exfiltrate|publish|embed|echo|piping|tweet|relay|"
    r"cop(?:y|ying)\s+(?:it|them|that|this|\S+)\s+(?:to|into|in)|print\s+\S+(?:\s+\S+)?\s+(?:to|into|in))\b|"
    r"\b(?:file|list|report|open|post|e-?mail|mail|share|quote|pipe|create|raise)\s+" + _OBJ
)
_AUTH_USE = re.compile(
    r"(?i)\b(?:authori[sz]ation|authenticat\w+|auth\s+header|bearer|headers?|x-api-key|api-key\s+header)\b"
)
"""A secret used to authenticate to the URL (a header, a bearer token): how an API key is meant to
be used with its own service, not a leak (the parsed command judge sees the command itself)."""
_STORE = re.compile(r"(?i)\b(?:add|adding|put|putting|write|writing|insert|inserting|place|include|including)\b")

_STRONG_SINK = re.compile(
    r"(?i)\bweb-?hooks?\b|\bhooks\.slack\.com\b|\bdiscord(?:app)?\.com/api/webhooks\b|\bpaste-?bin\b|"
    r"\bpaste\s+(?:site|service)\b|\bhastebin\b|\bgists?\b|"
    r"\bpublic\s+(?:\w+\s+){0,2}?(?:issues?|repo\w*|comments?|channels?|pull\s+requests?|prs?|discussions?|posts?|forums?|pages?|trackers?)\b|"
    r"\bissue\s+(?:body|tracker|comment|description|title|text)\b|"
    r"\b(?:file|files|filing|open|opens|opening|create|creates|creating|raise|raises|raising|submit\w*|post|posts|posting|write|writes)\s+"
    r"(?:a|an|the)?\s*(?:new\s+|public\s+|github\s+|gitlab\s+|jira\s+)?(?:issues?|bug\s+reports?|tickets?|gists?|pull\s+requests?|prs?|discussions?|comments?)\b|"
    r"\b(?:in|into|to|on)\s+(?:the|a|an)\s+(?:new\s+)?(?:issue|pull\s+request|pr|gist|comment|discussion)\b|"
    r"\bgh\s+(?:issue|gist|pr)\s+(?:create|comment)\b|\be-?mail\s+(?:it|them|this|that|those|these)?\s*to\b|"
    r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}\b|"
    r"\b(?:slack|discord|teams|telegram|mattermost)\s+(?:channel|message|thread|webhook|dm|chat|post)s?\b|#[a-z][\w-]+\s+(?:slack\s+)?channel\b|"
    r"\b(?:query|url)\s+(?:string|param\w*)\b|\bmessage\s+you\s+(?:post|send)\b|"
    r"\b(?:issue|bug\s+report|ticket|gist|pull\s+request|pr|comment|post|reply)\s+(?:that\s+)?you\s+(?:open|file|create|post|submit|write|raise|send)\b|"
    r"\bas\s+(?:a|an)\s+(?:new\s+|public\s+)?(?:comment|issue|gist|reply|post|message)\b|\b(?:s3|gs|ftp|sftp|scp)://"
)
_URL = re.compile(r"(?i)\bhttps?://[^\s`'\"<>)\]]+")
_HOST = re.compile(
    r"(?i)(?<![\w@./-])(?:[a-z0-9-]+\.)+(?:com|net|org|io|dev|app|sh|co|ai|me|cc|xyz|site|online|cloud|info|biz|"
    r"us|uk|de|fr|ru|cn|jp|tech|link|page|run|ly|gg|to|so|in|eu|nl|se|pl|es|it|ch|at|be|tv|fm|ws|pw|top)"
    r"(?:/[^\s`'\"<>)\]]*)?(?![\w.-])"
)
_LOCAL = re.compile(r"(?i)^(?:https?://)?(?:localhost|127\.\d+\.\d+\.\d+|0\.0\.0\.0|\[::1\])(?:[:/]|$)")
_FROM_BEFORE = re.compile(
    r"(?i)\b(?:from|see|visit|read|per|docs?|documentation|guide|at\s+the\s+docs)\s*[:(`'\"]*\s*$"
)

_SECRET_VAR_NAME = re.compile(
    r"(?<![\w$])\$?\{?(?:[A-Z][A-Z0-9]*_)*(?:[A-Z0-9]*_)?(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|PAT|CREDENTIALS?|"
    r"PRIVATE_KEY|ACCESS_KEY|AUTH)\}?(?![\w])"
)
_SECRET_SUFFIX = re.compile(
    r"(?i)\b(?:end(?:s|ing)?|suffix(?:ed)?|contain(?:s|ing)?|match(?:es|ing)?|named|like|with)\s+(?:in\s+|with\s+|by\s+)?"
    r"[`'\"*]*_?(?:KEY|TOKEN|SECRET|PASSWORD|PAT|CREDENTIALS?)\b"
)
_ENV_DUMP = re.compile(
    r"(?i)\bprintenv\b|\bos\.environ\b|\bprocess\.env\b|`env`|\boutput\s+of\s+`?env\b|"
    r"\b(?:every|all|each)\s+(?:of\s+the\s+)?(?:\w+\s+){0,2}?(?:environment\s+)?variables?\b(?=[^.]{0,60}\b(?:values?|environment|shell|_KEY|_TOKEN|secret|name))|"
    r"\bvalues?\s+of\s+(?:every|all|each|the)\s+(?:\w+\s+){0,2}?(?:environment\s+)?variables?\b|"
    r"\b(?:whole|entire|full|complete)\s+(?:shell\s+|process\s+)?environment\b"
)
_SECRET_WORDS = re.compile(
    r"(?i)\b(?:(?:api|access|auth|registry|npm|pypi|github|gitlab|aws|cloud|deploy|bearer|session|personal\s+access|"
    r"private|secret|signing|service\s+account|ssh)\s+(?:keys?|tokens?|credentials?|secrets?|passwords?)|"
    r"credentials|passwords|private\s+keys?|secrets|tokens?\s+line)\b"
)
_PROSE_PATH = re.compile(r"[^\s`'\"<>()\[\]{}|,;]+")
_TRIM = "*_.:!?"


_LIT_RUN = re.compile(r"(?:\\\.|[A-Za-z0-9_-])+")
_EXTRA_LITERALS = (
    "crontab",
    "cron entr",
    "cron job",
    "cron line",
    "cron table",
    "launch agent",
    "launchagents",
    "launch daemon",
    "launchdaemons",
    "launchd",
    "login item",
    "systemd",
    "autostart",
    "startup folder",
    "start-up folder",
    "rc file",
    "start-up file",
    "startup file",
    "profile file",
    "-checkout hook",
    "-merge hook",
    "-commit hook",
    "-push hook",
    "-rewrite hook",
    "git/hooks",
    "settings.json",
    "hooks.json",
    "mcp.json",
    "_key",
    "_token",
    "_secret",
    "_password",
    "_passwd",
    "_pat",
    "_credential",
    "apikey",
    "printenv",
    "environ",
    "process.env",
    "`env`",
    "credential",
    "password",
    "secret",
    "token",
    "private key",
)


_TOO_COMMON = frozenset(
    {".json", ".yml", ".yaml", ".toml", ".xml", ".conf", ".config", ".local", ".git", ".pth", ".env."}
)
"""Catalogue pieces too common to be candidates on their own (file extensions, ``.git``): the
paths that hold them have another piece (``git/hooks``, ``settings.json``) or an extra literal."""


@lru_cache(maxsize=1)
def _literals() -> tuple[str, ...]:
    """Candidate literals (lower case): from every catalogue path (both catalogues), its pieces
    that name a file or folder of their own — a dotfile (``.npmrc``, ``.bashrc``), a name with a
    dot or underscore (``credentials.json``, ``id_rsa``) — plus the location, secret and
    environment words of :data:`_EXTRA_LITERALS`. A text with none of them has no finding here."""
    lits: set[str] = set(_EXTRA_LITERALS)
    for cat in ("persistence_paths", "secret_paths"):
        for loc in load_locations(cat):
            for rx in loc.paths:
                for run in _LIT_RUN.findall(rx.pattern):
                    lit = run.replace("\\.", ".").lower()
                    if lit in _TOO_COMMON:
                        continue
                    if len(lit) >= 4 and (lit.startswith(".") or "." in lit or "_" in lit):
                        lits.add(lit)
                    elif len(lit) >= 8 and lit.isalpha():
                        lits.add(lit)  # launchagents, keychains, autostart …
    return tuple(sorted(lits))


@lru_cache(maxsize=1)
def _automaton():
    """One Aho–Corasick automaton (``ahocorasick-rs``) over :func:`_literals`, or ``None``."""
    try:
        import ahocorasick_rs as ac

        return ac.AhoCorasick(list(_literals()), matchkind=ac.MatchKind.LeftmostLongest)
    except Exception:  # noqa: BLE001
        return None


def candidates(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` code-point offsets in ``text`` of every candidate literal, in order:
    one Aho–Corasick pass over the lower-cased text (a regex alternation when case folding
    changes the length or the automaton is missing); for an open document of at least
    :data:`SPLICE_MIN` code points, spliced from its previous version's (:func:`_spliced`).
    A text over :data:`unveil.core.scope.LOWERED_SHARE_MAX` code points outside an open document
    is lowered a stretch at a time as it is searched (a 10 MB file's lowered copy was 20 MB of
    its peak memory)."""
    auto = _automaton()
    if auto is not None and len(text) > scope.LOWERED_SHARE_MAX and scope.document_cache() is None:
        from unveil.core.checks.literal_index import leftmost_matches

        try:  # lowered a stretch at a time: a long text's lowered copy is never whole
            return leftmost_matches(auto, text, _longest() - 1, fold=str.lower)
        except ValueError:  # lowering changed the length (U+0130): the alternation below
            auto = None
    low = scope.lowered(text) if auto is not None else text
    if auto is not None and len(low) == len(text):
        return _spliced(auto, low)
    rx = re.compile("|".join(re.escape(x) for x in sorted(_literals(), key=len, reverse=True)), re.I)
    return [m.span() for m in rx.finditer(text)]


SPLICE_MIN = 32_768
"""Code points from which :func:`candidates` splices an open document's matches (below, one
pass over the text costs about what the splice does)."""
_KEPT = "prose candidates"


class _NoGroups:
    groupindex: dict = {}


class _Match:
    """A match of :class:`_Literals` as :func:`unveil.core.checks.literal_index.records` reads
    one (``span()``, ``re.groupindex``)."""

    __slots__ = ("s", "e")
    re = _NoGroups

    def __init__(self, s: int, e: int) -> None:
        self.s, self.e = s, e

    def span(self, *_group) -> tuple[int, int]:
        return self.s, self.e


class _Literals:
    """The candidate automaton searched as :func:`unveil.core.checks.splice.splice` searches a
    pattern: ``finditer(text, pos, endpos)`` gives the matches one ``finditer`` of the literals'
    alternation (longest first) gives over ``text[pos:endpos]``, since the automaton's
    leftmost-longest matches are those: at the leftmost position where a literal starts, the
    longest one there, then on from its end. An attempt at ``x`` reads ``[x, x + longest)``."""

    def __init__(self, auto) -> None:
        self.auto = auto

    def finditer(self, text: str, pos: int, endpos: int, timeout: float | None = None):
        for _i, a, b in self.auto.find_matches_as_indexes(text[pos:endpos]):
            yield _Match(pos + a, pos + b)


@lru_cache(maxsize=1)
def _longest() -> int:
    return max(map(len, _literals()), default=1)


def _spliced(auto, low: str) -> list[tuple[int, int]]:
    """The automaton's matches in ``low`` (the lower-cased text): for an open document's text of
    at least :data:`SPLICE_MIN` code points, the previous version's matches before and after
    the edit kept (those after it shifted) and only the stretch around the edit searched again
    (:func:`unveil.core.checks.splice.splice`; exact: ``tests/unit/test_prose_splice.py``
    compares spliced and fresh matches over generated edits); else one search of the whole text
    (stretch by stretch: :func:`unveil.core.checks.literal_index.leftmost_matches`)."""
    from unveil.core.checks import splice as sp
    from unveil.core.checks.literal_index import leftmost_matches

    cache = scope.document_cache()
    if cache is None or len(low) < SPLICE_MIN:
        return leftmost_matches(auto, low, _longest() - 1)
    reach = _longest()
    prev = cache.kept.get(_KEPT)
    got = None
    if prev is not None and prev[0] is auto:
        try:
            got = sp.splice(_Literals(auto), prev[2], low, sp.text_delta(prev[1], low), 0, reach, 60.0)
        except TimeoutError:  # (not raised: the automaton has no time-out; kept for the contract)
            got = None
    if got is None:
        got = [(a, b, a, b) for a, b in leftmost_matches(auto, low, reach - 1)]
    kept = sp.entry(0, reach, got)
    if kept is not None:
        cache.kept[_KEPT] = (auto, low, kept)
    return [(r[0], r[1]) for r in got]


# --------------------------------------------------------------------------- sentences


@dataclass(frozen=True)
class Hit:
    """One judged sentence fact: ``rule``, base ``severity``, ``[start, end)`` view offsets, and
    the message."""

    rule: str
    severity: Severity
    start: int
    end: int
    message: str
    facts: dict
    verb: tuple[int, int] = (0, 0)
    """The verb's view offsets: where the context judgement looks (a prohibition governs the verb;
    the source or sink may sit in inline code without being a quoted example)."""
    parts: tuple[tuple[int, int], ...] = ()
    """View ranges of the pair (source and sink) when both must be checked against one code span."""


def _tokens(vt: str, s: int, e: int) -> Iterable[tuple[int, int, str]]:
    """Path-like pieces of ``vt[s:e]``: runs without spaces, quotes, backticks or brackets, with
    trailing sentence punctuation and emphasis trimmed; ``(start, end, text)`` view offsets."""
    for m in _PROSE_PATH.finditer(vt, s, e):
        a, b = m.start(), m.end()
        while b > a and vt[b - 1] in _TRIM:
            b -= 1
        while a < b and vt[a] in "*_":
            a += 1
        if b - a >= 2:
            yield a, b, vt[a:b]


def _pathlike(t: str) -> bool:
    return "/" in t or t.startswith((".", "~", "$", "%")) or "\\" in t


PROSE_LOCATIONS = frozenset(
    {"shell-startup", "git-hooks", "cron", "launch-agents", "systemd", "autostart", "ssh-access"}
)
"""Catalogue entries (``persistence_paths.toml`` ids) judged in words. Left out: the agent's own
settings and skills folders, git configuration, editor settings and interpreter start-up files —
installing a skill, configuring a hook the user asked for or setting a VS Code option is what
agent and README instructions ordinarily say (11 benign corpus files); a parsed command writing
them is still PER011."""
QUIET_LOCATIONS = frozenset({"systemd"})
"""Locations where administration guides ordinarily tell the reader to write ("create unit files
in /etc/systemd/system/"): information unless what is written runs a script or downloads."""
_VERSIONED_HOOKS = re.compile(r"(?i)(?:^|/)\.husky(?:/|$)")


def _persistence_hit(vt: str, s: int, e: int, follow: str = "") -> Hit | None:
    sent = vt[s:e]
    w = _WRITE.search(sent)
    if w is None:
        return None
    where: tuple[int, int, str, str] | None = None
    for a, b, t in _tokens(vt, s, e):
        if not _pathlike(t) or "://" in t or _VERSIONED_HOOKS.search(t):
            continue
        loc = match_location(t, "persistence_paths")
        if loc is not None and loc.id in PROSE_LOCATIONS:
            where = (a, b, loc.label, loc.id)
            break
    if where is None:
        m = _PERSIST_WORDS.search(sent)
        if m is None:
            return None
        word = m.group(0).strip()
        quiet = "hook" in word.lower() or "systemd" in word.lower()  # "add a pre-commit hook", "systemd units"
        where = (s + m.start(), s + m.end(), word, "systemd" if quiet else "")
    a, b, label, loc_id = where
    # what is written: the sentence without the location itself, and the fenced block it
    # introduces ("add to ~/.zshrc:" and a block), the reader's own evidence next to it
    rest = sent[: a - s] + " " + sent[b - s :] + "\n" + follow
    if _DOWNLOADS.search(rest):
        sev, how = Severity.ERROR, "what it adds downloads code"
    elif _EXECUTES.search(rest):
        sev, how = Severity.ERROR, "what it adds runs a script or program"
    elif _CONFIG_ONLY.search(rest) or loc_id in QUIET_LOCATIONS:
        sev, how = Severity.INFO, "what it adds only configures (PATH, alias, variable, a unit or hook it names)"
    else:
        sev, how = Severity.WARNING, "it runs again later, outside the session"
    msg = f'Persistence in words: {w.group(0).strip()} … {label} ("{vt[a:b]}"); {how}'
    return Hit(RULE_PERSIST, sev, a, b, msg, {"location": label}, (s + w.start(), s + w.end()))


def _in_command_span(sent: str, i: int) -> bool:
    """Whether offset ``i`` of ``sent`` is inside an inline code span holding a space (a command
    line rather than a bare URL)."""
    if sent.count("`", 0, i) % 2 == 0:
        return False
    a = sent.rfind("`", 0, i)
    b = sent.find("`", i)
    return " " in sent[a + 1 : b if b >= 0 else len(sent)]


def _sinks(vt: str, s: int, e: int) -> tuple[tuple[int, int, str] | None, tuple[int, int, str] | None]:
    """``(strong, url)``: the first strong sink and the first outside URL or host of the sentence."""
    sent = vt[s:e]
    m = _STRONG_SINK.search(sent)
    strong = (s + m.start(), s + m.end(), m.group(0)) if m else None
    url = None
    for rx in (_URL, _HOST):
        for u in rx.finditer(sent):
            text = u.group(0)
            if _LOCAL.match(text) or _FROM_BEFORE.search(sent[max(0, u.start() - 30) : u.start()]):
                continue
            if rx is _HOST and (secret_in(text) is not None or "/" not in text and "." not in text.rstrip(".")):
                continue
            if _in_command_span(sent, u.start()):
                continue  # `curl -s "https://…?key=$KEY"`: a command, judged by the parser
            url = (s + u.start(), s + u.end(), text)
            break
        if url:
            break
    return strong, url


def _secret_sources(vt: str, s: int, e: int) -> tuple[tuple[int, int, str] | None, bool]:
    """The first secret source of the sentence and whether it is concrete (a catalogued path, a
    secret-named variable, the environment) rather than secrets named in words."""
    sent = vt[s:e]
    for a, b, t in _tokens(vt, s, e):
        if "://" in t or not (_pathlike(t) or "." in t or t.startswith("id_")):
            continue
        loc = secret_in(t)
        if loc is not None:
            return (a, b, f"{loc.label} ({t})"), True
    for rx, label in ((_SECRET_VAR_NAME, "a secret-named variable"), (_SECRET_SUFFIX, "secret-named variables")):
        m = rx.search(sent)
        if m is not None:
            return (s + m.start(), s + m.end(), f"{label} ({m.group(0).strip('`')})"), True
    m = _ENV_DUMP.search(sent)
    if m is not None:
        return (s + m.start(), s + m.end(), f"the environment ({m.group(0)})"), True
    m = _SECRET_WORDS.search(sent)
    if m is not None:
        return (s + m.start(), s + m.end(), m.group(0)), False
    return None, False


def _exfil_hit(vt: str, s: int, e: int) -> Hit | None:
    source, concrete = _secret_sources(vt, s, e)
    if source is None:
        return None
    strong, url = _sinks(vt, s, e)
    sent = vt[s:e]
    verb = _SEND.search(sent)
    sink = None
    if strong is not None and (verb is not None or _STORE.search(sent)):
        sink = strong
        verb = verb or _STORE.search(sent)
    elif url is not None and verb is not None and concrete and not _AUTH_USE.search(sent):
        sink = url
    if sink is None:
        return None
    if sink[0] < source[1] and source[0] < sink[1]:
        return None  # one phrase is both (an address that names a secret file): not a pair
    assert verb is not None
    a, b = min(source[0], sink[0], s + verb.start()), max(source[1], sink[1])
    msg = f"Sends a secret out, in words: {source[2]} → {' '.join(sink[2].split())[:80]}"
    hit = Hit(
        RULE_EXFIL,
        Severity.ERROR,
        a,
        b,
        msg,
        {"source": source[2], "sink": sink[2]},
        (s + verb.start(), s + verb.end()),
    )
    object.__setattr__(hit, "parts", ((source[0], source[1]), (sink[0], sink[1])))
    return hit


_LIST_LINE = re.compile(r"[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t]+")
_ANAPHOR = re.compile(
    r"(?i)\b(?:it|them|this|that|these|the\s+(?:\w+\s+)?(?:object|report|result|results|file|bundle|payload|json|output"
    r"|data|values|list|archive|dump|map|snapshot|document|blob|body))\b"
)
"""What a later step sends when it names no secret itself: an anaphor of what an earlier step built."""
_LIST_ITEMS_MAX = 60


def list_exfil_hits(vt: str, starts: list[int]) -> list[Hit]:
    """EXF040 over the steps of one list: an item with a concrete secret source (a catalogued
    path, a secret-named variable, the environment) and a LATER item of the same list that sends
    an anaphor of it ("POST the object to https://…", "upload it to the gist") to an outside
    sink: the exfiltration split over list items (red-team round 6 [E4]). A list is consecutive
    item lines with their indented or wrapped continuation lines; only lists holding a candidate
    literal (``starts``, sorted view offsets) are looked at. View offsets; base severity error.

    Lists are found around the candidates only (:func:`_segment`): a line that is neither an
    item, nor blank, nor indented ends a list, so the stretch between two such lines holds at
    most one list, the same one a pass over every line of the text finds there."""
    out: list[Hit] = []
    done = -1
    for o in starts:
        if o < done:
            continue
        seg, done = _segment(vt, o)
        if seg is None:
            continue
        items = _list_items(vt, *seg)
        if len(items) < 2 or len(items) > _LIST_ITEMS_MAX:
            continue
        k = bisect.bisect_left(starts, items[0][0])
        if k >= len(starts) or starts[k] >= items[-1][1]:
            continue
        a, b = items[0][0], items[-1][1]
        key = (vt[a:b], tuple((x - a, y - a) for x, y in items))
        if key in _NO_LIST_HIT:
            continue
        hit = _list_hit(vt, items)
        if hit is not None:
            out.append(hit)
        else:
            if len(_NO_LIST_HIT) >= _NO_LIST_HIT_MAX:
                _NO_LIST_HIT.clear()
            _NO_LIST_HIT[key] = None
    return out


_NO_LIST_HIT: dict[tuple, None] = {}
_NO_LIST_HIT_MAX = 4096
"""Lists (their text from the first item's start to the last item's end, and the items' offsets
in it) that :func:`_list_hit` found nothing in: a function of that text alone, so an unchanged
list of an edited document is not judged again (emptied when full)."""


def _ends_list(vt: str, a: int, b: int) -> bool:
    """Whether the line ``vt[a:b]`` ends a list: not an item, not blank, not indented."""
    return not _LIST_LINE.match(vt, a, b) and bool(vt[a:b].strip()) and vt[a : a + 1] not in " \t"


def _segment(vt: str, o: int) -> tuple[tuple[int, int] | None, int]:
    """``((a, b), b)``: the lines around the one holding view offset ``o`` up to (not including)
    the nearest lines before and after that end a list (:func:`_ends_list`), ``a`` the start of
    the first and ``b`` the end of the last; ``(None, end of o's line)`` when that line ends a
    list itself."""
    n = len(vt)
    a = vt.rfind("\n", 0, o) + 1
    b = vt.find("\n", o)
    b = n if b < 0 else b
    if _ends_list(vt, a, b):
        return None, b
    while a > 0:
        pa = vt.rfind("\n", 0, a - 1) + 1
        if _ends_list(vt, pa, a - 1):
            break
        a = pa
    while b < n:
        nb = vt.find("\n", b + 1)
        nb = n if nb < 0 else nb
        if _ends_list(vt, b + 1, nb):
            break
        b = nb
    return (a, b), b


def _list_items(vt: str, a: int, b: int) -> list[tuple[int, int]]:
    """The items (``(start, end)``, an item's indented continuation lines included) of the list
    in the lines ``vt[a:b]``, none of which ends a list (:func:`_segment`): from its first item
    line on, blank lines skipped."""
    items: list[tuple[int, int]] = []
    pos = a
    while pos <= b:
        e = vt.find("\n", pos, b)
        e = b if e < 0 else e
        if _LIST_LINE.match(vt, pos, e):
            items.append((pos, e))  # a new step (nested items are steps too)
        elif items and vt[pos:e].strip():
            items[-1] = (items[-1][0], e)  # an indented continuation line
        pos = e + 1
    return items


def _list_hit(vt: str, items: list[tuple[int, int]]) -> Hit | None:
    """The EXF040 hit of one list's ``items`` (:func:`list_exfil_hits`), or ``None``."""
    # the sending steps first (cheap regexes); the sources only before the first of them
    sends = []
    for n, (s2, e2) in enumerate(items):
        if n == 0:
            continue
        sent = vt[s2:e2]
        verb = _SEND.search(sent)
        if verb is None or _AUTH_USE.search(sent):
            continue
        ana = _ANAPHOR.search(sent, verb.start())
        if ana is None:
            continue
        strong, url = _sinks(vt, s2, e2)
        sink = strong or url
        if sink is None or s2 + ana.start() > sink[0]:
            continue
        sends.append((n, verb, sink))
    if not sends:
        return None
    source = None
    for n1 in range(sends[-1][0]):
        src, concrete = _secret_sources(vt, *items[n1])
        if src is not None and concrete:
            source = (n1, src)
            break
    if source is None:
        return None
    for n, verb, sink in sends:
        s2, e2 = items[n]
        if n <= source[0] or _secret_sources(vt, s2, e2)[0] is not None:
            continue  # a later step with its own source is judged as a sentence
        hit = Hit(
            RULE_EXFIL,
            Severity.ERROR,
            source[1][0],
            sink[1],
            f"Sends a secret out, in words, over list steps: {source[1][2]} → {' '.join(sink[2].split())[:80]}",
            {"source": source[1][2], "sink": sink[2], "split": "list"},
            (s2 + verb.start(), s2 + verb.end()),
        )
        object.__setattr__(hit, "parts", ((source[1][0], source[1][1]), (sink[0], sink[1])))
        return hit
    return None


def judge_sentence(vt: str, s: int, e: int, follow: str = "") -> list[Hit]:
    """Both concept pairs on the sentence ``vt[s:e]`` (view offsets); ``follow``: the body of the
    fenced block the sentence introduces (it ends with a colon), if any. A function of the
    sentence's text and ``follow`` (every search reads ``vt[s:e]`` only), memoised by them with
    offsets relative to ``s``: an edit re-judges only the sentences it changed."""
    key = (vt[s:e], follow)
    memo = scope.memo("prose sentences")  # (an open document's: unveil.core.scope.memo)
    got = memo.get(key) if memo is not None else None
    if got is None:
        got = tuple(_shift_hit(h, -s) for h in _judge_sentence(vt, s, e, follow))
        if memo is not None:
            scope.keep(memo, key, got, _SENTENCE_MEMO_MAX)
    return [_shift_hit(h, s) for h in got] if s else list(got)


_SENTENCE_MEMO_MAX = 20_000
"""Most sentences whose :func:`judge_sentence` result is kept (the memo is emptied when full)."""


def _shift_hit(h: Hit, d: int) -> Hit:
    """``h`` with every offset moved by ``d``."""
    if not d:
        return h
    return replace(
        h,
        start=h.start + d,
        end=h.end + d,
        verb=(h.verb[0] + d, h.verb[1] + d),
        parts=tuple((a + d, b + d) for a, b in h.parts),
    )


def _judge_sentence(vt: str, s: int, e: int, follow: str = "") -> list[Hit]:
    out: list[Hit] = []
    sent = vt[s:e]
    if not (_WRITE.search(sent) or _SEND.search(sent) or _STORE.search(sent)):
        return out
    h = _persistence_hit(vt, s, e, follow)
    if h is not None:
        out.append(h)
    h = _exfil_hit(vt, s, e)
    if h is not None:
        out.append(h)
    return out


_OPTS = {
    RULE_PERSIST: cx.ContextOptions(),
    # sending a secret out never goes below warning in context (issue 8 §5; the category's
    # floor, :data:`unveil.core.context.FLOOR_DEFAULTS`, which the pattern rules get from their files)
    RULE_EXFIL: cx.ContextOptions(floor=Severity.WARNING),
}


_CODE_SPAN = re.compile(r"`[^`\n]{1,400}`")
_STOPS = re.compile(r"[.!?]")
_BOUNDS_KEPT = "prose sentence-bounds text"


def _neutralised(text: str) -> str:
    """``text`` with the full stops, question and exclamation marks inside inline code (one
    line, :data:`_CODE_SPAN`) replaced by ``_``: the same length, line by line (a code span
    never holds a ``\n``, so each line's spans are found whatever the other lines hold)."""
    return _CODE_SPAN.sub(lambda m: _STOPS.sub("_", m.group(0)), text) if "`" in text else text


def _bounds_text(vt: str) -> str:
    """:func:`_neutralised` of the view text; for an open document of at least
    :data:`SPLICE_MIN` code points, the previous version's kept outside the lines the edit
    touched (the lines from the one holding the first changed code point through the one
    holding the first unchanged one after the edit), which alone are done again: exact, since
    each line is done on its own (``tests/unit/test_prose_splice.py``)."""
    from unveil.core.checks.splice import text_delta

    cache = scope.document_cache()
    if cache is None or len(vt) < SPLICE_MIN:
        return _neutralised(vt)
    prev = cache.kept.get(_BOUNDS_KEPT)
    if prev is None:
        out = _neutralised(vt)
    else:
        old_vt, old_out = prev
        d = text_delta(old_vt, vt)
        a = vt.rfind("\n", 0, d.prefix) + 1  # the start of the first line the edit touched
        e = vt.find("\n", d.new_len - d.suffix)  # a line break of the common suffix: after it, whole old lines
        if e < 0:
            e = d.new_len
        out = old_out[:a] + _neutralised(vt[a:e]) + old_out[e - (d.new_len - d.old_len) :]
    cache.kept[_BOUNDS_KEPT] = (vt, out)
    return out


class _Bounds:
    """Sentence bounds in the view text ``vt`` with the full stops, question and exclamation marks
    inside inline code ignored: :func:`unveil.core.context.unit_bounds` of :func:`_neutralised`
    ``(vt)``, called as ``bounds(start, end, line_only)`` (view offsets in and out).

    In an open document (:func:`unveil.core.scope.document_cache`) the neutralised text is
    :func:`_bounds_text`'s, kept for the next version. Elsewhere no neutralised copy of the whole
    text is made (a 10 MB file's was 20 MB of its peak memory, plus its pieces while it was
    joined): the code spans holding such a mark (the matches of :data:`_CODE_SPAN` over the
    whole text that :func:`_neutralised` changes) are listed once; a sentence whose stretch read
    (:func:`unveil.core.context.unit_reads`) meets none of them is bounded in ``vt`` itself,
    else in that stretch with the marks inside the listed spans replaced (:meth:`window`): the
    same code points as the neutralised text there, and never more than the stretch is copied,
    however long its line."""

    def __init__(self, vt: str) -> None:
        from array import array

        self.vt = vt
        self.text: str | None = None
        self.starts: array[int] = array("q")
        self.ends: array[int] = array("q")
        if scope.document_cache() is not None:
            self.text = _bounds_text(vt)
        elif "`" in vt:
            search = _STOPS.search
            for m in _CODE_SPAN.finditer(vt):
                if search(vt, m.start(), m.end()):
                    self.starts.append(m.start())
                    self.ends.append(m.end())

    def window(self, a: int, b: int) -> str | None:
        """``_neutralised(vt)[a:b]``, or ``None`` when it is ``vt[a:b]`` (no listed span meets it)."""
        starts, ends, vt = self.starts, self.ends, self.vt
        k = bisect.bisect_right(ends, a)  # the first listed span that ends after a
        if k >= len(starts) or starts[k] >= b:
            return None
        parts = []
        pos = a
        while k < len(starts) and starts[k] < b:
            s, e = max(starts[k], a), min(ends[k], b)
            parts.append(vt[pos:s])
            parts.append(_STOPS.sub("_", vt[s:e]))
            pos = e
            k += 1
        parts.append(vt[pos:b])
        return "".join(parts)

    def __call__(self, start: int, end: int, line_only: bool = False) -> tuple[int, int]:
        if self.text is not None:
            return cx.unit_bounds(self.text, start, end, line_only)
        a, b = cx.unit_reads(len(self.vt), start, end)
        piece = self.window(a, b)
        if piece is None:
            return cx.unit_bounds(self.vt, start, end, line_only)
        # (unit_bounds of the piece reads the same stretch: it starts at a, ends at b)
        s, e = cx.unit_bounds(piece, start - a, end - a, line_only)
        return s + a, e + a


def _judged(dc: cx.DocContext, h: Hit, egress: bool) -> Finding:
    """The finding of hit ``h`` (view offsets) after the context judgement of its own sentence,
    in source offsets; ``egress``: it takes part in the combination pass as the sending role."""
    view = dc.view
    j = cx.judge(dc, _OPTS[h.rule], h.severity, *h.verb)
    msg = h.message + (f" (lowered: {', '.join(j.reasons)})" if j.severity > h.severity else "")
    data = {"region": j.region, "parsed": True, "prose": True, **h.facts, **({"combo": "egress"} if egress else {})}
    return Finding(
        h.rule, j.severity, view.orig_start(h.start), view.orig_end(h.end), msg, category=CATEGORY[h.rule], data=data
    )


def _scan(dc: cx.DocContext, skip: list[tuple[int, int]]) -> list[Finding]:
    fences = sorted(skip)
    fence_starts = [a for a, _b in fences]  # (looked up for each sentence ending with a colon)
    view = dc.view
    vt = view.text
    seen: set[tuple[int, int]] = set()
    judged: set[tuple[str, str]] = set()  # the distinct (sentence, follow) judged: the bound's count
    out: list[Finding] = []
    last_end = -1
    skipped = 0
    first_skipped = (0, 0)
    # sentence bounds ignore the full stops inside inline code (`. ~/.kit/env.sh`, `node -v.`)
    bounds = _Bounds(vt)
    skip = sorted(skip)
    skip_starts = [a for a, _b in skip]
    cands = candidates(vt)
    list_hits = list_exfil_hits(vt, [c for c, _e in cands]) if cands else []
    for cs, ce in cands:
        if cs < last_end:
            continue
        o = view.orig_start(cs)
        k = bisect.bisect_right(skip_starts, o) - 1
        if k >= 0 and o < skip[k][1]:
            continue
        region = dc.regions.region(o)
        s, e = bounds(cs, ce)
        if region == "frontmatter":  # a sentence of one YAML line
            ls, le = bounds(cs, ce, line_only=True)
            s, e = max(s, ls), min(e, le)
        last_end = e
        if (s, e) in seen:
            continue
        seen.add((s, e))
        sentence = vt[s:e]
        follow = ""
        if sentence.rstrip().endswith(":") and fences:
            k2 = bisect.bisect_left(fence_starts, view.orig_end(e))
            if k2 < len(fences) and dc.original.count("\n", view.orig_end(e), fences[k2][0]) <= 2:
                block = dc.original[fences[k2][0] : fences[k2][1]][:2000].split("\n")
                follow = "\n".join(block[1:-1] if len(block) > 2 else block[1:])  # the body, not the fence lines
        unit = (sentence, follow)  # judge_sentence's verdict is a function of these (memoised)
        if unit not in judged:
            if len(judged) >= MAX_SENTENCES:
                if skipped == 0:
                    first_skipped = (s, e)
                skipped += 1
                continue
            judged.add(unit)
        for h in judge_sentence(vt, s, e, follow):
            if _inside_one_command(dc, view, h):
                continue  # source and sink in one inline command: the parser judges it (EXF011 …)
            out.append(_judged(dc, h, egress=h.rule == RULE_EXFIL))
    for h in list_hits:
        o = view.orig_start(h.start)
        k = bisect.bisect_right(skip_starts, o) - 1
        if (k >= 0 and o < skip[k][1]) or any(
            f.rule == RULE_EXFIL and f.start < view.orig_end(h.end) and view.orig_start(h.start) < f.end for f in out
        ):
            continue
        out.append(_judged(dc, h, egress=True))
    if skipped:
        a, b = view.orig_start(first_skipped[0]), view.orig_end(max(first_skipped[0] + 1, first_skipped[1]))
        line = len(re.findall(r"\r\n|\r|\n", dc.original[:a])) + 1
        out.append(
            Finding(
                "UNV002",
                Severity.WARNING,
                a,
                b,
                f"Actions in words (PER040, EXF040) judged the first {MAX_SENTENCES:,} distinct candidate sentences of this "
                f"text; {skipped:,} more, from line {line} on, were not judged: they may hide a persistence write "
                "or a secret sent out.",
            )
        )
    return out


def _inside_one_command(dc: cx.DocContext, view, h: Hit) -> bool:
    """Whether the pair of the hit (source and sink) lies in one inline code span: a command
    such as ``curl -H "Authorization: Bearer $GITHUB_TOKEN" https://api.github.com/…`` is judged
    as a parsed command (EXF011 …), not as words."""
    if not h.parts:
        return False
    spans = [dc.regions.code_span(view.orig_start(a)) for a, _b in h.parts]
    return (
        spans[0] is not None
        and all(sp == spans[0] for sp in spans)
        and all(view.orig_end(b) <= spans[0][1] for _a, b in h.parts)
    )


def prose_findings(ctx) -> list[Finding]:
    """PER040 and EXF040 on the document (fenced code blocks excepted: the parser judges those)."""
    text = ctx.doc.text
    try:
        dc = doc_state(text, ctx.markdown).dc  # shared with the directives check (cached)
        skip = [(f.start, f.end) for f in ctx.markdown.fences]
        return _scan(dc, skip)
    except Exception:  # noqa: BLE001 - one bad text never stops the analysis
        return []


def scan_decoded(text: str) -> list[Finding]:
    """PER040 and EXF040 on a decoded payload (offsets into ``text``), judged as hidden text."""
    try:
        if not text:
            return []
        return _scan(doc_state(text, None, decoded=True).dc, [])  # hidden: shared with the rescan
    except Exception:  # noqa: BLE001
        return []


obfuscation.add_rescan(scan_decoded)
