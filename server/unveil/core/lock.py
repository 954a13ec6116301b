"""The review lock, ``unveil.lock``: what was reviewed, and what changed since.

Pure analysis over files and :mod:`unveil.core.git` (no LSP, no CLI). The CLI
(:mod:`unveil.commands_lock`) and the language server (:mod:`unveil.lsp.features.lock`) format
what this module computes. See docs/lock.md for the user's view.

File format (JSON, keys sorted, two-space indent, LF line ends, a final newline, no top-level
timestamp so branches that touch different entries merge cleanly)::

    {
      "files": {                          # one entry per agent file, key = path relative to the root
        "CLAUDE.md": {
          "kind": "claude-memory",
          "hash": "sha256:<64 hex>",      # content_hash() of the file's bytes
          "grade": "A",
          "tokens": {"session": 120, "invoke": 120},   # o200k tokens (null when not counted)
          "findings": {"v1:<32 hex>": {"rule": "HID002", "severity": "warning",
                                       "state": "reviewed" | "accepted", "reason": "…"}},
          "capabilities": {"urls": [...], "commands": [...], "imports": [...],
                           "tools": [...], "permissionMode": [...]},
          "review": {"reviewer": "Name <mail>", "date": "2026-11-30T10:00:00Z",
                     "commit": "<40 hex>" | null, "reason": "…"}
        }
      },
      "folders": {                        # one entry per skill folder (a folder holding SKILL.md)
        ".claude/skills/pdf": {"hash": "sha256:…", "files": {"SKILL.md": "sha256:…",
                               "scripts/run.sh": "sha256:…", "latest": "link:v2"}, "review": {…}}
      },
      "paths": ["."],                     # what `lock init` recorded (the scope verify walks)
      "rules": {"hash": "sha256:…", "unveil": "0.1.0"},
      "version": 1
    }

Hashes:

* :func:`content_hash` — SHA-256 of the UTF-8 text with line endings normalised (CRLF and lone
  CR → LF) and nothing else: no Unicode normalisation, no trimming, BOM kept, so tag characters,
  zero-width runs and padding change the hash. Bytes that are not valid UTF-8 are hashed raw.
* :func:`folder_hash` — SHA-256 of the sorted lines ``path NUL sha256-hex LF`` over every file of
  the folder (dotfiles and scripts included; paths relative to the folder, ``/``-separated, sorted
  by code point). A symlink is recorded as a link (``link:<target>``; its line hashes
  ``b"link\\0" + target``), never followed, so a loop cannot hang the walk.
* :func:`rules_version` — SHA-256 over the bundled rule files' bytes (``name NUL sha256 LF``,
  sorted) plus the unveil version, kept apart from the file hashes: "the file changed" and
  "unveil's rules changed" are told apart.

Errors: :class:`LockError` (a one-line message naming the problem: an unparsable lock, a path
outside the repository, a folder over :data:`MAX_FOLDER_FILES` files or :data:`MAX_FOLDER_BYTES`
bytes, a symlink loop). Writes are atomic (:func:`write_atomic`).
"""

from __future__ import annotations

import datetime as _dt
import difflib
import errno
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from unveil import __version__
from unveil.core import fingerprint as fp_mod

LOCK_NAME = "unveil.lock"
FORMAT_VERSION = 1
MAX_FOLDER_FILES = 5000
"""More files than this in one skill folder is refused (LockError), never silently cut."""
MAX_FOLDER_BYTES = 64 * 1024 * 1024
"""More bytes than this in one skill folder is refused (LockError)."""

SECURITY_EXEMPT_CATEGORIES = frozenset({"cost", "format"})
"""Categories whose error findings do not block ``lock init`` (budget and format problems)."""

CAPABILITY_KEYS = ("urls", "commands", "imports", "tools", "permissionMode")


class LockError(Exception):
    """A problem with the lock, its input or its paths; ``str(exc)`` names it in one line."""


# --------------------------------------------------------------------------- hashing

_CRLF = re.compile(rb"\r\n?")


