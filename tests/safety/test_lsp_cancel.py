"""Issue 9 item 10: a stale version's analysis stops between checks (cooperative cancellation)."""

from __future__ import annotations

import pytest

from unveil.core.analyze import Cancelled, analyze


def test_analyze_stops_when_cancelled(monkeypatch):
    ran = []

    def first(ctx):
        ran.append("first")
        return []

    def second(ctx):
        ran.append("second")
        return []

    monkeypatch.setattr("unveil.core.analyze.all_checks", lambda: [first, second])
    with pytest.raises(Cancelled):
        analyze("x\n", "AGENTS.md", count_tokens=False, cancelled=lambda: bool(ran))
    assert ran == ["first"]
