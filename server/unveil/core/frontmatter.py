"""YAML frontmatter of agent files: where it is and what it says.

Frontmatter is the YAML block between a ``---`` line at the very start of the file (an
optional BOM may precede it) and the next line that is ``---`` or ``...`` (trailing spaces or
tabs on either fence are tolerated). Lines end at ``\\n``, ``\\r\\n`` or ``\\r``. The YAML is
parsed with ruamel.yaml's pure-Python *safe* loader (YAML 1.2: ``yes``/``no`` are strings,
``0o17`` is octal), so no Python object is ever constructed from tags.

All offsets are code-point offsets into the text passed in. Nothing here raises: a YAML
error is returned as :attr:`Frontmatter.error` with a 1-based line of the whole file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n|$)")
_OPEN = re.compile(r"---[ \t]*(?:\r\n|\r|\n)")
_CLOSE = re.compile(r"(?:---|\.\.\.)[ \t]*")


@dataclass(frozen=True)
class FrontmatterSpan:
    """Where the frontmatter is, in code points.

    * ``[start, end)`` — the whole block from the opening ``---`` through the closing fence
      (its line break excluded); ``start`` is 1 when a BOM precedes the fence.
    * ``[yaml_start, yaml_end)`` — the YAML text between the fences (ends with the line break
      before the closing fence, if any).
    * ``body_start`` — where the markdown body begins (after the closing fence's line break).
    * ``yaml_line`` — 0-based line of ``yaml_start``.
    """

    start: int
    end: int
    yaml_start: int
    yaml_end: int
    body_start: int
    yaml_line: int = 1


@dataclass(frozen=True)
class KeyPosition:
    """Code-point offsets of one top-level key and its value (``[start, end)`` each)."""

    key_start: int
    key_end: int
    value_start: int
    value_end: int


@dataclass(frozen=True)
class Frontmatter:
    """Parsed frontmatter.

    * ``span`` — :class:`FrontmatterSpan`, or ``None`` when the file has no (closed) frontmatter.
    * ``data`` — the top-level mapping (``{}`` for an empty block); ``None`` when there is no
      frontmatter, the YAML is invalid, or it is not a mapping.
    * ``error`` — a message ending in "(line N)" with N 1-based in the whole file, else ``None``.
    * ``error_line`` — that N.
    * ``duplicate_keys`` — top-level keys that occur more than once (the last value wins in
      ``data``, as in PyYAML; duplicates in nested mappings are also resolved last-wins).
    * ``positions`` — top-level key → :class:`KeyPosition` (of its last occurrence).
    * ``loose`` — when the YAML is invalid: top-level ``key: value`` lines read one by one
      (values as stripped strings, surrounding quotes removed), so kind detection and listing
      lines still work on the common "unquoted colon in description" mistake; else ``{}``.
    """

    span: FrontmatterSpan | None = None
    data: dict | None = None
    error: str | None = None
    error_line: int | None = None
    duplicate_keys: tuple[str, ...] = ()
    positions: dict[str, KeyPosition] = field(default_factory=dict)
    loose: dict[str, str] = field(default_factory=dict)

    @property
    def body_start(self) -> int:
        """Offset where the markdown body begins (0 without frontmatter)."""
        return self.span.body_start if self.span else 0

    @property
    def mapping(self) -> dict | None:
        """``data``, or ``loose`` when the YAML was invalid but had ``key: value`` lines."""
        if self.data is not None:
            return self.data
        return self.loose or None

    def get(self, key: str, default: Any = None) -> Any:
        """``mapping[key]`` (see :attr:`mapping`), else ``default``."""
        m = self.mapping
        if m is None:
            return default
        return m.get(key, default)


def find_span(text: str) -> FrontmatterSpan | None:
    """Locate the frontmatter block of ``text``; ``None`` if absent or never closed."""
    start = 1 if text.startswith("\ufeff") else 0
    m = _OPEN.match(text, start)
    if not m:
        return None
    pos = m.end()
    while pos < len(text):
        lm = _LINE.match(text, pos)
        assert lm is not None  # _LINE matches the empty string, so it matches at every position
        content_end = pos + len(lm.group(0).rstrip("\r\n"))
        if _CLOSE.fullmatch(text, pos, content_end):
            return FrontmatterSpan(
                start=start, end=content_end, yaml_start=m.end(), yaml_end=pos, body_start=lm.end(), yaml_line=1
            )
        if lm.end() == pos:  # pragma: no cover - _LINE always advances before the end
            break
        pos = lm.end()
    return None


_LOOSE = re.compile(r"([A-Za-z_][\w.-]*)[ \t]*:(?:[ \t]+(.*))?$")


def loose_mapping(yaml_text: str) -> dict[str, str]:
    """Top-level ``key: value`` lines of ``yaml_text`` (column 0), values as stripped strings
    without surrounding quotes; indented continuation lines are appended with a space."""
    out: dict[str, str] = {}
    last: str | None = None
    for line in yaml_text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = _LOOSE.match(line)
        if m and not line[0].isspace():
            last = m.group(1)
            value = (m.group(2) or "").strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1]
            out[last] = value
        elif last is not None and line[0].isspace():
            out[last] = (out[last] + " " + line.strip()).strip()
    return out


def _line_of(text: str, offset: int) -> int:
    """0-based line of ``offset`` (lines end at \\n, \\r\\n or \\r)."""
    head = text[:offset]
    return head.count("\n") + head.count("\r") - head.count("\r\n")


ALIAS_LIMIT = 10_000
"""Most YAML nodes a frontmatter may expand to when its aliases are followed. A few hundred bytes
of nested anchors ("billion laughs") expand to billions; real frontmatter has a few dozen nodes."""

ALIAS_BOMB = "YAML aliases expand to more than"
"""Start of the :attr:`Frontmatter.error` message for a frontmatter over :data:`ALIAS_LIMIT`."""


def expanded_size(node, limit: int = ALIAS_LIMIT) -> int:
    """Number of nodes of the composed YAML ``node`` with every alias expanded, counted with one
    visit per distinct node (memoised by ``id``), so the count itself is linear in the text; stops
    growing past ``limit`` (returns ``limit + 1``). A cyclic alias counts as over the limit."""
    from ruamel.yaml.nodes import MappingNode, SequenceNode

    memo: dict[int, int] = {}
    active: set[int] = set()

    def size(n) -> int:
        key = id(n)
        if key in memo:
            return memo[key]
        if key in active:
            return limit + 1
        active.add(key)
        total = 1
        if isinstance(n, MappingNode):
            for k, v in n.value:
                total += size(k) + size(v)
                if total > limit:
                    break
        elif isinstance(n, SequenceNode):
            for v in n.value:
                total += size(v)
                if total > limit:
                    break
        active.discard(key)
        memo[key] = min(total, limit + 1)
        return memo[key]

    try:
        return size(node)
    except RecursionError:
        return limit + 1


def alias_bomb_message(line: int, limit: int = ALIAS_LIMIT) -> str:
    """The error text for a frontmatter whose aliases expand past ``limit`` nodes."""
    return (
        f"{ALIAS_BOMB} {limit:,} nodes (an alias bomb); the frontmatter was not expanded and only "
        f"its top-level lines were read (line {line})"
    )


def _dedupe(node, top: bool, dups: list[str], seen_nodes: set[int] | None = None) -> None:
    """Drop earlier duplicate keys of mapping nodes (recursively, each node once even when aliases
    share it), recording top-level ones."""
    from ruamel.yaml.nodes import MappingNode, SequenceNode

    if seen_nodes is None:
        seen_nodes = set()
    if id(node) in seen_nodes:
        return
    seen_nodes.add(id(node))
    if isinstance(node, MappingNode):
        seen: dict[Any, int] = {}
        for i, (k, _v) in enumerate(node.value):
            key = (k.tag, k.value) if isinstance(k.value, str) else (k.tag, id(k))
            if key in seen and top and str(k.value) not in dups:
                dups.append(str(k.value))
            seen[key] = i
        keep = set(seen.values())
        node.value = [p for i, p in enumerate(node.value) if i in keep]
        for _k, v in node.value:
            _dedupe(v, False, dups, seen_nodes)
    elif isinstance(node, SequenceNode):
        for v in node.value:
            _dedupe(v, False, dups, seen_nodes)


_COMPOSED: dict[tuple[str, str], object] = {}
_COMPOSED_MAX = 8


def compose_shared(yaml_text: str, owner: str):
    """The ruamel.yaml node tree of ``yaml_text`` (safe, pure loader; ``None`` for an empty
    document), memoised per ``owner`` (the check that reads it) for the last :data:`_COMPOSED_MAX`
    texts: an editor re-analyses a document whose frontmatter an edit of the body left unchanged.
    Each owner gets its own tree, since constructing values flattens YAML merge keys (``<<``) in
    place; a second construction on the flattened tree gives the same values, so an owner's
    results do not depend on whether its tree was reused. (:func:`parse_yaml`, which edits its
    tree, composes its own.) Raises what ``compose`` raises (a ``MarkedYAMLError`` for invalid
    YAML); failures are not memoised."""
    key = (owner, yaml_text)
    if key in _COMPOSED:
        return _COMPOSED[key]
    from ruamel.yaml import YAML

    _ruamel_patterns()
    node = YAML(typ="safe", pure=True).compose(yaml_text)
    if len(_COMPOSED) >= _COMPOSED_MAX:
        _COMPOSED.pop(next(iter(_COMPOSED)))
    _COMPOSED[key] = node
    return node


@lru_cache(maxsize=1)
def _ruamel_patterns() -> None:
    """Compile ruamel.yaml's reader pattern for non-printable code points now, inside
    :func:`unveil.core.rxcache.recording`: ruamel compiles it lazily, in a function, the first
    time a YAML text is not ASCII, so the compiled-pattern cache would not keep it (4.5 ms of
    every process that reads such frontmatter; the pattern is fixed in ruamel's source)."""
    from unveil.core import rxcache

    try:
        from ruamel.yaml.reader import Reader

        with rxcache.recording():
            Reader.NON_PRINTABLE.pattern  # noqa: B018 - the attribute access compiles it
    except Exception:  # noqa: BLE001 - another ruamel layout: it compiles the pattern itself
        pass


def parse_yaml(yaml_text: str, offset: int = 0, first_line: int = 0) -> Frontmatter:
    """Parse ``yaml_text`` (which starts at code point ``offset`` / 0-based line ``first_line``
    of the file) into a :class:`Frontmatter` without ``span``. Never raises."""
    try:
        from ruamel.yaml import YAML
        from ruamel.yaml.error import MarkedYAMLError
        from ruamel.yaml.nodes import MappingNode
    except ImportError as exc:  # pragma: no cover - dependency missing
        return Frontmatter(error=f"frontmatter not parsed: ruamel.yaml is not installed ({exc})")
    _ruamel_patterns()
    yaml = YAML(typ="safe", pure=True)
    try:
        node = yaml.compose(yaml_text)
        if node is None:
            return Frontmatter(data={})
        if expanded_size(node) > ALIAS_LIMIT:
            return Frontmatter(error=alias_bomb_message(first_line + 1), error_line=first_line + 1)
        dups: list[str] = []
        _dedupe(node, True, dups)
        data = yaml.constructor.construct_document(node)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = first_line + mark.line + 1 if mark is not None else first_line + 1
        what = " ".join(p for p in (exc.context, exc.problem) if p) or "invalid YAML"
        return Frontmatter(error=f"invalid YAML frontmatter: {what} (line {line})", error_line=line)
    except Exception as exc:  # noqa: BLE001 - RecursionError, odd scanner states: never raise
        return Frontmatter(
            error=f"invalid YAML frontmatter: {type(exc).__name__}: {exc} (line {first_line + 1})",
            error_line=first_line + 1,
        )
    if not isinstance(data, dict):
        line = first_line + 1
        return Frontmatter(
            error=f"frontmatter is a {type(data).__name__}, not a mapping of keys to values (line {line})",
            error_line=line,
        )
    positions: dict[str, KeyPosition] = {}
    if isinstance(node, MappingNode):
        for k, v in node.value:
            positions[str(k.value)] = KeyPosition(
                offset + k.start_mark.index,
                offset + k.end_mark.index,
                offset + v.start_mark.index,
                offset + v.end_mark.index,
            )
    return Frontmatter(data=data, duplicate_keys=tuple(dups), positions=positions)


def parse(text: str) -> Frontmatter:
    """Find and parse the frontmatter of a whole file's ``text``. Never raises.

    Without a (closed) frontmatter block the result has ``span=None`` and ``data=None``.
    """
    try:
        span = find_span(text)
        if span is None:
            return Frontmatter()
        first_line = _line_of(text, span.yaml_start)
        span = FrontmatterSpan(span.start, span.end, span.yaml_start, span.yaml_end, span.body_start, first_line)
        fm = parse_yaml(text[span.yaml_start : span.yaml_end], span.yaml_start, first_line)
        yaml_text = text[span.yaml_start : span.yaml_end]
        return Frontmatter(
            span=span,
            data=fm.data,
            error=fm.error,
            error_line=fm.error_line,
            duplicate_keys=fm.duplicate_keys,
            positions=fm.positions,
            loose=loose_mapping(yaml_text) if fm.error else {},
        )
    except Exception as exc:  # noqa: BLE001 - never raise on any text
        return Frontmatter(error=f"frontmatter not parsed: {type(exc).__name__}: {exc}")


_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_YAML_COMMENT = re.compile(r"(?:^|(?<=[ \t\r]))#", re.M)
"""A ``#`` that starts a YAML comment unless inside a scalar: at a line start (after ``\n``,
``\r\n`` or a lone ``\r``: YAML 1.2 §5.4 takes all three as line breaks) or after a space or tab."""
_EOL = re.compile(r"[\r\n]")


def comment_spans(yaml_text: str, offset: int = 0) -> list[tuple[int, int, str]]:
    """Comments in frontmatter YAML that a model reads and a rendered view drops, as
    ``(start, end, kind)`` code-point spans (``offset`` added): ``kind`` is
    ``"frontmatter-comment"`` for a YAML comment (``#`` at a line start or after a space or tab,
    outside any scalar, through the end of its line) and ``"frontmatter-html-comment"`` for an
    ``<!-- … -->`` (or an unterminated ``<!--`` to the end of the YAML) anywhere in it.

    Scalars are located with ruamel.yaml's scanner (so ``"a # b"``, block scalars and
    ``http://x#y`` are not comments). When the YAML does not scan, the scalars found before the
    error are used and the rest is read line by line. Never raises. A function of the YAML text
    alone, cached (an open document's frontmatter is scanned again only when it changes)."""
    return [(offset + a, offset + b, kind) for a, b, kind in _comment_spans(yaml_text)]


@lru_cache(maxsize=256)
def _comment_spans(yaml_text: str) -> tuple[tuple[int, int, str], ...]:
    offset = 0
    out: list[tuple[int, int, str]] = []
    for m in _HTML_COMMENT.finditer(yaml_text):
        out.append((offset + m.start(), offset + m.end(), "frontmatter-html-comment"))
    if "#" not in yaml_text:
        return tuple(out)
    scalars: list[tuple[int, int]] = []
    scanned_to = len(yaml_text)
    try:
        from ruamel.yaml import YAML
        from ruamel.yaml.tokens import ScalarToken

        for tok in YAML(typ="safe", pure=True).scan(yaml_text):
            if isinstance(tok, ScalarToken):
                scalars.append((tok.start_mark.index, tok.end_mark.index))
    except Exception:  # noqa: BLE001 - invalid YAML: keep what was scanned
        scanned_to = scalars[-1][1] if scalars else 0
    k = 0
    done_to = -1
    for m in _YAML_COMMENT.finditer(yaml_text):
        i = m.start()
        if i < done_to:
            continue  # inside a comment already found on this line
        while k < len(scalars) and scalars[k][1] <= i:
            k += 1
        if k < len(scalars) and scalars[k][0] <= i < scalars[k][1]:
            continue  # inside a scalar
        if i >= scanned_to:
            # past a scan error: only whole-line comments and " #" after a plain value
            line_start = max(yaml_text.rfind("\n", 0, i), yaml_text.rfind("\r", 0, i)) + 1
            before = yaml_text[line_start:i]
            if before.strip() and (before.count('"') % 2 or before.count("'") % 2):
                continue
        eol = _EOL.search(yaml_text, i)
        end = eol.start() if eol else len(yaml_text)
        done_to = end
        out.append((offset + i, offset + end, "frontmatter-comment"))
    out.sort()
    return tuple(out)
