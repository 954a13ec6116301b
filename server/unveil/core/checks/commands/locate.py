"""Where commands are in the markdown body, and :func:`check`: fenced blocks by info string (shell,
console transcripts with prompts stripped, Python / JavaScript snippets, ``command`` values in
JSON / YAML / TOML samples), unlabelled fences and indented blocks that look like shell, inline
code spans that start with a command word, Claude Code ``!`` commands; the frontmatter is
:mod:`.frontmatter`'s."""

from __future__ import annotations

import bisect
import dataclasses
import re
from functools import lru_cache

from unveil.core import scope, shell
from unveil.core.checks import obfuscation
from unveil.core.checks.commands.findings import command_findings
from unveil.core.checks.commands.frontmatter import frontmatter_findings
from unveil.core.checks.commands.prose import prose_findings
from unveil.core.checks.commands.vocabulary import KNOWN_COMMANDS
from unveil.core.document import Document
from unveil.core.findings import Finding
from unveil.core.incremental import relocatable
from unveil.core.markdown import Fence
from unveil.core.shell import OffsetMap

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


_PROMPT = re.compile(r"^\s*(?:\(\S+\)\s*)?(?:[\w.@~:/-]*[$%❯›]|PS [^>]*>|>>>?)\s")


def _fence_body(doc: Document, fence: Fence) -> tuple[str, OffsetMap] | None:
    """The body of a fenced block with its container prefix (blockquote markers, list indentation)
    removed, and its offsets. In an open document, memoised by the text of the fence's lines
    and where its start and end fall in them (:func:`_fence_body_now` reads nothing else; its
    offsets move with the first line's start): a long document's fences are not read again
    line by line on every edit."""
    memo = scope.memo("fence bodies")
    if memo is None or fence.line >= len(doc.line_starts):
        return _fence_body_now(doc, fence)
    base = doc.line_starts[fence.line]
    last = doc.line_of(max(fence.start, fence.end - 1)) if fence.end > fence.start else fence.line
    end = doc.line_starts[last] + len(doc.line_text(last))
    key = (doc.text[base:end], fence.start - base, fence.end - base)
    got: tuple | None = memo.get(key)
    if got is None:
        body = _fence_body_now(doc, fence)
        if body is None:
            got = (None, (), None)
        else:
            lim = body[1].limit
            rel = None if lim is None else (lim[0] - base, lim[1] - base)
            got = (body[0], tuple((i, o - base) for i, o in body[1].points), rel)
        scope.keep(memo, key, got, FENCE_MEMO_MAX)
    text, points, rel = got
    if text is None:
        return None
    lim = None if rel is None else (rel[0] + base, rel[1] + base)
    return text, OffsetMap(tuple((i, o + base) for i, o in points), lim)


FENCE_MEMO_MAX = 512
"""Fence bodies an open document keeps (:func:`_fence_body`)."""


def _fence_body_now(doc: Document, fence: Fence) -> tuple[str, OffsetMap] | None:
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


def config_commands(body: str, omap: OffsetMap, origin: str) -> list[Finding]:
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


INLINE_CACHE_MAX = 1024
"""Longest inline code span (code points) whose :func:`_inline_command` answer is cached."""


def _inline_command(code: str) -> bool:
    """Whether the inline code ``code`` reads as a shell command (a known command name with an
    argument, ``./script``, ``$(…)``, or one that :func:`_normalised_command` parses as one).
    A function of ``code`` alone, so cached per process for spans of at most
    :data:`INLINE_CACHE_MAX` code points (a long document repeats its inline code spans on
    every edit; a bound on what 8,192 cached spans can hold)."""
    return _inline_command_cached(code) if len(code) <= INLINE_CACHE_MAX else _inline_command_now(code)


@lru_cache(maxsize=8192)
def _inline_command_cached(code: str) -> bool:
    return _inline_command_now(code)


_PROGRAM_PATH = re.compile(r"(?:/|~/|\$HOME/|\$\{HOME\}/|\.\./)[\w./${}~-]+")
_SCRIPT_FILE = re.compile(r"(?i)\.(?:sh|bash|zsh|py|pl|rb|run|bin|appimage|command|ps1)$")


