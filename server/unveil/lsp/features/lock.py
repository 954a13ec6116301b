"""The review lock in the editor: "changed since review" diagnostics, hover, code actions.

When the workspace root holds an ``unveil.lock`` (:mod:`unveil.core.lock`):

* Every published diagnostics list (open documents and the workspace scan) gets one more
  diagnostic on line 1 when the file's text differs from its lock entry, code ``lock-changed``,
  severity Warning, e.g. "Changed since review (2026-11-30, abc1234): +1 hidden html comment,
  +1 error EXF003, grade A→C, +312 tok/session", with ``relatedInformation`` pointing at each
  finding that is new since review; those findings' own diagnostics end with "(new since
  review)". A workspace agent file under the lock's ``paths`` with no entry gets an Information
  diagnostic "Not in unveil.lock …" (code ``lock-new``). Without a lock nothing is added.
* Hover on line 1 of a changed file appends the delta table (grade, tokens, findings) and the
  newly hidden text, decoded, to the hover the ``hover`` feature gives. Every piece of text that
  comes from the file is rendered inert (:mod:`unveil.core.inert`).
* Code actions on line 1 of a changed file: "Show changes since review" (command
  ``unveil.lockDiff`` with the document URI: writes the revealed diff, invisible characters named
  and hidden spans marked, to a ``.diff`` file in the temp folder, asks the client to show it with
  ``window/showDocument`` when it can, and returns ``{"uri", "text"}``; the same text is served by
  the custom request ``unveil/lockDiff`` ``{"uri"}`` → ``{"text", "title"}`` for clients that
  show virtual documents) and "Restore reviewed version" (a ``WorkspaceEdit`` replacing the
  document with the reviewed text read from git).
* Approving is not offered in the editor: it is a person's act, done with
  ``unveil lock approve PATH --reason …`` in a terminal.

How it attaches without touching other features: ``register`` wraps the server's
``text_document_publish_diagnostics`` and the already registered hover and code-action handlers
(pygls' ``FeatureManager.features``, looked up per request) and appends its own results. Each
publish re-hashes the analysed text (:func:`unveil.core.lock.text_hash`: one SHA-256 over the
UTF-8 bytes: 17–23 µs for a 4.7 KB 300-line file, 135 µs for a 32.7 KB one; see
benchmarks/lock_rehash.py) and compares it with
the entry; the delta (about 2 % of an analysis) is computed only when the hash differs, and cached per
hash.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import logging
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import attrs
from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from unveil.core import lock as lk
from unveil.core.inert import code_block, code_span, inline

log = logging.getLogger(__name__)

DIFF_COMMAND = "unveil.lockDiff"
DIFF_REQUEST = "unveil/lockDiff"
CODE_CHANGED = "lock-changed"
CODE_NEW = "lock-new"
SOURCE = "unveil"
NEW_SUFFIX = " (new since review)"
SHOW_TITLE = "Show changes since review"
RESTORE_TITLE = "Restore reviewed version"


def _path(uri: str) -> str | None:
    try:
        return to_fs_path(uri)
    except Exception:  # noqa: BLE001
        return None


class LockState:
    """The workspace's lock, and the delta of each document against it."""

    def __init__(self, server) -> None:
        self.server = server
        self._lock: tuple[Any, lk.Lock | None] | None = None  # (stamp, lock)
        self._reported: Any = None
        self.analyses: dict[str, Any] = {}  # uri → latest analysis (open documents)
        self.deltas: dict[str, tuple[str, Any]] = {}  # uri → (text hash, Delta | None)
        self.last: dict[str, types.PublishDiagnosticsParams] = {}  # uri → last publish before ours
        self.pending: set[tuple[str, str]] = set()
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="unveil-lock")

    # -- the lock -----------------------------------------------------------------------
    def root(self) -> Path | None:
        ws = self.server.workspace
        try:
            folders = list(getattr(ws, "folders", {}).values())
        except Exception:  # noqa: BLE001
            folders = []
        for f in folders:
            p = _path(f.uri)
            if p:
                return Path(p)
        try:
            root = ws.root_path
        except Exception:  # noqa: BLE001
            root = None
        return Path(root) if root else None

    def lock(self) -> lk.Lock | None:
        """The parsed ``unveil.lock`` at the workspace root (cached per mtime and size), or
        ``None`` when there is none or it does not parse (logged once per version of the file)."""
        root = self.root()
        if root is None:
            return None
        path = root / lk.LOCK_NAME
        try:
            st = path.stat()
            stamp = (st.st_mtime_ns, st.st_size)
        except OSError:
            self._lock = None
            return None
        if self._lock is not None and self._lock[0] == stamp:
            return self._lock[1]
        try:
            parsed = lk.read_lock(path)
        except lk.LockError as exc:
            if self._reported != stamp:
                self._reported = stamp
                log.warning("%s", exc)
                try:
                    self.server.window_log_message(
                        types.LogMessageParams(type=types.MessageType.Warning, message=f"unveil: {exc}")
                    )
                except Exception as exc:  # noqa: BLE001 - not connected (unit tests)
                    log.debug("log message not sent: %s", exc)
            parsed = None
        self._lock = (stamp, parsed)
        self.deltas.clear()
        return parsed

    def rel(self, uri: str) -> str | None:
        root, path = self.root(), _path(uri)
        if root is None or not path:
            return None
        try:
            return lk.relative(root, Path(path))
        except lk.LockError:
            return None

    def in_scope(self, lock: lk.Lock, rel: str) -> bool:
        return any(p in (".", "") or rel == p or rel.startswith(p.rstrip("/") + "/") for p in lock.paths)

    # -- deltas -------------------------------------------------------------------------
    def entry_of(self, uri: str) -> tuple[lk.Lock | None, str | None, dict | None]:
        lock = self.lock()
        rel = self.rel(uri) if lock is not None else None
        if rel == lk.LOCK_NAME:
            rel = None
        return lock, rel, (lock.files.get(rel) if lock is not None and rel is not None else None)

    def unlocked(self, lock: lk.Lock, rel: str) -> bool:
        """Whether ``rel`` is an agent file in the lock's scope that has no entry."""
        from unveil.core import kinds

        return rel not in lock.files and self.in_scope(lock, rel) and kinds.is_agent_file(rel)

    def delta_for(self, uri: str, analysis, entry: dict, rel: str):
        """The :class:`unveil.core.lock.Delta` of ``analysis`` against ``entry`` (``None`` when
        the text hashes to the entry's hash). One hash per call; the delta itself is cached per
        document and text hash (not cached while token counts are missing)."""
        h = lk.text_hash(analysis.text)
        cached = self.deltas.get(uri)
        if cached is not None and cached[0] == h:
            return cached[1]
        d = None if entry.get("hash") == h else lk.file_delta(entry, analysis, rel)
        if d is None or analysis.tokens is not None:
            self.deltas[uri] = (h, d)
        return d

    def delta_of_open(self, uri: str):
        """The delta of the open document ``uri`` as last analysed (``None`` if it matches)."""
        analysis = self.analyses.get(uri)
        lock, rel, entry = self.entry_of(uri)
        if analysis is None or lock is None or rel is None:
            return None
        if entry is None:
            return lk.Delta(rel, "new") if self.unlocked(lock, rel) else None
        return self.delta_for(uri, analysis, entry, rel)

    # -- diagnostics ----------------------------------------------------------------------
    def augment(self, params: types.PublishDiagnosticsParams) -> types.PublishDiagnosticsParams:
        """``params`` plus the lock diagnostic (and "(new since review)" on new findings)."""
        from unveil.core.document import Document
        from unveil.lsp.convert import lsp_range

        uri = params.uri
        self.last[uri] = params
        lock, rel, entry = self.entry_of(uri)
        if lock is None or rel is None:
            return params
        is_open = self.server.open_document(uri) is not None
        analysis = self.analyses.get(uri) if is_open else None
        if entry is None:
            if not self.unlocked(lock, rel):
                return params
            if analysis is not None:
                doc = analysis.doc
            else:
                try:
                    doc = Document(Path(_path(uri) or "").read_bytes().decode("utf-8", "surrogateescape"))
                except OSError:
                    return params
            d = lk.Delta(rel, "new")
        else:
            if analysis is None:
                if is_open:
                    return params
                analysis = self._disk_analysis(uri, entry)
                if analysis is None:
                    return params
            d = self.delta_for(uri, analysis, entry, rel)
            if d is None:
                return params
            doc = analysis.doc
        encoding = self.server.encoding
        first = lsp_range(doc, 0, doc.line_span(0)[1], encoding)
        diags = list(params.diagnostics)
        related = []
        new_ranges = set()
        for f in d.added:
            start = doc.offset(f.line - 1, f.column - 1)
            end = doc.offset(f.end_line - 1, f.end_column - 1)
            r = lsp_range(doc, start, end, encoding)
            new_ranges.add((f.rule, _range_key(r)))
            related.append(
                types.DiagnosticRelatedInformation(
                    location=types.Location(uri=uri, range=r), message=f"New since review: {f.rule} {f.message}"
                )
            )
        for i, dg in enumerate(diags):
            if (str(dg.code), _range_key(dg.range)) in new_ranges and not dg.message.endswith(NEW_SUFFIX):
                diags[i] = attrs.evolve(dg, message=dg.message + NEW_SUFFIX)
        if d.status == "new":
            diags.insert(
                0,
                types.Diagnostic(
                    range=first,
                    message=d.summary() + " (review it, then run `unveil lock approve` in a terminal)",
                    severity=types.DiagnosticSeverity.Information,
                    code=CODE_NEW,
                    source=SOURCE,
                    data={"lock": "new"},
                ),
            )
        else:
            diags.insert(
                0,
                types.Diagnostic(
                    range=first,
                    message=d.summary(),
                    severity=types.DiagnosticSeverity.Warning,
                    code=CODE_CHANGED,
                    source=SOURCE,
                    related_information=related or None,
                    data={"lock": "changed"},
                ),
            )
        return types.PublishDiagnosticsParams(uri=uri, diagnostics=diags, version=params.version)

    def _disk_analysis(self, uri: str, entry: dict):
        """For a file that is not open: ``None`` when it matches its entry; else its analysis
        with token counts, computed in the background (then the last publish is sent again)."""
        path = _path(uri)
        if not path:
            return None
        try:
            data = Path(path).read_bytes()
        except OSError:
            return None
        h = lk.content_hash(data)
        if entry.get("hash") == h:
            return None
        cached = self.analyses.get(("disk", uri))
        if cached is not None and cached[0] == h:
            return cached[1]
        if (uri, h) not in self.pending:
            self.pending.add((uri, h))
            try:
                asyncio.get_running_loop().create_task(self._analyse_later(uri, path, data, h))
            except RuntimeError:
                self.pending.discard((uri, h))
        return None

    async def _analyse_later(self, uri: str, path: str, data: bytes, h: str) -> None:
        try:
            analysis = await asyncio.get_running_loop().run_in_executor(
                self.executor, lk.analyse_bytes, data, path, self.server.settings_for(path)
            )
            self.analyses[("disk", uri)] = (h, analysis)
            last = self.last.get(uri)
            if last is not None and self.server.open_document(uri) is None:
                self.server.text_document_publish_diagnostics(last)
        except Exception:
            log.exception("lock analysis of %s failed", path)
        finally:
            self.pending.discard((uri, h))

    def republish_all(self) -> None:
        """``unveil.lock`` changed: forget cached deltas and publish every file's last
        diagnostics again with the new lock state."""
        self._lock = None
        self.deltas.clear()
        for _uri, params in list(self.last.items()):
            self.server.text_document_publish_diagnostics(params)

    # -- hover ----------------------------------------------------------------------------
    def hover_markdown(self, uri: str) -> str | None:
        d = self.delta_of_open(uri)
        if d is None:
            return None
        if d.status == "new":
            return (
                "**Not in unveil.lock** — this agent file has not been reviewed. Review it, then run "
                "`unveil lock approve` in a terminal."
            )
        return delta_markdown(d)

    # -- diff and restore -----------------------------------------------------------------
    def reviewed(self, uri: str) -> tuple[bytes, str, str] | None:
        """``(reviewed bytes, commit, rel)`` from git, or ``None`` (no entry, no git, not found)."""
        lock = self.lock()
        rel = self.rel(uri)
        root = self.root()
        if lock is None or rel is None or root is None or rel not in lock.files:
            return None
        from unveil.core import git

        try:
            data, commit = lk.reviewed_bytes(root, rel, lock.files[rel])
        except (lk.LockError, git.GitError) as exc:
            log.info("reviewed text of %s unavailable: %s", rel, exc)
            return None
        return data, commit, rel

    def diff_text(self, uri: str) -> str | None:
        """The revealed diff of the open document (or the file on disk) against the reviewed text."""
        got = self.reviewed(uri)
        if got is None:
            return None
        data, commit, rel = got
        doc = self.server.open_document(uri)
        path = _path(uri) or rel
        if doc is not None:
            text = doc.source
        else:
            try:
                text = Path(path).read_bytes().decode("utf-8", "surrogateescape")
            except OSError:
                return None
        old = lk.analyse_bytes(data, path)
        from unveil.core.analyze import analyze

        new = analyze(text, path, self.server.settings_for(path))
        return lk.revealed_diff(old.text, old, text, new, rel, old_label=f"reviewed {commit[:7]}")


