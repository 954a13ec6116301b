"""Frontmatter checked per file kind: rule ids ``FMT001``–``FMT030`` (``rules/format.toml``).

The schemas (keys, types, allowed values, limits, required keys, sources) are data:
``unveil/data/schemas.toml``, loaded by :func:`load_schemas`; :func:`schema_for` gives the
:class:`Schema` of a kind id (``None`` for kinds whose hosts read no frontmatter, such as
CLAUDE.md or AGENTS.md, which are not checked). The completion feature reuses them.

Parsing: the frontmatter block is located by :mod:`unveil.core.frontmatter`; its YAML is
composed here with ruamel.yaml's pure-Python safe loader so every key, value and list item
has exact code-point offsets. Offsets in findings are code points into the document text.

Facts: research note agent-formats.md §2 (Claude Code sub-agents/skills/commands/output-styles
docs, the Agent Skills specification, Cursor, Copilot, Windsurf, Cline, Kiro, OpenHands docs),
YAML 1.1 §5.4 / YAML 1.2.2 §5.4 (line break characters) and YAML 1.1 bool type
(``y|n|yes|no|on|off``).
"""

from __future__ import annotations

import difflib
import functools
import logging
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

from unveil.core import frontmatter as fm_mod
from unveil.core import scope
from unveil.core.findings import Edit, Finding, Fix, Severity

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

log = logging.getLogger(__name__)

CATEGORY = "format"
SCHEMAS_FILE = Path(__file__).resolve().parent.parent.parent / "data" / "schemas.toml"

#: Characters YAML 1.1 (PyYAML) treats as line breaks and YAML 1.2 does not (1.2 §5.4).
YAML11_BREAKS = "\u0085\u2028\u2029"
_PLACEHOLDER = {"\u0085": "\ue000", "\u2028": "\ue001", "\u2029": "\ue002"}
_UNPLACE = {v: k for k, v in _PLACEHOLDER.items()}
#: Plain scalars YAML 1.1 resolves to booleans and YAML 1.2 (core schema) to strings.
YAML11_BOOL = re.compile(r"y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF")
_YAML11_TRUE = {"y", "yes", "on"}
SKILL_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
SKILL_NAME_MAX = 64


# ----------------------------------------------------------------------------- schemas
@dataclass(frozen=True)
class KeySpec:
    """One frontmatter key of a kind (see the header of ``schemas.toml`` for the fields)."""

    name: str
    type: str = "any"
    values: tuple[str, ...] = ()
    open_values: bool = False
    pattern: str | None = None
    max_length: int | None = None
    min_length: int | None = None
    listing_cap: int | None = None
    required: str | None = None
    tools: str | None = None
    glob: bool = False
    skill_name: bool = False
    cursor_boolean: bool = False
    default: str | None = None
    doc: str = ""
    aliases: tuple[str, ...] = ()
    severity: str = "warning"
    bracket_text: bool = False

    def allows(self, value: str) -> bool:
        """Whether string ``value`` is allowed (always true without a closed value set)."""
        if not self.values or self.open_values:
            return True
        if value in self.values:
            return True
        return bool(self.pattern and re.fullmatch(self.pattern, value))


@dataclass(frozen=True)
class Schema:
    """The frontmatter schema of one kind: ``keys`` by name, in file order."""

    kind: str
    label: str
    keys: dict[str, KeySpec]
    sources: tuple[str, ...] = ()
    parser: str = "yaml"
    unknown_keys: str = "report"
    unknown_note: str = ""

    def spec(self, key: str) -> KeySpec | None:
        """The spec of ``key`` or of the key it is an alias of."""
        if key in self.keys:
            return self.keys[key]
        for s in self.keys.values():
            if key in s.aliases:
                return s
        return None


@dataclass(frozen=True)
class Schemas:
    """All schemas by kind id plus the tool-name lists (``tools["claude"]``)."""

    kinds: dict[str, Schema]
    tools: dict[str, frozenset[str]]
    not_typos: frozenset[str] = frozenset()


def _spec(name: str, t: dict) -> KeySpec:
    return KeySpec(
        name=name,
        type=str(t.get("type", "any")),
        values=tuple(str(v) for v in t.get("values", ())),
        open_values=bool(t.get("open_values", False)),
        pattern=t.get("pattern"),
        max_length=t.get("max_length"),
        min_length=t.get("min_length"),
        listing_cap=t.get("listing_cap"),
        required=t.get("required"),
        tools=t.get("tools"),
        glob=bool(t.get("glob", False)),
        skill_name=bool(t.get("skill_name", False)),
        cursor_boolean=bool(t.get("cursor_boolean", False)),
        default=None if t.get("default") is None else str(t.get("default")),
        doc=str(t.get("doc", "")),
        aliases=tuple(str(a) for a in t.get("aliases", ())),
        severity=str(t.get("severity", "warning")),
        bracket_text=bool(t.get("bracket_text", False)),
    )


