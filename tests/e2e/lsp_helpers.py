"""Helpers for the e2e tests (waiting for publishes, building ranges, applying edits)."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

TIMEOUT = 20.0  # seconds; a safety net against hangs, not a performance assertion


async def wait_publish(client: LanguageClient, uri: str, version: int) -> types.PublishDiagnosticsParams:
    """The first recorded publish for ``uri`` at ``version`` (waits for it)."""

    async def find():
        while True:
            for p in client.publishes:
                if p.uri == uri and p.version == version:
                    return p
            await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

    return await asyncio.wait_for(find(), TIMEOUT)


async def wait_next(client: LanguageClient, uri: str, after: int) -> types.PublishDiagnosticsParams:
    """The first publish for ``uri`` recorded at index ``after`` or later (waits for it)."""

    async def find():
        while True:
            for p in client.publishes[after:]:
                if p.uri == uri:
                    return p
            await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

    return await asyncio.wait_for(find(), TIMEOUT)


async def open_doc(client: LanguageClient, uri: str, text: str, version: int = 1) -> types.PublishDiagnosticsParams:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="markdown", version=version, text=text)
        )
    )
    return await wait_publish(client, uri, version)


def pos(line: int, character: int) -> types.Position:
    return types.Position(line=line, character=character)


def rng(l1: int, c1: int, l2: int, c2: int) -> types.Range:
    return types.Range(start=pos(l1, c1), end=pos(l2, c2))


def change(client: LanguageClient, uri: str, version: int, r: types.Range, text: str) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangePartial(range=r, text=text)],
        )
    )


def hid(diags) -> list[tuple[str, types.Range]]:
    """(code, range) of the hidden-content diagnostics, in order; checks source on the way."""
    out = []
    for d in diags:
        assert d.source == "unveil"
        if str(d.code).startswith("HID"):
            out.append((d.code, d.range))
    return out


def apply_edits(text: str, edits, encoding: str = "utf-16") -> str:
    """Apply LSP text edits (non-overlapping) to ``text`` with core's position conversion."""
    from unveil.core.document import Document

    doc = Document(text)
    spans = sorted(
        (
            (
                doc.from_client(e.range.start.line, e.range.start.character, encoding),
                doc.from_client(e.range.end.line, e.range.end.character, encoding),
                e.new_text,
            )
            for e in edits
        ),
        reverse=True,
    )
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


async def until(fn, what: str):
    """Poll ``await fn()`` until it returns something truthy (bounded by TIMEOUT)."""

    async def go():
        while True:
            got = await fn()
            if got:
                return got
            await asyncio.sleep(0.05)

    try:
        return await asyncio.wait_for(go(), TIMEOUT)
    except asyncio.TimeoutError:
        pytest.fail(f"timed out waiting for {what}")


async def initialize_in(client: LanguageClient, root) -> None:
    """Initialize ``client``'s session as VS Code would, with ``root`` (a ``Path``) as the one
    workspace folder and an empty ``unveil`` configuration."""
    client.set_configuration({}, section="unveil")
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual_studio_code"),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="ws")],
        )
    )