def _range_key(r: types.Range) -> tuple[int, int, int, int]:
    return (r.start.line, r.start.character, r.end.line, r.end.character)


def _cell(text: str) -> str:
    shown = inline(text)
    return shown if shown == text else code_span(text, in_table=True)


def delta_markdown(d) -> str:
    """Hover Markdown for a ``changed`` delta: the table and the newly hidden text, decoded; all
    file-derived text inert."""
    review = d.review or {}
    who = inline(str(review.get("reviewer") or "unknown reviewer"))
    when = inline(str(review.get("date") or "unknown date"))
    commit = inline(str(review.get("commit") or "no commit")[:12])
    parts = [f"**Changed since review** — reviewed by {who}, {when}, at {commit}"]
    if review.get("reason"):
        parts.append("Reason: " + inline(str(review["reason"])))
    t0, t1 = d.tokens
    rows = ["| | reviewed | now |", "|---|---|---|", f"| grade | {d.grade[0] or '?'} | {d.grade[1] or '?'} |"]
    if t0 or t1:
        for key, label in (("session", "tokens per session"), ("invoke", "tokens once invoked")):
            a = (t0 or {}).get(key)
            b = (t1 or {}).get(key)
            rows.append(f"| {label} | {'?' if a is None else f'{a:,}'} | {'?' if b is None else f'{b:,}'} |")
    rows.append(f"| new findings | | {len(d.added)} |")
    rows.append(f"| findings gone | {len(d.removed)} | |")
    for key, values in d.capabilities_added.items():
        rows.append(f"| new {key} | | {_cell(', '.join(values))} |")
    for key, values in d.capabilities_removed.items():
        rows.append(f"| removed {key} | {_cell(', '.join(values))} | |")
    parts.append("\n".join(rows))
    if d.added:
        parts.append(
            "New since review:\n\n"
            + "\n".join(
                f"- **{inline(f.rule)}** {inline(f.severity)}, line {f.line}: {inline(f.message)}" for f in d.added
            )
        )
    hidden = d.hidden()
    if hidden:
        parts.append("Newly hidden text, decoded:")
        for f in hidden:
            parts.append(f"{inline(f.rule)} line {f.line}:\n\n" + code_block(f.hidden_text or ""))
    return "\n\n".join(parts)


