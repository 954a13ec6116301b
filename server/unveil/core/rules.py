"""Rule metadata loaded from the TOML files in ``rules/`` (shipped in the wheel as ``unveil/rules``).

One file per category. Every rule has a stable id, a short name, a category, a default severity,
the check that implements it, documentation and examples (``bad`` snippets that must fire at a
given line, ``good`` snippets that must not). The test suite runs every rule's examples.

File shape (TOML, see ``rules/hidden-content.toml``)::

    category = "hidden-content"
    [[rule]]
    id = "HID001"
    name = "unicode-tag-characters"
    severity = "error"
    check = "unicode"            # module in unveil.core.checks that emits this id
    summary = "one line"
    description = "markdown"
    references = ["https://..."]
    [[rule.bad]]
    text = "..."                 # TOML escapes (\\u200B, \\U000E0041) keep the file readable
    line = 1                     # 1-based line where the finding must start
    # optional: path = "AGENTS.md" (file name the snippet is analysed as); repeat = N (the text
    # is repeated N times), prefix = "...", suffix = "..." (added around the repeated text)
    [[rule.good]]
    text = "..."

A broken file does not stop the others: :func:`load_rules` collects a readable error naming the
file (and the rule) in :attr:`RuleSet.errors`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

from unveil.core.findings import Severity

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@dataclass(frozen=True)
class Example:
    """A snippet run by the test suite; ``line`` is 1-based (``None`` for good examples).
    ``path`` is the file name the snippet is analysed as (it selects the file kind)."""

    text: str
    line: int | None = None
    path: str = "example.md"


@dataclass(frozen=True)
class Rule:
    """One rule's metadata. ``raw`` keeps every key of the TOML table for rule kinds that need
    more (patterns, contexts)."""

    id: str
    name: str
    category: str
    severity: Severity
    summary: str
    description: str = ""
    check: str = ""
    references: tuple[str, ...] = ()
    bad: tuple[Example, ...] = ()
    good: tuple[Example, ...] = ()
    source: str = ""
    raw: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def doc_url(self) -> str:
        """Link to this rule's section of the rule reference (LSP ``codeDescription.href``, SARIF
        ``helpUri``): a ``file://`` URI of ``docs/rules.md`` as installed with the package (the
        wheel ships it as ``unveil/docs/rules.md``), so it opens offline in any editor. A user
        rule (loaded from a file outside the bundled ``rules/``) links its own rule file."""
        return _doc_url(self.source, self.id)


@dataclass
class RuleSet:
    """All loaded rules by id, plus the problems met while loading (one readable line each)."""

    rules: dict[str, Rule] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def get(self, rule_id: str) -> Rule | None:
        return self.rules.get(rule_id)

    def __iter__(self):
        return iter(sorted(self.rules.values(), key=lambda r: r.id))

    def __len__(self) -> int:
        return len(self.rules)


@lru_cache(maxsize=4096)
def _doc_url(source: str, rule_id: str) -> str:
    if source:
        src = Path(source).resolve()
        if src.parent != bundled_rules_dir().resolve():
            return src.as_uri()
    return f"{rules_doc_file().as_uri()}#{rule_id.lower()}"


def rules_doc_file() -> Path:
    """The generated rule reference: ``unveil/docs/rules.md`` in an installed wheel, else the
    source tree's ``docs/rules.md`` (editable installs and running from a checkout)."""
    here = Path(__file__).resolve().parent.parent
    installed = here / "docs" / "rules.md"
    if installed.is_file():
        return installed
    return here.parent.parent / "docs" / "rules.md"


def bundled_rules_dir() -> Path:
    """The ``rules/`` folder: ``unveil/rules`` inside an installed wheel, else the source tree's
    top-level ``rules/`` (editable installs and running from a checkout)."""
    here = Path(__file__).resolve().parent.parent
    installed = here / "rules"
    if installed.is_dir():
        return installed
    return here.parent.parent / "rules"


def _examples(items: Any, where: str, need_line: bool) -> tuple[Example, ...]:
    out = []
    for i, item in enumerate(items or []):
        if isinstance(item, str):
            item = {"text": item}
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            raise ValueError(f"{where}[{i}] must be a table with a string 'text'")
        line = item.get("line")
        if need_line and not isinstance(line, int):
            raise ValueError(f"{where}[{i}] needs an integer 'line' (1-based) where the rule fires")
        text = item["text"]
        repeat = item.get("repeat", 1)
        if isinstance(repeat, int) and repeat > 1:  # big inputs (size limits) stay readable
            text = text * repeat
        text = str(item.get("prefix", "")) + text + str(item.get("suffix", ""))
        out.append(Example(text, line if need_line else None, str(item.get("path", "example.md"))))
    return tuple(out)


