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
