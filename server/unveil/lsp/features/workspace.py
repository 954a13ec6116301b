"""The workspace in the language server: diagnostics for agent files that are not open, the
``unveil/workspaceSummary`` request, and re-analysis when files change on disk.

* On ``initialized`` (setting ``workspaceScan``, default true) the server walks each workspace
  folder for agent files (:func:`unveil.core.workspace.find_agent_files`) and publishes
  diagnostics for every file that is not open (without a version). Files are analysed one at a
  time: in a background process (:class:`BackgroundPool`) when the scan has 8 files or 128 KB
  and this process a second CPU, so typing never shares the interpreter with the scan; else in
  the analysis worker thread, so requests and open documents are served in between (a
  file's analysis pauses between two checks, two pattern rules or 64 sentences while an open
  document is being analysed, so a keystroke shares the interpreter with at most the rest of one
  rule's search; :func:`unveil.core.scope.checkpoint`); a report back from the background
  process is turned into diagnostics and published only once no open document's analysis is
  scheduled or running (that work would share the interpreter with the keystroke); the
  client sees ``$/progress`` (work done progress) when it supports ``window.workDoneProgress``.
  A file analysed before (by the server or ``unveil check``) and unchanged since, imports,
  settings, rules and unveil included, is published from the file cache
  (:func:`unveil.core.results.load_report`) without being analysed again.
* ``workspace/didChangeWatchedFiles`` is registered dynamically (``**/*.md``, ``**/*.mdc``,
  ``.cursorrules``, ``.windsurfrules``, ``.clinerules`` …) when the client allows it. A created
  or changed agent file that is not open is re-analysed and re-published; a deleted one gets
  empty diagnostics. Files that ``@import`` a changed file (open or not) are re-analysed too, and
  so are they when an open document they import is edited.
* Closing a document publishes its on-disk diagnostics again instead of clearing them when the
  file belongs to the scanned workspace.
* ``unveil/workspaceSummary`` (params: optional ``{"refresh": bool}``) returns
  :meth:`unveil.core.workspace.WorkspaceSummary.to_dict`, open documents counted with their
  unsaved text; see docs/workspace.md.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from unveil.core import kinds
from unveil.core import workspace as ws_core

log = logging.getLogger(__name__)

SUMMARY_METHOD = "unveil/workspaceSummary"
SCAN_START_DELAY_S = 0.5
"""Seconds between ``initialized`` and the start of the workspace scan."""
OPEN_FIRST_POLL_S = 0.05
"""While an open document waits for analysis, the scan checks again after this many seconds."""
PAUSE_POLL_S = 0.005
"""A file's background analysis, paused between two checks while an open document is analysed,
looks again after this many seconds (the worker sleeps: it does not hold the interpreter)."""
PAUSE_MAX_S = 5.0
"""Longest pause at one check boundary; then the background analysis goes on regardless."""

WATCH_GLOBS = (
    "**/*.md",
    "**/*.mdc",
    "**/*.markdown",
    "**/.cursorrules",
    "**/.windsurfrules",
    "**/.clinerules",
    "**/.clinerules/**",
    "**/.roorules*",
    "**/.roo/**",
    "**/.clinerules-*",
)


def _path_of(uri: str) -> str | None:
    try:
        return to_fs_path(uri)
    except Exception:  # noqa: BLE001
        return None


def _total_size(files: list[Path]) -> int:
    """Bytes of ``files`` in all (a file that cannot be ``stat``-ed counts 0)."""
    total = 0
    for f in files:
        try:
            total += f.stat().st_size
        except OSError:
            pass
    return total


class BackgroundPool:
    """One background process (``multiprocessing`` ``spawn``: a new interpreter, nothing of this
    process's threads inherited) for the workspace scan's analyses: they run on another CPU, and
    the interpreter lock that an open document's analysis needs is never theirs. The process is
    started on the first file, lowers its own scheduling priority
    (:func:`unveil.core.results.background_init`), writes each report to the file cache as
    ``unveil check`` does and sends it back; it ends with the scan (:meth:`close`).

    Any failure (no ``spawn``, a process that dies, a report that does not come back) is logged
    once and makes the pool unusable (:attr:`usable`): the scan goes on in the server's worker
    thread, losing no file."""

    MIN_FILES = 8
    MIN_BYTES = 128_000
    """A scan of fewer files than :data:`MIN_FILES` holding fewer bytes than this is analysed in
    the server: starting the process (about 0.4 s of CPU on the other core) would cost more than
    sharing the interpreter for so little (about 30 ms a small file, 0.3 s per 100 KB)."""

    def __init__(self) -> None:
        self.usable = True
        self._executor = None

    @classmethod
    def worth_it(cls, n_files: int, n_bytes: int = 0) -> bool:
        """Whether a scan of ``n_files`` files of ``n_bytes`` bytes in all gets a pool: at least
        :data:`MIN_FILES` files or :data:`MIN_BYTES` bytes, a second CPU for this process, and
        ``UNVEIL_SCAN_IN_PROCESS`` unset. (The process starts only for a file the result cache
        does not answer.)"""
        if os.environ.get("UNVEIL_SCAN_IN_PROCESS", "") not in ("", "0"):
            return False
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        return (n_files >= cls.MIN_FILES or n_bytes >= cls.MIN_BYTES) and cpus >= 2

    async def analyse(self, path: str, data: bytes, settings, key: str, open_texts: dict[str, str]):
        """:func:`unveil.core.results.analyse_file` in the background process; the report, or
        ``None`` when the pool failed (then :attr:`usable` is false)."""
        from unveil.core import results as res

        if not self.usable:
            return None
        try:
            if self._executor is None:
                import multiprocessing
                from concurrent.futures import ProcessPoolExecutor

                self._executor = ProcessPoolExecutor(
                    1, mp_context=multiprocessing.get_context("spawn"), initializer=res.background_init
                )
            fut = self._executor.submit(res.analyse_file, path, data, settings, key, open_texts)
            return await asyncio.wrap_future(fut)
        except Exception as exc:  # noqa: BLE001 - BrokenProcessPool, pickling, spawn refused …
            log.warning(
                "background analysis unavailable (%s: %s); the scan goes on in the server", type(exc).__name__, exc
            )
            self.usable = False
            self.close()
            return None

    def close(self, terminate: bool = False) -> None:
        """End the background process once its current file is done, or at once with
        ``terminate`` (the server is exiting: a large file's analysis must not hold the exit).
        Idempotent."""
        ex, self._executor = self._executor, None
        if ex is None:
            return
        processes = list((getattr(ex, "_processes", None) or {}).values()) if terminate else []
        ex.shutdown(wait=False, cancel_futures=True)
        for proc in processes:
            try:
                proc.terminate()
            except Exception:  # noqa: BLE001 - already gone
                pass


class WorkspaceIndex:
    """Analyses of the workspace's agent files that are not open, and who imports what."""

    def __init__(self, server) -> None:
        self.server = server
        self.entries: dict[str, Any] = {}  # uri → FileEntry (on-disk analysis)
        self.importers: dict[str, set[str]] = {}  # imported path → uris of the files importing it
        self.scanned = False
        self.scanning = False
        self._task: asyncio.Task | None = None
        self._roots: list[Path] = []
        # Files on disk are analysed in their own thread, one at a time, and only while no open
        # document waits for analysis: what the user is editing always comes first.
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="unveil-workspace")
        self._settings_keys: dict[int, tuple[Any, str]] = {}  # id(settings) → (settings, its file-key part)
        self._pool: BackgroundPool | None = None  # the running scan's background process

    def close(self) -> None:
        """The server is exiting: end the scan's background process at once."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.close(terminate=True)

    # -- roots ----------------------------------------------------------------------------
    def roots(self) -> list[Path]:
        ws = self.server.workspace
        out: list[Path] = []
        try:
            folders = list(getattr(ws, "folders", {}).values())
        except Exception:  # noqa: BLE001
            folders = []
        for f in folders:
            p = _path_of(f.uri)
            if p:
                out.append(Path(p))
        if not out:
            root = getattr(ws, "root_path", None)
            if root:
                out.append(Path(root))
        return [p for p in out if p.is_dir()]

    def _escape(self, path: Path):
        """The resolved target of ``path`` when it is a symlink leaving every workspace root."""
        from unveil.core.discovery import escape_target

        if not os.path.islink(path):
            return None
        roots = self._roots or self.roots()
        targets = [escape_target(path, r) for r in roots] if roots else [escape_target(path, path.parent)]
        return targets[0] if targets and all(t is not None for t in targets) else None

    def _find(self, root: Path) -> list[Path]:
        """:func:`unveil.core.workspace.find_agent_files`, plus the agent-file symlinks that leave
        ``root`` (never read; analysed by :meth:`_analyse_disk` as ``UNV020`` findings)."""
        from unveil.core import discovery

        out: list[Path] = []
        try:
            for p in discovery.walk(Path(root).absolute(), outside=lambda f, t: out.append(f)):
                out.append(p)
                if len(out) >= ws_core.MAX_FILES:
                    break
        except Exception:  # noqa: BLE001 - a walk never crashes the scan
            pass
        return out

    def _shown(self, path: Path) -> str:
        for r in self._roots or self.roots():
            try:
                return path.relative_to(r).as_posix()
            except ValueError:
                continue
        return path.as_posix()

    # -- imports map ------------------------------------------------------------------------
    def record_imports(self, uri: str, analysis) -> None:
        """Remember which files ``analysis`` read through ``@imports``: its import tree (an
        :class:`~unveil.core.analyze.Analysis`), or the files a
        :class:`~unveil.core.results.FileReport` depends on (``deps``: the same files)."""
        for users in self.importers.values():
            users.discard(uri)
        if analysis is None:
            return
        tree = analysis.extra.get("imports")
        paths = (
            [node.path for node in tree.nodes()] if tree is not None else [p for p, _ in getattr(analysis, "deps", ())]
        )
        for p in paths:
            self.importers.setdefault(os.path.normpath(p), set()).add(uri)

    def importers_of(self, path: str | None) -> set[str]:
        if not path:
            return set()
        return set(self.importers.get(os.path.normpath(path), ()))

    # -- analysis of files on disk --------------------------------------------------------
    def _analyse_disk(self, path: Path, settings, encoding: str, open_texts: dict[str, str], cancelled=None):
        """Worker thread: ``(report, diagnostics)`` of the file on disk, or ``None`` when it
        cannot be read. The report (:class:`~unveil.core.results.FileReport`) comes from the
        file cache that ``unveil check`` fills and reads (:meth:`_lookup_disk`) unless the file,
        the files it ``@imports``, the settings, the rules or unveil changed, or one of its
        imports is open with unsaved text; else it is analysed here
        (:func:`unveil.core.results.analyse_file`; stored unless an unsaved text was read).
        ``cancelled()`` is asked between checks and at every checkpoint inside them (between
        pattern rules, between sentences: :func:`unveil.core.scope.checkpoint`), where it may
        wait (:meth:`refresh_file` waits there while an open document is analysed)."""
        from unveil.core import results as res

        step = self._lookup_disk(path, settings, open_texts)
        if step is None or step[0] == "done":
            return step[1] if step is not None else None
        _, data, key = step
        report = res.analyse_file(str(path), data, settings, key, open_texts, cancelled=cancelled, pause=cancelled)
        return self._finish_disk(report, settings, encoding)

    def _lookup_disk(self, path: Path, settings, open_texts: dict[str, str], encoding: str = "utf-16"):
        """The part of :meth:`_analyse_disk` that analyses nothing: ``("done", (report,
        diagnostics))`` for a symlink out of the workspace (``UNV020``, never read) or a report
        the file cache holds (:func:`unveil.core.results.load_report`), ``("analyse", bytes,
        cache key)`` for a file to analyse, ``None`` when it cannot be read."""
        from unveil.core import cache, safe_read
        from unveil.core import results as res
        from unveil.lsp.features.diagnostics import to_diagnostics

        target = self._escape(path)
        if target is not None:  # a symlink out of the workspace: never read (UNV020)
            from unveil.core.analyze import refused

            analysis = refused(str(path), str(target), settings)
            return "done", (analysis, to_diagnostics(analysis, None, encoding))
        try:
            data = safe_read.read_bytes(path)  # regular files only, never blocks on a FIFO
        except OSError:
            return None
        key = res.file_key(str(path), data, self._settings_key(settings)) if cache.enabled() else ""
        report = res.load_report(key, data, open_texts)
        if report is None:
            return "analyse", data, key
        return "done", self._finish_disk(report, settings, encoding)

    @staticmethod
    def _finish_disk(report, settings, encoding: str):
        """``(report, diagnostics)``: ``report`` with ``settings`` attached and the folder-scan
        documentation policy applied (as in ``unveil check``)."""
        from unveil.core.discovery import documentation_policy
        from unveil.lsp.features.diagnostics import to_diagnostics

        report.settings = settings
        documentation_policy(report, getattr(settings, "documentation", "info"))
        return report, to_diagnostics(report, None, encoding)

    def _settings_key(self, settings) -> str:
        """:func:`unveil.core.results.settings_key` of ``settings``, once per settings object."""
        from unveil.core import results as res

        got = self._settings_keys.get(id(settings))
        if got is None or got[0] is not settings:
            if len(self._settings_keys) > 64:
                self._settings_keys.clear()
            got = self._settings_keys[id(settings)] = (settings, res.settings_key(settings))
        return got[1]

    async def refresh_file(self, path: Path, pool=None) -> None:
        """Analyse ``path`` from disk and publish, unless it is open (the open flow owns it).
        ``pool``: the scan's :class:`BackgroundPool`; a file the cache does not answer is then
        analysed in its process (not in this one's interpreter), else in the worker thread."""
        uri = from_fs_path(str(path))
        if uri is None or self.server.open_document(uri) is not None:
            return
        loop = asyncio.get_running_loop()
        scheduler = self.server.scheduler

        def pause_for_open() -> bool:  # worker thread, at checkpoints: an open document goes first
            until = time.monotonic() + PAUSE_MAX_S  # bounded: a loop that stopped never blocks exit
            while time.monotonic() < until:
                try:
                    if not scheduler.any_busy():
                        break
                except RuntimeError:  # the task table changed size while read: look again
                    pass
                time.sleep(PAUSE_POLL_S)
            return False  # never cancel: the work done so far is kept

        while scheduler.any_busy():
            await asyncio.sleep(OPEN_FIRST_POLL_S)
        settings, encoding, open_texts = (
            self.server.settings_for(str(path)),
            self.server.encoding,
            self.server.open_texts(),
        )
        got = None
        if pool is not None and pool.usable:
            step = await loop.run_in_executor(self.executor, self._lookup_disk, path, settings, open_texts, encoding)
            if step is None or step[0] == "done":
                got = step[1] if step is not None else None
            else:
                report = await pool.analyse(str(path), step[1], settings, step[2], open_texts)
                while scheduler.any_busy():  # the report's diagnostics wait for the open document's
                    await asyncio.sleep(OPEN_FIRST_POLL_S)
                if report is not None:
                    got = await loop.run_in_executor(self.executor, self._finish_disk, report, settings, encoding)
                else:  # the pool failed (logged): this file in the worker thread, as without one
                    pool = None
        if pool is None or not pool.usable:
            if got is None:
                got = await loop.run_in_executor(
                    self.executor, self._analyse_disk, path, settings, encoding, open_texts, pause_for_open
                )
        if self.server.open_document(uri) is not None:
            return  # opened meanwhile
        if got is None:
            self.forget(uri)
            return
        analysis, diags = got
        self.entries[uri] = ws_core.file_entry(analysis, self._shown(path), uri)
        self.record_imports(uri, analysis)
        self.server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=diags))

    def forget(self, uri: str) -> None:
        if self.entries.pop(uri, None) is not None and self.server.open_document(uri) is None:
            self.server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        for users in self.importers.values():
            users.discard(uri)

    # -- the scan -------------------------------------------------------------------------
    def _supports_progress(self) -> bool:
        window = getattr(self.server._caps(), "window", None)
        return bool(getattr(window, "work_done_progress", False))

    async def scan(self) -> None:
        """Find and analyse every agent file of the workspace folders (see the module docstring)."""
        if self.scanning:
            return
        self.scanning = True
        token = None
        try:
            loop = asyncio.get_running_loop()
            self._roots = self.roots()
            files: list[Path] = []
            for r in self._roots:
                found = await loop.run_in_executor(None, self._find, r)
                files.extend(found)
                if len(found) >= ws_core.MAX_FILES:
                    # never miss silently: say what the background scan left out
                    msg = (
                        f"unveil: {r} has more than {ws_core.MAX_FILES:,} agent files; only the first "
                        f"{ws_core.MAX_FILES:,} were scanned in the background. Open a file to scan it."
                    )
                    log.warning(msg)
                    self.server.window_show_message(
                        types.ShowMessageParams(type=types.MessageType.Warning, message=msg)
                    )
            if self._supports_progress():
                token = f"unveil-scan-{uuid.uuid4()}"
                try:
                    await self.server.work_done_progress.create_async(token)
                    self.server.work_done_progress.begin(
                        token,
                        types.WorkDoneProgressBegin(
                            title="unveil: scanning agent files",
                            percentage=0,
                            message=f"0/{len(files)}",
                            cancellable=False,
                        ),
                    )
                except Exception as exc:  # noqa: BLE001 - progress is optional
                    log.info("work done progress unavailable: %s", exc)
                    token = None
            step = max(1, len(files) // 20)
            n_bytes = await loop.run_in_executor(None, _total_size, files)
            pool = self._pool = BackgroundPool() if BackgroundPool.worth_it(len(files), n_bytes) else None
            try:
                for i, path in enumerate(files, 1):
                    try:
                        await self.refresh_file(path, pool)
                    except Exception:  # noqa: BLE001
                        log.exception("workspace analysis of %s failed", path)
                    if token is not None and (i % step == 0 or i == len(files)):
                        self.server.work_done_progress.report(
                            token,
                            types.WorkDoneProgressReport(
                                message=f"{i}/{len(files)}", percentage=int(i * 100 / max(1, len(files)))
                            ),
                        )
            finally:
                if pool is not None:
                    pool.close(terminate=True)  # idle after the last file; busy if the scan was cancelled (exit)
                self._pool = None
            self.scanned = True
            trimmer = getattr(self.server, "trimmer", None)
            if trimmer is not None:
                trimmer.soon()  # what the scan's analyses freed goes back to the system
        finally:
            self.scanning = False
            if token is not None:
                try:
                    self.server.work_done_progress.end(token, types.WorkDoneProgressEnd(message="done"))
                except Exception:  # noqa: BLE001
                    pass

    # -- listener events (see UnveilServer._notify) ----------------------------------------
    def on_initialized(self) -> None:
        loop = asyncio.get_running_loop()
        loop.create_task(self._register_watchers())
        if self.server.settings.workspace_scan:
            self._task = loop.create_task(self._scan_later())

    async def _scan_later(self) -> None:
        """Start the scan a moment after ``initialized``: editors open the current file right
        away, and its diagnostics should not wait behind the first files on disk."""
        await asyncio.sleep(SCAN_START_DELAY_S)
        await self.scan()

    def on_analysed(self, uri: str, analysis) -> None:
        self.record_imports(uri, analysis)

    def on_change(self, uri: str) -> None:
        for other in self.importers_of(_path_of(uri)) - {uri}:
            self._refresh_uri(other)

    def on_close(self, uri: str) -> bool:
        if uri not in self.entries and not self.scanned:
            return False
        path = _path_of(uri)
        if not path or not kinds.is_agent_file(path) or not os.path.isfile(path) or uri not in self.entries:
            return False
        asyncio.get_running_loop().create_task(self.refresh_file(Path(path)))
        return True

    def _refresh_uri(self, uri: str) -> None:
        if self.server.open_document(uri) is not None:
            self.server.reanalyse(uri)
            return
        path = _path_of(uri)
        if path:
            asyncio.get_running_loop().create_task(self.refresh_file(Path(path)))

    async def on_watched(self, params: types.DidChangeWatchedFilesParams) -> None:
        for change in params.changes:
            path = _path_of(change.uri)
            if not path:
                continue
            uri = from_fs_path(path) or change.uri
            if change.type == types.FileChangeType.Deleted:
                self.forget(uri)
            elif kinds.is_agent_file(path) and (self.scanned or uri in self.entries) and self._inside(path):
                await self.refresh_file(Path(path))
            for other in self.importers_of(path) - {uri}:
                self._refresh_uri(other)

    def _inside(self, path: str) -> bool:
        p = Path(path)
        roots = self._roots or self.roots()
        return any(r == p or r in p.parents for r in roots) and not any(part in ws_core.SKIP_DIRS for part in p.parts)

    async def _register_watchers(self) -> None:
        caps = getattr(self.server._caps(), "workspace", None)
        dcw = getattr(caps, "did_change_watched_files", None)
        if not getattr(dcw, "dynamic_registration", False):
            return
        try:
            await self.server.client_register_capability_async(
                types.RegistrationParams(
                    registrations=[
                        types.Registration(
                            id=f"unveil-watch-{uuid.uuid4()}",
                            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                            register_options=types.DidChangeWatchedFilesRegistrationOptions(
                                watchers=[types.FileSystemWatcher(glob_pattern=g) for g in WATCH_GLOBS]
                            ),
                        )
                    ]
                )
            )
        except Exception as exc:  # noqa: BLE001
            log.info("could not register file watchers: %s", exc)

    # -- the summary ----------------------------------------------------------------------
    async def summary(self, refresh: bool = False) -> dict:
        """The workspace summary (scans first if no scan ran yet or ``refresh``)."""
        if (refresh or not self.scanned) and not self.scanning:
            await self.scan()
        entries = dict(self.entries)
        for uri in [d.uri for d in list(self.server.workspace.text_documents.values())]:  # the client's URIs
            got = await self.server.get_analysis(uri, with_tokens=True)
            if got is None:
                continue
            analysis = got[0]
            if analysis.tokens is None:
                from unveil.core.analyze import with_tokens

                await asyncio.get_running_loop().run_in_executor(self.server.executor, with_tokens, analysis)
            path = _path_of(uri)
            entries[uri] = ws_core.file_entry(analysis, self._shown(Path(path)) if path else uri, uri)
        roots = self._roots or self.roots()
        root = roots[0].as_uri() if roots else ""
        return ws_core.summarize(entries.values(), root, self.server.settings, complete=not self.scanning).to_dict()


def register(server) -> None:
    from unveil.lsp.registry import safe

    index = WorkspaceIndex(server)
    server.workspace_index = index
    server.listeners.append(index)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    @safe()
    async def did_change_watched_files(ls, params: types.DidChangeWatchedFilesParams) -> None:
        await index.on_watched(params)

    @server.feature(SUMMARY_METHOD)
    @safe(default=None)
    async def workspace_summary(ls, params: Any = None) -> dict:
        refresh = False
        if isinstance(params, dict):
            refresh = bool(params.get("refresh"))
        else:
            refresh = bool(getattr(params, "refresh", False))
        return await index.summary(refresh)