def parse_schemas(data: dict) -> Schemas:
    """Build :class:`Schemas` from the parsed ``schemas.toml`` mapping. ``extends`` copies the
    named kind's keys (then ``drop_keys`` removes some, ``optional_keys`` clears ``required``).
    Raises ``ValueError`` for an ``extends`` naming an unknown kind."""
    raw = data.get("kind", {})
    built: dict[str, Schema] = {}

    def build(kind: str, seen: tuple[str, ...] = ()) -> Schema:
        if kind in built:
            return built[kind]
        t = raw[kind]
        keys: dict[str, KeySpec] = {}
        base = t.get("extends")
        if base:
            if base not in raw or base in seen:
                raise ValueError(f"schemas.toml: kind {kind} extends unknown or cyclic {base!r}")
            keys.update(build(base, seen + (kind,)).keys)
        for k in t.get("drop_keys", ()):
            keys.pop(k, None)
        for k in t.get("optional_keys", ()):
            if k in keys:
                s = keys[k]
                keys[k] = KeySpec(**{**s.__dict__, "required": None})
        for name, kt in t.get("keys", {}).items():
            keys[name] = _spec(name, kt)
        schema = Schema(
            kind=kind,
            label=str(t.get("label", kind)),
            keys=keys,
            sources=tuple(t.get("sources", ())),
            parser=str(t.get("parser", "yaml")),
            unknown_keys=str(t.get("unknown_keys", "report")),
            unknown_note=str(t.get("unknown_note", "")),
        )
        built[kind] = schema
        return schema

    for kind in raw:
        build(kind)
    tools = {
        name: frozenset(t.get("names", ())) | frozenset(t.get("recent", ()))
        for name, t in data.get("tools", {}).items()
    }
    return Schemas(kinds=built, tools=tools, not_typos=frozenset(data.get("not_typos", {}).get("keys", ())))


@functools.lru_cache(maxsize=1)
def load_schemas() -> Schemas:
    """The bundled schemas (``unveil/data/schemas.toml``), read once. A broken file is logged
    and yields no schemas (no FMT findings) rather than an exception."""
    from unveil.core import cache

    try:
        return parse_schemas(cache.load_toml(SCHEMAS_FILE))
    except (OSError, ValueError, tomllib.TOMLDecodeError) as exc:  # pragma: no cover - broken install
        log.error("cannot read %s: %s", SCHEMAS_FILE, exc)
        return Schemas({}, {})


def schema_for(kind: str) -> Schema | None:
    """The frontmatter schema of kind id ``kind``, or ``None`` when the kind has none."""
    return load_schemas().kinds.get(kind)


# ----------------------------------------------------------------------------- parsing
@dataclass
class Scalar:
    """A string-ish value with its place: ``[start, end)`` code points in the document.
    ``exact`` — ``text[start:end]`` spells ``value`` character for character (plain or quoted
    single-line scalar without escapes), so sub-ranges of it can be computed."""

    value: Any
    start: int
    end: int
    exact: bool = False
    style: str | None = None  # None = plain, "'" or '"' quoted, "|" / ">" block


@dataclass
class Entry:
    """One top-level ``key: value`` pair of the frontmatter."""

    key: str
    key_start: int
    key_end: int
    value: Any
    value_start: int
    value_end: int
    scalar: Scalar | None = None  # set when the value is a scalar
    items: list[Scalar] = field(default_factory=list)  # scalar items of a sequence value
    is_seq: bool = False


@dataclass
class Parsed:
    """The frontmatter as the checks see it: ``entries`` in source order (duplicates kept)."""

    span: fm_mod.FrontmatterSpan | None
    entries: list[Entry]
    error: str | None = None
    error_line: int | None = None
    loose: bool = False  # entries come from the line reader (parser = "lines")


def _unplace(value: Any) -> Any:
    if isinstance(value, str):
        return value.translate({ord(k): v for k, v in _UNPLACE.items()})
    if isinstance(value, list):
        return [_unplace(v) for v in value]
    if isinstance(value, dict):
        return {_unplace(k): _unplace(v) for k, v in value.items()}
    return value


def _trim_end(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1] in " \t\r\n":
        end -= 1
    return end


def _scalar(text: str, node, base: int, constructor) -> Scalar:
    from ruamel.yaml.nodes import ScalarNode

    start = base + node.start_mark.index
    end = _trim_end(text, start, base + node.end_mark.index)
    try:
        value = _unplace(constructor.construct_object(node, deep=True))
    except Exception:  # noqa: BLE001 - odd tags: keep the raw text
        value = _unplace(getattr(node, "value", None))
    style = getattr(node, "style", None) if isinstance(node, ScalarNode) else None
    raw = text[start:end]
    exact = False
    if isinstance(node, ScalarNode) and isinstance(node.value, str) and "\n" not in raw and "\r" not in raw:
        v = _unplace(node.value)
        if style is None and raw == v:
            exact = True
        elif style in ("'", '"') and raw[1:-1] == v and "\\" not in raw and "''" not in raw:
            start, end, exact = start + 1, end - 1, True
    return Scalar(value, start, end, exact, style)