def content_hash(data: bytes) -> str:
    """``"sha256:<hex>"`` of ``data`` as UTF-8 text with line endings normalised (see module
    docstring); raw bytes when ``data`` is not valid UTF-8."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "sha256:" + hashlib.sha256(data).hexdigest()
    return "sha256:" + hashlib.sha256(_CRLF.sub(b"\n", data)).hexdigest()


def text_hash(text: str) -> str:
    """:func:`content_hash` of a decoded text (an editor buffer or :func:`read_text`'s result;
    ``surrogateescape`` code points give back their original bytes). The fast path (text without
    lone surrogates, i.e. valid UTF-8) normalises line endings on the ``str`` and hashes once."""
    try:
        norm = text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text
        return "sha256:" + hashlib.sha256(norm.encode("utf-8")).hexdigest()
    except UnicodeEncodeError:
        return content_hash(text.encode("utf-8", "surrogateescape"))


def folder_listing(folder: Path) -> dict[str, str]:
    """``{relative path: "sha256:<hex>" | "link:<target>"}`` for every file under ``folder``
    (recursive, dotfiles included, symlinks not followed). Raises :class:`LockError` for a
    folder over the limits or one that cannot be read."""
    out: dict[str, str] = {}
    total = 0

    def onerror(exc: OSError) -> None:
        raise LockError(f"{exc.filename}: cannot list folder: {exc.strerror or exc}")

    for here, dirs, files in os.walk(folder, onerror=onerror, followlinks=False):
        base = Path(here)
        names = list(files)
        for d in list(dirs):
            if (base / d).is_symlink():
                names.append(d)  # a symlinked folder is a link entry, not walked
                dirs.remove(d)
        dirs.sort()
        for name in sorted(names):
            p = base / name
            rel = p.relative_to(folder).as_posix()
            if len(out) >= MAX_FOLDER_FILES:
                raise LockError(
                    f"{folder}: skill folder has more than {MAX_FOLDER_FILES:,} files; "
                    "not hashed (split it or remove generated files)"
                )
            try:
                if p.is_symlink():
                    out[rel] = "link:" + os.readlink(p)
                    continue
                if not p.is_file():
                    out[rel] = "special:" + ("fifo" if p.is_fifo() else "other")
                    continue
                size = p.stat().st_size
                total += size
                if total > MAX_FOLDER_BYTES:
                    raise LockError(
                        f"{folder}: skill folder holds more than {MAX_FOLDER_BYTES // (1024 * 1024)} MB; not hashed"
                    )
                out[rel] = content_hash(p.read_bytes())
            except OSError as exc:
                raise LockError(f"{p}: cannot read: {exc.strerror or exc}") from None
    return dict(sorted(out.items()))


def folder_hash(listing: Mapping[str, str]) -> str:
    """``"sha256:<hex>"`` over the sorted ``path NUL sha256-hex LF`` lines of a
    :func:`folder_listing` (a link's line carries SHA-256 of ``b"link\\0" + target``)."""
    h = hashlib.sha256()
    for rel in sorted(listing):
        value = listing[rel]
        if value.startswith("sha256:"):
            digest = value[7:]
        else:
            digest = hashlib.sha256(value.replace(":", "\0", 1).encode("utf-8", "surrogateescape")).hexdigest()
        h.update(rel.encode("utf-8", "surrogateescape") + b"\0" + digest.encode() + b"\n")
    return "sha256:" + h.hexdigest()


def rules_version() -> dict[str, str]:
    """``{"hash": "sha256:…", "unveil": version}``: the bundled rules' identity (module docstring)."""
    from unveil.core.rules import bundled_rules_dir

    h = hashlib.sha256()
    h.update(f"unveil {__version__}\n".encode())
    for p in sorted(bundled_rules_dir().glob("*.toml")):
        h.update(p.name.encode() + b"\0" + hashlib.sha256(p.read_bytes()).hexdigest().encode() + b"\n")
    return {"hash": "sha256:" + h.hexdigest(), "unveil": __version__}


# --------------------------------------------------------------------------- capabilities

_URL = re.compile(r"([A-Za-z]{2,5})://[^\s<>\"'`()\[\]{}]+")
_URL_SCHEMES = frozenset({"http", "https", "ftp", "ws", "wss", "file"})
_SHELL_LANGS = frozenset(
    {
        "bash",
        "sh",
        "shell",
        "zsh",
        "fish",
        "console",
        "shell-session",
        "sh-session",
        "terminal",
        "powershell",
        "ps1",
        "pwsh",
        "cmd",
        "bat",
    }
)
_SESSION_LANGS = frozenset({"console", "shell-session", "sh-session", "terminal"})
_BANG_CMD = re.compile(r"!`([^`\n]+)`")
_PROMPT = re.compile(r"^\s*(?:\$|#|>|PS>|%)\s+")


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, (list, tuple)):
        return [str(v).strip() for v in value if str(v).strip()]
    if isinstance(value, Mapping):
        return [str(k) for k in value]
    return [str(value)]


