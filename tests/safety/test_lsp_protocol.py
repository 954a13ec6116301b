"""Issue 9 items 12, 13, 14 and 16 against ``unveil serve`` over real stdio bytes."""

from __future__ import annotations

import json

import pytest
from rpc import RawServer, frame

URI = "file:///tmp/unveil-proto/AGENTS.md"
HOVER = "textDocument/hover"


@pytest.fixture(scope="module")
def srv():
    s = RawServer()
    s.initialize()
    s.open(URI, "zero\u200bwidth\n")
    s.publish(URI, 1)
    yield s
    s.kill()


def _error(resp):
    assert "error" in resp, resp
    return resp["error"]["code"]


@pytest.mark.parametrize(
    "params",
    [
        {"textDocument": {"uri": URI}},  # no position
        {"textDocument": {"uri": URI}, "position": {"line": "x", "character": 0}},
        {"textDocument": {"uri": URI}, "position": {"line": -1, "character": 0}},
        {"textDocument": {"uri": URI}, "position": {"line": 0, "character": 2**31}},
    ],
)
def test_invalid_params_get_invalid_params(srv, params):
    assert _error(srv.request(HOVER, params)) == -32602


def test_valid_hover_still_answered(srv):
    r = srv.request(HOVER, {"textDocument": {"uri": URI}, "position": {"line": 0, "character": 4}})
    assert "result" in r


def test_second_initialize_is_an_error(srv):
    assert _error(srv.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})) == -32600


def test_framing_error_resynchronises(srv):
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 9001,
            "method": HOVER,
            "params": {"textDocument": {"uri": URI}, "position": {"line": 0, "character": 0}},
        }
    ).encode()
    srv.send_raw(b"Content-Length: %d\r\n\r\n" % (len(body) - 1) + body)  # one byte short
    srv.send_raw(
        frame(
            {
                "jsonrpc": "2.0",
                "id": 9002,
                "method": HOVER,
                "params": {"textDocument": {"uri": URI}, "position": {"line": 0, "character": 0}},
            }
        )
    )
    srv.send_raw(
        frame(
            {
                "jsonrpc": "2.0",
                "id": 9003,
                "method": HOVER,
                "params": {"textDocument": {"uri": URI}, "position": {"line": 0, "character": 0}},
            }
        )
    )
    assert "result" in srv.wait(lambda m: m.get("id") == 9003)


def test_repeated_version_is_analysed(srv):
    uri = "file:///tmp/unveil-proto/CLAUDE.md"
    srv.open(uri, "plain\n", 1)
    srv.publish(uri, 1)
    n = len(srv.seen)
    srv.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": uri, "version": 1},
            "contentChanges": [
                {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "a\u200b"}
            ],
        },
    )

    def later(m):
        return (
            m.get("method") == "textDocument/publishDiagnostics"
            and m["params"]["uri"] == uri
            and srv.seen.index(m) >= n
        )

    p = srv.wait(later)["params"]
    assert [d["code"] for d in p["diagnostics"]] == ["HID002"]


def test_encoded_uri_is_kept_after_a_settings_change(srv):
    uri = "file:///tmp/unveil-proto/a%20b.md"
    srv.open(uri, "zero\u200bwidth\n")
    srv.publish(uri, 1)
    n = len(srv.seen)
    srv.notify("workspace/didChangeConfiguration", {"settings": {"unveil": {"severity": {"HID002": "error"}}}})

    def after(m):
        return (
            m.get("method") == "textDocument/publishDiagnostics"
            and srv.seen.index(m) >= n
            and "a" in m["params"]["uri"]
            and "b.md" in m["params"]["uri"]
        )

    p = srv.wait(after)["params"]
    assert p["uri"] == uri
    assert [d["severity"] for d in p["diagnostics"]] == [1]


def test_request_before_initialize_and_after_shutdown():
    s = RawServer()
    try:
        assert (
            _error(s.request(HOVER, {"textDocument": {"uri": URI}, "position": {"line": 0, "character": 0}})) == -32002
        )
        s.initialize()
        assert s.request("shutdown")["result"] is None
        assert (
            _error(s.request(HOVER, {"textDocument": {"uri": URI}, "position": {"line": 0, "character": 0}})) == -32600
        )
        s.notify("exit")
        assert s.proc.wait(20) == 0
    finally:
        s.kill()


def test_exit_without_shutdown_exits_1():
    s = RawServer()
    try:
        s.initialize()
        s.notify("exit")
        assert s.proc.wait(20) == 1
    finally:
        s.kill()
