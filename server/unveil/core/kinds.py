"""File kinds: which agent format a file is, from its path and frontmatter.

The table lives in ``unveil/data/kinds.toml`` (its header documents the matching rules and
the cost models). :func:`detect_kind` returns a kind id such as ``"claude-agent"``;
:func:`kind_info` returns the :class:`Kind` with its label, cost model and notes.
Facts: research note agent-formats.md §1–§2.
"""

from __future__ import annotations

import fnmatch
import functools
import logging
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping
from urllib.parse import unquote, urlparse

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

log = logging.getLogger(__name__)

KINDS_FILE = Path(__file__).resolve().parent.parent / "data" / "kinds.toml"
UNKNOWN = "markdown"


@dataclass(frozen=True)
class Kind:
    """One file kind.

    * ``id`` — stable id (``"claude-skill"``); ``label`` — human name.
    * ``cost`` — cost model id (see ``kinds.toml``; interpreted by :mod:`unveil.core.cost`).
    * ``patterns`` / ``weak_patterns`` — path globs; weak ones need the frontmatter keys
      ``requires``; ``frontmatter_all`` / ``frontmatter_any`` — frontmatter-only detection.
    * ``notes`` — when the host loads such a file, in one or two sentences.
    """

    id: str
    label: str
    cost: str
    patterns: tuple[str, ...] = ()
    weak_patterns: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()
    frontmatter_all: tuple[str, ...] = ()
    frontmatter_any: tuple[str, ...] = ()
    notes: str = ""


_FALLBACK = Kind(UNKNOWN, "Markdown (unknown kind)", "unknown", notes="Not a known agent file.")


def _tuple(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (list, tuple)):
        return tuple(str(v) for v in value)
    return ()


def parse_kinds(data: Mapping[str, Any]) -> tuple[Kind, ...]:
    """Build the kind table from the parsed TOML mapping (``[[kind]]`` array).

    Raises ``ValueError`` for an entry without ``id`` or ``cost``.
    """
    out = []
    for entry in data.get("kind", []):
        if not isinstance(entry, Mapping) or not entry.get("id") or not entry.get("cost"):
            raise ValueError(f"kinds.toml: entry without id or cost: {entry!r}")
        out.append(
            Kind(
                id=str(entry["id"]),
                label=str(entry.get("label", entry["id"])),
                cost=str(entry["cost"]),
                patterns=_tuple(entry.get("patterns")),
                weak_patterns=_tuple(entry.get("weak_patterns")),
                requires=_tuple(entry.get("requires")),
                frontmatter_all=_tuple(entry.get("frontmatter_all")),
                frontmatter_any=_tuple(entry.get("frontmatter_any")),
                notes=str(entry.get("notes", "")),
            )
        )
    return tuple(out)


@functools.lru_cache(maxsize=1)
def all_kinds() -> tuple[Kind, ...]:
    """The bundled kind table in matching order (always contains ``"markdown"``)."""
    from unveil.core import cache

    try:
        kinds = parse_kinds(cache.load_toml(KINDS_FILE))
    except (OSError, ValueError, tomllib.TOMLDecodeError) as exc:  # pragma: no cover - broken install
        log.error("cannot read %s: %s", KINDS_FILE, exc)
        kinds = ()
    if not any(k.id == UNKNOWN for k in kinds):
        kinds = kinds + (_FALLBACK,)
    return kinds


def kind_info(kind_id: str) -> Kind:
    """The :class:`Kind` for ``kind_id``; the ``"markdown"`` kind for an unknown id."""
    for k in all_kinds():
        if k.id == kind_id:
            return k
    return kind_info(UNKNOWN) if kind_id != UNKNOWN else _FALLBACK


def _segments(path: str) -> list[str]:
    if "://" in path:
        parsed = urlparse(path)
        path = unquote(parsed.path)
    path = path.replace("\\", "/")
    return [s for s in path.split("/") if s not in ("", ".")]


@functools.lru_cache(maxsize=512)
def _compile(pattern: str) -> tuple[str, ...]:
    return tuple(s for s in pattern.split("/") if s)


@functools.lru_cache(maxsize=1024)
def _glob(pattern: str) -> tuple[tuple, int]:
    """The compiled glob: per segment ``None`` for ``**`` or the ``fnmatch`` matcher of that
    segment (``re.compile(fnmatch.translate(seg)).match``, exactly what ``fnmatchcase`` runs),
    and the number of segments that are not ``**``. Compiled once per pattern per process."""
    segs = _compile(pattern)
    return tuple(None if s == "**" else re.compile(fnmatch.translate(s)).match for s in segs), sum(
        1 for s in segs if s != "**"
    )


@functools.lru_cache(maxsize=256)
def _path_segments(path: str) -> tuple[str, ...]:
    return tuple(_segments(path))


def _match_from(segs: tuple[str, ...], pat: tuple, i: int = 0, j: int = 0) -> bool:
    """Whether ``segs[i:]`` (whole) matches ``pat[j:]`` (compiled segments from :func:`_glob`)
    with ``**`` (``None``) spanning any number of segments."""
    n = len(segs)
    while j < len(pat):
        m = pat[j]
        if m is None:
            if j + 1 == len(pat):
                return True
            return any(_match_from(segs, pat, k, j + 1) for k in range(i, n + 1))
        if i >= n or m(segs[i]) is None:
            return False
        i += 1
        j += 1
    return i == n


