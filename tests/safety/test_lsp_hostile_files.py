"""Issue 9 items 4 and 6 in the server: a watched FIFO never blocks the workspace worker, and a
document of 1,000,000 spaces gets its diagnostics (no tokenizer panic)."""

from __future__ import annotations

import os

from rpc import RawServer


def test_watched_fifo_does_not_block_the_workspace_worker(tmp_path):
    (tmp_path / "CLAUDE.md").write_text("zero\u200bwidth\n")
    s = RawServer()
    try:
        s.initialize(tmp_path.as_uri())
        uri = (tmp_path / "CLAUDE.md").as_uri()
        s.publish(uri, timeout=120)  # the workspace scan
        n = len(s.seen)
        os.mkfifo(tmp_path / "AGENTS.md")
        (tmp_path / "CLAUDE.md").write_text("one\u200btwo\n\nthree\u200bfour\n")
        s.notify(
            "workspace/didChangeWatchedFiles",
            {"changes": [{"uri": (tmp_path / "AGENTS.md").as_uri(), "type": 1}, {"uri": uri, "type": 2}]},
        )
        p = s.wait(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics"
                and m["params"]["uri"] == uri
                and s.seen.index(m) >= n
            ),
            timeout=120,
        )["params"]
        assert [d["code"] for d in p["diagnostics"]] == ["HID002", "HID002"]
    finally:
        s.kill()


def test_million_spaces_document_is_analysed():
    s = RawServer()
    try:
        s.initialize()
        uri = "file:///tmp/unveil-spaces/AGENTS.md"
        s.open(uri, " " * 1_000_000 + "zero\u200bwidth")

        def final(m):
            p = m.get("params") or {}
            return (
                m.get("method") == "textDocument/publishDiagnostics"
                and p.get("uri") == uri
                and not any(d.get("code") == "UNV022" for d in p["diagnostics"])
            )

        p = s.wait(final, timeout=300)["params"]
        codes = [d["code"] for d in p["diagnostics"]]
        assert "UNV001" not in codes and "HID002" in codes
        assert s.proc.poll() is None
    finally:
        s.kill()