def _inline_command_now(code: str) -> bool:
    s = re.sub(r"^\$\s+", "", code.strip())
    first = re.split(r"[\s|;&()<>]", s, maxsplit=1)[0]
    wrapped = first in ("sudo", "doas", "env", "nohup", "time")
    if wrapped:
        first = (s.split() + ["", ""])[1]
    b = shell.basename(first)
    if b in KNOWN_COMMANDS or first.startswith("./") or (first.startswith("$(") and len(s) > 4):
        # one bare word (`git`, `curl`) is a name, not a command
        return " " in s or "|" in s
    if _PROGRAM_PATH.fullmatch(first) and (
        wrapped or (" " in s and (_SCRIPT_FILE.search(first) or re.match(r"\S+\s+--?[A-Za-z]", s)))
    ):
        # a program run by its path: `sudo /tmp/pw-sync.sh --all`, `~/bin/fix.sh x`, `~/.cache/tool --all`
        return True
    if re.search(r"['\"\\$=]", s) and (" " in s or "|" in s or "$" in s):
        return _normalised_command(s)
    return False


def _normalised_command(code: str) -> bool:
    """Whether ``code`` parses as shell in which, after normalisation (quote removal, ``$IFS`` as
    a space, variables assigned in the span substituted, ``eval`` strings parsed), some command
    with an argument has a known name (:data:`KNOWN_COMMANDS`): ``c''url … | b''ash``,
    ``curl${IFS}-s…``, ``a=cu; ${a}rl …``. In the language server, an answer is reused while the
    document holds the same span (:func:`unveil.core.incremental.relocatable`)."""
    return relocatable("normalised command", (code,), 0, lambda: [_names_a_command(code)], lambda x, d: x)[0]


def _names_a_command(code: str) -> bool:
    script = shell.parse(code)
    for s in [script, *script.line_scripts]:
        for c in s.commands():
            name, args, _w = c.effective()
            if name in KNOWN_COMMANDS and args:
                return True
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
            out.extend(config_commands(body_text, omap, origin))
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
    inline_cmds: list[tuple[str, int, int, int]] = []
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
                if not bang:
                    inline_cmds.append((code, base, span.start, span.end))
            elif _URL_ONLY.fullmatch(code):
                step = _prose_download(text, span.start, span.end, code)
                if step is not None:
                    inline_cmds.append((step, base, span.start, span.end))
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
    out.extend(_sequence_findings(text, inline_cmds, fence_spans))
    out.extend(frontmatter_findings(ctx))
    out.extend(prose_findings(ctx))
    return out


_SEQ_START = re.compile(
    r"(?i)\b(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod|aria2c|fetch|scp|rsync|git\s+(?:clone|remote|add)|http)|>|\btee\b|\bcp\b|\bcat\b"
)
"""A command that may fetch, copy or write the file a later step uses, or stage or route what a
later ``git push`` sends (cheap prefilter)."""
_HEADING_LINE = re.compile(r"(?m)^[ ]{0,3}#{1,6}(?:[ \t]|$)")
_SEQUENCE_MAX = 40
"""At most this many inline commands are judged as one sequence (a longer section is judged in
consecutive windows of this size)."""
_SEQUENCE_GAP = 2000
"""Two inline commands more than this many code points apart start separate sequences."""


_URL_ONLY = re.compile(r"https?://[^\s`'\"<>]+")
_DOWNLOAD_VERB = re.compile(
    r"(?i)\b(?:download|fetch|grab|save|get|pull|retrieve|copy|curl|wget)(?:s|ed|ing)?\b[^.!?\n`]{0,60}\Z"
)
_SAVE_TO = re.compile(r"(?i)[^.!?\n`]{0,40}?\b(?:to|as|into|under|at)\s+`([^`\s]{1,200})`")


def _prose_download(text: str, start: int, end: int, url: str) -> str | None:
    """A download described in words around an inline-code URL, as the command it stands for:
    "Download `https://…/latest.sh` to `/tmp/pw-sync.sh`" is ``curl -fsSL -o /tmp/pw-sync.sh URL``
    (without a named target, ``curl -fsSLO URL``: the file takes the URL's name). ``None`` when
    no download verb precedes the URL in its sentence. Judged only as a step of a section's
    sequence (:func:`_sequence_findings`): a later step that makes that file executable or runs it
    is a download-then-execute."""
    ls = text.rfind("\n", 0, start) + 1
    if not _DOWNLOAD_VERB.search(text, ls, start):
        return None
    m = _SAVE_TO.match(text, end, min(len(text), end + 260))
    if m is not None:
        return f"curl -fsSL -o {m.group(1)} {url}"
    return f"curl -fsSLO {url}"


