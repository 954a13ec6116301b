"""End-to-end tests of ``unveil serve`` over stdio under the Neovim and VS Code profiles.

Positions are in the negotiated encoding: the Neovim 0.11 profile lists utf-8 first (so a ZWSP
is 3 columns wide), the VS Code profile negotiates nothing (utf-16, 1 column).
"""

from __future__ import annotations

import pytest
from lsp_helpers import apply_edits, change, hid, open_doc, pos, rng, until, wait_next, wait_publish
from lsprotocol import types
from pytest_lsp import LanguageClient

from unveil.core.analyze import analyze
from unveil.lsp.features.inlay_hints import format_tokens, short_tokens, summary_label, summary_text

pytestmark = pytest.mark.asyncio(loop_scope="module")

ZWSP = "\u200b"
TAGS = "\U000e0041\U000e0042"  # tag LATIN CAPITAL A, B: payload "AB"


def zw(client: LanguageClient) -> int:
    """Width of U+200B in the client's columns."""
    return 3 if client.encoding == "utf-8" else 1


def tagw(client: LanguageClient) -> int:
    """Width of one tag character in the client's columns."""
    return {"utf-8": 4, "utf-16": 2}.get(client.encoding, 1)


def assert_hid002(d: types.Diagnostic, r: types.Range, version: int) -> None:
    assert (d.code, d.range, d.source) == ("HID002", r, "unveil")
    assert d.severity in (types.DiagnosticSeverity.Error, types.DiagnosticSeverity.Warning)
    assert d.code_description.href.endswith("#hid002")
    assert d.data["version"] == version


async def test_open_publishes_diagnostics_with_version(client: LanguageClient, uri: str):
    p = await open_doc(client, uri, f"# Notes\nUse the con{ZWSP}fig file.\n")
    assert p.version == 1
    assert hid(p.diagnostics) == [("HID002", rng(1, 11, 1, 11 + zw(client)))]
    assert_hid002(p.diagnostics[0], rng(1, 11, 1, 11 + zw(client)), 1)


async def test_typing_a_zero_width_space_then_deleting_it(client: LanguageClient, uri: str):
    p = await open_doc(client, uri, "# Notes\nUse the config file.\n")
    assert hid(p.diagnostics) == []
    change(client, uri, 2, rng(1, 11, 1, 11), ZWSP)  # "con|fig"
    p = await wait_publish(client, uri, 2)
    assert hid(p.diagnostics) == [("HID002", rng(1, 11, 1, 11 + zw(client)))]
    assert_hid002(p.diagnostics[0], rng(1, 11, 1, 11 + zw(client)), 2)
    change(client, uri, 3, rng(1, 11, 1, 11 + zw(client)), "")
    p = await wait_publish(client, uri, 3)
    assert hid(p.diagnostics) == []
    # an edit for a document that was never opened is logged by the server, never shown
    change(client, "file:///tmp/unveil-e2e/never-opened.md", 2, rng(0, 0, 0, 0), "x")
    change(client, uri, 4, rng(0, 0, 0, 0), "")
    await wait_publish(client, uri, 4)
    assert client.messages == []


async def test_close_clears_diagnostics(client: LanguageClient, uri: str):
    await open_doc(client, uri, f"con{ZWSP}fig\n")
    n = len(client.publishes)
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    p = await wait_next(client, uri, n)
    assert list(p.diagnostics) == []


async def _hover(client: LanguageClient, uri: str, line: int, character: int) -> types.Hover | None:
    return await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=pos(line, character))
    )


async def _tokens_ready(client: LanguageClient, uri: str) -> types.Hover:
    async def first_line():
        h = await _hover(client, uri, 0, 0)
        return h if h is not None and "tok/session" in h.contents.value else None

    return await until(first_line, "token counts in the first-line hover")


