"""``@path`` imports of CLAUDE.md, CLAUDE.local.md and GEMINI.md, resolved recursively.

Facts (research note agent-formats.md §2.4, §2.8 and §3):

* Claude Code: ``@path`` relative to the importing file (absolute paths and ``~`` allowed),
  recursive up to **4 hops** (the docs said five until 2026-05-26), not recognised inside code
  spans or fenced/indented code blocks; imported files are loaded at launch with the file.
* Gemini CLI (CLAUDE.md compatibility mode, the default): ``@./file.md``, ``@../x``, ``@/abs``,
  any file type, imports in code ignored, maximum depth **5**, circular imports detected and
  skipped.

An import is ``@`` at the start of a line or after whitespace, followed by a path that looks
like one (it contains ``/`` or ``.``, so ``@alice`` and ``@here`` are not imports; e-mail
addresses never match because ``@`` follows a letter). Trailing sentence punctuation
(``.,;:!?)]}'"``) is not part of the path. A backslash escapes a space (``@my\\ file.md``).

Everything here is pure: files are read through a ``reader(path) -> str | None`` callable
(``None``: no such file or unreadable), so tests use dictionaries and the language server
serves open documents' unsaved text. Paths are plain strings, normalised with
:func:`posixpath.normpath` / :func:`os.path.normpath`; cycle detection compares normalised paths.

Counting: :func:`import_costs` gives each top-level import's tokens (the imported file and what
it imports in turn, each file once within that import) and the total added by all imports (each
file once per root, the root itself excluded). Token counts are ``o200k_base`` (see :mod:`unveil.core.tokens`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Callable, Iterable

Reader = Callable[[str], "str | None"]

#: Kind id → (host name, maximum import depth in hops).
IMPORT_HOSTS: dict[str, tuple[str, int]] = {
    "claude-md": ("Claude Code", 4),
    "gemini-md": ("Gemini CLI", 5),
}

MAX_FILE_BYTES = 4 * 1024 * 1024
"""Imported files larger than this are not read (Claude Code skips memory files over 4 MiB)."""

MAX_TOTAL_FILES = 500
"""Most distinct files one root's imports expand to; beyond it an import gets status ``"bound"``."""

MAX_TOTAL_CHARS = 10_000_000
"""Most code points of imported text one root's imports expand to (about 10 MB of ASCII)."""

_SENSITIVE = re.compile(
    r"(?i)(?:^|/)(?:\.ssh|\.aws|\.gnupg|\.kube|\.docker|\.netrc|\.env|\.npmrc|\.pypirc|"
    r"id_(?:rsa|dsa|ecdsa|ed25519)|shadow|passwd|credentials|environ)(?:$|[/.])|^/(?:etc|proc|sys|dev)/"
)


def project_root(path: str) -> str:
    """The project an importing file belongs to: the nearest folder at or above its folder that
    holds ``.git`` (a folder or a worktree file), else the file's own folder. Imports resolving
    (after symlinks) outside it are never read (status ``"outside"``)."""
    folder = os.path.dirname(os.path.abspath(path))
    cur = folder
    while True:
        if os.path.exists(os.path.join(cur, ".git")):
            return cur
        parent = os.path.dirname(cur)
        if parent == cur:
            return folder
        cur = parent


def inside(target: str, root: str) -> bool:
    """Whether ``target`` (symlinks resolved) lies in the folder ``root`` (resolved)."""
    try:
        t = os.path.realpath(target)
        r = os.path.realpath(root)
    except (OSError, ValueError):
        return False
    return t == r or t.startswith(r.rstrip(os.sep) + os.sep)


def sensitive(path: str) -> bool:
    """Whether ``path`` names a credential or system file (``~/.ssh/…``, ``/etc/shadow``,
    ``/proc/self/environ``, ``.env``, ``id_rsa``…)."""
    return bool(_SENSITIVE.search(path.replace("\\", "/")))


_CANDIDATE = re.compile(r"(?<!\S)@((?:\\ |[^\s\\])+)")
_TRAILING = ".,;:!?)]}'\"`*_>"
_TEXT_EXT = re.compile(r"\.(?:md|mdc|markdown|txt|json|ya?ml|toml|xml|rst|adoc|sh|py|js|ts|ini|cfg)$", re.I)