def compose(text: str, span: fm_mod.FrontmatterSpan) -> Parsed:
    """Compose the YAML of ``span`` into :class:`Entry` items (YAML 1.2 reading: U+0085,
    U+2028 and U+2029 are ordinary characters). Never raises: a YAML error is returned in
    ``error`` / ``error_line`` (1-based line of the whole file)."""
    from ruamel.yaml.error import MarkedYAMLError
    from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

    yaml_text = text[span.yaml_start : span.yaml_end]
    safe_text = yaml_text.translate({ord(k): v for k, v in _PLACEHOLDER.items()})
    first_line = span.yaml_line
    try:
        node = fm_mod.compose_shared(safe_text, "schema")
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = first_line + (mark.line if mark is not None else 0) + 1
        what = " ".join(p for p in (exc.context, exc.problem) if p) or "invalid YAML"
        return Parsed(span, [], f"{what}", line)
    except Exception as exc:  # noqa: BLE001
        return Parsed(span, [], f"{type(exc).__name__}: {exc}", first_line + 1)
    if node is None:
        return Parsed(span, [])
    if fm_mod.expanded_size(node) > fm_mod.ALIAS_LIMIT:  # alias bomb: never walk the expansion
        return Parsed(span, [], fm_mod.alias_bomb_message(first_line + 1), first_line + 1)
    if not isinstance(node, MappingNode):
        kind = {ScalarNode: "a scalar", SequenceNode: "a list"}.get(type(node), "not a mapping")
        return Parsed(span, [], f"the frontmatter is {kind}, not a mapping of keys to values", first_line + 1)
    from ruamel.yaml import YAML

    constructor = YAML(typ="safe", pure=True).constructor  # its own memo of constructed objects
    entries = []
    base = span.yaml_start
    for k, v in node.value:
        if not isinstance(k, ScalarNode):
            continue
        key = _unplace(str(k.value))
        ks = base + k.start_mark.index
        ke = _trim_end(text, ks, base + k.end_mark.index)
        vs = base + v.start_mark.index
        ve = _trim_end(text, vs, base + v.end_mark.index)
        if isinstance(v, ScalarNode) and v.value == "" and v.style is None:
            colon = text.find(":", ke, span.yaml_end)
            vs = ve = colon + 1 if colon >= 0 else ke  # empty value: right after the colon
        try:
            value = _unplace(constructor.construct_object(v, deep=True))
        except Exception:  # noqa: BLE001 - e.g. a bad timestamp: keep going with the raw text
            value = _unplace(getattr(v, "value", None)) if isinstance(v, ScalarNode) else None
        e = Entry(key, ks, ke, value, vs, ve)
        if isinstance(v, ScalarNode):
            e.scalar = _scalar(text, v, base, constructor)
        elif isinstance(v, SequenceNode):
            e.is_seq = True
            e.items = [_scalar(text, item, base, constructor) for item in v.value if isinstance(item, ScalarNode)]
        entries.append(e)
    return Parsed(span, entries)


_LINE_KV = re.compile(r"([A-Za-z_][\w.-]*)[ \t]*:(?:[ \t]+|$)")


def read_lines(text: str, span: fm_mod.FrontmatterSpan) -> Parsed:
    """Line-by-line ``key: value`` reading (how Cursor reads ``.mdc`` frontmatter, so
    ``globs: **/*.ts`` is fine). Values are strings (surrounding quotes removed; ``style``
    records them); unquoted ``true``/``false`` become booleans."""
    entries = []
    pos = span.yaml_start
    for line in text[span.yaml_start : span.yaml_end].splitlines(keepends=True):
        content = line.rstrip("\r\n")
        m = _LINE_KV.match(content)
        if m:
            ks, ke = pos, pos + len(m.group(1))
            vs = pos + m.end()
            ve = _trim_end(text, vs, pos + len(content))
            raw = text[vs:ve]
            style = None
            value: Any = raw
            start, end = vs, ve
            if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
                style, value, start, end = raw[0], raw[1:-1], vs + 1, ve - 1
            elif raw in ("true", "false"):
                value = raw == "true"
            elif raw == "":
                value = None
            e = Entry(m.group(1), ks, ke, value, vs, ve, scalar=Scalar(value, start, end, True, style))
            entries.append(e)
        pos += len(line)
    return Parsed(span, entries, loose=True)


def parse(text: str, schema: Schema | None = None) -> Parsed:
    """Locate and read the frontmatter of ``text`` (see :func:`compose`; with a ``lines``
    schema a YAML error falls back to :func:`read_lines`). ``span`` is ``None`` without
    frontmatter."""
    span = fm_mod.find_span(text)
    if span is None:
        return Parsed(None, [])
    head = text[: span.yaml_start]
    first_line = head.count("\n") + head.count("\r") - head.count("\r\n")
    span = fm_mod.FrontmatterSpan(span.start, span.end, span.yaml_start, span.yaml_end, span.body_start, first_line)
    parsed = compose(text, span)
    if parsed.error and schema is not None and schema.parser == "lines":
        loose = read_lines(text, span)
        if loose.entries:
            return loose
    return parsed


# ----------------------------------------------------------------------------- helpers
def _norm(key: str) -> str:
    return key.lower().replace("-", "").replace("_", "")