def capabilities(analysis) -> dict[str, list[str]]:
    """What a file lets or asks the agent do, each a sorted list of distinct strings:
    ``urls`` (every URL in the text, hidden or not), ``commands`` (lines of shell code fences —
    prompt marks stripped, comments and blank lines skipped — and ``!`cmd``` injections),
    (in ``console``-style session fences a ``# `` line is a root prompt, elsewhere a comment),
    ``imports`` (``@path`` imports as written), ``tools`` (frontmatter ``tools``,
    ``allowed-tools``, ``allowedTools``) and ``permissionMode`` (frontmatter ``permissionMode``)."""
    text = analysis.text
    urls = {m.group().rstrip(".,;:!?") for m in _URL.finditer(text) if m.group(1).lower() in _URL_SCHEMES}
    commands: set[str] = set()
    for fence in getattr(analysis.markdown, "fences", ()) or ():
        if fence.lang.lower() not in _SHELL_LANGS:
            continue
        lines = text[fence.start : fence.end].split("\n")[1:]
        if lines and lines[-1].strip().startswith(("```", "~~~")):
            lines = lines[:-1]
        session = fence.lang.lower() in _SESSION_LANGS  # `# cmd` is a root prompt there, a comment elsewhere
        for line in lines:
            s = line.strip()
            if not s or (s.startswith("#") and not session):
                continue
            s = _PROMPT.sub("", line).strip()
            if s:
                commands.add(s)
    commands.update(m.group(1).strip() for m in _BANG_CMD.finditer(text))
    tree = analysis.extra.get("imports")
    imports = sorted({n.ref.target for n in tree.imports}) if tree is not None else []
    fm = analysis.extra.get("frontmatter")
    mapping = getattr(fm, "mapping", None) if fm is not None else None
    mapping = mapping if isinstance(mapping, Mapping) else {}
    tools: set[str] = set()
    for key in ("tools", "allowed-tools", "allowedTools", "allowed_tools"):
        tools.update(_as_list(mapping.get(key)))
    modes = sorted(set(_as_list(mapping.get("permissionMode"))))
    return {
        "urls": sorted(urls),
        "commands": sorted(commands),
        "imports": imports,
        "tools": sorted(tools),
        "permissionMode": modes,
    }


# --------------------------------------------------------------------------- the model


def now_utc() -> str:
    """The current UTC time as ``YYYY-MM-DDTHH:MM:SSZ``."""
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def is_blocking(finding) -> bool:
    """Whether a finding blocks ``lock init``: error level and a security category."""
    return int(finding.severity) == 1 and finding.category not in SECURITY_EXEMPT_CATEGORIES


def file_entry(
    analysis, rel: str, review: Mapping[str, Any], accepted: Mapping[str, str] | None = None, data: bytes | None = None
) -> dict[str, Any]:
    """The lock entry of one analysed file. ``accepted`` maps fingerprints of accepted error
    findings to their reason; ``data`` (the file's bytes) is hashed when given, else the text."""
    accepted = accepted or {}
    findings = {}
    for fp, f in zip(fp_mod.analysis_fingerprints(analysis, rel), analysis.findings):
        item = {"rule": f.rule, "severity": f.severity.label, "state": "reviewed"}
        if fp in accepted:
            item["state"] = "accepted"
            item["reason"] = accepted[fp]
        findings[fp] = item
    tok = analysis.tokens
    return {
        "kind": analysis.kind,
        "hash": content_hash(data) if data is not None else text_hash(analysis.text),
        "grade": analysis.grade,
        "tokens": {"session": tok.session if tok else None, "invoke": tok.invoke if tok else None},
        "findings": findings,
        "capabilities": capabilities(analysis),
        "review": dict(review),
    }


