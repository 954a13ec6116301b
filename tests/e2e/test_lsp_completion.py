"""End-to-end: frontmatter completion (keys of the kind, allowed values) and the FMT quick fixes
over stdio, under the Neovim (utf-8) and VS Code (utf-16) profiles."""

from __future__ import annotations

import pytest
from lsp_helpers import apply_edits, open_doc, pos, rng
from lsprotocol import types
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="module")


def agent_uri(request_name: str) -> str:
    return f"file:///tmp/unveil-e2e/{request_name}/.claude/agents/reviewer.md"


async def complete(client: LanguageClient, uri: str, line: int, character: int) -> types.CompletionList | None:
    return await client.text_document_completion_async(
        types.CompletionParams(text_document=types.TextDocumentIdentifier(uri=uri), position=pos(line, character))
    )


async def test_completion_offers_kind_keys_with_docs(client: LanguageClient, request):
    uri = agent_uri(request.node.originalname)
    text = "---\nname: reviewer\nperm\n---\nBody\n"
    await open_doc(client, uri, text)
    result = await complete(client, uri, 2, 4)
    assert result is not None and not result.is_incomplete
    labels = [i.label for i in result.items]
    assert "permissionMode" in labels and "description" in labels and "name" not in labels
    item = next(i for i in result.items if i.label == "permissionMode")
    assert item.kind == types.CompletionItemKind.Property
    assert item.text_edit.range == rng(2, 0, 2, 4)
    assert item.text_edit.new_text == "permissionMode: "
    assert "acceptEdits" in item.documentation.value
    # The description key is required for subagents: sorted first.
    assert sorted(result.items, key=lambda i: i.sort_text)[0].label == "description"


async def test_completion_offers_allowed_values(client: LanguageClient, request):
    uri = agent_uri(request.node.originalname)
    text = "---\nname: reviewer\ndescription: Reviews.\nmodel: so\n---\n"
    await open_doc(client, uri, text)
    result = await complete(client, uri, 3, 9)
    labels = [i.label for i in result.items]
    assert labels[:4] == ["inherit", "sonnet", "opus", "haiku"]
    sonnet = next(i for i in result.items if i.label == "sonnet")
    assert sonnet.kind == types.CompletionItemKind.EnumMember
    assert sonnet.text_edit.range == rng(3, 7, 3, 9)
    assert apply_edits(text, [sonnet.text_edit], client.encoding) == (
        "---\nname: reviewer\ndescription: Reviews.\nmodel: sonnet\n---\n"
    )


async def test_completion_after_non_ascii_uses_client_columns(client: LanguageClient, request):
    uri = agent_uri(request.node.originalname)
    text = "---\nname: reviewer\ndescription: Reviews.\ntools: Read, Bash(echo é), Gr\n---\n"
    await open_doc(client, uri, text)
    wide = 1 if client.encoding == "utf-8" else 0  # é is 2 UTF-8 bytes, 1 UTF-16 unit
    result = await complete(client, uri, 3, 29 + wide)
    grep = next(i for i in result.items if i.label == "Grep")
    assert grep.text_edit.range == rng(3, 27 + wide, 3, 29 + wide)
    assert "Read" not in [i.label for i in result.items]


async def test_no_completion_in_body(client: LanguageClient, request):
    uri = agent_uri(request.node.originalname)
    text = "---\nname: reviewer\ndescription: Reviews.\n---\nBody text\n"
    await open_doc(client, uri, text)
    assert await complete(client, uri, 4, 4) is None


async def test_typo_key_diagnostic_and_quick_fix(client: LanguageClient, request):
    uri = agent_uri(request.node.originalname)
    text = "---\nname: reviewer\ndescripton: Reviews.\n---\nBody\n"
    published = await open_doc(client, uri, text)
    fmt = [d for d in published.diagnostics if str(d.code).startswith("FMT")]
    assert [(d.code, d.range, d.severity) for d in fmt] == [
        ("FMT015", rng(0, 0, 0, 3), types.DiagnosticSeverity.Error),
        ("FMT001", rng(2, 0, 2, 10), types.DiagnosticSeverity.Warning),
    ]
    typo = fmt[1]
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=typo.range,
            context=types.CodeActionContext(diagnostics=[typo]),
        )
    )
    fix = next(a for a in actions if a.title == "Rename to 'description'")
    edits = fix.edit.document_changes[0].edits
    assert apply_edits(text, edits, client.encoding) == "---\nname: reviewer\ndescription: Reviews.\n---\nBody\n"
