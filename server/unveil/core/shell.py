"""Shell commands as a parse tree: tree-sitter-bash, flattened to commands, pipelines and words.

:func:`parse` turns a string of shell (a fenced block, an inline code span, a hook command, a
decoded payload …) into a :class:`Script`: its pipelines in source order, each a tuple of
:class:`Command` stages, each command with its argv as :class:`Word` values (quotes removed;
variable expansions and ``$(…)``/backtick/``<(…)`` substitutions kept as their source text and,
for substitutions, parsed into nested :class:`Script` values), its ``VAR=value`` prefixes, its
redirections (here-document bodies included) and, for compound statements (``( … )``,
``{ …; }``, ``if``/``for``/``while``/``case``, functions), the body as a nested script.

Bodies that the shell or an interpreter runs are parsed too, recursively up to
:data:`MAX_DEPTH` levels: the script of ``sh -c``/``bash -c``/``su -c``, the words of ``eval``, a
here-document fed to a shell; ``python -c``/``node -e``/``perl -e``/``ruby -e``/``php -r`` bodies
and here-documents fed to those interpreters become :class:`Snippet` values (source code in
another language, judged by :mod:`unveil.core.checks.commands`). A script nested deeper than
:data:`MAX_DEPTH` is not parsed and :attr:`Script.truncated` says so (the check reports it).

Parser choice (measured on the 2,384 shell fences of the shared benign corpus, 537 KB):
tree-sitter-bash 0.25 parses all of them in 0.07 s and still yields a tree for the 140 blocks
with an ``ERROR``/``MISSING`` node (error recovery); bashlex 0.18 raises on 276 blocks (no
tree at all) and needs 1.96 s. A tree with errors is complemented by parsing each of its lines on
its own (:attr:`Script.has_error`), so an unterminated quote early in a block cannot hide the
commands after it.

Positions. Every ``start``/``end`` is a code-point offset into the *caller's* text: the string
handed to :func:`parse` maps back through an :class:`OffsetMap` (a base offset, or per-line
offsets for text assembled from several source lines such as a fence body with blockquote
markers removed or a YAML block scalar). tree-sitter reports UTF-8 byte offsets; they are
converted to code points first.
"""

from __future__ import annotations

import bisect
import logging
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Iterator, Sequence

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

log = logging.getLogger(__name__)

