"""Helpers for the hostile-input tests (issue 9)."""

from __future__ import annotations

import threading


def bounded(fn, seconds: float = 10.0):
    """Run ``fn()`` in a daemon thread; return its result or raise its exception. Fails the test
    (AssertionError) when it does not finish within ``seconds`` — a hang never blocks the suite."""
    box: dict = {}

    def go():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller
            box["error"] = exc

    t = threading.Thread(target=go, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"did not finish within {seconds} s"
    if "error" in box:
        raise box["error"]
    return box.get("value")
