"""Latest-wins analysis scheduling, one asyncio task per document URI.

No fixed debounce: a fixed 100–200 ms delay would make every edit feel that late although an
analysis takes about a millisecond (lsp-engineering.md §7). Instead:

* when nothing runs for a URI, analyse at once;
* while an analysis runs, further requests only mark the URI dirty, so when it finishes the
  *newest* version is analysed next and the intermediate ones are skipped;
* a delay is added only when asked for: ``delay_for(uri)`` (seconds); the server returns the
  configured ``debounceMs`` (0 by default) and nothing adaptive. A caller that wants to tell
  bursts apart can ask :meth:`LatestWinsScheduler.following`, which is ``True`` while
  ``delay_for`` is asked for a run that follows edits made during the previous run.

The callback ``run(uri)`` reads the document's current text and version itself and must not
publish results for a version older than the document's current one; the scheduler only
guarantees that runs for one URI never overlap and that a request made during a run is
followed by another run.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Awaitable, Callable

log = logging.getLogger(__name__)


class LatestWinsScheduler:
    """Coalesce analysis requests per URI (see the module docstring).

    ``run`` is a coroutine function ``run(uri) -> None``; exceptions it raises are logged and do
    not stop later runs. ``delay_for(uri) -> float`` gives the seconds to wait before a run
    (0 for none); it is not consulted for ``immediate`` requests.
    """

    def __init__(
        self,
        run: Callable[[str], Awaitable[None]],
        delay_for: Callable[[str], float] | None = None,
    ) -> None:
        self._run = run
        self._delay_for = delay_for or (lambda uri: 0.0)
        self._tasks: dict[str, asyncio.Task] = {}
        self._dirty: set[str] = set()
        self._immediate: set[str] = set()
        self._following: set[str] = set()

    def request(self, uri: str, *, immediate: bool = False) -> None:
        """Ask for an analysis of ``uri``'s current version. Must be called on the event loop."""
        if immediate:
            self._immediate.add(uri)
        task = self._tasks.get(uri)
        if task is not None and not task.done():
            self._dirty.add(uri)
            return
        self._tasks[uri] = asyncio.get_running_loop().create_task(self._loop(uri))

    def cancel(self, uri: str) -> None:
        """Drop pending and running work for ``uri`` (document closed)."""
        self._dirty.discard(uri)
        self._immediate.discard(uri)
        task = self._tasks.pop(uri, None)
        if task is not None and not task.done():
            task.cancel()

    def following(self, uri: str) -> bool:
        """Whether the run being scheduled for ``uri`` follows edits made while the previous run
        of ``uri`` was in progress (a burst), rather than a single edit."""
        return uri in self._following

    def any_busy(self) -> bool:
        """Whether a run for any URI is scheduled or in progress (background work yields to it)."""
        return any(not t.done() for t in self._tasks.values())

    def busy(self, uri: str) -> bool:
        """Whether a run for ``uri`` is scheduled or in progress."""
        task = self._tasks.get(uri)
        return task is not None and not task.done()

    async def idle(self) -> None:
        """Wait until no run is scheduled (tests and shutdown)."""
        while True:
            tasks = [t for t in self._tasks.values() if not t.done()]
            if not tasks:
                return
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _loop(self, uri: str) -> None:
        me = asyncio.current_task()
        follow_up = False
        try:
            while True:
                self._dirty.discard(uri)
                if uri in self._immediate:
                    self._immediate.discard(uri)
                else:
                    delay = 0.0
                    if follow_up:
                        self._following.add(uri)
                    try:
                        delay = float(self._delay_for(uri))
                    except Exception:  # noqa: BLE001
                        log.exception("delay_for(%s) failed", uri)
                    finally:
                        self._following.discard(uri)
                    if delay > 0:
                        await asyncio.sleep(delay)
                        self._dirty.discard(uri)  # the run below sees every edit made meanwhile
                try:
                    await self._run(uri)
                except asyncio.CancelledError:
                    raise
                except Exception:  # noqa: BLE001 - a failed run must not stop later ones
                    log.exception("analysis of %s failed", uri)
                if uri not in self._dirty:
                    return
                follow_up = True
        except asyncio.CancelledError:
            pass
        finally:
            if self._tasks.get(uri) is me:
                del self._tasks[uri]
