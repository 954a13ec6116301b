"""The workspace: every agent file under a folder, and what each costs.

:func:`find_agent_files` walks a folder for the files :func:`unveil.core.kinds.is_agent_file`
recognises (skipping version control, dependency and cache folders); :func:`file_entry` turns
one :class:`~unveil.core.analyze.Analysis` into a :class:`FileEntry`; :func:`summarize` builds the
:class:`WorkspaceSummary` (per file, per kind, totals), whose :meth:`WorkspaceSummary.to_dict`
is both the ``unveil/workspaceSummary`` LSP response and ``unveil cost FOLDER --format json``'s
``workspace`` object (shape in docs/workspace.md).

Token figures are ``o200k_base`` tokens; ``claude*`` figures are estimates (o200k × the Claude
ratio, see :func:`unveil.core.cost.claude_ratio`). Files of unknown kind (plain Markdown such as
README.md) are listed but not added to the totals: no agent loads them by themselves.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

from unveil.core.discovery import SKIP_DIRS, read_text  # noqa: F401 - one skip list and reader for CLI and server

MAX_FILES = 5_000
"""At most this many files are collected per root (a safety net for huge trees)."""


SEVERITIES = ("error", "warning", "info", "hint")
UNKNOWN_KIND = "markdown"


def find_agent_files(root: str | os.PathLike, *, limit: int = MAX_FILES) -> list[Path]:
    """Agent files under ``root`` (absolute paths, sorted walk order, symlinked folders not
    followed; at most ``limit`` files — a caller that gets exactly ``limit`` back must say that
    the rest was not scanned). No size cap: large files are analysed too. A missing or
    unreadable ``root`` gives ``[]``; unreadable subfolders are skipped. Never raises."""
    from unveil.core import discovery

    out: list[Path] = []
    try:
        base = Path(root).absolute()
        for p in discovery.walk(base):
            out.append(p)
            if len(out) >= limit:
                return out
    except Exception:  # noqa: BLE001 - a walk never crashes the caller
        return out
    return out


@dataclass
class FileEntry:
    """One file: ``path`` (shown, relative to the root with ``/``), ``uri`` (``file://`` URI of
    the absolute path), kind id and label, o200k ``session`` / ``invoke`` tokens (``None`` when
    not counted), ``claude_session`` / ``claude_invoke`` estimates, ``imported`` tokens (already
    in ``session``), ``grade`` and ``findings`` counts per severity name; ``counted`` is false
    for unknown-kind files (left out of the totals)."""

    path: str
    uri: str
    kind: str
    kind_label: str
    session: int | None
    invoke: int | None
    claude_session: int | None
    claude_invoke: int | None
    imported: int
    grade: str
    findings: dict[str, int]
    counted: bool = True

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "uri": self.uri,
            "kind": self.kind,
            "kindLabel": self.kind_label,
            "session": self.session,
            "invoke": self.invoke,
            "claudeSession": self.claude_session,
            "claudeInvoke": self.claude_invoke,
            "imported": self.imported,
            "grade": self.grade,
            "findings": dict(self.findings),
            "counted": self.counted,
        }


@dataclass
class KindTotal:
    """Totals for one kind: number of files, tokens, ≈ Claude tokens, findings per severity,
    worst grade."""

    kind: str
    kind_label: str
    files: int = 0
    session: int = 0
    invoke: int = 0
    claude_session: int = 0
    claude_invoke: int = 0
    findings: dict[str, int] = field(default_factory=lambda: {s: 0 for s in SEVERITIES})
    grade: str = "A"
    counted: bool = True

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "kindLabel": self.kind_label,
            "files": self.files,
            "session": self.session,
            "invoke": self.invoke,
            "claudeSession": self.claude_session,
            "claudeInvoke": self.claude_invoke,
            "findings": dict(self.findings),
            "grade": self.grade,
            "counted": self.counted,
        }


@dataclass
class WorkspaceSummary:
    """Per file (in path order), per kind (most session tokens first) and totals over counted
    files. ``budget`` is the ``workspaceSessionTokens`` budget (0: none) and ``over_budget``
    whether the total session tokens exceed it. ``complete`` is false while a scan is running."""

    root: str
    files: list[FileEntry]
    kinds: list[KindTotal]
    total: KindTotal
    budget: int = 0
    complete: bool = True

    @property
    def over_budget(self) -> bool:
        return bool(self.budget) and self.total.session > self.budget

    def to_dict(self) -> dict:
        total = self.total.to_dict()
        for key in ("kind", "kindLabel", "counted"):
            total.pop(key, None)
        return {
            "root": self.root,
            "complete": self.complete,
            "files": [f.to_dict() for f in self.files],
            "kinds": [k.to_dict() for k in self.kinds],
            "total": total,
            "budget": {"workspaceSessionTokens": self.budget, "over": self.over_budget},
        }


_GRADE_ORDER = "ABCDF"


def _worse(a: str, b: str) -> str:
    return a if _GRADE_ORDER.find(a) >= _GRADE_ORDER.find(b) else b


def file_entry(analysis, shown: str, uri: str = "") -> FileEntry:
    """The :class:`FileEntry` of an analysis (its ``tokens`` may be ``None``)."""
    from unveil.core import kinds
    from unveil.core.findings import Severity

    counts = {s: 0 for s in SEVERITIES}
    for f in analysis.findings:
        try:
            counts[Severity(int(f.severity)).label] += 1
        except (ValueError, KeyError):
            continue
    rep = analysis.tokens
    info = kinds.kind_info(analysis.kind)
    return FileEntry(
        path=shown,
        uri=uri,
        kind=analysis.kind,
        kind_label=info.label,
        session=rep.session if rep else None,
        invoke=rep.invoke if rep else None,
        claude_session=getattr(rep, "claude_session", None) if rep else None,
        claude_invoke=getattr(rep, "claude_invoke", None) if rep else None,
        imported=getattr(rep, "imported", 0) if rep else 0,
        grade=analysis.grade,
        findings=counts,
        counted=analysis.kind != UNKNOWN_KIND,
    )


def summarize(entries: Iterable[FileEntry], root: str = "", settings=None, complete: bool = True) -> WorkspaceSummary:
    """Group ``entries`` per kind and add up the counted ones (see :class:`WorkspaceSummary`)."""
    from unveil.core.checks.limits import budget

    files = sorted(entries, key=lambda e: e.path)
    per_kind: dict[str, KindTotal] = {}
    total = KindTotal("total", "Total")
    for e in files:
        k = per_kind.setdefault(e.kind, KindTotal(e.kind, e.kind_label, counted=e.counted))
        targets = [k, total] if e.counted else [k]
        for t in targets:
            t.files += 1
            t.session += e.session or 0
            t.invoke += e.invoke or 0
            t.claude_session += e.claude_session or 0
            t.claude_invoke += e.claude_invoke or 0
            for s, n in e.findings.items():
                t.findings[s] = t.findings.get(s, 0) + n
            t.grade = _worse(t.grade, e.grade)
    kinds_sorted = sorted(per_kind.values(), key=lambda k: (not k.counted, -k.session, k.kind))
    return WorkspaceSummary(
        root=root,
        files=files,
        kinds=kinds_sorted,
        total=total,
        budget=budget(settings, "workspaceSessionTokens"),
        complete=complete,
    )


def display_path(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` with ``/`` (absolute when outside it)."""
    try:
        return path.relative_to(root).as_posix() or path.name
    except ValueError:
        return path.as_posix()