async def test_hover_on_finding_and_on_first_line(client: LanguageClient, uri: str):
    text = f"# Notes\nSee {TAGS} here.\n"
    p = await open_doc(client, uri, text)
    tag_range = rng(1, 4, 1, 4 + 2 * tagw(client))
    assert hid(p.diagnostics) == [("HID001", tag_range)]

    top = await _tokens_ready(client, uri)
    expected = analyze(text, uri[len("file://") :], count_tokens=True)
    value = top.contents.value
    assert top.contents.kind == types.MarkupKind.Markdown
    assert f"**{summary_text(expected.tokens)}**" in value
    assert f"grade **{expected.grade}**" in value
    assert expected.tokens.kind_label in value

    h = await _hover(client, uri, 1, 4 + tagw(client))  # inside the tag run
    assert h.range == tag_range
    value = h.contents.value
    assert value.startswith("**HID001** unicode-tag-characters")
    assert "```text\nAB\n```" in value
    finding = next(f for f in expected.findings if f.rule == "HID001")
    n = finding.tokens if finding.tokens is not None else 1  # "AB" is one o200k token
    assert f"Hidden text ({format_tokens(n)} tok):" in value
    assert "more: `unveil explain HID001`" in value

    assert await _hover(client, uri, 1, 1) is None  # plain text, not the first line


async def test_inlay_hints_full_and_partial_range(client: LanguageClient, uri: str):
    text = "# Notes\nintro text here\n## Part A\nalpha beta gamma\n## Part B\ndelta\n"
    await open_doc(client, uri, text)
    await _tokens_ready(client, uri)
    report = analyze(text, uri[len("file://") :], count_tokens=True).tokens
    ident = types.TextDocumentIdentifier(uri=uri)

    full = await client.text_document_inlay_hint_async(
        types.InlayHintParams(text_document=ident, range=rng(0, 0, 6, 0))
    )
    line_len = {0: 7, 2: 9, 4: 9}
    first, *rest = report.sections  # the heading on line 0: its count goes to the summary's tooltip
    expected = [(0, 7, summary_label(report))] + [
        (s.line, line_len[s.line], f"{short_tokens(s.tokens)} tok") for s in rest
    ]
    assert [(h.position.line, h.position.character, h.label.replace("\u00a0", " ")) for h in full] == sorted(
        expected, key=lambda e: e[0]
    )
    assert [s.line for s in report.sections] == [0, 2, 4]
    assert f'Section "Notes": {format_tokens(first.tokens)} tok' in full[0].tooltip

    part = await client.text_document_inlay_hint_async(
        types.InlayHintParams(text_document=ident, range=rng(3, 0, 5, 0))
    )
    assert [(h.position.line, h.position.character, h.label.replace("\u00a0", " ")) for h in part] == [
        (4, 9, f"{short_tokens(report.sections[2].tokens)} tok")
    ]

    # counts change after an edit: clients that support it are asked to refresh
    before = client.inlay_refreshes
    change(client, uri, 2, rng(5, 0, 5, 0), "many more words in this section now ")
    await wait_publish(client, uri, 2)
    if client.profile == "neovim":
        await until(lambda: _async(client.inlay_refreshes > before), "workspace/inlayHint/refresh")
    else:
        assert client.inlay_refreshes == 0  # the VS Code 1.65 profile has no refresh support
    again = await client.text_document_inlay_hint_async(
        types.InlayHintParams(text_document=ident, range=rng(4, 0, 5, 0))
    )
    new = analyze(text.replace("\ndelta", "\nmany more words in this section now delta"), uri[len("file://") :])
    assert [h.label.replace("\u00a0", " ") for h in again] == [f"{short_tokens(new.tokens.sections[2].tokens)} tok"]


async def _async(value):
    return value


