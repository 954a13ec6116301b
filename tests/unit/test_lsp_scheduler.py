"""Latest-wins scheduling: no overlap per URI, intermediate requests coalesced, newest analysed."""

from __future__ import annotations

import asyncio

from unveil.lsp.scheduler import LatestWinsScheduler


class Doc:
    def __init__(self):
        self.version = 1
        self.runs: list[int] = []
        self.gate = asyncio.Event()
        self.active = 0
        self.max_active = 0


async def test_idle_request_runs_at_once_and_burst_coalesces_to_newest():
    doc = Doc()

    async def run(uri):
        doc.active += 1
        doc.max_active = max(doc.max_active, doc.active)
        seen = doc.version
        await doc.gate.wait()
        doc.runs.append(seen)
        doc.active -= 1

    s = LatestWinsScheduler(run)
    s.request("u")
    await asyncio.sleep(0)
    assert s.busy("u")
    for v in range(2, 12):  # ten edits while the first analysis runs
        doc.version = v
        s.request("u")
    doc.gate.set()
    await s.idle()
    assert doc.runs == [1, 11]
    assert doc.max_active == 1
    assert not s.busy("u")


async def test_uris_are_independent_and_errors_do_not_stop_later_runs():
    calls: list[str] = []

    async def run(uri):
        calls.append(uri)
        if uri == "bad":
            raise ValueError("boom")

    s = LatestWinsScheduler(run)
    s.request("bad")
    s.request("good")
    await s.idle()
    s.request("bad")
    await s.idle()
    assert calls == ["bad", "good", "bad"]


async def test_cancel_drops_pending_work():
    gate = asyncio.Event()
    calls: list[str] = []

    async def run(uri):
        await gate.wait()
        calls.append(uri)

    s = LatestWinsScheduler(run)
    s.request("u")
    await asyncio.sleep(0)
    s.request("u")
    s.cancel("u")
    gate.set()
    await s.idle()
    assert calls == []
    assert not s.busy("u")


async def test_delay_applies_to_changes_but_not_to_immediate_requests():
    delays: list[str] = []
    calls: list[str] = []

    def delay_for(uri):
        delays.append(uri)
        return 0.001

    async def run(uri):
        calls.append(uri)

    s = LatestWinsScheduler(run, delay_for)
    s.request("a", immediate=True)
    await s.idle()
    assert delays == [] and calls == ["a"]
    s.request("a")
    await s.idle()
    assert delays == ["a"] and calls == ["a", "a"]


async def test_following_is_true_only_for_runs_after_edits_made_during_a_run():
    """The adaptive delay (issue 10) applies to bursts only: ``following(uri)`` is False when
    delay_for is asked about a single edit and True for the run that follows edits made while
    the previous run was in progress."""
    seen: list[bool] = []
    calls: list[int] = []
    gate = asyncio.Event()
    s = None

    def delay_for(uri):
        seen.append(s.following(uri))
        return 0.0

    async def run(uri):
        calls.append(len(calls))
        if len(calls) == 1:
            await gate.wait()

    s = LatestWinsScheduler(run, delay_for)
    s.request("a")  # a single edit
    await asyncio.sleep(0.01)
    s.request("a")  # edits during the run: a burst
    s.request("a")
    gate.set()
    await s.idle()
    assert calls == [0, 1] and seen == [False, True]
    s.request("a")  # a single edit again
    await s.idle()
    assert seen == [False, True, False] and not s.following("a")
