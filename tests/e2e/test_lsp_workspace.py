"""The workspace in the language server: diagnostics for files that are not open, $/progress,
file watchers, ``unveil/workspaceSummary``, @import inlay hints and re-analysis when an imported
file changes. Token figures are o200k counts computed once with the bundled tokenizer."""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

import pytest
import pytest_lsp
from lsp_helpers import TIMEOUT, initialize_in, open_doc, until
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features


def make_client() -> LanguageClient:
    """A client that records publishes and registrations (as tests/e2e/conftest.py does; not
    imported from there because ``conftest`` names several modules when suites run together)."""
    client = LanguageClient(converter_factory=default_converter)
    client.publishes = []
    client.registrations = []

    def on_publish(c: LanguageClient, params: types.PublishDiagnosticsParams):
        c.diagnostics[params.uri] = params.diagnostics
        c.publishes.append(params)

    def on_register(c: LanguageClient, params: types.RegistrationParams):
        c.registrations.extend(params.registrations)

    register_lsp_features(
        client,
        {
            **DEFAULT_CLIENT_FEATURES,
            types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: on_publish,
            types.CLIENT_REGISTER_CAPABILITY: on_register,
        },
    )
    return client


CONFIG = ClientServerConfig(server_command=[sys.executable, "-m", "unveil", "serve"], client_factory=make_client)

ROOT = Path(tempfile.mkdtemp(prefix="unveil-ws-")).resolve()
CLAUDE = "# Project\n\nSee @docs/style.md and @docs/missing.md.\n"  # 15 tokens
STYLE = "Use tabs.\n"  # 3 tokens
AGENT = "---\nname: reviewer\ndescription: Reviews diffs.\n---\nYou review.\n"  # listing 11, body 3


def uri_of(rel: str) -> str:
    return (ROOT / rel).as_uri()


@pytest_lsp.fixture(config=CONFIG, scope="module")
async def ws_client(lsp_client: LanguageClient):
    (ROOT / ".claude/agents").mkdir(parents=True, exist_ok=True)
    (ROOT / "docs").mkdir(exist_ok=True)
    (ROOT / "CLAUDE.md").write_text(CLAUDE, encoding="utf-8")
    (ROOT / "docs/style.md").write_text(STYLE, encoding="utf-8")
    (ROOT / ".claude/agents/reviewer.md").write_text(AGENT, encoding="utf-8")
    await initialize_in(lsp_client, ROOT)
    yield
    await lsp_client.shutdown_session()


async def _published(client, uri):
    return next((p for p in reversed(client.publishes) if p.uri == uri), None)