@dataclass(frozen=True)
class ImportRef:
    """One ``@path`` in a file's text: ``[start, end)`` code points covering ``@`` and the path,
    ``target`` the path as written (escapes removed), ``line`` 0-based."""

    start: int
    end: int
    target: str
    line: int

    @property
    def explicit(self) -> bool:
        """Whether the path is unmistakably a path: starts with ``./``, ``../``, ``/`` or ``~/``,
        or ends in a common text-file extension."""
        t = self.target
        return t.startswith(("./", "../", "/", "~/")) or bool(_TEXT_EXT.search(t))


@dataclass
class ImportNode:
    """A resolved import.

    * ``ref`` — where it is written (offsets into the *importing* file's text);
      ``importer`` — that file's path.
    * ``path`` — the normalised path it points to.
    * ``status`` — ``"ok"``; ``"missing"`` (no readable file); ``"cycle"`` (the path is already
      on the chain from the root: the host skips it); ``"too-deep"`` (beyond the host's depth:
      not loaded); ``"outside"`` (resolves outside the project: never read);
      ``"bound"`` (beyond :data:`MAX_TOTAL_FILES` / :data:`MAX_TOTAL_CHARS`: not read);
      ``"duplicate"`` (the same too-deep or cyclic import again in one file: reported once).
    * ``depth`` — hops from the root (a root's own import has depth 1).
    * ``text`` — the imported file's text when read (``status == "ok"``), else ``None``.
    * ``children`` — the imports found in ``text``.
    * ``repeat`` — the file was already expanded under another import of this root: the host
      loads it again, unveil reads, expands and analyses it once; this node has no children and
      its subtree is ``ImportTree.expanded[path]``.
    """

    ref: ImportRef
    importer: str
    path: str
    status: str
    depth: int
    text: str | None = None
    children: list["ImportNode"] = field(default_factory=list)
    repeat: bool = False

    def walk(self) -> Iterable["ImportNode"]:
        """This node and all nodes below it, depth first in document order."""
        yield self
        for c in self.children:
            yield from c.walk()


@dataclass
class ImportTree:
    """The imports of one root file: ``host`` and ``max_depth`` from :data:`IMPORT_HOSTS`;
    ``imports`` — the root's own imports (each with its subtree)."""

    root: str
    host: str
    max_depth: int
    imports: list[ImportNode] = field(default_factory=list)
    expanded: dict[str, ImportNode] = field(default_factory=dict)
    """Normalised path → the one node where that file was read and expanded."""
    project: str | None = None
    """The project folder (:func:`project_root`); imports outside it are not read."""
    bound_hit: str | None = None
    """Which bound stopped the expansion (``"500 files"`` / ``"10,000,000 characters"``), if any."""

    def nodes(self) -> Iterable[ImportNode]:
        for n in self.imports:
            yield from n.walk()

    def loaded_paths(self) -> list[str]:
        """Every file the host loads through imports (status ``ok``), each once, in load order."""
        out: list[str] = []
        for n in self.nodes():
            if n.status == "ok" and n.path not in out:
                out.append(n.path)
        return out


def find_imports(text: str, in_code: Callable[[int], bool] | None = None, skip_before: int = 0) -> list[ImportRef]:
    """The ``@path`` imports in ``text`` (see the module docstring), in order.

    ``in_code(offset)`` says whether a code-point offset lies in a code span or block (pass
    :meth:`unveil.core.markdown.MarkdownLayer.in_code`); ``None`` parses ``text`` with
    :mod:`unveil.core.markdown` to find out. Text before ``skip_before`` (the frontmatter) is
    ignored. Never raises for any text.
    """
    if in_code is None:
        from unveil.core import markdown
        from unveil.core.document import Document

        layer = markdown.parse(Document(text))
        in_code = layer.in_code
        skip_before = max(skip_before, layer.body_start)
    out: list[ImportRef] = []
    for m in _CANDIDATE.finditer(text, skip_before):
        raw = m.group(1)
        stripped = raw.rstrip(_TRAILING)
        # keep a closing bracket that closes an opening one inside the path
        if not stripped:
            continue
        target = stripped.replace("\\ ", " ")
        if "/" not in target and "." not in target.strip("."):
            continue
        if target.startswith("@") or "://" in target:
            continue
        start = m.start()
        if in_code(start):
            continue
        end = m.start(1) + len(stripped)
        line = text.count("\n", 0, start) + text.count("\r", 0, start) - text.count("\r\n", 0, start)
        out.append(ImportRef(start, end, target, line))
    return out


