"""Issue 9 item 15: 20,000 notifications leave memory flat (stock pygls keeps a future per
notification in ``_request_futures``: about 2 KB each, without bound)."""

from __future__ import annotations

import asyncio

from rpc import RawServer, frame


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def _batch(n_cycles: int, n_watch: int) -> bytes:
    out = []
    for i in range(n_cycles):
        uri = f"file:///tmp/unveil-soak/f{i % 50}.md"
        out.append(
            frame(
                {
                    "jsonrpc": "2.0",
                    "method": "textDocument/didOpen",
                    "params": {"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": "x\n"}},
                }
            )
        )
        out.append(
            frame({"jsonrpc": "2.0", "method": "textDocument/didClose", "params": {"textDocument": {"uri": uri}}})
        )
    for _ in range(n_watch):
        out.append(frame({"jsonrpc": "2.0", "method": "workspace/didChangeWatchedFiles", "params": {"changes": []}}))
    return b"".join(out)


def _settle(s: RawServer) -> None:
    s.request(
        "textDocument/hover",
        {"textDocument": {"uri": "file:///tmp/unveil-soak/none.md"}, "position": {"line": 0, "character": 0}},
        timeout=300,
    )


def test_memory_plateaus_over_20000_notifications():
    s = RawServer()
    try:
        s.initialize()
        s.send_raw(_batch(500, 4_000))  # 5,000 notifications: warm-up (caches, allocator arenas)
        _settle(s)
        before = rss_kib(s.proc.pid)
        s.send_raw(_batch(1_500, 12_000))  # 15,000 more
        _settle(s)
        after = rss_kib(s.proc.pid)
        # stock pygls: ~2 KB x 15,000 = ~30 MB more; allow 6 MB of noise
        assert after - before < 6 * 1024, (before, after)
    finally:
        s.kill()


def test_no_future_is_kept_per_notification():
    from unveil.lsp.server import create_server

    server = create_server()

    class Sink:
        def write(self, data):
            pass

        def close(self):
            pass

    server.protocol.set_writer(Sink())
    proto = server.protocol

    async def go():
        proto.handle_body(
            frame(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {"processId": None, "rootUri": None, "capabilities": {}},
                }
            ).split(b"\r\n\r\n", 1)[1]
        )
        for _ in range(200):
            proto.handle_body(
                b'{"jsonrpc": "2.0", "method": "workspace/didChangeWatchedFiles", "params": {"changes": []}}'
            )
        for _ in range(50):
            await asyncio.sleep(0)
        await asyncio.sleep(0.05)
        return len(proto._request_futures)

    assert asyncio.run(go()) == 0