def path_matches(path: str, pattern: str) -> bool:
    """Whether the end of ``path`` matches the glob ``pattern`` (see ``kinds.toml``).

    ``path`` may use ``/`` or ``\\`` separators or be a ``file://`` URI.
    """
    segs = _path_segments(path)
    pat, fixed = _glob(pattern)
    if not pat:
        return False
    last = pat[-1]
    if last is not None and (not segs or last(segs[-1]) is None):
        return False  # the last segment must match the file name: most patterns stop here
    if pat[0] is None:
        return _match_from(segs, pat)
    # Implicit leading "**/": try every suffix that is at least as long as the fixed part.
    return any(_match_from(segs, pat, start) for start in range(0, len(segs) - fixed + 1))


def _has(fm: Mapping[str, Any] | None, keys: tuple[str, ...]) -> bool:
    return all(fm is not None and fm.get(k) not in (None, "") for k in keys)


def kind_ids() -> frozenset[str]:
    """Ids of every bundled kind (including ``"markdown"``), for validating configuration."""
    return frozenset(k.id for k in all_kinds())


def mapped_kind(path: str | None, kind_map: Mapping[str, str] | None) -> str | None:
    """The kind id that the user mapping ``kind_map`` (glob → kind id, setting ``kinds``)
    gives ``path``, or ``None``. Globs are matched with :func:`path_matches` (a relative glob
    matches the end of the path; ``**`` spans folders); the first matching entry in the
    mapping's order wins; entries whose kind id is not a bundled kind are skipped. Never raises."""
    if not path or not isinstance(kind_map, Mapping):
        return None
    known = kind_ids()
    for pattern, kind_id in kind_map.items():
        try:
            if kind_id in known and path_matches(path, str(pattern)):
                return kind_id
        except Exception as exc:  # noqa: BLE001 - a bad glob is never worth a crash
            log.error("kind mapping %r failed on %r: %s", pattern, path, exc)
    return None


def detect_kind(
    path: str | None,
    frontmatter: Mapping[str, Any] | None = None,
    kind_map: Mapping[str, str] | None = None,
) -> str:
    """Kind id of the file at ``path`` (``None`` for untitled buffers) with parsed
    ``frontmatter`` (the top-level mapping, or ``None``). ``kind_map`` — the user's glob → kind
    id mapping (:attr:`unveil.core.config.Settings.kind_map`) — is consulted first (see
    :func:`mapped_kind`), then the bundled patterns, then frontmatter. Never raises;
    ``"markdown"`` when nothing matches."""
    try:
        mapped = mapped_kind(path, kind_map)
        if mapped is not None:
            return mapped
        fm = frontmatter if isinstance(frontmatter, Mapping) else None
        kinds = all_kinds()
        if path:
            strong, weak = _path_kinds(path, kinds)
            if strong is not None:
                return strong
            for k in weak:
                if _has(fm, k.requires):
                    return k.id
        if fm:
            for k in kinds:
                if k.frontmatter_all and _has(fm, k.frontmatter_all):
                    if not k.frontmatter_any or any(fm.get(key) not in (None, "") for key in k.frontmatter_any):
                        return k.id
    except Exception as exc:  # noqa: BLE001 - a kind is never worth a crash
        log.error("detect_kind(%r) failed: %s", path, exc)
    return UNKNOWN


def _path_kinds(path: str, kinds: tuple[Kind, ...]) -> tuple[str | None, tuple[Kind, ...]]:
    """``(strong, weak)`` for ``path`` in the kind table ``kinds``: the id of the first kind one
    of whose ``patterns`` matches (``None`` if none does), and, when none does, the kinds one of
    whose ``weak_patterns`` matches, in table order (which of them applies depends on the
    frontmatter). Kept per path for the table it was computed with: the language server
    detects the kind of an open document at each keystroke, and matching every pattern of the
    table took about 0.15 ms of it."""
    got = _PATH_KINDS.get(path)
    if got is not None and got[0] is kinds:
        return got[1], got[2]
    strong = next((k.id for k in kinds if any(path_matches(path, p) for p in k.patterns)), None)
    weak: tuple[Kind, ...] = ()
    if strong is None:  # (as before: weak patterns are only read when no strong one matched)
        weak = tuple(k for k in kinds if k.weak_patterns and any(path_matches(path, p) for p in k.weak_patterns))
    if len(_PATH_KINDS) >= _PATH_KINDS_MAX:
        _PATH_KINDS.clear()
    _PATH_KINDS[path] = (kinds, strong, weak)
    return strong, weak


_PATH_KINDS: dict[str, tuple[tuple[Kind, ...], str | None, tuple[Kind, ...]]] = {}
_PATH_KINDS_MAX = 4096
"""Most paths :func:`_path_kinds` keeps (a folder scan meets each path once; they are short)."""


_TEXT_SUFFIXES = (".md", ".mdc", ".markdown", ".txt", ".xml")


def is_agent_file(path: str) -> bool:
    """Whether a file met while walking a folder should be scanned: any Markdown file
    (``.md``, ``.mdc``, ``.markdown``), or a text file whose path matches a kind's pattern
    (``.cursorrules``, ``.windsurfrules``, ``.clinerules``, Roo ``.xml``/``.txt`` rules …)."""
    segments = _segments(path)
    name = segments[-1] if segments else ""
    lower = name.lower()
    if lower.endswith((".md", ".mdc", ".markdown")):
        return True
    suffix = lower.rsplit(".", 1)[-1] if "." in lower.lstrip(".") else ""
    if suffix and "." + suffix not in _TEXT_SUFFIXES:
        return False
    for k in all_kinds():
        if any(path_matches(path, p) for p in k.patterns + k.weak_patterns):
            return True
    return False