def resolve_path(target: str, importer: str, home: str | None = None) -> str:
    """Absolute normalised path of ``target`` imported by the file at ``importer``: ``~`` and
    ``~/x`` expand to ``home`` (default :func:`os.path.expanduser`), absolute paths stay, others
    are relative to the importer's folder. Uses ``posixpath`` when ``importer`` has no
    backslash, so results do not depend on the platform the tests run on."""
    import ntpath
    import posixpath

    pathmod = ntpath if ("\\" in importer and "/" not in importer.replace("\\", "")) else posixpath
    if target == "~" or target.startswith("~/"):
        base = home if home is not None else os.path.expanduser("~")
        return pathmod.normpath(pathmod.join(base, target[2:] if target.startswith("~/") else ""))
    if pathmod.isabs(target):
        return pathmod.normpath(target)
    return pathmod.normpath(pathmod.join(pathmod.dirname(importer), target))


def resolve(
    text: str,
    path: str,
    kind: str,
    reader: Reader,
    *,
    in_code: Callable[[int], bool] | None = None,
    skip_before: int = 0,
    home: str | None = None,
    max_depth: int | None = None,
    root_dir: str | None = None,
    max_files: int = MAX_TOTAL_FILES,
    max_chars: int = MAX_TOTAL_CHARS,
) -> ImportTree | None:
    """Resolve the imports of the file at ``path`` (text ``text``, file kind ``kind``).

    ``None`` when the kind has no imports (:data:`IMPORT_HOSTS`). Children of an imported file
    are followed while their depth is at most ``max_depth`` (default: the host's); an import
    one hop deeper is kept with status ``"too-deep"`` and not read. ``reader`` is called at most
    once per distinct path; its exceptions count as a missing file. Never raises otherwise.

    Hostile trees are bounded: each file is expanded once per root (later imports of it get
    status ``"repeat"``), an import resolving outside ``root_dir`` (default
    :func:`project_root` of ``path``; symlinks resolved) gets ``"outside"`` and is never read,
    and once ``max_files`` distinct files or ``max_chars`` code points were read, further
    imports get ``"bound"`` (``ImportTree.bound_hit`` says which bound).
    """
    host = IMPORT_HOSTS.get(kind)
    if host is None or not path:
        return None
    limit = host[1] if max_depth is None else max_depth
    cache: dict[str, str | None] = {}

    def read(p: str) -> str | None:
        if p not in cache:
            try:
                got = reader(p)
            except Exception:  # noqa: BLE001 - an unreadable file is a missing import
                got = None
            cache[p] = got if isinstance(got, str) else None
        return cache[p]

    root = norm_path(path)
    project = root_dir if root_dir is not None else project_root(path)
    tree = ImportTree(root=root, host=host[0], max_depth=limit, project=project)
    budget = {"files": 0, "chars": 0}

    def expand(importer: str, refs: list[ImportRef], depth: int, chain: tuple[str, ...]) -> list[ImportNode]:
        nodes = []
        problems_here: set[tuple[str, str]] = set()
        for ref in refs:
            target = resolve_path(ref.target, importer, home)
            if depth > limit or target in chain:
                # the same problem import repeated in one file is reported once (a fan-out of
                # twenty "@next.md" lines past the depth limit is one finding, not twenty)
                status = "too-deep" if depth > limit else "cycle"
                if (status, target) in problems_here:
                    nodes.append(ImportNode(ref, importer, target, "duplicate", depth))
                    continue
                problems_here.add((status, target))
            if depth > limit:
                nodes.append(ImportNode(ref, importer, target, "too-deep", depth))
                continue
            if target in chain:
                nodes.append(ImportNode(ref, importer, target, "cycle", depth))
                continue
            if target in tree.expanded:
                nodes.append(ImportNode(ref, importer, target, "ok", depth, tree.expanded[target].text, repeat=True))
                continue
            if project and not inside(target, project):
                nodes.append(ImportNode(ref, importer, target, "outside", depth))
                continue
            if budget["files"] >= max_files or budget["chars"] >= max_chars:
                tree.bound_hit = tree.bound_hit or (
                    f"{max_files:,} files" if budget["files"] >= max_files else f"{max_chars:,} characters"
                )
                nodes.append(ImportNode(ref, importer, target, "bound", depth))
                continue
            body = read(target)
            if body is None:
                nodes.append(ImportNode(ref, importer, target, "missing", depth))
                continue
            budget["files"] += 1
            budget["chars"] += len(body)
            node = ImportNode(ref, importer, target, "ok", depth, body)
            tree.expanded[target] = node
            try:
                child_refs = find_imports(body)
            except Exception:  # noqa: BLE001 - never raise on odd text
                child_refs = []
            node.children = expand(target, child_refs, depth + 1, chain + (target,))
            nodes.append(node)
        return nodes

    refs = find_imports(text, in_code, skip_before)
    tree.imports = expand(root, refs, 1, (root,))
    return tree