@dataclass
class Lock:
    """A parsed ``unveil.lock`` (see the module docstring for the shape)."""

    files: dict[str, dict] = field(default_factory=dict)
    folders: dict[str, dict] = field(default_factory=dict)
    paths: list[str] = field(default_factory=lambda: ["."])
    rules: dict[str, str] = field(default_factory=dict)
    version: int = FORMAT_VERSION

    def dumps(self) -> str:
        """The lock's bytes as text: JSON, sorted keys, indent 2, LF, final newline, non-ASCII
        kept (``ensure_ascii=False``; lone surrogates from undecodable names escaped)."""
        data = {
            "files": self.files,
            "folders": self.folders,
            "paths": sorted(self.paths),
            "rules": self.rules,
            "version": self.version,
        }
        return json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"

    @classmethod
    def loads(cls, raw: bytes | str, where: str = LOCK_NAME) -> Lock:
        """Parse a lock. Raises :class:`LockError` naming ``where`` for invalid JSON or shape."""
        try:
            text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
            data = json.loads(text)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise LockError(f"{where}: not a valid lock file ({exc})") from None
        if not isinstance(data, dict):
            raise LockError(f"{where}: not a valid lock file (expected a JSON object)")
        version = data.get("version")
        if version != FORMAT_VERSION:
            raise LockError(f"{where}: unsupported lock version {version!r} (this unveil reads {FORMAT_VERSION})")
        files, folders = data.get("files", {}), data.get("folders", {})
        if not isinstance(files, dict) or not isinstance(folders, dict):
            raise LockError(f"{where}: not a valid lock file (`files` and `folders` must be objects)")
        for key, entry in files.items():
            if not isinstance(entry, dict) or not isinstance(entry.get("hash"), str):
                raise LockError(f"{where}: entry {key!r} has no content hash")
        for key, entry in folders.items():
            if not isinstance(entry, dict) or not isinstance(entry.get("hash"), str):
                raise LockError(f"{where}: folder entry {key!r} has no hash")
        for key in list(files) + list(folders):
            if key.startswith("/") or ".." in key.split("/") or "\\" in key:
                raise LockError(f"{where}: entry {key!r} is outside the repository")
        paths = data.get("paths", ["."])
        if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
            raise LockError(f"{where}: `paths` must be a list of strings")
        for p in paths:
            if p.startswith("/") or ".." in p.split("/"):
                raise LockError(f"{where}: path {p!r} is outside the repository")
        rules = data.get("rules", {})
        return cls(
            files=files, folders=folders, paths=paths, rules=rules if isinstance(rules, dict) else {}, version=version
        )


def read_lock(path: Path) -> Lock:
    """Read and parse the lock at ``path``. Raises :class:`LockError` (missing, unreadable,
    invalid)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise LockError(f"{path.name}: no lock file at {path} (run `unveil lock init`)") from None
    except OSError as exc:
        raise LockError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return Lock.loads(raw, path.name)


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8, as given, LF kept) to ``path`` through a temporary file in the same
    folder and ``os.replace``, so a reader never sees half a file and a failure leaves the old
    file in place. Raises :class:`LockError`."""
    path = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise LockError(f"{path}: cannot write: {exc.strerror or exc}") from None
    try:
        try:  # mkstemp creates 0600: keep the old file's mode, else the umask's default (0644 usually)
            mode = path.stat().st_mode & 0o7777
        except OSError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(text.encode("utf-8", "surrogateescape"))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise LockError(f"{path}: cannot write: {exc.strerror or exc}") from None


# --------------------------------------------------------------------------- scanning


def relative(root: Path, path: Path) -> str:
    """``path`` relative to ``root``, ``/``-separated. Raises :class:`LockError` when it lies
    outside ``root`` (after resolving ``..`` and symlinks) or is a symlink loop."""
    try:
        resolved = Path(os.path.abspath(path))
        real = resolved.parent.resolve(strict=False) / resolved.name
    except (OSError, RuntimeError) as exc:
        raise LockError(f"{path}: symlink loop or unreadable path ({exc})") from None
    root = root.resolve()
    try:
        rel = real.relative_to(root)
    except ValueError:
        raise LockError(f"{path}: outside the repository {root}") from None
    return rel.as_posix() or "."


def check_path(p: Path) -> None:
    """Raise :class:`LockError` for a symlink loop (``ELOOP``) at ``p``."""
    try:
        os.stat(p)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise LockError(f"{p}: symlink loop") from None


@dataclass
class Scanned:
    """One agent file as it is now: its relative path, bytes and analysis."""

    rel: str
    data: bytes
    analysis: Any


@dataclass
class Scan:
    """The agent files and skill folders under the lock's paths, as they are now."""

    files: dict[str, Scanned] = field(default_factory=dict)
    folders: dict[str, dict[str, str]] = field(default_factory=dict)  # rel folder → folder_listing
    errors: list[str] = field(default_factory=list)


def analyse_bytes(data: bytes, abspath: str, settings=None):
    """Analyse one file's bytes (strict UTF-8, else ``surrogateescape``) with token counts."""
    from unveil.core.analyze import analyze
    from unveil.core.config import DEFAULT_SETTINGS

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", "surrogateescape")
    return analyze(text, abspath, settings or DEFAULT_SETTINGS)


