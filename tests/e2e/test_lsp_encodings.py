"""Position encodings negotiated through ``general.positionEncodings``: utf-8, utf-16, utf-32.

Line ``a\\u200bb <tag A><tag B> cd``: U+200B is 3 UTF-8 bytes / 1 UTF-16 unit / 1 code point;
each tag character (U+E0041, U+E0042) is 4 bytes / 2 units (a surrogate pair) / 1 code point.
"""

from __future__ import annotations

import pytest
from lsp_helpers import change, hid, open_doc, pos, rng, wait_publish
from lsprotocol import types
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="module")

URI = "file:///tmp/unveil-e2e/AGENTS.md"
TEXT = "a\u200bb \U000e0041\U000e0042 cd\n"

# encoding -> (ZWSP range, tag range, ZWSP typed between "c" and "d")
EXPECTED = {
    "utf-8": (rng(0, 1, 0, 4), rng(0, 6, 0, 14), rng(0, 16, 0, 19)),
    "utf-16": (rng(0, 1, 0, 2), rng(0, 4, 0, 8), rng(0, 10, 0, 11)),
    "utf-32": (rng(0, 1, 0, 2), rng(0, 4, 0, 6), rng(0, 8, 0, 9)),
}


async def test_ranges_in_negotiated_encoding(encoded_client: LanguageClient):
    client = encoded_client
    enc = client.encoding
    assert enc in EXPECTED
    zwsp, tags, typed = EXPECTED[enc]
    p = await open_doc(client, URI, TEXT)
    assert hid(p.diagnostics) == [("HID002", zwsp), ("HID001", tags)]

    h = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=URI), position=tags.start)
    )
    assert h.range == tags

    change(client, URI, 2, types.Range(start=typed.start, end=typed.start), "\u200b")
    p = await wait_publish(client, URI, 2)
    assert hid(p.diagnostics) == [("HID002", zwsp), ("HID001", tags), ("HID002", typed)]

    change(client, URI, 3, tags, "")  # delete the surrogate pairs / 4-byte sequences exactly
    p = await wait_publish(client, URI, 3)
    after = types.Range(
        start=pos(0, tags.start.character + 2), end=pos(0, tags.start.character + 2 + (3 if enc == "utf-8" else 1))
    )
    assert hid(p.diagnostics) == [("HID002", zwsp), ("HID002", after)]
