"""File discovery and reading, shared by the CLI (``unveil check`` / ``cost``) and the language
server's workspace scan: one skip list, one walk, one reader.

* :data:`SKIP_DIRS` — folder names never descended into (version control, dependencies, caches,
  build output).
* :func:`walk` — agent files under a folder (sorted, symlinked folders not followed, only regular
  files: FIFOs, sockets and devices are never opened).
* :func:`collect` — command-line paths expanded to ``(display path, absolute path)`` pairs.
* :func:`read_text` — a file's text as strict UTF-8, or with ``surrogateescape`` when it holds
  invalid bytes (nothing is lost: each bad byte becomes one code point U+DC80..U+DCFF).

Pure: no LSP, no CLI imports.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

from unveil.core import kinds

SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".nox", ".mypy_cache",
     ".pytest_cache", ".ruff_cache", "dist", "build", "target", ".next", ".cache"}
)
"""Folder names never descended into when a folder is walked."""


def is_agent_file(path: str | os.PathLike) -> bool:
    """Whether a file met while walking a folder is scanned (:func:`unveil.core.kinds.is_agent_file`)."""
    return kinds.is_agent_file(str(path))


def is_regular(path: Path) -> bool:
    """Whether ``path`` is a regular file (following symlinks), without opening it."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def display_path(path: Path, cwd: Path) -> str:
    """``path`` relative to ``cwd`` with ``/`` separators when it is inside ``cwd``, else absolute."""
    try:
        rel = path.relative_to(cwd)
    except ValueError:
        return path.as_posix()
    return rel.as_posix() or "."


def escape_target(path: Path, root: Path) -> Path | None:
    """The resolved target of ``path`` when it lies outside the folder ``root`` (both resolved,
    so a symlink anywhere on the way counts), else ``None``. A committed ``env.md ->
    /proc/self/environ`` or ``notes.md -> ~/.ssh/id_rsa`` would otherwise be read and its content
    echoed into reports."""
    try:
        target = Path(os.path.realpath(path))
        base = Path(os.path.realpath(root))
    except (OSError, ValueError):
        return None
    if target == base or base in target.parents:
        return None
    return target


def walk(root: Path, kind_map=None, onerror=None, outside=None) -> Iterator[Path]:
    """Agent files under the folder ``root`` in sorted walk order: every file
    :func:`is_agent_file` accepts or ``kind_map`` (setting ``kinds``: glob → kind id) maps to a
    kind, skipping :data:`SKIP_DIRS`; symlinked folders are not followed; only regular files.
    ``onerror(OSError)`` is called for a folder that cannot be listed. A file that is a symlink
    resolving outside ``root`` is never yielded (nor read): ``outside(path, target)`` is called
    for it instead."""
    for folder, dirs, files in os.walk(root, onerror=onerror):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(files):
            f = Path(folder) / name
            try:
                wanted = is_agent_file(f) or bool(kind_map and kinds.mapped_kind(str(f), kind_map))
            except (OSError, ValueError):
                continue
            if not wanted:
                continue
            if os.path.islink(f):
                target = escape_target(f, root)
                if target is not None:
                    if outside is not None:
                        outside(f, target)
                    continue
            if is_regular(f):
                yield f


@dataclass
class Collected:
    """Files to scan as ``(display path, absolute path)`` in a stable order, and one message per
    path that could not be used."""

    files: list[tuple[str, Path]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    outside: list[tuple[str, Path, Path]] = field(default_factory=list)
    """``(display path, absolute path, resolved target)`` of symlinks that leave the scanned root:
    never read, reported as ``UNV020`` findings."""


def collect(paths: Sequence[str], cwd: Path | None = None, kind_map=None) -> Collected:
    """Expand command-line paths: files are taken as given (whatever their kind); folders are
    walked with :func:`walk`. Only regular files (or symlinks to them) are taken: one named on the
    command line that is not adds a "not a regular file" error, so nothing ever blocks opening it.
    A path that does not exist or a folder that cannot be listed adds an error message.

    Symlinks that leave the scanned root go to :attr:`Collected.outside` and are never read: for
    a walked folder the root is that folder; for a file named on the command line it is the
    working directory ``cwd`` (so ``unveil check CLAUDE.md`` in CI does not read
    ``CLAUDE.md -> /proc/self/environ``; name the target itself to scan it)."""
    cwd = (cwd or Path.cwd()).resolve()
    out = Collected()
    seen: set[Path] = set()

    def add(p: Path) -> None:
        p = p.absolute()
        key = p.resolve()
        if key in seen:
            return
        seen.add(key)
        out.files.append((display_path(p, cwd), p))

    for raw in paths:
        p = Path(raw)
        if not p.is_absolute():
            p = cwd / p
        p = Path(os.path.normpath(p))
        if p.is_dir():
            def onerror(exc: OSError, p: Path = p) -> None:
                out.errors.append(f"{display_path(Path(exc.filename or p), cwd)}: cannot list folder: {exc.strerror or exc}")

            def escaped(f: Path, target: Path) -> None:
                out.outside.append((display_path(f.absolute(), cwd), f.absolute(), target))

            for f in walk(p, kind_map, onerror, escaped):
                add(f)
        elif p.exists():
            target = escape_target(p, cwd) if os.path.islink(p) else None
            if target is not None:
                out.outside.append((display_path(p, cwd), p, target))
            elif is_regular(p):
                add(p)
            else:
                out.errors.append(f"{raw}: not a regular file")
        else:
            out.errors.append(f"{raw}: no such file or folder")
    return out


def read_text(path: str | os.PathLike) -> str:
    """The file's text: strict UTF-8, or UTF-8 with ``surrogateescape`` when it holds invalid
    bytes (nothing is lost; the bad bytes become U+DC80..U+DCFF). Raises ``OSError``."""
    from unveil.core import safe_read

    return safe_read.read_text(path)  # regular files only (FIFO-safe), no size cap