def plain(obj):
    """pygls turns an unknown method's JSON result into named tuples: back to dicts and lists."""
    if hasattr(obj, "_asdict"):
        return {k: plain(v) for k, v in obj._asdict().items()}
    if isinstance(obj, dict):
        return {k: plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    return obj


async def _summary(client, refresh=False):
    got = await asyncio.wait_for(
        client.protocol.send_request_async("unveil/workspaceSummary", {"refresh": refresh}), TIMEOUT
    )
    return plain(got)


@pytest.mark.asyncio(loop_scope="module")
async def test_scan_publishes_unopened_files_with_progress(ws_client):
    client = ws_client
    p = await until(lambda: _published(client, uri_of("CLAUDE.md")), "diagnostics for CLAUDE.md")
    assert p.version is None
    imp = [d for d in p.diagnostics if d.code == "IMP001"]
    assert [(d.range.start.line, d.range.start.character, d.range.end.character) for d in imp] == [(2, 23, 39)]
    assert imp[0].severity == types.DiagnosticSeverity.Warning
    # work done progress: begin … end
    reports = await until(lambda: _progress_done(client), "the scan's progress to end")
    kinds = [r.kind for r in reports]
    assert kinds[0] == "begin" and kinds[-1] == "end"
    assert reports[0].title == "unveil: scanning agent files"
    # the watchers were registered dynamically (VS Code profile allows it)
    regs = [r for r in client.registrations if r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES]
    assert len(regs) == 1
    globs = [w["globPattern"] for w in regs[0].register_options["watchers"]]
    assert "**/*.md" in globs and "**/.cursorrules" in globs


async def _progress_done(client):
    for reports in client.progress_reports.values():
        if reports and getattr(reports[-1], "kind", None) == "end":
            return reports
    return None


@pytest.mark.asyncio(loop_scope="module")
async def test_workspace_summary(ws_client):
    s = await _summary(ws_client)
    files = {f["path"]: f for f in s["files"]}
    assert set(files) == {"CLAUDE.md", "docs/style.md", ".claude/agents/reviewer.md"}
    c = files["CLAUDE.md"]
    assert (c["kind"], c["session"], c["invoke"], c["imported"], c["grade"]) == ("claude-md", 18, 0, 3, "B")
    assert c["findings"] == {"error": 0, "warning": 1, "info": 0, "hint": 0}
    assert files[".claude/agents/reviewer.md"]["session"] == 11
    assert s["total"]["session"] == 29 and s["total"]["files"] == 2
    assert [k["kind"] for k in s["kinds"]] == ["claude-md", "claude-agent", "markdown"]


@pytest.mark.asyncio(loop_scope="module")
async def test_import_hint_and_imported_file_change(ws_client):
    client = ws_client
    uri = uri_of("CLAUDE.md")
    await open_doc(client, uri, CLAUDE)
    hints = await client.text_document_inlay_hint_async(
        types.InlayHintParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=types.Position(0, 0), end=types.Position(3, 0)),
        )
    )
    got = [
        (h.position.line, h.position.character, h.label.replace("\u00a0", " "))
        for h in hints
        if str(h.label).startswith("+")
    ]
    assert got == [(2, 18, "+3 tok")]
    # the imported file changes on disk: the open importer is re-analysed, its hint follows
    (ROOT / "docs/style.md").write_text(STYLE * 4, encoding="utf-8")  # 12 tokens
    before = len(client.publishes)
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=uri_of("docs/style.md"), type=types.FileChangeType.Changed)]
        )
    )

    async def republished():
        return any(p.uri == uri for p in client.publishes[before:])

    await until(republished, "CLAUDE.md re-analysed after its import changed")

    async def new_hint():
        hs = await client.text_document_inlay_hint_async(
            types.InlayHintParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=types.Range(start=types.Position(0, 0), end=types.Position(3, 0)),
            )
        )
        labels = [str(h.label).replace("\u00a0", " ") for h in hs if str(h.label).startswith("+")]
        return labels if labels == ["+12 tok"] else None

    assert await until(new_hint, "the import hint to show the new size") == ["+12 tok"]
    s = await _summary(client)
    assert {f["path"]: f["session"] for f in s["files"]}["CLAUDE.md"] == 15 + 12


@pytest.mark.asyncio(loop_scope="module")
async def test_deleted_file_is_cleared(ws_client):
    client = ws_client
    uri = uri_of(".claude/agents/reviewer.md")
    (ROOT / ".claude/agents/reviewer.md").unlink()
    before = len(client.publishes)
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=uri, type=types.FileChangeType.Deleted)])
    )

    async def cleared():
        return next((p for p in client.publishes[before:] if p.uri == uri), None)

    p = await until(cleared, "empty diagnostics for the deleted file")
    assert list(p.diagnostics) == []
    s = await _summary(client)
    assert ".claude/agents/reviewer.md" not in {f["path"] for f in s["files"]}


@pytest.mark.asyncio(loop_scope="module")
async def test_editing_an_open_import_reanalyses_the_importer_and_close_keeps_disk_state(ws_client):
    from lsp_helpers import change, rng

    client = ws_client
    main_uri, style_uri = uri_of("CLAUDE.md"), uri_of("docs/style.md")
    await open_doc(client, style_uri, STYLE)
    change(client, style_uri, 2, rng(0, 0, 1, 0), STYLE * 8)  # unsaved: 24 tokens

    async def hint():
        hs = await client.text_document_inlay_hint_async(
            types.InlayHintParams(
                text_document=types.TextDocumentIdentifier(uri=main_uri),
                range=types.Range(start=types.Position(0, 0), end=types.Position(3, 0)),
            )
        )
        labels = [str(h.label).replace("\u00a0", " ") for h in hs if str(h.label).startswith("+")]
        return labels if labels == ["+24 tok"] else None

    assert await until(hint, "the importer to count the unsaved import") == ["+24 tok"]
    # closing CLAUDE.md republishes what is on disk (with its IMP001) instead of clearing
    before = len(client.publishes)
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=main_uri))
    )

    async def republished():
        return next((p for p in client.publishes[before:] if p.uri == main_uri), None)

    p = await until(republished, "CLAUDE.md diagnostics after close")
    assert [d.code for d in p.diagnostics] == ["IMP001"]
    assert p.version is None