def suggest(word: str, candidates: Iterable[str], cutoff: float = 0.8) -> str | None:
    """The candidate ``word`` most likely misspells: equal ignoring case, ``-`` and ``_``
    first, else the closest by :func:`difflib.get_close_matches` (ratio ≥ ``cutoff``)."""
    cands = [c for c in candidates if c != word]
    for c in cands:
        if _norm(c) == _norm(word):
            return c
    if len(word) < 3:
        return None
    normed = {_norm(c): c for c in cands}
    hit = difflib.get_close_matches(_norm(word), list(normed), n=1, cutoff=cutoff)
    return normed[hit[0]] if hit else None


def _split_items(s: Scalar, commas_only: bool = False) -> Iterator[Scalar]:
    """Items of a comma (and, unless ``commas_only``, whitespace) separated string at paren
    depth 0, with exact ranges when the scalar is exact (else each spans the whole value)."""
    text = s.value if isinstance(s.value, str) else ""
    depth, start = 0, 0
    seps = "," if commas_only else ", \t"

    def item(a: int, b: int) -> Scalar | None:
        raw = text[a:b]
        lead = len(raw) - len(raw.lstrip())
        word = raw.strip()
        if not word:
            return None
        if s.exact:
            return Scalar(word, s.start + a + lead, s.start + a + lead + len(word), True, s.style)
        return Scalar(word, s.start, s.end, False, s.style)

    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        elif ch in seps and depth == 0:
            it = item(start, i)
            if it:
                yield it
            start = i + 1
    it = item(start, len(text))
    if it:
        yield it


def _items(e: Entry, commas_only: bool = False) -> list[Scalar]:
    if e.is_seq:
        return e.items
    if e.scalar is not None and isinstance(e.scalar.value, str):
        return list(_split_items(e.scalar, commas_only))
    return []


def _type_name(value: Any) -> str:
    if value is None:
        return "empty"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "a number"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"a {type(value).__name__}"


_EXPECTED = {
    "string": "a string",
    "boolean": "a boolean (true or false)",
    "integer": "an integer",
    "list": "a list",
    "string-or-list": "a string or a list of strings",
    "model-list": "a string or a list of strings",
    "mapping": "a mapping",
    "list-of-mappings": "a list of mappings",
}


def _type_ok(t: str, value: Any) -> bool:
    if t == "any" or value is None:
        return True
    if t == "string":
        return isinstance(value, str)
    if t == "boolean":
        return isinstance(value, bool)
    if t == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if t == "list":
        return isinstance(value, list)
    if t in ("string-or-list", "model-list"):
        return isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value))
    if t == "mapping":
        return isinstance(value, dict)
    if t == "list-of-mappings":
        return isinstance(value, list) and all(isinstance(v, dict) for v in value)
    return True


def _glob_problem(pattern: str) -> str | None:
    """Why ``pattern`` is not a usable glob (unbalanced ``[]``/``{}``), else ``None``."""
    depth_b = depth_c = 0
    escaped = False
    for ch in pattern:
        if escaped:
            escaped = False
            continue
        if ch == "\\":
            escaped = True
        elif ch == "[":
            depth_b += 1
        elif ch == "]" and depth_b:
            depth_b -= 1
        elif ch == "{":
            depth_c += 1
        elif ch == "}":
            if not depth_c:
                return "has a '}' without '{'"
            depth_c -= 1
    if depth_b:
        return "has an unclosed '['"
    if depth_c:
        return "has an unclosed '{'"
    return None


def _finding(rule: str, sev: Severity, start: int, end: int, message: str, fixes=(), **data) -> Finding:
    return Finding(rule, sev, start, end, message, category=CATEGORY, fixes=tuple(fixes), data=dict(data))


def _line_range(text: str, line1: int) -> tuple[int, int]:
    """Code points of 1-based ``line1``'s content (lines end at \\n, \\r\\n, \\r; past the last
    line, the last line's), read from the start of the text up to that line only."""
    pos = 0
    for _ in range(max(0, line1 - 1)):
        m = _EOL.search(text, pos)
        if m is None:
            break
        pos = m.end()
    m = _EOL.search(text, pos)
    return pos, (len(text) if m is None else m.start())


_EOL = re.compile(r"\r\n|\r|\n")


# ----------------------------------------------------------------------------- the check
def check(ctx) -> Iterable[Finding]:
    """FMT findings for the document of ``ctx`` (a :class:`unveil.core.checks.Context`).
    Kinds without a schema produce nothing."""
    schema = schema_for(ctx.kind)
    if schema is None:
        return []
    text = ctx.doc.text
    if scope.document_cache() is None:
        return list(check_text(text, schema, ctx.path))
    # an open document: most edits leave the frontmatter alone, and what this check finds is a
    # function of the text up to the body, the schema and the path only (every offset, line and
    # value it reads lies in the frontmatter block; a file without one is checked each time)
    span = fm_mod.find_span(text)
    if span is None:
        return list(check_text(text, schema, ctx.path))
    memo = scope.memo("frontmatter schema")
    key = (text[: span.body_start], schema.kind, id(schema), ctx.path)
    got = memo.get(key) if memo is not None else None
    if got is None:
        got = tuple(check_text(text, schema, ctx.path))
        if memo is not None:
            scope.keep(memo, key, got, 4)
    return list(got)