def parse_rule(table: dict, category: str, source: str) -> Rule:
    """Build a :class:`Rule` from one ``[[rule]]`` table. Raises ``ValueError`` with the field
    that is wrong."""
    rid = table.get("id")
    if not isinstance(rid, str) or not rid:
        raise ValueError("a rule has no 'id'")
    for key in ("name", "summary"):
        if not isinstance(table.get(key), str):
            raise ValueError(f"rule {rid}: missing string '{key}'")
    try:
        severity = Severity.parse(table.get("severity", "warning"))
    except ValueError as exc:
        raise ValueError(f"rule {rid}: {exc}") from None
    return Rule(
        id=rid,
        name=table["name"],
        category=str(table.get("category", category)),
        severity=severity,
        summary=table["summary"],
        description=str(table.get("description", "")),
        check=str(table.get("check", "")),
        references=tuple(str(r) for r in table.get("references", ())),
        bad=_examples(table.get("bad"), f"rule {rid}: bad", True),
        good=_examples(table.get("good"), f"rule {rid}: good", False),
        source=source,
        raw=table,
    )


def _rule_files(paths: Iterable[Path]) -> list[Path]:
    files: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            files.extend(sorted(p.glob("*.toml")))
        else:
            files.append(p)
    return files


def _parse_file(f: Path) -> dict | str:
    """The TOML table of rule file ``f``, or one error line naming it."""
    from unveil.core import safe_read

    try:
        return tomllib.loads(safe_read.read_config_text(f))
    except safe_read.RefusedRead as exc:
        return f"{f}: cannot read rule file: {exc.reason}"
    except (OSError, UnicodeDecodeError) as exc:
        return f"{f}: cannot read rule file: {exc}"
    except RecursionError:
        return f"{f}: invalid TOML: nested too deeply"
    except tomllib.TOMLDecodeError as exc:
        return f"{f}: invalid TOML: {exc}"


def _add_file(rs: RuleSet, f: Path, data: dict | str) -> None:
    if isinstance(data, str):
        rs.errors.append(data)
        return
    category = str(data.get("category", f.stem))
    for table in data.get("rule", []):
        try:
            rule = parse_rule(table, category, str(f))
        except ValueError as exc:
            rs.errors.append(f"{f}: {exc}")
            continue
        if rule.id in rs.rules:
            rs.errors.append(f"{f}: rule {rule.id}: duplicate id (first defined in {rs.rules[rule.id].source})")
            continue
        rs.rules[rule.id] = rule


def load_rule_files(paths: Iterable[Path], into: RuleSet | None = None) -> RuleSet:
    """Load rule files (or every ``*.toml`` in a folder) into a :class:`RuleSet`.

    Never raises for bad content: each unreadable file, TOML syntax error, bad rule or duplicate
    id becomes one line in ``errors`` naming the file and rule; the other rules still load.
    """
    rs = into or RuleSet()
    for f in _rule_files(paths):
        _add_file(rs, f, _parse_file(f))
    return rs


def _parsed_bundled(folder: Path) -> list[tuple[Path, dict | str]]:
    """``(file, TOML table or error line)`` for every ``*.toml`` of ``folder``. The tables come
    from the user cache (:mod:`unveil.core.cache`, ``rules/parsed-…``, ``marshal``) when the key
    matches: the unveil version and every file's name and bytes, so an added, removed or edited
    rule file is parsed again. Parsing the bundled files takes about 0.1 s; loading the entry
    about 5 ms. A cache problem only means parsing."""
    from unveil.core import cache

    files = _rule_files([folder])
    raw: list[bytes | None] = []
    for f in files:
        try:
            raw.append(f.read_bytes())
        except OSError:
            raw.append(None)
    key = None
    if all(b is not None for b in raw):
        parts: list[bytes | str] = [cache.version_tag()]
        for f, b in zip(files, raw):
            parts += [f.name, b or b""]
        key = "parsed-" + cache.digest(parts)[:32]
        got = cache.load_marshal("rules", key)
        if isinstance(got, list) and len(got) == len(files) and all(isinstance(d, dict) for d in got):
            return list(zip(files, got))
    out: list[tuple[Path, dict | str]] = [(f, _parse_file(f)) for f in files]
    if key is not None and all(isinstance(d, dict) for _, d in out):
        cache.store_marshal("rules", key, [d for _, d in out])
    return out


@lru_cache(maxsize=1)
def bundled_rules() -> RuleSet:
    """The rules shipped with unveil (cached; the files are read once per process, their parsed
    tables kept in the user cache: :func:`_parsed_bundled`)."""
    rs = RuleSet()
    for f, data in _parsed_bundled(bundled_rules_dir()):
        _add_file(rs, f, data)
    return rs