def norm_path(path: str) -> str:
    """``path`` normalised as the import tree names files (Windows-style when it uses only
    backslashes, POSIX otherwise): the key of :func:`disk_reader`'s overrides and of
    ``FileReport.deps`` comparisons."""
    import ntpath
    import posixpath

    if "\\" in path and "/" not in path.replace("\\", ""):
        return ntpath.normpath(path)
    return posixpath.normpath(path)


@dataclass(frozen=True)
class ImportCost:
    """Tokens one top-level import brings: ``tokens`` = the imported file plus the files it
    imports in turn (each file once within this import's subtree; a file that another import of
    the same root also loads is counted in both, but only once in the root's total).
    ``start``/``end``/``line`` locate the import in the root file."""

    start: int
    end: int
    line: int
    target: str
    path: str
    status: str
    tokens: int


def import_costs(tree: ImportTree | None, count: Callable[[str], int]) -> tuple[tuple[ImportCost, ...], int]:
    """Per top-level import, the :class:`ImportCost`; and the total tokens all imports add
    (every loaded file counted once, the root excluded). ``count`` counts tokens of a text."""
    if tree is None:
        return (), 0
    seen: set[str] = {tree.root}
    counts: dict[str, int] = {}
    costs = []
    total = 0
    for top in tree.imports:
        n_tokens = 0
        mine: set[str] = {tree.root}
        for node in _walk_expanded(tree, top):
            if node.status != "ok" or node.path in mine or node.text is None:
                continue
            mine.add(node.path)
            if node.path not in counts:
                counts[node.path] = count(node.text)
            n_tokens += counts[node.path]
            if node.path not in seen:
                seen.add(node.path)
                total += counts[node.path]
        costs.append(
            ImportCost(top.ref.start, top.ref.end, top.ref.line, top.ref.target, top.path, top.status, n_tokens)
        )
    return tuple(costs), total


def _walk_expanded(tree: ImportTree, top: ImportNode) -> Iterable[ImportNode]:
    """Every node ``top`` loads, following repeated nodes into the subtree where that file
    was expanded; each file's subtree at most once (linear in the number of files)."""
    done: set[str] = set()
    stack = [top]
    while stack:
        node = stack.pop()
        if node.repeat:
            node = tree.expanded.get(node.path, node)
        if node.status == "ok":
            if node.path in done:
                continue
            done.add(node.path)
        yield node
        stack.extend(reversed(node.children))


def loads_of(tree: ImportTree, top: ImportNode) -> list[ImportNode]:
    """The ``"ok"`` nodes (one per file) that the top-level import ``top`` loads, directly or
    through the files it imports, in load order."""
    return [n for n in _walk_expanded(tree, top) if n.status == "ok"]


def disk_reader(max_bytes: int = MAX_FILE_BYTES, overrides: dict[str, str] | None = None) -> Reader:
    """A reader for :func:`resolve` backed by the file system: ``overrides`` (normalised path →
    text, e.g. unsaved editor buffers) first, then regular files up to ``max_bytes`` decoded as
    UTF-8 (invalid bytes kept as U+DC80..U+DCFF). Folders, missing and unreadable files: ``None``."""
    over = {norm_path(k): v for k, v in (overrides or {}).items()}

    def read(path: str) -> str | None:
        if path in over:
            return over[path]
        from unveil.core import safe_read

        try:
            return safe_read.read_text(path, max_bytes)  # regular files only, FIFO-safe, bounded
        except OSError:
            return None

    return read


# --------------------------------------------------------------------------- findings

#: categories of an imported file's own findings that are not carried to the import line: they
#: judge the imported file as a file of its own kind (its frontmatter, its token budget, its
#: own imports, which the importing file's tree already covers)
NOT_CARRIED = frozenset({"format", "cost", "imports"})
MAX_RELATED = 20
"""Most related locations listed on one carried finding (the message gives the full count)."""