MAX_DEPTH = 6
"""Most levels of nested bodies parsed (``bash -c "eval '…'"`` is 2); deeper ones are reported."""

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "fish", "csh", "tcsh", "yash", "posh"})
INTERPRETERS = {  # name → language of the code it runs from -c/-e or stdin
    "python": "python",
    "python2": "python",
    "python3": "python",
    "pypy": "python",
    "pypy3": "python",
    "node": "javascript",
    "nodejs": "javascript",
    "deno": "javascript",
    "bun": "javascript",
    "perl": "perl",
    "ruby": "ruby",
    "php": "php",
    "lua": "lua",
    "rscript": "r",
    "pwsh": "powershell",
    "powershell": "powershell",
    "osascript": "applescript",
    "tclsh": "tcl",
}
CODE_FLAGS = {
    "python": ("-c",),
    "javascript": ("-e", "--eval", "-p", "--print"),
    "perl": ("-e", "-E"),
    "ruby": ("-e",),
    "php": ("-r",),
    "lua": ("-e",),
    "r": ("-e",),
    "powershell": ("-c", "-command", "-Command"),
    "applescript": ("-e",),
    "tcl": (),
}
WRAPPERS = frozenset(
    {
        "sudo",
        "doas",
        "env",
        "nohup",
        "time",
        "command",
        "exec",
        "nice",
        "ionice",
        "timeout",
        "stdbuf",
        "xargs",
        "chronic",
        "setsid",
        "caffeinate",
        "unbuffer",
        "builtin",
        "strace",
        "torsocks",
        "proxychains",
        "proxychains4",
        "flock",
        "run-one",
        "busybox",
        "toybox",
    }
)
_WRAPPER_ARG_OPTS = {  # options of a wrapper that take a separate argument
    "sudo": {"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "-R"},
    "doas": {"-u", "-C"},
    "env": {"-u", "-C", "-S", "--unset", "--chdir", "--split-string"},
    "nice": {"-n", "--adjustment"},
    "ionice": {"-c", "-n", "-p"},
    "timeout": {"-s", "-k", "--signal", "--kill-after"},
    "xargs": {
        "-I",
        "-n",
        "-P",
        "-d",
        "-L",
        "-s",
        "-a",
        "-E",
        "--max-args",
        "--max-procs",
        "--delimiter",
        "--arg-file",
        "--replace",
    },
    "stdbuf": set(),
    "flock": {"-w", "-E"},
}
_NO_COUNT_FIRST = {"timeout": 1, "flock": 1}  # positional arguments before the wrapped command


# `$SHELL`, `${BASH:-bash}`, `"$0"`, `$PYTHON_BIN`: a parameter expansion as a command word
_EXPANSION_WORD = re.compile(
    r"^\$(?:\{(?P<b>[A-Za-z_][A-Za-z0-9_]*|[0-9])(?:(?P<op>:?[-=+?])(?P<dflt>[^{}$`]*))?\}|(?P<p>[A-Za-z_][A-Za-z0-9_]*|[0-9]))$"
)
# `$(which bash)`, `` `command -v python3` ``: a path lookup of a named program as a command word
_LOOKUP_WORD = re.compile(r"^(?:\$\(|`)\s*(?:which|command\s+-v|type\s+-[pP]|whereis)\s+([\w./+-]+)\s*(?:\)|`)$")
_INTERPRETER_VARS = {"shell": "sh", "0": "sh", "zsh_name": "zsh", "bash": "bash"}
"""Parameters whose value is the running shell: ``$SHELL`` (login shell, POSIX environ(7)),
``$0`` (the shell's own name when interactive or under ``sh -c``), ``$BASH`` (bash's path),
``$ZSH_NAME``."""
_VAR_SUFFIX = re.compile(r"(?:_?(?:bin|exe|cmd|path|interp(?:reter)?|executable))$")


def interpreter_of_expansion(word: str) -> str | None:
    """The shell or interpreter a command word that is an expansion stands for, else ``None``:
    the running shell's parameters (``$SHELL``/``${SHELL}`` → ``sh``, ``"$0"`` → ``sh``,
    ``$BASH`` → ``bash``), a variable named after an interpreter (``$PYTHON``, ``$PYTHON_BIN``,
    ``${NODE}`` → ``python``/``node``), an expansion whose default or alternate value is one
    (``${X:-bash}``, ``${SH-/bin/sh}``) and a path lookup (``$(which bash)``, ``$(command -v
    python3)``). The word is the quote-removed text (``"${SHELL}"`` arrives as ``${SHELL}``)."""
    m = _EXPANSION_WORD.match(word)
    if m is not None:
        dflt = m.group("dflt")
        if dflt and not m.group("op").endswith("?"):
            b = basename(dflt.strip().strip("'\""))
            if b in SHELLS or b in INTERPRETERS:
                return b
        var = (m.group("b") or m.group("p") or "").lower()
        if var in _INTERPRETER_VARS:
            return _INTERPRETER_VARS[var]
        for v in (var, _VAR_SUFFIX.sub("", var)):
            if v in SHELLS or v in INTERPRETERS:
                return v
        return None
    m = _LOOKUP_WORD.match(word)
    if m is not None:
        b = basename(m.group(1))
        if b in SHELLS or b in INTERPRETERS:
            return b
    return None


@lru_cache(maxsize=4096)
def basename(name: str) -> str:
    """Command name without its directory and a trailing version (``/usr/bin/python3.11`` →
    ``python3``), lower-cased. A command word that is an expansion standing for a shell or an
    interpreter is that program (:func:`interpreter_of_expansion`: ``${SHELL}`` → ``sh``)."""
    if name[:1] in ("$", "`"):
        got = interpreter_of_expansion(name)
        if got is not None:
            return got
    b = name.rsplit("/", 1)[-1].lower()
    if b.startswith("python3.") or b.startswith("python2."):
        b = b[:7]
    if b.endswith(".exe"):
        b = b[:-4]
    return b


# --------------------------------------------------------------------------------------------
# Offsets
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OffsetMap:
    """Maps code-point index ``i`` of a parsed string to an offset in the caller's text.

    ``points`` holds ``(index, offset)`` pairs sorted by index: index ``i`` maps to
    ``offset_k + (i - index_k)`` for the last pair with ``index_k <= i``. A single pair
    ``((0, base),)`` is a contiguous copy at ``base``. ``limit`` (optional) clamps results (a
    lossy mapping, e.g. a YAML scalar with escapes, maps inside the scalar's span)."""

    points: tuple[tuple[int, int], ...] = ((0, 0),)
    limit: tuple[int, int] | None = None

    @staticmethod
    def at(base: int) -> "OffsetMap":
        return OffsetMap(((0, base),))

    @staticmethod
    def from_list(omap: Sequence[int]) -> "OffsetMap":
        """From a per-character list of offsets (runs of consecutive offsets are merged)."""
        pts: list[tuple[int, int]] = []
        prev = None
        for i, o in enumerate(omap):
            if prev is None or o != prev + 1:
                pts.append((i, o))
            prev = o
        if not pts:
            pts = [(0, 0)]
        return OffsetMap(tuple(pts))

    def __call__(self, i: int) -> int:
        pts = self.points
        k = bisect.bisect_right(pts, (i, float("inf"))) - 1
        k = max(k, 0)
        idx, off = pts[k]
        out = off + (i - idx)
        if self.limit is not None:
            out = max(self.limit[0], min(out, self.limit[1]))
        return out

    def sub(self, omap: Sequence[int]) -> "OffsetMap":
        """The map of a derived string whose character ``j`` came from index ``omap[j]``."""
        if not omap:
            return OffsetMap.at(self(0))._lim(self.limit)
        if len(self.points) == 1 and self.limit is None:  # contiguous: a shift, no search per character
            idx, off = self.points[0]
            d = off - idx
            return OffsetMap.from_list([i + d for i in omap])
        pts, n, lim = self.points, len(self.points), self.limit
        out = []
        k = 0
        for i in omap:  # indices mostly increase: walk the points instead of a search per character
            if k and i < pts[k][0]:
                k = 0
            while k + 1 < n and pts[k + 1][0] <= i:
                k += 1
            o = pts[k][1] + (i - pts[k][0])
            if lim is not None:
                o = max(lim[0], min(o, lim[1]))
            out.append(o)
        return OffsetMap.from_list(out)

    def shift(self, start: int) -> "OffsetMap":
        """The map of ``s[start:]``."""
        pts = self.points
        k = max(bisect.bisect_right(pts, (start, float("inf"))) - 1, 0)
        new = [(0, self(start))] + [(idx - start, off) for idx, off in pts[k + 1 :]]
        return OffsetMap(tuple(new), self.limit)

    def relative(self) -> tuple[int, tuple]:
        """``(base, shape)``: the offset of index 0 and the map with ``base`` subtracted from
        every offset (and from the limit), so that two maps of the same shape at different places
        differ only by ``base`` (a result computed through one is the other's, moved by the
        difference of bases)."""
        base = self.points[0][1]
        lim = None if self.limit is None else (self.limit[0] - base, self.limit[1] - base)
        return base, (tuple((i, o - base) for i, o in self.points), lim)

    def _lim(self, limit: tuple[int, int] | None) -> OffsetMap:
        return OffsetMap(self.points, limit)


# --------------------------------------------------------------------------------------------
# Model
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Snippet:
    """Source code in another language that a command runs: ``language`` (``python``,
    ``javascript`` …), ``text`` and the :class:`OffsetMap` of ``text`` into the caller's text;
    ``via`` says how it was given (``"-c"``, ``"here-doc"``, ``"stdin"``)."""

    language: str
    text: str
    omap: OffsetMap
    via: str

    @property
    def start(self) -> int:
        return self.omap(0)

    @property
    def end(self) -> int:
        return self.omap(max(len(self.text) - 1, 0)) + 1


@dataclass(frozen=True)
class Word:
    """One argument. ``text``: the value after quote removal, with ``$VAR``/``${…}`` and
    substitutions kept as written; ``raw`` as written; ``[start, end)`` in the caller's text;
    ``omap`` maps ``text`` indices to offsets. ``subs``: parsed ``$(…)``/backtick/``<(…)``/``>(…)``
    bodies inside the word; ``process``: ``"<("`` or ``">("`` when the whole word is a process
    substitution; ``expands``: whether the word holds an expansion or substitution."""

    text: str
    raw: str
    start: int
    end: int
    _map: OffsetMap | None = field(default=None, compare=False, repr=False)
    subs: tuple["Script", ...] = ()
    process: str = ""
    expands: bool = False
    _lazy: tuple[OffsetMap, list[int]] | None = field(
        default=None, compare=False, repr=False
    )  # (source map, indices): built on use

    @property
    def omap(self) -> OffsetMap:
        """Maps indices of :attr:`text` to offsets in the caller's text."""
        m = self._map
        if m is None:
            if self._lazy is not None:
                base, idx = self._lazy
                m = base.sub(idx)
            else:
                m = OffsetMap.at(self.start)
            object.__setattr__(self, "_map", m)
        return m


@dataclass(frozen=True)
class Redirect:
    """``op`` (``>``, ``>>``, ``<``, ``&>``, ``>&``, ``<<``, ``<<-``, ``<<<`` …), the ``fd`` it
    applies to (``""`` = default), its ``target`` word (``None`` for a here-document) and, for a
    here-document, ``body`` with its :class:`OffsetMap` ``body_map``."""

    op: str
    fd: str
    target: Word | None
    start: int
    end: int
    body: str | None = None
    body_map: OffsetMap | None = field(default=None, compare=False, repr=False)

    @property
    def writes(self) -> bool:
        return ">" in self.op and not self.op.startswith("<")

    @property
    def reads(self) -> bool:
        return self.op in ("<", "<>") or self.op.startswith("<<")


@dataclass
class Command:
    """One simple command (or a compound statement when ``body`` is set and ``argv`` empty).

    * ``argv`` — the words, command name first; ``assigns`` — ``(name, Word)`` prefixes.
    * ``redirects`` — in source order; ``[start, end)`` — the whole command with its redirections.
    * ``inner`` — scripts this command runs (``sh -c`` body, ``eval`` words, a here-document fed to
      a shell); ``snippets`` — code in other languages it runs (``python -c`` …).
    * ``depth`` — 0 for a top-level command, +1 per enclosing body.
    """

    argv: tuple[Word, ...]
    start: int
    end: int
    assigns: tuple[tuple[str, Word], ...] = ()
    redirects: tuple[Redirect, ...] = ()
    body: "Script | None" = None
    inner: list["Script"] = field(default_factory=list)
    snippets: list[Snippet] = field(default_factory=list)
    depth: int = 0
    _fed: set[int] = field(default_factory=set, repr=False, compare=False)
    _eff: tuple[str, tuple[Word, ...], tuple[str, ...]] | None = field(default=None, repr=False, compare=False)

    @property
    def name(self) -> str:
        """:func:`basename` of argv[0] (``""`` for none)."""
        return basename(self.argv[0].text) if self.argv else ""

    def effective(self) -> tuple[str, tuple[Word, ...], tuple[str, ...]]:
        """``(name, args, wrappers)`` after removing wrappers (``sudo -u x``, ``env A=b``,
        ``nohup``, ``timeout 5``, ``xargs -I{}`` …) and their options: ``name`` is the
        :func:`basename` of the wrapped command, ``args`` its arguments."""
        got = self._eff
        if got is None:
            got = self._eff = unwrap(self.argv)
        return got

    def words(self) -> Iterator[Word]:
        """Every word: argv, assignment values and redirection targets."""
        yield from self.argv
        for _n, w in self.assigns:
            yield w
        for r in self.redirects:
            if r.target is not None:
                yield r.target


@dataclass
class Pipeline:
    """Commands joined by ``|`` (one stage for a plain command); ``op`` is the list operator
    before it (``""`` first, ``&&``, ``||``, ``;``, ``&`` or ``"\\n"``)."""

    stages: list[Command]
    start: int
    end: int
    op: str = ""


@dataclass
class Script:
    """A parsed shell string: ``pipelines`` in source order; ``has_error``: tree-sitter met
    a syntax error (the tree is its best recovery, and the lines were re-parsed on their own into
    ``line_scripts``); ``truncated``: a body deeper than :data:`MAX_DEPTH` was not parsed
    (offset of the first one)."""

    pipelines: list[Pipeline]
    start: int
    end: int
    has_error: bool = False
    line_scripts: list["Script"] = field(default_factory=list)
    truncated: int | None = None
    depth: int = 0
    reading: str = ""
    """For a de-obfuscated reading (see :func:`_alternate_readings`): its text, else ``""``."""
    reading_map: "OffsetMap | None" = field(default=None, repr=False, compare=False)
    new_names: frozenset[str] = frozenset()
    """Command names this reading runs that the literal reading does not (``curl`` from ``${c}rl``)."""

    def commands(self) -> Iterator[Command]:
        """Every command, nested ones included (compound bodies, substitutions, ``-c`` bodies,
        per-line re-parses), outer before inner."""
        for p in self.pipelines:
            for c in p.stages:
                yield from _walk_command(c)
        for s in self.line_scripts:
            yield from s.commands()

    def scripts(self) -> Iterator["Script"]:
        """This script and every nested one (bodies, substitutions, ``-c`` bodies)."""
        yield self
        for p in self.pipelines:
            for c in p.stages:
                yield from _walk_scripts(c)
        for s in self.line_scripts:
            yield from s.scripts()

    def truncations(self) -> list[int]:
        return [s.truncated for s in self.scripts() if s.truncated is not None]


def _walk_command(c: Command) -> Iterator[Command]:
    yield c
    for s in _children(c):
        yield from s.commands()


def _walk_scripts(c: Command) -> Iterator[Script]:
    for s in _children(c):
        yield from s.scripts()


def _children(c: Command) -> list[Script]:
    out: list[Script] = []
    if c.body is not None:
        out.append(c.body)
    for w in c.words():
        out.extend(w.subs)
    out.extend(c.inner)
    return out


def unwrap(argv: Sequence[Word]) -> tuple[str, tuple[Word, ...], tuple[str, ...]]:
    """See :meth:`Command.effective`."""
    words = list(argv)
    wrappers: list[str] = []
    for _ in range(8):
        if not words:
            return "", (), tuple(wrappers)
        name = basename(words[0].text)
        if name not in WRAPPERS:
            break
        rest = words[1:]
        if not any(not w.text.startswith("-") and not (name == "env" and "=" in w.text) for w in rest):
            break  # `env`, `sudo -l`, `time`: the wrapper is the command itself
        wrappers.append(name)
        opts = _WRAPPER_ARG_OPTS.get(name, set())
        positional = _NO_COUNT_FIRST.get(name, 0)
        i = 0
        while i < len(rest):
            t = rest[i].text
            if name == "env" and "=" in t and not t.startswith("-"):
                i += 1
                continue
            if t == "--":
                i += 1
                break
            if t.startswith("-") and len(t) > 1:
                i += 2 if (t in opts or (name == "xargs" and t in ("-I", "-i") and False)) else 1
                continue
            if positional:
                positional -= 1
                i += 1
                continue
            break
        words = rest[i:]
    if not words:
        return "", (), tuple(wrappers)
    return basename(words[0].text), tuple(words[1:]), tuple(wrappers)


# --------------------------------------------------------------------------------------------
# Quote removal
# --------------------------------------------------------------------------------------------

_ANSI = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


_SPECIAL_WORD = re.compile(r"[\\'\"$`<>]")
_SEGMENT = re.compile(r"'[^']*'|\"[^\"\\$`]*\"|[^'\"\\$`<>]+")
# one character per repeat: no nested quantifier, so linear
_SIMPLE_QUOTED = re.compile(r"(?:'[^']*'|\"[^\"\\$`]*\"|[^'\"\\$`<>])+")


def unquote(raw: str) -> tuple[str, list[int], bool]:
    """Shell quote removal of one word: ``(text, omap, expands)``. ``omap[j]`` is the index in
    ``raw`` of the character ``text[j]`` came from; ``expands`` whether ``$``-expansions or
    substitutions remain (they are kept as written). Handles ``'…'``, ``"…"``, ``$'…'`` (ANSI-C
    escapes ``\\n``, ``\\xHH``, ``\\uHHHH``, octal), backslash escapes and line continuations."""
    if not _SPECIAL_WORD.search(raw):
        return raw, list(range(len(raw))), False
    if _SIMPLE_QUOTED.fullmatch(raw):  # plain and simply quoted segments: no per-character loop
        parts: list[str] = []
        idx: list[int] = []
        for m in _SEGMENT.finditer(raw):
            a, b = m.span()
            if raw[a] in "'\"":
                a, b = a + 1, b - 1
            parts.append(raw[a:b])
            idx.extend(range(a, b))
        return "".join(parts), idx, False
    out: list[str] = []
    omap: list[int] = []
    n = len(raw)
    i = 0
    expands = False

    def put(ch: str, at: int) -> None:
        out.append(ch)
        omap.append(at)

    def copy_sub(i: int) -> int:  # $( … ) or ` … ` or ${ … } kept verbatim; returns index after it
        nonlocal expands
        expands = True
        if raw.startswith("$(", i) or raw.startswith("${", i) or raw.startswith("<(", i) or raw.startswith(">(", i):
            close = ")" if raw[i + 1] == "(" else "}"
            opener = raw[i + 1]
            depth = 0
            j = i + 1
            while j < n:
                ch = raw[j]
                if ch == "\\":
                    j += 2
                    continue
                if ch == opener:
                    depth += 1
                elif ch == close:
                    depth -= 1
                    if depth == 0:
                        j += 1
                        break
                j += 1
        else:  # backtick
            j = i + 1
            while j < n and raw[j] != "`":
                j += 2 if raw[j] == "\\" else 1
            j = min(j + 1, n)
        for k in range(i, min(j, n)):
            put(raw[k], k)
        return min(j, n)

    while i < n:
        c = raw[i]
        if c == "'":
            j = raw.find("'", i + 1)
            j = n if j < 0 else j
            for k in range(i + 1, j):
                put(raw[k], k)
            i = j + 1
        elif c == "$" and i + 1 < n and raw[i + 1] == "'":
            i += 2
            while i < n and raw[i] != "'":
                if raw[i] == "\\" and i + 1 < n:
                    e = raw[i + 1]
                    if e in "xuU":
                        width = {"x": 2, "u": 4, "U": 8}[e]
                        j = i + 2
                        while j < n and j < i + 2 + width and raw[j] in "0123456789abcdefABCDEF":
                            j += 1
                        if j > i + 2:
                            try:
                                put(chr(int(raw[i + 2 : j], 16)), i)
                            except (ValueError, OverflowError):
                                put("\ufffd", i)
                            i = j
                            continue
                    if e in "01234567":
                        j = i + 1
                        while j < n and j < i + 4 and raw[j] in "01234567":
                            j += 1
                        put(chr(int(raw[i + 1 : j], 8) & 0xFF), i)
                        i = j
                        continue
                    put(_ANSI.get(e, "\\" + e), i)
                    i += 2
                    continue
                put(raw[i], i)
                i += 1
            i += 1
        elif c == '"' or (c == "$" and i + 1 < n and raw[i + 1] == '"'):
            i += 1 if c == '"' else 2
            while i < n and raw[i] != '"':
                ch = raw[i]
                if ch == "\\" and i + 1 < n and raw[i + 1] in '$`"\\\n':
                    if raw[i + 1] != "\n":
                        put(raw[i + 1], i + 1)
                    i += 2
                    continue
                if ch == "$" and i + 1 < n and raw[i + 1] in "({":
                    i = copy_sub(i)
                    continue
                if ch == "`":
                    i = copy_sub(i)
                    continue
                if ch == "$" and i + 1 < n and (raw[i + 1].isalnum() or raw[i + 1] in "_@*#?!-$"):
                    expands = True
                put(ch, i)
                i += 1
            i += 1
        elif c == "\\":
            if i + 1 < n and raw[i + 1] != "\n":
                put(raw[i + 1], i + 1)
            i += 2
        elif c == "$" and i + 1 < n and raw[i + 1] in "({":
            i = copy_sub(i)
        elif c == "`":
            i = copy_sub(i)
        elif c in "<>" and i + 1 < n and raw[i + 1] == "(":
            i = copy_sub(i)
        else:
            if c == "$" and i + 1 < n and (raw[i + 1].isalnum() or raw[i + 1] in "_@*#?!-$"):
                expands = True
            put(c, i)
            i += 1
    return "".join(out), omap, expands


# --------------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _parser() -> Parser:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


class _Src:
    """The parsed string, its UTF-8 bytes and the byte → code-point conversion."""

    def __init__(self, text: str, omap: OffsetMap) -> None:
        self.text = text
        self.data = text.encode("utf-8", "surrogatepass")
        self.omap = omap
        self.cp: list[int] | None = None
        if len(self.data) != len(text):
            cp = [0] * (len(self.data) + 1)
            b = 0
            for i, ch in enumerate(text):
                w = len(ch.encode("utf-8", "surrogatepass"))
                for k in range(w):
                    cp[b + k] = i
                b += w
            cp[b] = len(text)
            self.cp = cp

    def i(self, byte: int) -> int:
        """Code-point index in ``text`` of a byte offset."""
        return byte if self.cp is None else self.cp[min(byte, len(self.cp) - 1)]

    def node_text(self, node: Node) -> str:
        return self.text[self.i(node.start_byte) : self.i(node.end_byte)]

    def span(self, node: Node) -> tuple[int, int]:
        a, b = self.i(node.start_byte), self.i(node.end_byte)
        return self.omap(a), (self.omap(b - 1) + 1 if b > a else self.omap(a))


def parse(text: str, omap: OffsetMap | int = 0, depth: int = 0) -> Script:
    """Parse ``text`` as shell. ``omap``: where ``text`` is in the caller's text (an
    :class:`OffsetMap`, or a base offset). ``depth``: nesting level (bodies deeper than
    :data:`MAX_DEPTH` are not parsed: :attr:`Script.truncated`). Raises ``ImportError`` only when
    tree-sitter-bash is not installed; on any other internal error the result is an empty script
    with ``has_error`` set (a tree too deep for Python's recursion: ``truncated`` too)."""
    if isinstance(omap, int):
        omap = OffsetMap.at(omap)
    try:
        return _parse(text, omap, depth, per_line=True)
    except RecursionError:
        return Script([], omap(0), omap(0), has_error=True, truncated=omap(0), depth=depth)
    except ImportError:
        raise  # no parser installed: the caller must say so, not find nothing
    except Exception as exc:  # noqa: BLE001 - a parse never stops an analysis
        log.warning("shell parse failed: %s", exc, exc_info=True)
        return Script([], omap(0), omap(0), has_error=True, depth=depth)


def _parse(text: str, omap: OffsetMap, depth: int, per_line: bool) -> Script:
    if depth > MAX_DEPTH:
        return Script([], omap(0), omap(0), truncated=omap(0), depth=depth)
    src = _Src(text, omap)
    tree = _parser().parse(src.data)
    root = tree.root_node
    b = _Builder(src, depth)
    pipes = b.statements(root)
    a, e = (omap(0), omap(max(len(text) - 1, 0)) + 1) if text else (omap(0), omap(0))
    script = Script(pipes, a, e, has_error=root.has_error, depth=depth)
    if per_line:
        for alt_text, alt_map in _alternate_readings(text, omap, script):
            alt = _parse(alt_text, alt_map, depth, per_line=False)
            alt.reading = alt_text
            alt.reading_map = alt_map
            alt.new_names = frozenset(_command_names(alt) - _command_names(script))
            script.line_scripts.append(alt)
    if root.has_error and per_line and "\n" in text.strip():
        pos = 0
        for line in text.split("\n"):
            if line.strip() and not line.lstrip().startswith("#"):
                script.line_scripts.append(_parse(line, omap.shift(pos), depth, per_line=False))
            pos += len(line) + 1
    return script


_IFS = re.compile(r"\$\{IFS(?:[%#][^}]*)?\}|\$IFS\b")
_VAR_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


MAX_NORMALISED_CHARS = 65536
"""Largest de-obfuscated reading built (code points); a larger one is not built (the literal
reading is still judged)."""

# `$(printf '%s' 'cu' 'rl')` (a format of only %s, literal arguments): the concatenation it prints
_PRINTF_CONCAT = re.compile(
    r"""\$\(\s*printf\s+(?:'(?:%s)+'|"(?:%s)+"|(?:%s)+)((?:\s+(?:'[^']*'|"[^"$`\\]*"|[^\s'"$`\\()|;&<>]+))+)\s*\)"""
)
# `$(env)`, `$(cat ~/.aws/credentials)`: one command substitution with no quotes, expansions,
# pipes or redirections inside, which reads the same wherever it is substituted
_SIMPLE_SUBSTITUTION = re.compile(r"\$\([^()'\"`$<>|;&\\\n]*\)|`[^`'\"$<>|;&\\\n]*`")
_PRINTF_ARG = re.compile(r"""'([^']*)'|"([^"$`\\]*)"|([^\s'"$`\\()|;&<>]+)""")


def _command_names(script: Script) -> set[str]:
    """Effective names of the commands of ``script`` and its nested scripts, de-obfuscated
    readings left out (they are what is being compared)."""
    out: set[str] = set()
    for p in script.pipelines:
        for c in p.stages:
            if c.argv:
                out.add(c.effective()[0])
            for s in _children(c):
                out |= _command_names(s)
    for s in script.line_scripts:
        if not s.reading:
            out |= _command_names(s)
    return out


def _substitute(cur: str, cur_map: OffsetMap, pattern: re.Pattern[str], value) -> tuple[str, OffsetMap] | None:
    """``cur`` with every match of ``pattern`` for which ``value(match)`` is a string replaced
    by it; every character of a replacement maps to its match (the last one to the match's last
    character). ``None`` when nothing was replaced."""
    pieces: list[str] = []
    idx: list[int] = []
    pos = 0
    hit = False
    for m in pattern.finditer(cur):
        v = value(m)
        if v is None:
            continue
        hit = True
        pieces.append(cur[pos : m.start()])
        idx.extend(range(pos, m.start()))
        pieces.append(v)
        n = len(v)
        idx.extend([m.start()] * (n - 1) + [m.end() - 1] if n > 1 else ([m.start()] if n else []))
        pos = m.end()
    if not hit:
        return None
    pieces.append(cur[pos:])
    idx.extend(range(pos, len(cur)))
    return "".join(pieces), cur_map.sub(idx)


def _alternate_readings(text: str, omap: OffsetMap, script: Script) -> list[tuple[str, OffsetMap]]:
    """The de-obfuscated reading of ``text``, the one the shell would run, for evasions the
    literal parse cannot see: ``$IFS``/``${IFS}`` used as a space (``curl${IFS}-s…``; replaced by
    spaces of the same length), ``$(printf '%s' 'cu' 'rl')`` replaced by what it prints, and
    variables assigned earlier in the script put in place of their ``$x``/``${x}`` references,
    in commands and in ``eval`` strings alike (``c=cu; ${c}rl …``, ``a=curl; b='|sh'; eval "$a x
    $b"``; a value that refers to variables assigned before it is resolved in source order). A
    value that still holds another expansion (``$(curl "…" | jq …)``, ``${1:?…}``, an unknown
    variable) is not substituted: re-parsed in another quoting context it would read as a
    command it is not; one plain command substitution (``d=$(env)``) is. Every character of a replacement maps to what it
    replaces. Empty when nothing changes or the reading would exceed
    :data:`MAX_NORMALISED_CHARS`. (Quote splitting, ``c''url``, needs no reading of its own: quote
    removal already gives the word the shell sees.)"""
    cur, cur_map, changed = text, omap, False
    if _IFS.search(cur):
        cur, changed = _IFS.sub(lambda m: " " * len(m.group(0)), cur), True

    def printed(m: re.Match[str]) -> str | None:
        return "".join(a.group(1) or a.group(2) or a.group(3) or "" for a in _PRINTF_ARG.finditer(m.group(1)))

    sub = _substitute(cur, cur_map, _PRINTF_CONCAT, printed)
    if sub is not None and len(sub[0]) <= MAX_NORMALISED_CHARS:
        (cur, cur_map), changed = sub, True
    # in source order, as the shell assigns them: `c=cu; c=${c}rl` leaves c = "curl"
    values: dict[str, str] = {}
    for c in script.commands():
        for name, w in c.assigns:
            v = _VAR_REF.sub(lambda m: values.get(m.group(1) or m.group(2), m.group(0)), _IFS.sub(" ", w.text))
            rest = _SIMPLE_SUBSTITUTION.sub("", v)
            if len(v) <= 400 and "$" not in rest and "`" not in rest:
                values[name] = v
            else:
                values.pop(name, None)
    if values:
        sub = _substitute(cur, cur_map, _VAR_REF, lambda m: values.get(m.group(1) or m.group(2)))
        if sub is not None and len(sub[0]) <= MAX_NORMALISED_CHARS:
            (cur, cur_map), changed = sub, True
    return [(cur, cur_map)] if changed and cur != text else []


_STATEMENT_SKIP = {
    "comment",
    "heredoc_body",
    "heredoc_start",
    "heredoc_end",
    ";",
    "&",
    "&&",
    "||",
    "|",
    "|&",
    "\n",
    "do",
    "done",
    "then",
    "fi",
    "else",
    "elif",
    "if",
    "while",
    "until",
    "for",
    "in",
    "case",
    "esac",
    "{",
    "}",
    "(",
    ")",
    "((",
    "))",
    "function",
    "select",
    ";;",
    ";&",
    ";;&",
}
_COMPOUND = {
    "subshell",
    "compound_statement",
    "if_statement",
    "while_statement",
    "for_statement",
    "c_style_for_statement",
    "case_statement",
    "function_definition",
    "do_group",
    "elif_clause",
    "else_clause",
    "case_item",
    "program",
}
_WORDISH = {
    "word",
    "string",
    "raw_string",
    "concatenation",
    "simple_expansion",
    "expansion",
    "command_substitution",
    "process_substitution",
    "number",
    "ansi_c_string",
    "translated_string",
    "arithmetic_expansion",
    "string_content",
    "brace_expression",
    "extglob_pattern",
}


class _Builder:
    def __init__(self, src: _Src, depth: int) -> None:
        self.src = src
        self.depth = depth

    # statements ---------------------------------------------------------------------------
    def statements(self, node: Node) -> list[Pipeline]:
        out: list[Pipeline] = []
        op = ""
        for ch in node.children:
            t = ch.type
            if t in (";", "&", "&&", "||", "\n"):
                op = t
                continue
            if t in _STATEMENT_SKIP:
                continue
            for p in self.statement(ch):
                if not p.op:
                    p.op = op
                out.append(p)
            op = ""
        return out

    def statement(self, node: Node) -> list[Pipeline]:
        t = node.type
        if t == "list":
            return self.statements(node)
        if t == "pipeline":
            stages: list[Command] = []
            for ch in node.children:
                if ch.type in ("|", "|&") or not ch.is_named or ch.type == "comment":
                    continue
                stages.extend(self.stage_list(ch))
            a, b = self.src.span(node)
            return [Pipeline(stages, a, b)] if stages else []
        if t == "redirected_statement":
            body = node.child_by_field_name("body")
            redirs = tuple(self.redirect(r) for r in node.children if r is not body and r.type.endswith("redirect"))
            if body is None:
                a, b = self.src.span(node)
                return [Pipeline([Command((), a, b, redirects=redirs, depth=self.depth)], a, b)]
            pipes = self.statement(body)
            if not pipes:
                a, b = self.src.span(node)
                return [Pipeline([Command((), a, b, redirects=redirs, depth=self.depth)], a, b)]
            last = pipes[-1].stages[-1]
            last.redirects = last.redirects + redirs
            a, b = self.src.span(node)
            last.end = max(last.end, b)
            pipes[-1].end = max(pipes[-1].end, b)
            self.attach_heredocs(last)
            return pipes
        if t == "ERROR":
            # Best recovery: whatever statements tree-sitter found inside, plus loose words as one command.
            inner = []
            loose = []
            for ch in node.children:
                if ch.type in _WORDISH:
                    loose.append(ch)
                elif ch.is_named and ch.type not in _STATEMENT_SKIP:
                    inner.extend(self.statement(ch))
            if loose:
                cmd = self.make_command(loose, (), (), node)
                inner.insert(0, Pipeline([cmd], cmd.start, cmd.end))
            return inner
        if (
            t in _WORDISH
            or t
            in (
                "command",
                "declaration_command",
                "unset_command",
                "test_command",
                "negated_command",
                "variable_assignment",
                "variable_assignments",
                "arithmetic_expansion",
            )
            or t in _COMPOUND
        ):
            stages = self.stage_list(node)
            if not stages:
                return []
            return [Pipeline(stages, stages[0].start, stages[-1].end)]
        if t == "command_name":
            return self.statement(node.children[0]) if node.child_count else []
        out: list[Pipeline] = []
        for ch in node.children:  # any other node: the statements inside it
            if ch.is_named and ch.type not in _STATEMENT_SKIP:
                out.extend(self.statement(ch))
        return out

    def stage_list(self, node: Node) -> list[Command]:
        t = node.type
        if t == "negated_command":
            for ch in node.children:
                if ch.is_named:
                    return self.stage_list(ch)
            return []
        if t == "redirected_statement" or t == "pipeline" or t == "list":
            pipes = self.statement(node)
            if len(pipes) == 1 and t != "list":
                return pipes[0].stages
            if not pipes:
                return []
            a, b = self.src.span(node)
            body = Script(pipes, a, b, depth=self.depth)
            return [Command((), a, b, body=body, depth=self.depth)]
        if t == "command":
            return [self.command(node)]
        if (
            t in _COMPOUND
            or t
            in ("test_command", "declaration_command", "unset_command", "variable_assignment", "variable_assignments")
            or t == "ERROR"
        ):
            a, b = self.src.span(node)
            if t in ("declaration_command", "unset_command"):
                parts = [
                    ch
                    for ch in node.children
                    if ch.type in _WORDISH
                    or ch.type == "variable_assignment"
                    or ch.type in ("export", "local", "declare", "readonly", "typeset", "unset")
                ]
                return [
                    self.make_command(
                        [w for w in parts if w.type != "variable_assignment"],
                        [w for w in parts if w.type == "variable_assignment"],
                        (),
                        node,
                    )
                ]
            if t in ("variable_assignment", "variable_assignments"):
                assigns = (
                    [node]
                    if t == "variable_assignment"
                    else [c for c in node.children if c.type == "variable_assignment"]
                )
                return [self.make_command([], assigns, (), node)]
            if t == "test_command":
                return [self.make_command([], [], (), node, extra_words=list(self._descend_words(node)))]
            pipes = []
            words: list[Word] = []
            for ch in node.children:
                if ch.type in _STATEMENT_SKIP:
                    continue
                if ch.type in _WORDISH:  # for-loop values, case subjects
                    words.append(self.word(ch))
                    continue
                if ch.type in ("variable_name", "word_list"):
                    continue
                pipes.extend(self.statement(ch))
            body = Script(pipes, a, b, depth=self.depth)
            cmd = Command((), a, b, body=body, depth=self.depth)
            if words:
                holder = self.make_command([], [], (), node, extra_words=words)
                cmd.inner.extend(s for w in holder.argv for s in w.subs)
            return [cmd]
        if t in _WORDISH:
            return [self.make_command([node], (), (), node)]
        pipes = []
        for ch in node.children:  # any other node: the statements inside it
            if ch.is_named and ch.type not in _STATEMENT_SKIP:
                pipes.extend(self.statement(ch))
        return [s for p in pipes for s in p.stages]

    def _descend_words(self, node: Node) -> Iterator[Word]:
        for ch in node.children:
            if ch.type in _WORDISH:
                yield self.word(ch)
            elif ch.child_count:
                yield from self._descend_words(ch)

    # commands ------------------------------------------------------------------------------
    def command(self, node: Node) -> Command:
        names, assigns, redirs = [], [], []
        for ch in node.children:
            t = ch.type
            if t == "variable_assignment":
                assigns.append(ch)
            elif t == "command_name":
                names.append(ch.children[0] if ch.child_count else ch)
            elif t.endswith("redirect"):
                redirs.append(ch)
            elif t in _WORDISH:
                names.append(ch)
            elif t == "subshell":  # a = (x y) arrays etc.
                names.append(ch)
        return self.make_command(names, assigns, redirs, node)

    def make_command(
        self,
        word_nodes: Sequence[Node],
        assign_nodes: Sequence[Node],
        redir_nodes: Sequence[Node],
        node: Node,
        extra_words: Sequence[Word] = (),
    ) -> Command:
        argv = tuple(self.word(w) for w in word_nodes) + tuple(extra_words)
        assigns = []
        for an in assign_nodes:
            name_node = an.child_by_field_name("name")
            val = an.child_by_field_name("value")
            name = self.src.node_text(name_node) if name_node is not None else ""
            if val is not None:
                assigns.append((name, self.word(val)))
        redirs = tuple(self.redirect(r) for r in redir_nodes)
        a, b = self.src.span(node)
        cmd = Command(argv, a, b, tuple(assigns), redirs, depth=self.depth)
        self.attach_bodies(cmd)
        self.attach_heredocs(cmd)
        return cmd

    def word(self, node: Node) -> Word:
        raw = self.src.node_text(node)
        i0 = self.src.i(node.start_byte)
        text, om, expands = unquote(raw)
        lazy = (self.src.omap, [i0 + k for k in om]) if om else None
        subs = []
        for sn in _substitutions(node):
            body_nodes = [c for c in sn.children if c.is_named]
            a = self.src.i(sn.start_byte)
            if self.depth + 1 > MAX_DEPTH:
                subs.append(
                    Script([], self.src.omap(a), self.src.omap(a), truncated=self.src.omap(a), depth=self.depth + 1)
                )
                continue
            child = _Builder(self.src, self.depth + 1)
            pipes = []
            for bn in body_nodes:
                pipes.extend(child.statement(bn))
            sa, sb = self.src.span(sn)
            subs.append(Script(pipes, sa, sb, has_error=sn.has_error, depth=self.depth + 1))
        a, b = self.src.span(node)
        process = ""
        if node.type == "process_substitution":
            process = raw[:2]
        return Word(
            text,
            raw,
            a,
            b,
            None if lazy else OffsetMap.at(self.src.omap(i0)),
            tuple(subs),
            process,
            expands or bool(subs),
            lazy,
        )

    def redirect(self, node: Node) -> Redirect:
        a, b = self.src.span(node)
        op, fd, target = "", "", None
        body = None
        bmap = None
        for ch in node.children:
            t = ch.type
            if t == "file_descriptor":
                fd = self.src.node_text(ch)
            elif not ch.is_named and t not in ("(", ")"):
                op += t
            elif t == "heredoc_start":
                op = op or "<<"
            elif t == "heredoc_body":
                body, bmap = self._heredoc_body(ch)
            elif t in _WORDISH and target is None and node.type != "heredoc_redirect":
                target = self.word(ch)
            elif node.type == "heredoc_redirect" and t in ("pipeline", "command", "list", "redirected_statement"):
                pass  # `cat <<EOF | sh`: handled by the enclosing statement's structure
        if node.type == "herestring_redirect":
            op = "<<<"
        return Redirect(op or "?", fd, target, a, b, body, bmap)

    def _heredoc_body(self, node: Node) -> tuple[str, OffsetMap]:
        i0 = self.src.i(node.start_byte)
        text = self.src.node_text(node)
        return text, self.src.omap.shift(i0)

    def attach_heredocs(self, cmd: Command) -> None:
        """A here-document or here-string fed to a shell or an interpreter is a body it runs."""
        name, args, _w = cmd.effective()
        for r in cmd.redirects:
            if r.body is None and not (r.op == "<<<" and r.target is not None):
                continue
            if id(r) in cmd._fed:
                continue
            cmd._fed.add(id(r))
            if r.body is not None and r.body_map is not None:
                text, bmap = r.body, r.body_map
            elif r.target is not None:
                text, bmap = r.target.text, r.target.omap
            else:
                continue
            if name in SHELLS and not _has_code_flag(args, ("-c",)):
                cmd.inner.append(_parse(text, bmap, self.depth + 1, per_line=True))
            elif name in INTERPRETERS and not _has_code_flag(args, CODE_FLAGS.get(INTERPRETERS[name], ())):
                if not any(sn.via == "here-doc" and sn.text == text for sn in cmd.snippets):
                    cmd.snippets.append(Snippet(INTERPRETERS[name], text, bmap, "here-doc"))

    def attach_bodies(self, cmd: Command) -> None:
        """See :func:`_attach_bodies`."""
        _attach_bodies(cmd, self.depth)


def _attach_bodies(cmd: Command, depth: int) -> None:
    """``sh -c BODY``, ``eval WORDS``, ``su -c BODY``, ``python -c CODE`` … (recursive); ``depth``: the level of ``cmd``."""
    name, args, _w = cmd.effective()
    if not name:
        return
    body: tuple[str, OffsetMap] | None = None
    if name in SHELLS or name == "su":
        body = _flag_value(args, "c")
    elif name == "eval" and args:
        body = _join(args)
    elif name in ("watch",) and args:
        body = _join([a for a in args if not a.text.startswith("-")][-1:])
    if body is not None:
        cmd.inner.append(_parse(body[0], body[1], depth + 1, per_line=True))
        return
    lang = INTERPRETERS.get(name)
    if lang:
        for flag in CODE_FLAGS.get(lang, ()):
            v = _flag_value(args, flag.lstrip("-"), exact=flag)
            if v is not None:
                cmd.snippets.append(Snippet(lang, v[0], v[1], "-c"))
                return


def _has_code_flag(args: Sequence[Word], flags: Sequence[str]) -> bool:
    for a in args:
        t = a.text
        if t in flags:
            return True
        if "-c" in flags and t.startswith("-") and not t.startswith("--") and "c" in t[1:]:
            return True
    return False


def _flag_value(args: Sequence[Word], letter: str, exact: str | None = None) -> tuple[str, OffsetMap] | None:
    """The argument after option ``-<letter>`` (also in a cluster like ``-lc``/``-ec``), or after
    ``exact`` (e.g. ``--eval``; ``--eval=CODE`` too)."""
    for k, a in enumerate(args):
        t = a.text
        hit = False
        if exact is not None and len(exact) > 2:
            if t == exact:
                hit = True
            elif t.startswith(exact + "="):
                n = len(exact) + 1
                return t[n:], a.omap.shift(n)
        elif t.startswith("-") and not t.startswith("--") and len(t) > 1 and t[1:].isalpha() and letter in t[1:]:
            hit = True  # `-c`, `-lc`, `-ec`: the script is the next word
        if hit and k + 1 < len(args):
            w = args[k + 1]
            return w.text, w.omap
        if not t.startswith("-"):
            if exact is None:
                return None  # the script file operand ends the options of sh/bash
    return None


def _join(words: Sequence[Word]) -> tuple[str, OffsetMap]:
    """Words joined by spaces (``eval a b`` runs ``a b``), with their offsets."""
    text = []
    pts: list[tuple[int, int]] = []
    pos = 0
    for k, w in enumerate(words):
        if k:
            text.append(" ")
            pts.append((pos, w.start))
            pos += 1
        for idx, off in w.omap.points:
            pts.append((pos + idx, off))
        text.append(w.text)
        pos += len(w.text)
    return "".join(text), OffsetMap(tuple(sorted(set(pts))))


def _substitutions(node: Node) -> Iterator[Node]:
    """Outermost command/process substitution nodes inside ``node`` (``node`` itself included)."""
    if node.type in ("command_substitution", "process_substitution"):
        yield node
        return
    for ch in node.children:
        yield from _substitutions(ch)


def script_from_argv(words: Sequence[Word], depth: int = 0) -> Script:
    """A one-command :class:`Script` from an argv that is executed without a shell (an MCP
    server's ``command`` + ``args``): no word splitting or expansion, but ``sh -c``/``python -c``
    bodies among the words are still parsed (:func:`_attach_bodies`)."""
    words = tuple(words)
    if not words:
        return Script([], 0, 0, depth=depth)
    a, b = min(w.start for w in words), max(w.end for w in words)
    cmd = Command(words, a, b, depth=depth)
    _attach_bodies(cmd, depth)
    return Script([Pipeline([cmd], a, b)], a, b, depth=depth)