def scan(
    root: Path, paths: Sequence[str], settings=None, only: Iterable[str] | None = None, missing_ok: bool = False
) -> Scan:
    """Find and analyse the agent files under ``paths`` (relative to ``root``) with
    :func:`unveil.core.discovery.collect`, and list every skill folder (a folder holding a
    ``SKILL.md``) met. ``only`` restricts analysis to those relative paths (others are listed
    without analysis: ``analysis`` is ``None``); ``missing_ok`` skips ``paths`` that no longer
    exist. A symlinked agent file is read through its link only when the target is inside
    ``root``; one pointing outside is reported in ``errors`` and not read (a hostile repository's
    ``CLAUDE.md -> ~/.aws/credentials`` must not end up analysed into the lock). Raises
    :class:`LockError` for a path outside ``root`` or a symlink loop; unreadable files are
    reported in ``errors``."""
    from unveil.core.discovery import collect

    root = root.resolve()
    out = Scan()
    abs_paths = []
    for p in paths:
        ap = Path(p) if Path(p).is_absolute() else root / p
        check_path(ap)
        relative(root, ap)
        if missing_ok and not os.path.lexists(ap):
            continue  # a recorded scope that is gone: its entries are reported as removed
        abs_paths.append(str(ap))
    kind_map = getattr(settings, "kind_map", None) if settings is not None else None
    collected = collect(abs_paths, cwd=root, kind_map=kind_map)
    out.errors.extend(collected.errors)
    for shown, absolute, _target in collected.outside:  # discovery never reads these
        try:
            link = os.readlink(absolute)
        except OSError:
            link = str(_target)
        out.errors.append(f"{shown}: symlink to a file outside the repository ({link}); not read")
    only_set = set(only) if only is not None else None
    for _shown, absolute in collected.files:
        try:
            rel = relative(root, absolute)
        except LockError as exc:
            out.errors.append(str(exc))
            continue
        if rel == LOCK_NAME:
            continue
        if Path(absolute).is_symlink():
            try:
                Path(absolute).resolve(strict=True).relative_to(root)
            except (OSError, RuntimeError, ValueError):
                out.errors.append(
                    f"{rel}: symlink to a file outside the repository ({os.readlink(absolute)}); not read"
                )
                continue
        try:
            data = Path(absolute).read_bytes()
        except OSError as exc:
            out.errors.append(f"{rel}: cannot read: {exc.strerror or exc}")
            continue
        analysis = None
        if only_set is None or rel in only_set:
            analysis = analyse_bytes(data, str(absolute), settings)
        out.files[rel] = Scanned(rel, data, analysis)
        if Path(rel).name == "SKILL.md":
            folder = Path(rel).parent.as_posix()
            if folder != "." and folder not in out.folders:
                out.folders[folder] = folder_listing(root / folder)
    return out


# --------------------------------------------------------------------------- verify


@dataclass
class NewFinding:
    """A finding present now that the lock does not know."""

    fingerprint: str
    rule: str
    severity: str
    category: str
    line: int  # 1-based
    column: int  # 1-based, code points
    end_line: int
    end_column: int
    message: str
    hidden_text: str | None


