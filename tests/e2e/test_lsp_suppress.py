"""End to end over stdio: an inline suppression comment cannot remove a security diagnostic (it
is reported as UNV012); a project ``.unveil.toml`` next to the file is honoured."""

from __future__ import annotations

import pytest
from lsp_helpers import change, open_doc, rng, wait_publish
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="module")

ZWSP = "\u200b"


async def test_suppression_comment_cannot_remove_security_diagnostic(client: LanguageClient, uri: str):
    published = await open_doc(client, uri, f"# T\n\nzero{ZWSP}width\n")
    assert [d.code for d in published.diagnostics] == ["HID002"]
    change(client, uri, 2, rng(1, 0, 1, 0), "<!-- unveil-ignore-next-line HID002: demo of a zero-width space -->\n")
    published = await wait_publish(client, uri, 2)
    assert sorted(d.code for d in published.diagnostics) == ["HID002", "UNV012"]
    change(client, uri, 3, rng(1, 0, 2, 0), "<!-- unveil-ignore-next-line HID002 -->\n")  # reason dropped
    published = await wait_publish(client, uri, 3)
    assert sorted(d.code for d in published.diagnostics) == ["HID002", "HID020", "UNV010"]


async def test_project_config_next_to_file(client: LanguageClient, tmp_path):
    (tmp_path / ".unveil.toml").write_text('ignore = ["HID002"]\n', encoding="utf-8")
    uri = (tmp_path / "AGENTS.md").as_uri()
    published = await open_doc(client, uri, f"zero{ZWSP}width and a\u2060joiner\n")
    # only the Information diagnostic naming the project configuration and what it turns off
    assert [(d.code, d.severity, d.range.start.line) for d in published.diagnostics] == [("config", 3, 0)]
    assert published.diagnostics[0].message.endswith("turns off or lowers: ignore: HID002")
