"""Issue 9 item 10: one slow document does not stall the others, and a slow one says it is not
fully analysed yet (UNV022) before its results arrive."""

from __future__ import annotations

import time

from rpc import RawServer


def _big() -> str:
    line = "Please review the code carefully and write tests <!-- note --> for each \u200b module.\n"
    return line * (150_000 // len(line))  # 150 KB: over the 100,000-character notice threshold


def test_small_document_is_not_stalled_by_a_big_one():
    s = RawServer()
    try:
        s.initialize()
        big, small = "file:///tmp/unveil-resp/big.md", "file:///tmp/unveil-resp/AGENTS.md"
        s.open(small, "warm\u200bup\n", 1)
        s.publish(small, 1)
        t0 = time.monotonic()
        s.open(big, _big(), 1)
        time.sleep(0.2)  # the big analysis has started
        s.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": small, "version": 2},
                "contentChanges": [
                    {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "x"}
                ],
            },
        )
        s.publish(small, 2, timeout=120)
        small_at = time.monotonic() - t0
        pubs = []
        while True:
            m = s.wait(
                lambda m: (
                    m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == big and m not in pubs
                ),
                timeout=300,
            )
            pubs.append(m)
            if any(d.get("code") != "UNV022" for d in m["params"]["diagnostics"]):
                break
        big_at = time.monotonic() - t0
        order = [m for m in s.seen if m.get("method") == "textDocument/publishDiagnostics"]
        small_idx = next(i for i, m in enumerate(order) if m["params"]["uri"] == small and m["params"]["version"] == 2)
        big_full = order.index(pubs[-1])
        assert small_idx < big_full, (small_at, big_at)  # the small one did not wait for the big one
        if big_at > 2.5:  # the budget ran out first: the notice came before the results
            assert [d["code"] for d in pubs[0]["params"]["diagnostics"]] == ["UNV022"]
    finally:
        s.kill()