@dataclass
class Delta:
    """What changed in one file since its lock entry."""

    path: str
    status: str  # "changed" | "new" | "removed" | "rules-changed"
    review: dict = field(default_factory=dict)
    added: list[NewFinding] = field(default_factory=list)
    removed: list[dict] = field(default_factory=list)  # {"fingerprint", "rule", "severity"}
    grade: tuple[str | None, str | None] = (None, None)
    tokens: tuple[dict | None, dict | None] = (None, None)
    capabilities_added: dict[str, list[str]] = field(default_factory=dict)
    capabilities_removed: dict[str, list[str]] = field(default_factory=dict)
    folder_changes: dict[str, list[str]] = field(default_factory=dict)  # added/removed/modified

    @property
    def failing(self) -> bool:
        return self.status in ("changed", "new", "removed")

    def hidden(self) -> list[NewFinding]:
        """New findings that carry decoded hidden text."""
        return [f for f in self.added if f.hidden_text is not None]

    def summary(self, rules=None) -> str:
        """One line: ``"Changed since review (2026-11-30, abc1234): +1 hidden html comment,
        +1 error EXF003, grade A→C, +312 tok/session"``."""
        if self.status == "new":
            return "Not in unveil.lock: this agent file has not been reviewed"
        if self.status == "removed":
            what = "skill folder" if self.path.endswith("/") else "file"
            return f"In unveil.lock but missing: the reviewed {what} was removed"
        date = (self.review.get("date") or "")[:10] or "unknown date"
        commit = (self.review.get("commit") or "")[:7] or "no commit"
        head = "Rules changed since review" if self.status == "rules-changed" else "Changed since review"
        parts = []
        counts: dict[str, int] = {}
        for f in self.added:
            if f.hidden_text is not None or f.category == "hidden-content":
                name = _rule_name(f.rule, rules).replace("-", " ")
                label = name if name.startswith("hidden") else f"hidden {name}"
            else:
                label = f"{f.severity} {f.rule}"
            counts[label] = counts.get(label, 0) + 1
        parts += [f"+{n} {label}" for label, n in counts.items()]
        if self.removed:
            parts.append(f"−{len(self.removed)} finding{'s' if len(self.removed) != 1 else ''}")
        old, new = self.grade
        if old and new and old != new:
            parts.append(f"grade {old}→{new}")
        t_old, t_new = self.tokens
        if t_old and t_new and t_old.get("session") is not None and t_new.get("session") is not None:
            d = t_new["session"] - t_old["session"]
            if d:
                parts.append(f"{d:+,} tok/session")
        for key in CAPABILITY_KEYS:
            added = self.capabilities_added.get(key) or []
            if added:
                parts.append(f"+{len(added)} {_CAP_LABEL[key]}")
        for key in ("added", "removed", "modified"):
            items = self.folder_changes.get(key) or []
            if items:
                parts.append(f"{len(items)} file{'s' if len(items) != 1 else ''} {key} in skill folder")
        if not parts:
            parts.append("content changed, no finding, grade or capability change")
        return f"{head} ({date}, {commit}): " + ", ".join(parts)

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "status": self.status,
            "review": self.review,
            "findings_added": [f.__dict__ for f in self.added],
            "findings_removed": self.removed,
            "grade": {"before": self.grade[0], "after": self.grade[1]},
            "tokens": {"before": self.tokens[0], "after": self.tokens[1]},
            "capabilities_added": self.capabilities_added,
            "capabilities_removed": self.capabilities_removed,
            "folder_changes": self.folder_changes,
        }


_CAP_LABEL = {
    "urls": "URL",
    "commands": "shell command",
    "imports": "import",
    "tools": "tool",
    "permissionMode": "permission mode",
}


def _rule_name(rule_id: str, rules=None) -> str:
    try:
        from unveil.core.rules import bundled_rules

        rule = (rules or bundled_rules()).get(rule_id)
    except Exception:  # noqa: BLE001
        rule = None
    return rule.name if rule is not None else rule_id


def new_findings(analysis, rel: str, known: Iterable[str], fps: Sequence[str] | None = None) -> list[NewFinding]:
    """Findings of ``analysis`` whose fingerprint is not in ``known`` (``fps``: the analysis'
    fingerprints when already computed)."""
    known = set(known)
    doc = analysis.doc
    out = []
    for fp, f in zip(fps if fps is not None else fp_mod.analysis_fingerprints(analysis, rel), analysis.findings):
        if fp in known:
            continue
        a, b = doc.position(f.start), doc.position(f.end)
        out.append(
            NewFinding(
                fp,
                f.rule,
                f.severity.label,
                f.category,
                a.line + 1,
                a.character + 1,
                b.line + 1,
                b.character + 1,
                f.message,
                f.hidden_text,
            )
        )
    return out


def file_delta(entry: Mapping[str, Any] | None, analysis, rel: str, status: str = "changed") -> Delta:
    """The :class:`Delta` between a lock entry and a file's current analysis."""
    if entry is None:
        return Delta(rel, "new", added=new_findings(analysis, rel, ()), grade=(None, analysis.grade))
    old_findings = entry.get("findings") or {}
    fps = fp_mod.analysis_fingerprints(analysis, rel)
    d = Delta(rel, status, review=dict(entry.get("review") or {}))
    d.added = new_findings(analysis, rel, old_findings, fps)
    now = set(fps)
    d.removed = [
        {"fingerprint": k, "rule": v.get("rule"), "severity": v.get("severity")}
        for k, v in sorted(old_findings.items())
        if k not in now
    ]
    d.grade = (entry.get("grade"), analysis.grade)
    tok = analysis.tokens
    d.tokens = (entry.get("tokens"), {"session": tok.session, "invoke": tok.invoke} if tok else None)
    old_caps = entry.get("capabilities") or {}
    caps = capabilities(analysis)
    for key in CAPABILITY_KEYS:
        before, after = set(old_caps.get(key) or ()), set(caps.get(key) or ())
        if after - before:
            d.capabilities_added[key] = sorted(after - before)
        if before - after:
            d.capabilities_removed[key] = sorted(before - after)
    return d