def iter_analyses(
    root: str | os.PathLike, settings, *, reader: Callable | None = None, files: list[Path] | None = None
) -> Iterator[tuple[Path, object | None, str | None]]:
    """Analyse every agent file under ``root``: yields ``(path, analysis, error)`` — the
    analysis with its token report, or ``None`` and a message when the file could not be read."""
    from unveil.core.analyze import analyze

    for p in files if files is not None else find_agent_files(root):
        try:
            text = read_text(p)
        except OSError as exc:
            yield p, None, f"cannot read: {exc.strerror or exc}"
            continue
        yield p, analyze(text, str(p), settings, reader=reader), None


def scan(root: str | os.PathLike, settings=None) -> WorkspaceSummary:
    """Find, analyse and summarise every agent file under ``root`` (waits for the tokenizer).
    Unreadable files are left out. Never raises for file contents."""
    from unveil.core.config import DEFAULT_SETTINGS

    settings = settings or DEFAULT_SETTINGS
    base = Path(root).absolute()
    entries = []
    for p, analysis, _error in iter_analyses(base, settings):
        if analysis is not None:
            entries.append(file_entry(analysis, display_path(p, base), p.as_uri()))
    return summarize(entries, base.as_uri(), settings)


def format_table(summary: WorkspaceSummary) -> list[str]:
    """The summary as text lines: one row per file grouped by kind, a subtotal per kind and the
    total (``unveil cost FOLDER``). Columns: every session, once invoked, ≈ Claude every
    session, grade, findings as ``E/W/I``."""
    header = ("file", "every session", "once invoked", "≈ Claude/session", "grade", "err/warn/info")
    rows: list[tuple[str, ...]] = []

    def n(x) -> str:
        return "–" if x is None else f"{x:,}"

    def counts(f: dict) -> str:
        return f"{f.get('error', 0)}/{f.get('warning', 0)}/{f.get('info', 0)}"

    for k in summary.kinds:
        rows.append(
            (
                f"{k.kind_label} ({k.files} file{'s' if k.files != 1 else ''})"
                + ("" if k.counted else ", not in totals"),
                n(k.session),
                n(k.invoke),
                n(k.claude_session),
                k.grade,
                counts(k.findings),
            )
        )
        for e in summary.files:
            if e.kind == k.kind:
                rows.append(
                    ("  " + e.path, n(e.session), n(e.invoke), n(e.claude_session), e.grade, counts(e.findings))
                )
    t = summary.total
    rows.append(
        (
            f"Total ({t.files} agent file{'s' if t.files != 1 else ''})",
            n(t.session),
            n(t.invoke),
            n(t.claude_session),
            t.grade,
            counts(t.findings),
        )
    )
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = []
    for r in [header, *rows]:
        cells = [r[0].ljust(widths[0])] + [r[i].rjust(widths[i]) for i in range(1, len(header))]
        lines.append("  ".join(cells).rstrip())
    if summary.budget:
        state = "over" if summary.over_budget else "within"
        lines.append(
            f"Every-session tokens {t.session:,} are {state} the workspace budget of {summary.budget:,} "
            "(budgets.workspaceSessionTokens)."
        )
    lines.append("≈ Claude figures are estimates (o200k × the Claude token ratio); totals add every agent's files.")
    return lines
