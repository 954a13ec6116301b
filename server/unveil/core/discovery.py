"""File discovery and reading, shared by the CLI (``unveil check`` / ``cost``) and the language
server's workspace scan: one skip list, one walk, one reader.

* :data:`SKIP_DIRS` — folder names never descended into (version control, dependencies, caches,
  build output); setting ``exclude`` replaces this list, ``extend-exclude`` adds to it.
* :class:`Filters` — what a folder walk leaves out: ``.gitignore`` files (nested ones too, with
  negations, via pathspec's git semantics) and ``.git/info/exclude`` of the enclosing git
  repository — never for a file git tracks (:func:`tracked_files`), and not at all when git cannot
  run — and the ``exclude`` / ``extend-exclude`` globs (wcmatch: ``**`` spans folders,
  ``{a,b}`` alternatives, dot files matched) of the project configuration and the command line.
* :func:`walk` — agent files under a folder (sorted, symlinked folders not followed, only regular
  files: FIFOs, sockets and devices are never opened).
* :func:`collect` — command-line paths expanded to ``(display path, absolute path)`` pairs, with a
  count of what the filters left out. A file named explicitly is always scanned.
* :func:`documentation_policy` — what a scan does with Markdown that is not an agent file
  (see docs/discovery.md).
* :func:`read_text` — a file's text as strict UTF-8, or with ``surrogateescape`` when it holds
  invalid bytes (nothing is lost: each bad byte becomes one code point U+DC80..U+DCFF).

Pure: no LSP, no CLI imports.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Sequence

from unveil.core import kinds

SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        "dist",
        "build",
        "target",
        ".next",
        ".cache",
    }
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


from unveil.core.globs import glob_flags, glob_problem  # noqa: E402,F401 - re-exported


@dataclass(frozen=True)
class Exclude:
    """One exclude glob: ``pattern`` as written and ``base``, the folder it is relative to (the
    configuration file's folder, or the working directory for the command line). A pattern
    without ``/`` matches a file or folder name at any depth (like ``.gitignore``); one with
    ``/`` matches the path relative to ``base``. A matching folder is not descended into."""

    pattern: str
    base: Path
    source: str = "command line"

    def matches(self, path: Path, is_dir: bool) -> bool:
        from wcmatch import glob

        pat = self.pattern.strip()
        if pat.startswith("./"):
            pat = pat[2:]
        pat = pat.rstrip("/") if pat.endswith("/") and is_dir else pat
        if pat.endswith("/"):  # "name/" matches folders only
            return False
        if "/" not in pat:
            return glob.globmatch(path.name, pat, flags=glob_flags())
        try:
            rel = path.relative_to(self.base).as_posix()
        except ValueError:
            return False
        return glob.globmatch(rel, pat, flags=glob_flags())


def git_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` that holds ``.git`` (a folder, or a file as in
    worktrees and submodules), or ``None``."""
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def tracked_files(root: Path) -> tuple[frozenset[Path], frozenset[Path]] | None:
    """``(files, folders)``: the files git tracks in the repository at ``root`` and every
    folder that holds one (absolute paths), or ``None`` when ``git ls-files`` cannot run. Git
    runs with ``core.fsmonitor`` off, so a repository's configuration starts no program."""
    import subprocess

    try:
        res = subprocess.run(
            ["git", "-c", "core.fsmonitor=false", "ls-files", "-z", "--cached"],
            cwd=root,
            capture_output=True,
            timeout=120,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if res.returncode != 0:
        return None
    root = root.absolute()
    files = frozenset(root / os.fsdecode(n) for n in res.stdout.split(b"\0") if n)
    folders = {root}
    for f in files:
        for parent in f.parents:
            if parent in folders or parent == root:
                break
            folders.add(parent)
    return files, frozenset(folders)


def _read_lines(path: Path) -> list[str] | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None


@dataclass
class Filters:
    """What a folder walk leaves out (see the module docstring).

    * ``skip_names`` — folder names never entered (:data:`SKIP_DIRS`, or setting ``exclude``'s
      bare names when ``exclude`` is given).
    * ``excludes`` — :class:`Exclude` globs.
    * ``gitignore`` — honour ``.gitignore`` / ``.git/info/exclude`` inside a git repository
      (``--no-gitignore`` turns it off). Outside a repository no ignore file applies, as in git.
    * ``ignored`` — counts what was left out, by reason (``"gitignore"``, ``"exclude"``).
    """

    skip_names: frozenset[str] = SKIP_DIRS
    excludes: tuple[Exclude, ...] = ()
    gitignore: bool = True
    ignored: dict[str, int] = field(default_factory=dict)
    config: Path | None = None
    _specs: dict = field(default_factory=dict, repr=False)
    _repo: dict = field(default_factory=dict, repr=False)

    @classmethod
    def from_settings(
        cls, settings, base: Path | None = None, source: str = "settings", gitignore: bool = True
    ) -> "Filters":
        """Filters from a :class:`~unveil.core.config.Settings`' ``exclude`` /
        ``extend_exclude`` (globs relative to ``base``, default the working directory)."""
        base = (base or Path.cwd()).absolute()
        exclude = tuple(getattr(settings, "exclude", None) or ())
        extend = tuple(getattr(settings, "extend_exclude", None) or ())
        skip = SKIP_DIRS
        globs: list[Exclude] = []
        if getattr(settings, "exclude", None) is not None:
            skip = frozenset()
            globs += [Exclude(p, base, f"{source} exclude") for p in exclude]
        globs += [Exclude(p, base, f"{source} extend-exclude") for p in extend]
        return cls(
            skip_names=skip, excludes=tuple(g for g in globs if glob_problem(g.pattern) is None), gitignore=gitignore
        )

    @classmethod
    def for_root(
        cls,
        root: Path,
        exclude: Sequence[str] | None = None,
        extend_exclude: Sequence[str] = (),
        cwd: Path | None = None,
        gitignore: bool = True,
        use_config: bool = True,
    ) -> "Filters":
        """The filters of a walk of ``root``: the nearest project configuration's ``exclude`` /
        ``extend-exclude`` (relative to its folder; :func:`unveil.core.project.find` from
        ``root``; left out when ``use_config`` is false), then the command line's (relative to
        ``cwd``): a command-line ``exclude`` replaces the configuration's, ``extend_exclude``
        adds to both. ``config`` names the configuration file whose globs apply."""
        from unveil.core import project
        from unveil.core.config import DEFAULT_SETTINGS

        cfg = project.find(root) if use_config else None
        out = cls(gitignore=gitignore)
        if cfg is not None and (cfg.data.get("exclude") is not None or cfg.data.get("extendExclude")):
            conf = DEFAULT_SETTINGS.merged({k: cfg.data[k] for k in ("exclude", "extendExclude") if k in cfg.data})
            out = cls.from_settings(conf, cfg.path.parent, str(cfg.path), gitignore)
            out.config = cfg.path
        cwd = (cwd or Path.cwd()).absolute()
        if exclude is not None:
            out.skip_names = frozenset()
            out.excludes = tuple(e for e in out.excludes if not e.source.endswith(" exclude"))  # keeps extend-exclude
            out.excludes += tuple(Exclude(p, cwd) for p in exclude if glob_problem(p) is None)
        out.excludes += tuple(Exclude(p, cwd) for p in extend_exclude if glob_problem(p) is None)
        return out

    def _count(self, reason: str) -> None:
        self.ignored[reason] = self.ignored.get(reason, 0) + 1

    def _spec(self, folder: Path):
        """The compiled ``.gitignore`` of ``folder`` (and ``.git/info/exclude`` at a repository
        root), or ``None``."""
        if folder in self._specs:
            return self._specs[folder]
        import pathspec

        lines = _read_lines(folder / ".gitignore") or []
        if (folder / ".git").is_dir():
            lines = (_read_lines(folder / ".git" / "info" / "exclude") or []) + lines
        spec = pathspec.GitIgnoreSpec.from_lines(lines) if lines else None
        self._specs[folder] = spec
        return spec

    def _tracked_in(self, root: Path) -> tuple[frozenset[Path], frozenset[Path]] | None:
        """``(tracked files, folders holding one)`` of the repository at ``root`` (absolute
        paths), from ``git ls-files``; ``None`` when git is missing or fails."""
        key = ("tracked", root)
        if key not in self._repo:
            self._repo[key] = tracked_files(root)
        return self._repo[key]

    def _repo_root(self, folder: Path) -> Path | None:
        """:func:`git_root` of ``folder``, remembered for it and every folder walked through on
        the way up (a sibling folder stops at their common parent)."""
        if folder in self._repo:
            return self._repo[folder]
        walked: list[Path] = []
        found: Path | None = None
        from unveil.core.project import ancestors

        for f in ancestors(folder):
            if f in self._repo:
                found = self._repo[f]
                break
            walked.append(f)
            if (f / ".git").exists():
                found = f
                break
        for f in walked:
            self._repo[f] = found
        return found

    def git_ignored(self, path: Path, is_dir: bool) -> bool:
        """Whether git would ignore ``path`` (absolute): the ``.gitignore`` files from the
        repository root down to the path's folder, the deepest one that has a matching pattern
        deciding (within one file the last matching pattern wins, ``!`` re-includes)."""
        if not self.gitignore:
            return False
        root = self._repo_root(path.parent)
        if root is None:
            return False
        tracked = self._tracked_in(root)
        if tracked is None:
            return False  # git could not list the tracked files: ignore nothing rather than miss one
        if (path.absolute() in tracked[1]) if is_dir else (path.absolute() in tracked[0]):
            return False  # git never ignores a tracked file (a hostile repository can commit one it ignores)
        decision = None
        folder = path.parent
        chain = [folder, *[p for p in folder.parents if p == root or root in p.parents]]
        for d in reversed(chain):
            spec = self._spec(d)
            if spec is None:
                continue
            rel = path.relative_to(d).as_posix() + ("/" if is_dir else "")
            result = spec.check_file(rel)
            if result.include is not None:
                decision = result.include
        return bool(decision)

    def may_exclude_in(self, folder: Path, names: "set[str] | frozenset[str] | None" = None) -> bool:
        """Whether :meth:`excluded` can leave out anything in ``folder`` (absolute) besides a
        folder named in :attr:`skip_names` or ``.git``: there is an exclude glob, or git ignore
        files apply (``gitignore`` on and ``folder`` inside a git repository). A walk asks once
        per folder instead of once per entry. ``names``: the folder's entries, when it has just
        been listed: without a ``.git`` among them, its repository is its parent's, known
        without a ``stat`` once the parent was asked."""
        if self.excludes:
            return True
        if not self.gitignore:
            return False
        if names is not None and ".git" not in names:
            parent = folder.parent
            if parent != folder and parent in self._repo:
                self._repo[folder] = self._repo[parent]
        return self._repo_root(folder) is not None

    def excluded(self, path: Path, is_dir: bool) -> str | None:
        """The reason ``path`` is left out (``"exclude"`` or ``"gitignore"``), else ``None``."""
        if is_dir and path.name in self.skip_names:
            return "exclude"
        if any(e.matches(path, is_dir) for e in self.excludes):
            return "exclude"
        if is_dir and path.name == ".git":
            return "exclude"
        if self.git_ignored(path, is_dir):
            return "gitignore"
        return None


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


def _listing(folder: str, onerror) -> tuple[list[os.DirEntry], list[os.DirEntry]] | None:
    """``(folders, other entries)`` of ``folder``, each sorted by name, as :func:`os.walk` splits
    them (``DirEntry.is_dir()`` follows symlinks; an entry whose type cannot be read is not a
    folder); ``None`` after ``onerror(OSError)`` when the folder cannot be listed."""
    try:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError as exc:
        if onerror is not None:
            onerror(exc)
        return None
    dirs: list[os.DirEntry] = []
    files: list[os.DirEntry] = []
    for e in entries:
        try:
            is_dir = e.is_dir()
        except OSError:
            is_dir = False
        (dirs if is_dir else files).append(e)
    return dirs, files


def _entry_is_symlink(entry: os.DirEntry) -> bool:
    try:
        return entry.is_symlink()
    except OSError:
        return False


def _entry_is_regular(entry: os.DirEntry) -> bool:
    """Whether ``entry`` is a regular file, following a symlink (the type the listing gave for
    any other entry: no system call)."""
    try:
        return entry.is_file()
    except (OSError, ValueError):
        return False


def walk(root: Path, kind_map=None, onerror=None, filters: Filters | None = None, outside=None) -> Iterator[Path]:
    """Agent files under the folder ``root`` in sorted walk order (a folder's files, then each
    of its folders in turn, by name): every file
    :func:`is_agent_file` accepts or ``kind_map`` (setting ``kinds``: glob → kind id) maps to a
    kind, leaving out what ``filters`` excludes (default: :meth:`Filters.for_root` — the skip
    list, the git ignore files and the project configuration's globs; the counts land in
    ``filters.ignored``); symlinked folders are not followed; only
    regular files. ``onerror(OSError)`` is called for a folder that cannot be listed. A file that
    is a symlink resolving outside ``root`` is never yielded (nor read): ``outside(path, target)``
    is called for it instead.

    One ``os.scandir`` per folder: the entry types come from the listing, so a plain file costs
    no ``stat``, and the filters are asked about a folder's entries only where one can apply
    (:meth:`Filters.may_exclude_in`)."""
    for path, _link in _walk(root, kind_map, onerror, filters, outside):
        yield path


def _walk(
    root: Path, kind_map, onerror, filters: "Filters | None", outside, listed: dict[str, frozenset[str]] | None = None
) -> Iterator[tuple[Path, bool]]:
    """:func:`walk`'s files as ``(path, whether the listing showed it as a symlink)``. With
    ``listed``, each folder listed is recorded there (:attr:`Collected.listed`)."""
    from unveil.core.project import CONFIG_NAMES

    none: frozenset[str] = frozenset()
    root = Path(root).absolute()
    filters = filters if filters is not None else Filters.for_root(root)
    stack = [root]  # folders still to list, the next one last (no recursion: a deep tree is fine)
    while stack:
        here = stack.pop()
        listing = _listing(str(here), onerror)
        if listing is None:
            continue
        dirs, files = listing
        folder = str(here)
        names = {e.name for e in dirs} | {e.name for e in files}
        may_exclude = filters.may_exclude_in(here, names)
        if listed is not None:
            present = [n for n in CONFIG_NAMES if n in names]
            listed[folder] = frozenset(present) if present else none
        kept: list[Path] = []
        for d in dirs:
            name = d.name
            if may_exclude:
                reason = filters.excluded(here / name, True)
            else:
                reason = "exclude" if name in filters.skip_names or name == ".git" else None
            if reason is None:
                if not _entry_is_symlink(d):  # symlinked folders are not followed
                    kept.append(here / name)
            elif name not in SKIP_DIRS and name != ".git":
                filters._count(reason)  # the default skip list is not worth counting
        for entry in files:
            name = entry.name
            path = os.path.join(folder, name)
            try:
                wanted = kinds.is_agent_file(path) or bool(kind_map and kinds.mapped_kind(path, kind_map))
            except (OSError, ValueError):
                continue
            if not wanted:
                continue
            f = here / name
            if may_exclude:
                reason = filters.excluded(f, False)
                if reason is not None:
                    filters._count(reason)
                    continue
            if _entry_is_symlink(entry):
                target = escape_target(f, root)
                if target is not None:
                    if outside is not None:
                        outside(f, target)
                    continue
                link = True
            else:
                link = False
            if _entry_is_regular(entry):
                yield f, link
        stack.extend(reversed(kept))


@dataclass
class Collected:
    """Files to scan as ``(display path, absolute path)`` in a stable order, one message per
    path that could not be used, ``ignored``: how many files or folders the filters left out of
    folder walks, by reason (``"gitignore"``, ``"exclude"``), and ``configs``: the configuration
    files whose exclude globs applied."""

    files: list[tuple[str, Path]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    ignored: dict[str, int] = field(default_factory=dict)
    configs: list[Path] = field(default_factory=list)
    outside: list[tuple[str, Path, Path]] = field(default_factory=list)
    """``(display path, absolute path, resolved target)`` of symlinks that leave the scanned root:
    never read, reported as ``UNV020`` findings."""
    listed: dict[str, frozenset[str]] = field(default_factory=dict)
    """Every folder the walks listed (absolute, normalised) → the project configuration file
    names (:data:`unveil.core.project.CONFIG_NAMES`) its listing showed: the configuration
    search (:class:`unveil.core.project.SearchMemo`) then needs no ``stat`` for these folders."""


def collect(
    paths: Sequence[str],
    cwd: Path | None = None,
    kind_map=None,
    filters: "Filters | Callable[[Path], Filters] | None" = None,
) -> Collected:
    """Expand command-line paths: files are taken as given (whatever their kind, and whatever
    the filters say: a file named explicitly is always scanned); folders are walked with
    :func:`walk` and ``filters`` (one :class:`Filters` for every folder, a function of the
    folder, or ``None``: :meth:`Filters.for_root` of each folder). Only regular files (or
    symlinks to them) are taken: one named on the command line that is not adds a "not a
    regular file" error, so nothing ever blocks opening it. A path that does not exist or a
    folder that cannot be listed adds an error message.

    Symlinks that leave the scanned root go to :attr:`Collected.outside` and are never read: for
    a walked folder the root is that folder; for a file named on the command line it is the
    working directory ``cwd`` (so ``unveil check CLAUDE.md`` in CI does not read
    ``CLAUDE.md -> /proc/self/environ``; name the target itself to scan it)."""
    cwd = (cwd or Path.cwd()).resolve()
    out = Collected()
    seen: set[str] = set()

    real_dirs: dict[str, str] = {}

    def real(p: str, link: bool | None = None, walked: str | None = None) -> str:
        """``os.path.realpath(p)`` of a normalised absolute path: a path that is not a symlink
        is its folder's real path (remembered per folder) joined with its name, so each folder
        costs one ``lstat`` rather than one per component. ``link``: whether ``p`` is a symlink,
        when a folder listing has said so (``None``: ask with ``lstat``). ``walked``: the root
        of the walk that found ``p``: a folder below it is no symlink (a walk does not enter
        one), so its real path is the root's with the rest appended, without an ``lstat``."""
        folder, name = os.path.split(p)
        if not name or (os.path.islink(p) if link is None else link):
            return os.path.realpath(p)
        if folder not in real_dirs:
            if walked is not None and folder.startswith(walked) and folder[len(walked) : len(walked) + 1] == os.sep:
                if walked not in real_dirs:
                    real_dirs[walked] = real(walked)
                real_dirs[folder] = real_dirs[walked] + folder[len(walked) :]
            else:
                real_dirs[folder] = real(folder)
        return os.path.join(real_dirs[folder], name)

    cwd_text = str(cwd)
    cwd_prefix = cwd_text.rstrip("/") + "/"

    def add(p: Path, link: bool | None = None, walked: str | None = None) -> None:
        p = p.absolute()
        s = os.path.normpath(p)
        key = real(s, link, walked)
        if key in seen:
            return
        seen.add(key)
        if os.sep == "/":  # what display_path gives (a lexical test), without its Path work
            shown = s[len(cwd_prefix) :] if s.startswith(cwd_prefix) else ("." if s == cwd_text else s)
        else:
            shown = display_path(p, cwd)
        out.files.append((shown, p))

    for raw in paths:
        p = Path(raw)
        if not p.is_absolute():
            p = cwd / p
        p = Path(os.path.normpath(p))
        if p.is_dir():

            def onerror(exc: OSError, p: Path = p) -> None:
                out.errors.append(
                    f"{display_path(Path(exc.filename or p), cwd)}: cannot list folder: {exc.strerror or exc}"
                )

            if isinstance(filters, Filters):
                f_ = filters
            elif filters is not None:
                f_ = filters(p)
            else:
                f_ = Filters.for_root(p, cwd=cwd)

            def escaped(f: Path, target: Path) -> None:
                out.outside.append((display_path(f.absolute(), cwd), f.absolute(), target))

            before = dict(f_.ignored)
            walked = os.path.normpath(p.absolute())
            for f, link in _walk(p, kind_map, onerror, f_, escaped, out.listed):
                add(f, link, walked)
            for reason, n in f_.ignored.items():
                out.ignored[reason] = out.ignored.get(reason, 0) + n - before.get(reason, 0)
            if f_.config is not None and f_.config not in out.configs:
                out.configs.append(f_.config)
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


# --------------------------------------------------------------------------- documentation

FULL_CATEGORIES = frozenset({"hidden-content", "secrets", "format", "imports", "internal", "obfuscation"})
"""Categories reported at full severity in documentation: what a reader does not see (hidden
content, encoded text), leaked secrets, and unveil's own format/import/internal findings. The
others are risky-directive phrases, mostly discussion in documentation, and token budgets
(``cost``), which do not apply: no host loads a README into every session."""

DISCUSSION_RULES = frozenset({"OBF005", "OBF008"})
"""Obfuscation rules whose match is readable prose ("decode and run", leetspeak keywords): in
documentation they are discussion like the other risky-directive phrases."""

LOWERED_NOTE = " (lowered: documentation, not an agent file)"


def is_documentation(analysis) -> bool:
    """Whether the analysed file is Markdown that is not an agent file (kind
    :data:`unveil.core.kinds.UNKNOWN`): a README, docs."""
    return getattr(analysis, "kind", None) == kinds.UNKNOWN


def is_discussion(finding) -> bool:
    """Whether ``finding`` is a risky-directive phrase in visible text or a token budget (see
    :data:`FULL_CATEGORIES`): not hidden (``data["region"] != "hidden"``) and not of a
    full-severity category."""
    if finding.rule in DISCUSSION_RULES:
        pass
    elif finding.category in FULL_CATEGORIES:
        return False
    return (finding.data or {}).get("region") != "hidden"


def documentation_policy(analysis, mode: str = "info"):
    """Apply setting ``documentation`` to one analysis, in place, and return it.

    For an agent file, or ``mode == "full"``, nothing changes. Otherwise, in documentation
    (:func:`is_documentation`) every :func:`is_discussion` finding more severe than info becomes
    info with :data:`LOWERED_NOTE` appended (``"info"``), or is dropped (``"hidden"``). Hidden
    content, secrets and the rest keep their severity; a directive in hidden text (a comment,
    ``display:none``) keeps its (raised) severity. ``analysis.extra["documentation"]`` records
    ``{"mode", "lowered", "dropped"}`` (counts) and the grade is recomputed."""
    if mode == "full" or not is_documentation(analysis):
        return analysis
    from unveil.core import grade as grading
    from unveil.core.findings import Severity

    kept, lowered, dropped = [], 0, 0
    for f in analysis.findings:
        if not is_discussion(f):
            kept.append(f)
        elif mode == "hidden":
            dropped += 1
        elif f.severity < Severity.INFO:
            kept.append(f.with_(severity=Severity.INFO, message=f.message + LOWERED_NOTE))
            lowered += 1
        else:
            kept.append(f)
    analysis.findings = kept
    analysis.extra["documentation"] = {"mode": mode, "lowered": lowered, "dropped": dropped}
    analysis.grade = grading.grade(kept)
    return analysis