@dataclass
class VerifyReport:
    """The result of :func:`verify`: one :class:`Delta` per file or folder that is not as locked
    (``rules-changed`` ones do not fail), how many entries matched, and whether the rules changed."""

    deltas: list[Delta] = field(default_factory=list)
    ok: int = 0
    rules_changed: bool = False
    errors: list[str] = field(default_factory=list)

    @property
    def failing(self) -> bool:
        return any(d.failing for d in self.deltas)

    def to_dict(self) -> dict:
        return {
            "ok": self.ok,
            "failing": self.failing,
            "rules_changed": self.rules_changed,
            "changes": [d.to_dict() for d in self.deltas],
            "errors": self.errors,
        }


def verify(lock: Lock, root: Path, settings=None) -> VerifyReport:
    """Compare the files under ``lock.paths`` with ``lock``. Files whose hash matches are not
    analysed unless the rules changed (then their findings are compared and a difference is a
    non-failing ``rules-changed`` delta). Raises :class:`LockError` (see :func:`scan`)."""
    report = VerifyReport()
    report.rules_changed = bool(lock.rules) and lock.rules.get("hash") != rules_version()["hash"]
    listing = scan(root, lock.paths, settings, only=(), missing_ok=True)
    report.errors.extend(listing.errors)
    for rel, item in sorted(listing.files.items()):
        entry = lock.files.get(rel)
        same = entry is not None and content_hash(item.data) == entry.get("hash")
        if same and not report.rules_changed:
            report.ok += 1
            continue
        analysis = analyse_bytes(item.data, str(root / rel), settings)
        if entry is None:
            report.deltas.append(file_delta(None, analysis, rel))
        elif same:
            d = file_delta(entry, analysis, rel, status="rules-changed")
            if d.added or d.removed:
                report.deltas.append(d)
            else:
                report.ok += 1
        else:
            report.deltas.append(file_delta(entry, analysis, rel))
    for rel, entry in sorted(lock.files.items()):
        if rel not in listing.files:
            p = root / rel
            if p.is_file():  # outside the walked scope (or no longer an agent file): check directly
                data = p.read_bytes()
                if content_hash(data) == entry.get("hash"):
                    report.ok += 1
                else:
                    report.deltas.append(file_delta(entry, analyse_bytes(data, str(p), settings), rel))
            else:
                report.deltas.append(
                    Delta(
                        rel,
                        "removed",
                        review=dict(entry.get("review") or {}),
                        grade=(entry.get("grade"), None),
                        tokens=(entry.get("tokens"), None),
                    )
                )
    for rel, files in sorted(listing.folders.items()):
        entry = lock.folders.get(rel)
        if entry is None:
            report.deltas.append(Delta(rel + "/", "new", folder_changes={"added": sorted(files)}))
            continue
        if folder_hash(files) == entry.get("hash"):
            report.ok += 1
            continue
        old = entry.get("files") or {}
        changes = {
            "added": sorted(set(files) - set(old)),
            "removed": sorted(set(old) - set(files)),
            "modified": sorted(k for k in set(files) & set(old) if files[k] != old[k]),
        }
        report.deltas.append(
            Delta(
                rel + "/",
                "changed",
                review=dict(entry.get("review") or {}),
                folder_changes={k: v for k, v in changes.items() if v},
            )
        )
    for rel, entry in sorted(lock.folders.items()):
        if rel not in listing.folders:
            if (root / rel).is_dir():
                files = folder_listing(root / rel)
                if folder_hash(files) == entry.get("hash"):
                    report.ok += 1
                    continue
            report.deltas.append(Delta(rel + "/", "removed", review=dict(entry.get("review") or {})))
    return report


def folder_entry(listing: Mapping[str, str], review: Mapping[str, Any]) -> dict[str, Any]:
    """The lock entry of one skill folder."""
    return {"hash": folder_hash(listing), "files": dict(sorted(listing.items())), "review": dict(review)}


# --------------------------------------------------------------------------- history and diff


def reviewed_bytes(root: Path, rel: str, entry: Mapping[str, Any]) -> tuple[bytes, str]:
    """The bytes of ``rel`` as reviewed, from git: at the entry's review commit when they hash to
    the entry's hash, else the newest commit in ``rel``'s history whose blob does (a lock written
    before the file was first committed). Returns ``(bytes, commit id)``. Raises
    :class:`LockError` when git holds no such version, :class:`unveil.core.git.GitError` when git
    fails or is missing."""
    from unveil.core import git

    want = entry.get("hash")
    commit = (entry.get("review") or {}).get("commit")
    candidates = ([commit] if commit else []) + [c for c, _, _ in git.log_commits(root, rel)]
    for c in candidates:
        data = git.show(root, c, rel)
        if data is not None and content_hash(data) == want:
            return data, c
    raise LockError(
        f"{rel}: the reviewed version ({str(want)[:19]}…) is not in the git history (commit it, "
        "or approve the current text)"
    )