async def _call(fn, params):
    result = fn(params)
    if inspect.isawaitable(result):
        result = await result
    return result


def _on_first_line(r: types.Range) -> bool:
    return r.start.line == 0


def register(server) -> None:
    from unveil.lsp.registry import safe

    state = LockState(server)
    server.lock_state = state

    class _Listener:
        def on_analysed(self, uri, analysis):
            state.analyses[uri] = analysis

        def on_close(self, uri):
            state.analyses.pop(uri, None)
            return False

        def on_initialized(self):
            asyncio.get_running_loop().create_task(_watch_lock())

    async def _watch_lock() -> None:
        """Watch ``unveil.lock`` when the workspace has one (without, the stat on each publish
        notices a lock created later)."""
        root = state.root()
        if root is None or not (root / lk.LOCK_NAME).is_file():
            return
        caps = getattr(server._caps(), "workspace", None)
        if not getattr(getattr(caps, "did_change_watched_files", None), "dynamic_registration", False):
            return
        try:
            await server.client_register_capability_async(
                types.RegistrationParams(
                    registrations=[
                        types.Registration(
                            id=f"unveil-lock-watch-{id(state)}",
                            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                            register_options=types.DidChangeWatchedFilesRegistrationOptions(
                                watchers=[types.FileSystemWatcher(glob_pattern="**/" + lk.LOCK_NAME)]
                            ),
                        )
                    ]
                )
            )
        except Exception as exc:  # noqa: BLE001
            log.info("could not watch %s: %s", lk.LOCK_NAME, exc)

    server.listeners.append(_Listener())

    publish = server.text_document_publish_diagnostics

    def publish_with_lock(params: types.PublishDiagnosticsParams) -> None:
        try:
            params = state.augment(params)
        except Exception:
            log.exception("lock diagnostics failed for %s", params.uri)
        publish(params)

    server.text_document_publish_diagnostics = publish_with_lock

    features = server.protocol.fm.features
    base_hover = features.get(types.TEXT_DOCUMENT_HOVER)

    @safe(default=None)
    async def hover(params: types.HoverParams):
        base = await _call(base_hover, params) if base_hover is not None else None
        if params.position.line != 0:
            return base
        mine = state.hover_markdown(params.text_document.uri)
        if not mine:
            return base
        if base is None:
            return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=mine))
        value = getattr(base.contents, "value", None)
        if value is None:
            return base
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=value + "\n\n---\n\n" + mine),
            range=base.range,
        )

    if base_hover is not None:
        features[types.TEXT_DOCUMENT_HOVER] = hover

    base_actions = features.get(types.TEXT_DOCUMENT_CODE_ACTION)

    @safe(default=[])
    async def code_actions(params: types.CodeActionParams):
        base = (await _call(base_actions, params) if base_actions is not None else None) or []
        uri = params.text_document.uri
        mine = [d for d in params.context.diagnostics or () if d.source == SOURCE and d.code == CODE_CHANGED]
        if not mine and not _on_first_line(params.range):
            return base
        d = state.delta_of_open(uri)
        if d is None or d.status != "changed":
            return base
        from unveil.lsp.features.code_actions import kind_allowed

        if not kind_allowed(types.CodeActionKind.QuickFix, params.context.only):
            return base
        out = list(base)
        out.append(
            types.CodeAction(
                title=SHOW_TITLE,
                kind=types.CodeActionKind.QuickFix,
                diagnostics=mine or None,
                command=types.Command(title=SHOW_TITLE, command=DIFF_COMMAND, arguments=[uri]),
            )
        )
        got = await asyncio.get_running_loop().run_in_executor(state.executor, state.reviewed, uri)
        doc = server.open_document(uri)
        if got is not None and doc is not None:
            text = got[0].decode("utf-8", "surrogateescape")
            analysis = state.analyses.get(uri)
            from unveil.core.document import Document
            from unveil.lsp.convert import lsp_range

            cur = analysis.doc if analysis is not None and analysis.text == doc.source else Document(doc.source)
            whole = lsp_range(cur, 0, len(cur.text), server.encoding)
            edit = types.WorkspaceEdit(
                document_changes=[
                    types.TextDocumentEdit(
                        text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=doc.version),
                        edits=[types.TextEdit(range=whole, new_text=text)],
                    )
                ]
            )
            out.append(
                types.CodeAction(
                    title=RESTORE_TITLE, kind=types.CodeActionKind.QuickFix, diagnostics=mine or None, edit=edit
                )
            )
        return out

    if base_actions is not None:
        features[types.TEXT_DOCUMENT_CODE_ACTION] = code_actions

    base_watched = features.get(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)

    @safe()
    async def watched(params: types.DidChangeWatchedFilesParams):
        if base_watched is not None:
            await _call(base_watched, params)
        if any(c.uri.endswith("/" + lk.LOCK_NAME) for c in params.changes):
            state.republish_all()

    features[types.WORKSPACE_DID_CHANGE_WATCHED_FILES] = watched

    async def make_diff(uri: str) -> str | None:
        return await asyncio.get_running_loop().run_in_executor(state.executor, state.diff_text, uri)

    @server.command(DIFF_COMMAND)
    @safe(default=None)
    async def lock_diff_command(ls, *args):  # pygls passes the command's arguments positionally
        uri = args[0] if args else None
        if not isinstance(uri, str):
            return None
        text = await make_diff(uri)
        if text is None:
            ls.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Warning,
                    message="unveil: the reviewed version is not available (no lock entry, or not in git)",
                )
            )
            return None
        folder = Path(tempfile.gettempdir()) / "unveil-lock-diff"
        folder.mkdir(exist_ok=True)
        target = folder / (hashlib.sha256(uri.encode()).hexdigest()[:16] + ".diff")
        lk.write_atomic(target, text)
        out_uri = from_fs_path(str(target)) or target.as_uri()
        window = getattr(ls._caps(), "window", None) if hasattr(ls, "_caps") else None
        if getattr(getattr(window, "show_document", None), "support", False):
            try:
                await ls.window_show_document_async(types.ShowDocumentParams(uri=out_uri, take_focus=True))
            except Exception as exc:  # noqa: BLE001
                log.info("showDocument failed: %s", exc)
        return {"uri": out_uri, "text": text}

    @server.feature(DIFF_REQUEST)
    @safe(default=None)
    async def lock_diff_request(ls, params: Any = None):
        uri = params.get("uri") if isinstance(params, dict) else getattr(params, "uri", None)
        if not isinstance(uri, str):
            return None
        text = await make_diff(uri)
        if text is None:
            return None
        rel = state.rel(uri) or uri
        return {"text": text, "title": f"{rel}: changes since review"}