async def test_code_actions_remove_invisible_characters(client: LanguageClient, uri: str):
    text = f"Use the con{ZWSP}fig file.\nSee {TAGS} here.\n"
    p = await open_doc(client, uri, text)
    diags = {d.code: d for d in p.diagnostics if str(d.code).startswith("HID")}
    assert sorted(diags) == ["HID001", "HID002"]
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diags["HID002"].range,
            context=types.CodeActionContext(diagnostics=[diags["HID002"]]),
        )
    )
    preferred = [a for a in actions if a.is_preferred]
    assert len(preferred) == 1
    fix = preferred[0]
    assert fix.kind == types.CodeActionKind.QuickFix
    assert list(fix.diagnostics) == [diags["HID002"]]
    change_ = fix.edit.document_changes[0]
    assert change_.text_document == types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=1)
    assert apply_edits(text, change_.edits, client.encoding) == f"Use the config file.\nSee {TAGS} here.\n"

    fix_all = [a for a in actions if a.title == "Remove all invisible characters in this file"]
    assert len(fix_all) == 1
    all_edits = fix_all[0].edit.document_changes[0].edits
    assert apply_edits(text, all_edits, client.encoding) == "Use the config file.\nSee  here.\n"

    source = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=rng(0, 0, 0, 0),
            context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.SourceFixAll]),
        )
    )
    assert [(a.title, a.kind) for a in source] == [
        ("Remove all invisible characters in this file", "source.fixAll.unveil")
    ]

    # apply the fix-all edits as the editor would: the server's copy stays in sync and is clean
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(range=e.range, text=e.new_text)
                for e in sorted(all_edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True)
            ],
        )
    )
    p = await wait_publish(client, uri, 2)
    assert hid(p.diagnostics) == []


async def test_u2028_keeps_documents_in_sync(client: LanguageClient, uri: str):
    text = "line0 has a LS here:\u2028still line0\nline1\n"
    p = await open_doc(client, uri, text)
    ls_end = 20 + zw(client)  # U+2028 is 3 UTF-8 bytes, 1 UTF-16 unit
    assert hid(p.diagnostics) == [("HID012", rng(0, 20, 0, ls_end))]
    # severity from initializationOptions survives the pulled (empty) workspace configuration
    assert p.diagnostics[0].severity == types.DiagnosticSeverity.Information
    # on stock pygls this insert lands after the U+2028 on line 0 instead of at the start of line 1
    change(client, uri, 2, rng(1, 0, 1, 0), f"con{ZWSP}fig ")
    p = await wait_publish(client, uri, 2)
    assert hid(p.diagnostics) == [("HID012", rng(0, 20, 0, ls_end)), ("HID002", rng(1, 3, 1, 3 + zw(client)))]
    # delete "still " right after the separator, then type a ZWSP inside "line0" after it
    change(client, uri, 3, rng(0, ls_end, 0, ls_end + 6), "")
    change(client, uri, 4, rng(0, ls_end + 4, 0, ls_end + 4), ZWSP)  # "line|0"
    p = await wait_publish(client, uri, 4)
    assert hid(p.diagnostics) == [
        ("HID012", rng(0, 20, 0, ls_end)),
        ("HID002", rng(0, ls_end + 4, 0, ls_end + 4 + zw(client))),
        ("HID002", rng(1, 3, 1, 3 + zw(client))),
    ]


async def test_configuration_change_ignores_a_rule(client: LanguageClient, uri: str):
    p = await open_doc(client, uri, f"Use the con{ZWSP}fig file.\nSee {TAGS} here.\n")
    assert [c for c, _ in hid(p.diagnostics)] == ["HID002", "HID001"]
    n = len(client.publishes)
    client.set_configuration({"ignore": ["HID002"]}, section="unveil")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    p = await wait_next(client, uri, n)
    assert p.version == 1
    assert [c for c, _ in hid(p.diagnostics)] == ["HID001"]
    # and back (the server is shared by the tests of this module)
    n = len(client.publishes)
    client.set_configuration({}, section="unveil")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    p = await wait_next(client, uri, n)
    assert [c for c, _ in hid(p.diagnostics)] == ["HID002", "HID001"]


async def test_burst_of_edits_publishes_latest_version_last(client: LanguageClient, uri: str):
    await open_doc(client, uri, "word\n")
    for v in range(2, 22):  # twenty single-character inserts, sent without waiting
        change(client, uri, v, rng(0, 1, 0, 1) if v == 21 else rng(0, 0, 0, 0), ZWSP if v == 21 else "a")
    p = await wait_publish(client, uri, 21)
    assert hid(p.diagnostics) == [("HID002", rng(0, 1, 0, 1 + zw(client)))]
    # a request round trip: everything the server sent before its answer has arrived
    await _hover(client, uri, 0, 0)
    versions = [q.version for q in client.publishes if q.uri == uri]
    assert versions[0] == 1 and versions[-1] == 21
    assert versions == sorted(versions)
    assert len(versions) <= 21