def ledger_append(path: Path, record: Mapping[str, Any]) -> dict:
    """Append ``record`` to the JSON-lines ledger at ``path`` (created with its folder), adding
    ``"prev"``: SHA-256 hex of the previous line's bytes (without its LF), or 64 zeros for the
    first line. Returns the record written. Raises :class:`LockError`."""
    prev = "0" * 64
    try:
        if path.exists():
            lines = path.read_bytes().split(b"\n")
            lines = [ln for ln in lines if ln]
            if lines:
                prev = hashlib.sha256(lines[-1]).hexdigest()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
        out = dict(record)
        out["prev"] = prev
        line = json.dumps(out, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        with open(path, "ab") as fh:
            fh.write(line.encode("utf-8", "surrogateescape") + b"\n")
        return out
    except OSError as exc:
        raise LockError(f"{path}: cannot write ledger: {exc.strerror or exc}") from None


def ledger_check(path: Path) -> tuple[int, int | None]:
    """``(lines, first broken line)`` of a ledger: the 1-based number of the first line whose
    ``prev`` is not the hash of the line before it (or that is not JSON), ``None`` when intact."""
    try:
        lines = [ln for ln in path.read_bytes().split(b"\n") if ln]
    except FileNotFoundError:
        return 0, None
    except OSError as exc:
        raise LockError(f"{path}: cannot read ledger: {exc.strerror or exc}") from None
    prev = "0" * 64
    for i, ln in enumerate(lines, 1):
        try:
            rec = json.loads(ln)
        except json.JSONDecodeError:
            return len(lines), i
        if not isinstance(rec, dict) or rec.get("prev") != prev:
            return len(lines), i
        prev = hashlib.sha256(ln).hexdigest()
    return len(lines), None


def reveal(text: str, hidden_spans: Sequence[tuple[int, int]] = ()) -> str:
    """``text`` as the model reads it, made visible: each hidden span (code-point ranges) is
    wrapped in ``⟦hidden:`` … ``⟧`` and every invisible code point (as
    :func:`unveil.core.fingerprint.escape_invisible` defines it, minus tab/LF/CR) is written as
    ``‹U+200B ZERO WIDTH SPACE›`` (its code point name from :func:`unveil.core.unicode_data.cp_label`)."""
    from unveil.core.unicode_data import cp_label

    marks: dict[int, list[str]] = {}
    for start, end in sorted(hidden_spans):
        if end <= start:
            continue
        marks.setdefault(start, []).append("⟦hidden: ")
        marks.setdefault(end, []).insert(0, "⟧")
    out: list[str] = []
    for i, ch in enumerate(text):
        if i in marks:
            out.extend(marks[i])
        if ch not in "\t\n\r" and fp_mod._INVISIBLE.match(ch):
            out.append(f"‹{cp_label(ch)}›")
        else:
            out.append(ch)
    if len(text) in marks:
        out.extend(marks[len(text)])
    return "".join(out)


def hidden_spans(analysis) -> list[tuple[int, int]]:
    """Code-point ranges of the findings that hide text (they carry ``hidden_text`` or belong to
    the ``hidden-content`` category)."""
    return sorted(
        {
            (f.start, f.end)
            for f in analysis.findings
            if f.end > f.start and (f.hidden_text is not None or f.category == "hidden-content")
        }
    )


def revealed_diff(
    old_text: str | None,
    old_analysis,
    new_text: str,
    new_analysis,
    path: str,
    old_label: str = "reviewed",
    new_label: str = "current",
) -> str:
    """A unified diff of :func:`reveal` of the old and new text (hidden spans marked, invisible
    characters named). ``old_text`` ``None`` diffs against nothing."""
    old = reveal(old_text, hidden_spans(old_analysis)) if old_text is not None else ""
    new = reveal(new_text, hidden_spans(new_analysis))
    lines = difflib.unified_diff(
        old.replace("\r\n", "\n").split("\n"),
        new.replace("\r\n", "\n").split("\n"),
        fromfile=f"a/{path} ({old_label})",
        tofile=f"b/{path} ({new_label})",
        lineterm="",
    )
    return "\n".join(lines) + "\n"