def import_findings(tree: ImportTree | None, analyse: Callable[[str, str], list]) -> list:
    """Findings on the root's top-level import lines for what its imports bring in (each top
    import is reported on its own ``@path`` span):

    * ``IMP010`` — an import resolving outside the project (:attr:`ImportTree.project`): never
      read; error when the path names a credential or system file (:func:`sensitive`), else warning;
    * ``IMP011`` — the expansion stopped at a bound (:data:`MAX_TOTAL_FILES` /
      :data:`MAX_TOTAL_CHARS`); the message names it and how many imports were not read;
    * every rule's findings inside the files the import loads (directly or through the files it
      imports; each file analysed once per root by ``analyse(path, text) -> [(Finding,
      Document)]``): one finding per rule and import line, at the most severe level found, with a
      ``related`` entry per location (at most :data:`MAX_RELATED`).
    """
    from unveil.core.findings import Finding, Severity

    if tree is None:
        return []
    cache: dict[str, list] = {}
    out = []
    for top in tree.imports:
        outside: list[ImportNode] = []
        bound: list[ImportNode] = []
        carried: dict[str, list] = {}
        for node in _walk_expanded(tree, top):
            if node.status == "outside":
                outside.append(node)
            elif node.status == "bound":
                bound.append(node)
            elif node.status == "ok" and node.text is not None:
                if node.path not in cache:
                    try:
                        cache[node.path] = list(analyse(node.path, node.text))
                    except Exception as exc:  # noqa: BLE001 - never lose the rest of the report
                        cache[node.path] = [
                            (
                                Finding(
                                    "UNV001",
                                    Severity.ERROR,
                                    0,
                                    0,
                                    f"analysis of the imported file failed ({type(exc).__name__}: {exc})",
                                    category="internal",
                                ),
                                None,
                            )
                        ]
                for f, doc in cache[node.path]:
                    if f.category in NOT_CARRIED:
                        continue
                    carried.setdefault(f.rule, []).append((node.path, f, doc))
        seen: set[str] = set()
        for node in outside:
            if node.path in seen:
                continue
            seen.add(node.path)
            sev = Severity.ERROR if sensitive(node.path) else Severity.WARNING
            via = "" if node is top else f" (imported by {node.importer})"
            msg = (
                f"Import @{node.ref.target} resolves to {node.path}, outside the project ({tree.project}){via}: "
                f"{tree.host} would load that file into the model's context; unveil did not read it"
            )
            out.append(
                Finding(
                    "IMP010",
                    sev,
                    top.ref.start,
                    top.ref.end,
                    msg,
                    category="imports",
                    data={"path": node.path, "status": "outside"},
                )
            )
        if bound:
            msg = (
                f"Import @{top.ref.target}: unveil stopped expanding imports at its bound of {tree.bound_hit}; "
                f"{len(bound):,} import(s) below this line were not read or scanned"
            )
            out.append(
                Finding(
                    "IMP011",
                    Severity.WARNING,
                    top.ref.start,
                    top.ref.end,
                    msg,
                    category="imports",
                    data={"bound": tree.bound_hit, "skipped": len(bound)},
                )
            )
        for rule, hits in carried.items():
            sev = min(f.severity for _, f, _ in hits)
            first_path, first, first_doc = hits[0]
            where = _where(first_path, first, first_doc, tree.project)
            more = f" (and {len(hits) - 1:,} more in imported files)" if len(hits) > 1 else ""
            msg = f"Import @{top.ref.target} loads {where}: {first.message}{more}"
            related = tuple(_related(p, f, d) for p, f, d in hits[:MAX_RELATED])
            out.append(
                Finding(
                    rule,
                    sev,
                    top.ref.start,
                    top.ref.end,
                    msg,
                    category=first.category,
                    related=related,
                    data={"imported": True, "count": len(hits)},
                )
            )
    return out


def _position(doc, offset: int) -> tuple[int, int]:
    if doc is None:
        return 0, 0
    p = doc.position(offset)
    return p.line, p.character


def _where(path: str, f, doc, project: str | None = None) -> str:
    line, _ = _position(doc, f.start)
    shown = path
    if project and inside(path, project):
        shown = os.path.relpath(path, project).replace(os.sep, "/")
    return f"{shown}:{line + 1}"


def _related(path: str, f, doc) -> tuple[str, int, int, int, int, str]:
    sl, sc = _position(doc, f.start)
    el, ec = _position(doc, f.end)
    return (path, sl, sc, el, ec, f.message)