_UNCLOSED = re.compile(r"\ufeff?---[ \t]*(?:\r\n|\r|\n)")
"""An opening frontmatter fence on the first line (``find_span`` found no closing one)."""


def check_text(text: str, schema: Schema, path: str | None = None) -> Iterator[Finding]:
    """The FMT findings of ``text`` checked against ``schema`` (``path`` for the skill folder
    and subagent rules)."""
    parsed = parse(text, schema)
    span = parsed.span
    name = _file_name(path)
    if span is None:
        if _UNCLOSED.match(text):
            a, b = _line_range(text, 1)
            yield _finding(
                "FMT030",
                Severity.ERROR,
                a,
                b,
                "Frontmatter is never closed: the opening --- has no closing --- line, so the whole file "
                f"reads as frontmatter to some parsers and as text to others. {_skip_note(schema)}",
            )
            return
        yield from _missing_without_frontmatter(text, schema, path, name)
        return
    yaml_text = text[span.yaml_start : span.yaml_end]
    if any(ch in yaml_text for ch in YAML11_BREAKS):
        yield from _yaml11_breaks(text, span, parsed)
    if parsed.error and parsed.error.startswith(fm_mod.ALIAS_BOMB):
        a, b = _line_range(text, parsed.error_line or span.yaml_line + 1)
        yield _finding("FMT040", Severity.ERROR, a, b, f"Frontmatter {parsed.error}. {_skip_note(schema)}")
        return
    if parsed.error and not parsed.loose:
        a, b = _line_range(text, parsed.error_line or span.yaml_line + 1)
        yield _finding(
            "FMT030",
            Severity.ERROR,
            a,
            b,
            f"Invalid YAML frontmatter: {parsed.error} (line {parsed.error_line}). {_skip_note(schema)}",
        )
        return
    entries = parsed.entries
    seen: dict[str, list[Entry]] = {}
    for e in entries:
        seen.setdefault(e.key, []).append(e)
    for key, occ in seen.items():
        if len(occ) > 1:
            for e in occ[:-1]:
                yield _finding(
                    "FMT020",
                    Severity.WARNING,
                    e.key_start,
                    e.key_end,
                    f"Duplicate key '{key}' ({len(occ)} times): YAML forbids it; PyYAML and ruamel keep the last "
                    "value, js-yaml and the yaml package reject the frontmatter, and a reader sees this one first.",
                    line_keys=len(occ),
                )
    last = {e.key: e for e in entries}
    for e in last.values():
        yield from _check_entry(text, schema, e, path, parsed.loose)
    yield from _missing_required(text, schema, last, span, path, name)
    yield from _listing_cap(schema, last)


def _file_name(path: str | None) -> str:
    if not path:
        return ""
    return path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]


def _skip_note(schema: Schema) -> str:
    if schema.kind == "claude-agent":
        return "Claude Code skips a subagent whose frontmatter does not parse."
    if schema.kind in ("claude-skill", "claude-command"):
        return "The host cannot read name or description from it."
    return "The host cannot read these settings."


def _missing_without_frontmatter(text, schema, path, name) -> Iterator[Finding]:
    required = [s for s in schema.keys.values() if s.required]
    if not required or name.lower() in ("readme.md", "index.md", "changelog.md"):
        return
    a, b = _line_range(text, 1)
    if schema.kind == "claude-agent":
        yield _finding(
            "FMT015",
            Severity.INFO,
            a,
            b,
            "No frontmatter: Claude Code treats this file as documentation, not as a subagent "
            "(a subagent needs name and description).",
            missing=[s.name for s in required],
        )
    elif schema.kind == "claude-skill":
        yield _finding(
            "FMT015",
            Severity.WARNING,
            a,
            b,
            "No frontmatter: the Agent Skills spec requires name and description; Claude Code falls back to the "
            "folder name and the first paragraph.",
            missing=[s.name for s in required],
        )


def _missing_required(text, schema, last, span, path, name) -> Iterator[Finding]:
    a, b = span.start, span.start + 3
    for s in schema.keys.values():
        if not s.required:
            continue
        e = last.get(s.name)
        value = e.value if e else None
        if isinstance(value, str) and value.strip():
            continue
        if value not in (None, "") and not isinstance(value, str):
            continue  # wrong type: FMT003 says so
        sev = Severity.ERROR if s.required == "error" else Severity.WARNING
        what = "missing" if e is None else "empty"
        if schema.kind == "claude-agent":
            p = (path or "").replace("\\", "/")
            if s.name == "name" and "/.claude/agents/" not in "/" + p:
                sev = Severity.WARNING
                note = "A plugin subagent without name loads under its file name; elsewhere it is skipped."
            elif s.name == "name":
                note = "Claude Code treats a file without name as documentation: this subagent is not loaded."
            else:
                note = "Claude Code skips a subagent without description."
        elif schema.kind == "claude-skill":
            note = (
                "The Agent Skills spec requires it; Claude Code falls back to the folder name."
                if s.name == "name"
                else "The Agent Skills spec requires it; Claude Code falls back to the first paragraph of the body."
            )
        else:
            note = "The host needs it."
        rng = (e.key_start, e.value_end) if e else (a, b)
        yield _finding("FMT015", sev, rng[0], rng[1], f"Required key '{s.name}' is {what}. {note}", key=s.name)


