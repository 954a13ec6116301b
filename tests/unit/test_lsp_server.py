"""Server plumbing that needs no client: error handling, argument parsing, the handler wrapper."""

from __future__ import annotations

import logging

from lsprotocol import types

from unveil.lsp.convert import encoding_name
from unveil.lsp.server import UnveilServer, create_server, run, safe


def test_safe_logs_and_returns_default_for_sync_and_async(caplog):
    @safe(default=[])
    def boom(ls, params):
        raise ValueError("bad")

    @safe()
    async def aboom(ls, params):
        raise KeyError("worse")

    import asyncio

    with caplog.at_level(logging.ERROR):
        assert boom(None, None) == []
        assert asyncio.run(aboom(None, None)) is None
    assert "handler boom failed" in caplog.text and "handler aboom failed" in caplog.text
    assert asyncio.iscoroutinefunction(aboom)


def test_report_server_error_logs_instead_of_showing(caplog, monkeypatch):
    server = UnveilServer()
    shown = []
    monkeypatch.setattr(server, "window_show_message", lambda params: shown.append(params))
    with caplog.at_level(logging.ERROR):
        server.report_server_error(RuntimeError("kaput"), Exception)
    assert shown == []
    assert "kaput" in caplog.text


def test_server_identity_and_features():
    from unveil import __version__

    server = create_server()
    assert (server.name, server.version) == ("unveil", __version__)
    assert {
        types.INITIALIZE,
        types.INITIALIZED,
        types.TEXT_DOCUMENT_DID_OPEN,
        types.TEXT_DOCUMENT_DID_CHANGE,
        types.TEXT_DOCUMENT_DID_CLOSE,
        types.TEXT_DOCUMENT_HOVER,
        types.TEXT_DOCUMENT_INLAY_HINT,
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.WORKSPACE_DID_CHANGE_CONFIGURATION,
    } <= set(server.protocol.fm.features)


def test_run_rejects_unknown_arguments_with_exit_code_2(capsys):
    assert run(["--stdio", "--no-such-flag"]) == 2
    assert "unrecognized arguments: --no-such-flag" in capsys.readouterr().err
    assert run(["--log-level", "LOUD"]) == 2


def test_encoding_name():
    assert encoding_name(types.PositionEncodingKind.Utf8) == "utf-8"
    assert encoding_name("utf-32") == "utf-32"
    assert encoding_name(None) == "utf-16"
    assert encoding_name("latin-1") == "utf-16"


def test_workspace_file_analysis_pauses_for_open_documents(tmp_path, monkeypatch):
    """A file on disk being analysed in the background pauses between checks while an open
    document is analysed (its worker sleeps), then goes on: analysed once, published once."""
    import asyncio

    from unveil.core import analyze as analyze_mod

    server = create_server()
    index = server.workspace_index
    path = tmp_path / "AGENTS.md"
    path.write_text("# Agents\n\nRun the tests.\n", encoding="utf-8")
    calls = {"busy": 0, "runs": 0}
    published = []
    monkeypatch.setattr(server, "text_document_publish_diagnostics", published.append)
    monkeypatch.setattr(server, "settings_for", lambda p: server.settings)
    monkeypatch.setattr(server, "open_document", lambda uri: None)  # not initialised: no workspace
    monkeypatch.setattr(server, "open_texts", dict)
    monkeypatch.setattr(index, "_shown", lambda p: p.name)

    def busy() -> bool:  # 1: refresh_file's wait loop (idle); 2-4: an open document is analysed
        calls["busy"] += 1
        return 2 <= calls["busy"] <= 4

    monkeypatch.setattr(server.scheduler, "any_busy", busy)
    real = analyze_mod.analyze

    def counting(*a, **k):
        calls["runs"] += 1
        return real(*a, **k)

    monkeypatch.setattr(analyze_mod, "analyze", counting)
    asyncio.run(index.refresh_file(path))
    assert calls["runs"] == 1  # paused, not cancelled: no work repeated
    assert calls["busy"] >= 5  # the first check boundary waited through the busy answers
    assert len(published) == 1 and published[0].uri == path.as_uri()
    assert path.as_uri() in index.entries


def test_the_first_analyses_wait_for_the_warm_up(monkeypatch):
    """An analysis started while the warm-up runs waits for it (same one-time work), then runs."""
    import threading

    from unveil.core.config import DEFAULT_SETTINGS
    from unveil.lsp import server as server_mod

    warmed = threading.Event()
    monkeypatch.setattr(server_mod, "_WARMED", warmed)
    server = UnveilServer()
    done: list = []
    worker = threading.Thread(
        target=lambda: done.append(
            server._compute("# T\n\nhello\u200b\n", "/w/AGENTS.md", DEFAULT_SETTINGS, 1, "utf-16")
        )
    )
    worker.start()
    worker.join(0.3)
    assert done == [] and worker.is_alive()
    warmed.set()
    worker.join(30)
    analysis, diagnostics, _ = done[0]
    assert [d.code for d in diagnostics] == ["HID002"]  # the zero width space
    assert analysis.path == "/w/AGENTS.md"


def test_a_server_made_without_run_never_waits():
    from unveil.lsp import server as server_mod

    assert server_mod._WARMED.is_set()