def _sequence_findings(
    text: str, cmds: list[tuple[str, int, int, int]], fences: list[tuple[int, int]]
) -> list[Finding]:
    """Inline commands of one section read as one script, in document order: a file downloaded
    by one step and made executable and run by a later one ("1. `curl -o /tmp/x URL` … 3.
    `chmod +x /tmp/x && /tmp/x`") is judged like the same lines in a code block. A section ends at
    a heading, a fenced block or a gap of :data:`_SEQUENCE_GAP` code points. Only findings that
    span two or more of the commands are kept (each command alone was judged already). ``cmds``:
    ``(code, offset of the code, span start, span end)`` in source code points; a download told in
    words around an inline-code URL is one of them (:func:`_prose_download`)."""
    groups: list[list[tuple[str, int, int, int]]] = []
    fence_starts = sorted(a for a, _b in fences)  # (a fence between two commands: by bisection)
    for c in cmds:
        if groups:
            prev = groups[-1][-1]
            between = text[prev[3] : c[2]]
            kf = bisect.bisect_left(fence_starts, prev[3])
            if (
                len(groups[-1]) < _SEQUENCE_MAX
                and c[2] - prev[3] <= _SEQUENCE_GAP
                and not _HEADING_LINE.search(between)
                and not (kf < len(fence_starts) and fence_starts[kf] < c[2])
            ):
                groups[-1].append(c)
                continue
        groups.append([c])
    out: list[Finding] = []
    for g in groups:
        # a sequence matters from its first command that fetches or writes a file onward
        k = next((i for i, c in enumerate(g) if _SEQ_START.search(c[0])), None)
        if k is None or len(g) - k < 2:
            continue
        g = g[k:]
        pts, pieces, pos = [], [], 0
        for code, base, _s, _e in g:
            pts.append((pos, base))
            pieces.append(code)
            pos += len(code) + 1
        for f in command_findings("\n".join(pieces), OffsetMap(tuple(pts)), "code"):
            if any(s <= f.start and f.end <= e for _c, _b, s, e in g):
                continue  # within one command: already reported by its own judgement
            out.append(dataclasses.replace(f, message=f.message + " (read across the inline commands of one section)"))
    return out


_LOOKS_JS = re.compile(
    r"\b(?:fetch|XMLHttpRequest|require|eval|Function|sendBeacon|setTimeout)\s*\(|\bdocument\.\w|\bwindow\.\w"
    r"|\b(?:const|let|var)\s+\w+\s*=|=>|\bnew\s+(?:Image|WebSocket|XMLHttpRequest)\b"
)
"""Decoded text that reads as JavaScript (a call of a browser or Node API, a declaration, an arrow)."""


def decoded_commands(text: str) -> list[Finding]:
    """A decoded payload (base64, rot13, escapes, character codes …) that is a shell command, judged
    like the same command in an inline code span (origin ``decoded``: raised one step); one that
    reads as JavaScript is judged as a JavaScript snippet. Registered with
    :func:`unveil.core.checks.obfuscation.add_rescan`, so ``c=cu; c=${c}rl; $c … | ${SHELL}``
    encoded makes its run an error even though no pattern rule reads it."""
    code = text.strip()
    if _LOOKS_JS.search(code) and not _inline_command(code):
        # decoded JavaScript (`String.fromCharCode(…)`, `atob(…)` payloads): judged as a snippet
        return command_findings(code, 0, "decoded", "javascript")
    if len(code) > 2 and code[0] == "`" and code[-1] == "`" and "`" not in code[1:-1]:
        code = code[1:-1].strip()  # a decoded line that is one inline code span
    if not code or len(code) > 20000 or "`" in code:
        return []  # prose around code, or a backtick substitution: not one command line
    if "\n" in code:
        if not looks_like_shell(code):
            return []
    elif not _inline_command(code):
        return []
    return command_findings(code, 0, "decoded")


obfuscation.add_rescan(decoded_commands)