def _listing_cap(schema: Schema, last: dict[str, Entry]) -> Iterator[Finding]:
    for s in schema.keys.values():
        if not s.listing_cap:
            continue
        e = last.get(s.name)
        if e is None or not isinstance(e.value, str):
            continue
        extra = last.get("when_to_use")
        extra_text = extra.value if extra is not None and isinstance(extra.value, str) else ""
        total = len(e.value) + len(extra_text)
        if total <= s.listing_cap:
            continue
        cut_in_desc = len(e.value) > s.listing_cap
        target = e if cut_in_desc or extra is None else extra
        cut = s.listing_cap if cut_in_desc else s.listing_cap - len(e.value)
        sc = target.scalar
        if sc is not None and sc.exact:
            a, b = sc.start + cut, sc.end
        else:
            a, b = target.value_start, target.value_end
        yield _finding(
            "FMT014",
            Severity.WARNING,
            a,
            b,
            f"The skill listing entry is cut at {s.listing_cap:,} characters (description + when_to_use = "
            f"{total:,}): the model never sees the text from here on.",
            length=total,
            cap=s.listing_cap,
        )


def _check_entry(text: str, schema: Schema, e: Entry, path: str | None, loose: bool) -> Iterator[Finding]:
    spec = schema.spec(e.key)
    if spec is None:
        if schema.unknown_keys == "ignore":
            return
        hint = None if e.key in load_schemas().not_typos else suggest(e.key, list(schema.keys))
        if hint:
            yield _finding(
                "FMT001",
                Severity.WARNING,
                e.key_start,
                e.key_end,
                f"Unknown key '{e.key}' for a {schema.label}: did you mean '{hint}'? {schema.unknown_note}".strip(),
                fixes=[Fix(f"Rename to '{hint}'", (Edit(e.key_start, e.key_end, hint),))],
                suggestion=hint,
            )
        else:
            yield _finding(
                "FMT002",
                Severity.INFO,
                e.key_start,
                e.key_end,
                f"Unknown key '{e.key}' for a {schema.label}. {schema.unknown_note}".strip(),
            )
        return
    value = e.value
    sc = e.scalar
    # YAML 1.1 booleans written as plain yes/no/on/off.
    if sc is not None and sc.style is None and isinstance(value, str) and YAML11_BOOL.fullmatch(value) and not loose:
        if spec.type == "boolean":
            as_bool = "true" if value.lower() in _YAML11_TRUE else "false"
            claude = schema.kind in ("claude-skill", "claude-command")
            yield _finding(
                "FMT022",
                Severity.INFO if claude else Severity.WARNING,
                sc.start,
                sc.end,
                f"'{value}' is a boolean only in YAML 1.1; YAML 1.2 parsers read the string '{value}'. Write "
                f"{as_bool}."
                + (" (Claude Code accepts yes/no/on/off since v2.1.218; other hosts may not.)" if claude else ""),
                fixes=[Fix(f"Replace with {as_bool}", (Edit(sc.start, sc.end, as_bool),))],
            )
            return
        if spec.type in ("string", "string-or-list", "model-list", "any") and not spec.values:
            yield _finding(
                "FMT022",
                Severity.INFO,
                sc.start,
                sc.end,
                f"'{value}' is read as a string by YAML 1.2 parsers but as a boolean by YAML 1.1 parsers "
                f"(PyYAML); quote it: '{value}'.",
                fixes=[Fix("Quote the value", (Edit(sc.start, sc.end, f'"{value}"'),))],
            )
    # Booleans written as strings.
    if spec.type == "boolean" and isinstance(value, str) and sc is not None:
        low = value.strip().lower()
        if low in ("true", "false"):
            a, b = (sc.start - 1, sc.end + 1) if sc.style in ("'", '"') and sc.exact else (e.value_start, e.value_end)
            if spec.cursor_boolean:
                sev = Severity.WARNING if low == "true" else Severity.INFO
                msg = f'{e.key} is the string "{value}", not a YAML boolean: Cursor treats the string as false' + (
                    ", so this rule is NOT always applied." if low == "true" else ". Write false without quotes."
                )
            else:
                sev = Severity.WARNING
                msg = f'{e.key} is the string "{value}", not a boolean: write {low} without quotes.'
            yield _finding("FMT005", sev, a, b, msg, fixes=[Fix(f"Replace with {low}", (Edit(a, b, low),))])
            return
    if not _type_ok(spec.type, value):
        raw = text[e.value_start : e.value_end].strip()
        if spec.bracket_text and isinstance(value, list) and raw.startswith("[") and "\n" not in raw:
            # The hosts' own docs write argument hints in brackets (`argument-hint: [issue-number]`),
            # which YAML reads as a list: cosmetic, the hint is still shown as text.
            quoted = '"' + raw.replace("\\", "\\\\").replace('"', '\\"') + '"'
            yield _finding(
                "FMT003",
                Severity.INFO,
                e.value_start,
                e.value_end,
                f"{e.key} {raw} is a YAML list because of its brackets; the host shows it as text, "
                f"but quote it to keep the brackets: {quoted}.",
                expected=spec.type,
                fixes=[Fix("Quote the value", (Edit(e.value_start, e.value_end, quoted),))],
            )
            return
        if not (
            spec.type == "boolean"
            and sc is not None
            and sc.style is None
            and isinstance(value, str)
            and YAML11_BOOL.fullmatch(value)
        ):
            yield _finding(
                "FMT003",
                Severity.WARNING,
                e.value_start,
                max(e.value_end, e.value_start),
                f"{e.key} should be {_EXPECTED.get(spec.type, spec.type)}, not {_type_name(value)}.",
                expected=spec.type,
            )
        return
    if value is None:
        return
    # Allowed values.
    if spec.values and not spec.open_values:
        for it in [sc] if sc is not None else e.items:
            if it is None or not isinstance(it.value, str) or spec.allows(it.value):
                continue
            hint = _value_hint(it.value, spec)
            fixes = [Fix(f"Replace with '{hint}'", (Edit(it.start, it.end, hint),))] if hint and it.exact else []
            shown = ", ".join(spec.values[:9])
            extra = " or a full Claude model id" if spec.pattern else ""
            yield _finding(
                "FMT004",
                Severity.parse(spec.severity),
                it.start,
                it.end,
                f"{e.key}: '{it.value}' is not an allowed value"
                + (f" (did you mean '{hint}'?)" if hint else "")
                + f"; expected one of {shown}{extra}.",
                fixes=fixes,
                allowed=list(spec.values),
            )
    # Tool names.
    if spec.tools:
        known = load_schemas().tools.get(spec.tools, frozenset())
        sev = Severity.WARNING if schema.kind == "claude-agent" or _claude_path(path) else Severity.INFO
        for it in _items(e):
            yield from _check_tool(it, known, e.key, sev)
    # Globs.
    if spec.glob:
        for it in _items(e, commas_only=True):
            if not isinstance(it.value, str):
                continue
            why = _glob_problem(it.value)
            if why:
                yield _finding(
                    "FMT007",
                    Severity.WARNING,
                    it.start,
                    it.end,
                    f"{e.key}: glob '{it.value}' {why}; it will not match as intended.",
                )
    # Lengths.
    if isinstance(value, str):
        if (
            spec.max_length
            and len(value) > spec.max_length
            and not (spec.listing_cap and len(value) > spec.listing_cap)
        ):
            a, b = (sc.start + spec.max_length, sc.end) if sc is not None and sc.exact else (e.value_start, e.value_end)
            yield _finding(
                "FMT013",
                Severity.WARNING,
                a,
                b,
                f"{e.key} is {len(value):,} characters; the limit is {spec.max_length:,} (Agent Skills spec): "
                "validators and the Skills API reject it.",
                length=len(value),
                limit=spec.max_length,
            )
        if spec.skill_name:
            yield from _check_skill_name(e, value, path)
        if schema.kind == "claude-agent" and e.key == "name":
            yield from _check_agent_name(e, value)