def test_an_edited_document_keeps_its_incremental_cache_among_the_most_recently_analysed():
    from unveil.lsp import server as server_mod

    server = create_server()
    uris = [f"file:///w/{i}.md" for i in range(server_mod.INCREMENTAL_DOCUMENTS + 3)]
    for u in uris:
        server._edited.add(u)  # as did_change does
    caches = {u: server._document_cache(u, 100) for u in uris}
    kept = list(server._incremental)
    assert kept == uris[3:]  # the three analysed first lost theirs
    assert server._document_cache(uris[5], 100) is caches[uris[5]]  # reused, and now the most recent
    assert list(server._incremental)[-1] == uris[5]
    again = server._document_cache(uris[0], 100)  # a dropped one gets a new, empty cache
    assert again is not caches[uris[0]] and again.stats.blocks_reused == 0
    assert len(server._incremental) == server_mod.INCREMENTAL_DOCUMENTS
    assert uris[3] not in server._incremental  # the least recent went out for it


def test_a_document_only_opened_loses_its_incremental_cache_when_another_is_analysed():
    server = create_server()
    server._edited.add("file:///w/typed.md")
    typed = server._document_cache("file:///w/typed.md", 1000)
    opened = [f"file:///w/open{i}.md" for i in range(5)]
    for u in opened:
        server._document_cache(u, 1000)
    # the one typed in and the last opened (its first keystroke would be incremental) keep theirs
    assert list(server._incremental) == ["file:///w/typed.md", opened[-1]]
    assert server._incremental["file:///w/typed.md"] is typed
    assert server._cache_sizes == {"file:///w/typed.md": 1000, opened[-1]: 1000}
    server.did_close(opened[-1])
    assert list(server._incremental) == ["file:///w/typed.md"] and list(server._cache_sizes) == ["file:///w/typed.md"]


def test_the_kept_incremental_caches_stay_within_the_size_budget(monkeypatch):
    from unveil.lsp import server as server_mod

    monkeypatch.setattr(server_mod, "INCREMENTAL_BUDGET_CHARS", 1000)
    server = create_server()
    for name in ("a", "b", "c", "d"):
        server._edited.add(f"file:///w/{name}.md")
    server._document_cache("file:///w/a.md", 400)
    server._document_cache("file:///w/b.md", 400)
    assert list(server._incremental) == ["file:///w/a.md", "file:///w/b.md"]  # 800 <= 1000
    server._document_cache("file:///w/c.md", 300)  # 1100: the least recent goes
    assert list(server._incremental) == ["file:///w/b.md", "file:///w/c.md"]
    server._document_cache("file:///w/d.md", 5000)  # alone over the budget: still keeps its own
    assert list(server._incremental) == ["file:///w/d.md"]
    server._document_cache("file:///w/c.md", 300)  # d is over the budget with c: d goes, c stays
    assert list(server._incremental) == ["file:///w/c.md"]


def test_reopening_a_document_forgets_that_it_was_edited(monkeypatch):
    server = create_server()
    requested = []
    monkeypatch.setattr(server.scheduler, "request", lambda uri, immediate=False: requested.append(uri))
    uri = "file:///w/a.md"
    server.did_change(uri)
    assert uri in server._edited
    server._document_cache(uri, 10)
    server._document_cache("file:///w/b.md", 10)
    assert list(server._incremental) == [uri, "file:///w/b.md"]  # a, changed, kept its cache
    server.did_open(uri)  # a new epoch
    assert requested == [uri, uri]
    assert uri not in server._incremental and uri not in server._edited
    server._document_cache(uri, 10)
    server._document_cache("file:///w/b.md", 10)
    assert list(server._incremental) == ["file:///w/b.md"]


def test_the_analysis_takes_the_open_documents_moved_line_index():
    """The open document's line index is moved through each incremental change and is the one
    the analysis of that version uses (no second index of the text); the analysis hands its
    index back when the document had none."""
    import asyncio

    from unveil.lsp.textdoc import LspWorkspace

    server = create_server()
    ws = LspWorkspace(None, types.TextDocumentSyncKind.Incremental, [], types.PositionEncodingKind.Utf16)
    server.protocol._workspace = ws
    uri = "file:///w/AGENTS.md"
    ws.put_text_document(
        types.TextDocumentItem(uri=uri, language_id="markdown", version=1, text="# T\n\nhello\u200b there\n")
    )
    server._epoch[uri] = 1  # (as did_open numbers it; no scheduler here)
    doc = server.open_document(uri)
    assert doc.known_document() is None

    async def analyse():
        return await server._run_compute(uri, doc, server.current_key(uri))

    first = asyncio.run(analyse())
    assert doc.known_document() is first.analysis.doc  # handed back by the analysis
    pos = types.Position(line=2, character=5)
    doc.apply_change(types.TextDocumentContentChangePartial(range=types.Range(start=pos, end=pos), text="!"))
    moved = doc.known_document()
    assert moved is not None and moved.text is doc.source
    second = asyncio.run(analyse())
    assert second.analysis.doc is moved
    assert [f.rule for f in second.analysis.findings] == [f.rule for f in first.analysis.findings]