def _value_hint(value: str, spec: KeySpec) -> str | None:
    for v in spec.values:
        if v.lower() == value.lower():
            return v
    return suggest(value, spec.values, cutoff=0.75)


def _claude_path(path: str | None) -> bool:
    """Whether ``path`` is inside a ``.claude`` folder or a Claude Code plugin (``plugins/``):
    there tool names are certainly Claude Code's; skills elsewhere may target other hosts."""
    p = "/" + (path or "").replace("\\", "/")
    return "/.claude/" in p or "/plugins/" in p or "/.claude-plugin/" in p


def _check_tool(it: Scalar, known: frozenset[str], key: str, sev: Severity = Severity.WARNING) -> Iterator[Finding]:
    v = it.value
    if not isinstance(v, str):
        yield _finding("FMT006", sev, it.start, it.end, f"{key}: tool names are strings, not {_type_name(v)}.")
        return
    v = v.strip()
    if v in ("*", "") or v.startswith("mcp__"):
        return
    m = re.fullmatch(r"([A-Za-z_][\w-]*)\s*\((.*)\)", v, re.S)
    name = m.group(1) if m else v
    if name in known:
        return
    hint = suggest(name, sorted(known), cutoff=0.8)
    if hint and it.exact and name in v:
        a = it.start + v.index(name) if m else it.start
        fixes = [Fix(f"Replace with '{hint}'", (Edit(a, a + len(name), hint),))]
    else:
        fixes = []
    yield _finding(
        "FMT006",
        sev,
        it.start,
        it.end,
        f"{key}: '{name}' is not a Claude Code tool"
        + (f" (did you mean '{hint}'?)" if hint else "")
        + "; Claude Code ignores unknown tool names, so the agent does not get it. Use a tool name such as Read, "
        "Bash(git:*) or mcp__server__tool.",
        fixes=fixes,
        tool=name,
    )


def _normalise_skill_name(value: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", value.strip().lower())
    return s.strip("-")[:SKILL_NAME_MAX].strip("-")


def _check_skill_name(e: Entry, value: str, path: str | None) -> Iterator[Finding]:
    sc = e.scalar
    a, b = (sc.start, sc.end) if sc is not None else (e.value_start, e.value_end)
    problems = []
    if not 1 <= len(value) <= SKILL_NAME_MAX:
        problems.append(f"is {len(value)} characters (1–{SKILL_NAME_MAX} allowed)")
    if re.search(r"[^a-z0-9-]", value):
        bad = sorted({c for c in value if not re.match(r"[a-z0-9-]", c)})
        problems.append("contains " + ", ".join(repr(c) for c in bad[:6]) + " (only a–z, 0–9 and '-')")
    if value.startswith("-") or value.endswith("-"):
        problems.append("starts or ends with '-'")
    if "--" in value:
        problems.append("contains '--'")
    if problems:
        fixed = _normalise_skill_name(value)
        fixes = []
        if fixed and SKILL_NAME.fullmatch(fixed) and sc is not None and sc.exact:
            fixes.append(Fix(f"Replace with '{fixed}'", (Edit(sc.start, sc.end, fixed),)))
        # Only capitals or underscores: Gemini CLI and Claude Code still load it (warning).
        cosmetic = re.fullmatch(r"[A-Za-z0-9_-]{1,64}", value) and not (
            value.startswith("-") or value.endswith("-") or "--" in value
        )
        yield _finding(
            "FMT010",
            Severity.WARNING if cosmetic else Severity.ERROR,
            a,
            b,
            f"Skill name '{value}' " + "; ".join(problems) + ". The Agent Skills spec and the Skills API reject it.",
            fixes=fixes,
            suggestion=fixed or None,
        )
        return
    folder = _skill_folder(path)
    if folder and folder != value:
        yield _finding(
            "FMT011",
            Severity.WARNING,
            a,
            b,
            f"Skill name '{value}' differs from its folder '{folder}': the Agent Skills spec requires them to be "
            "equal, and Claude Code names the /command after the folder.",
            folder=folder,
        )


def _skill_folder(path: str | None) -> str | None:
    if not path:
        return None
    from urllib.parse import unquote, urlparse

    p = unquote(urlparse(path).path) if "://" in path else path
    segs = [s for s in p.replace("\\", "/").split("/") if s]
    if len(segs) >= 2 and segs[-1] == "SKILL.md":
        return segs[-2]
    return None


def _check_agent_name(e: Entry, value: str) -> Iterator[Finding]:
    sc = e.scalar
    a, b = (sc.start, sc.end) if sc is not None else (e.value_start, e.value_end)
    if value.startswith("-") or ":" in value:
        yield _finding(
            "FMT012",
            Severity.ERROR,
            a,
            b,
            f"Subagent name '{value}' "
            + ("starts with '-'" if value.startswith("-") else "contains ':'")
            + ": Claude Code skips the file.",
        )
    elif not re.fullmatch(r"[a-z0-9]+(?:[-_][a-z0-9]+)*", value):
        yield _finding(
            "FMT012",
            Severity.INFO,
            a,
            b,
            f"Subagent name '{value}': the docs ask for lowercase letters and hyphens.",
        )


def _yaml11_breaks(text: str, span: fm_mod.FrontmatterSpan, parsed: Parsed) -> Iterator[Finding]:
    """FMT021: U+0085/U+2028/U+2029 that a YAML 1.1 parser reads as line breaks, when that
    changes the top-level keys."""
    from ruamel.yaml import YAML

    yaml_text = text[span.yaml_start : span.yaml_end]
    keys12 = [e.key for e in parsed.entries] if not parsed.error else None
    as11 = yaml_text.translate({ord(c): "\n" for c in YAML11_BREAKS})
    try:
        data11 = YAML(typ="safe", pure=True).load(as11)
        keys11 = list(data11) if isinstance(data11, dict) else None
    except Exception:  # noqa: BLE001
        keys11 = None
    if keys11 == keys12:
        return
    extra = [k for k in (keys11 or []) if k not in (keys12 or [])]
    for i, ch in enumerate(yaml_text):
        if ch not in YAML11_BREAKS:
            continue
        a = span.yaml_start + i
        rest = as11[i + 1 :].split("\n", 1)[0]
        m = re.match(r"\s*([^\s:#][^:]*?)\s*:(?:\s|$)", rest)
        if not m and keys12 is not None and keys11 is not None:
            continue
        if keys11 is None:
            what = "a YAML 1.1 parser (PyYAML) cannot parse the frontmatter either"
        else:
            what = "a YAML 1.1 parser (PyYAML) reads the keys " + ", ".join(repr(k) for k in keys11)
        if keys12 is None:
            seen12 = "YAML 1.2 parsers reject the frontmatter"
        else:
            seen12 = "YAML 1.2 parsers read the keys " + ", ".join(repr(k) for k in keys12)
        yield _finding(
            "FMT021",
            Severity.WARNING,
            a,
            a + 1,
            f"U+{ord(ch):04X} is a line break in YAML 1.1 but an ordinary character in YAML 1.2: {what}; "
            f"{seen12}. Different tools see different settings"
            + (f" (extra in YAML 1.1: {', '.join(repr(k) for k in extra)})." if extra and keys12 is not None else "."),
            fixes=[Fix("Remove the character", (Edit(a, a + 1, ""),))],
            yaml11_keys=keys11,
            yaml12_keys=keys12,
        )
