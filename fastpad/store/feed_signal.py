"""In-process notice that a workspace's change feed gained a committed row.

``Store.write`` publishes after COMMIT when the transaction appended to the
feed; a long-polling reader awaits the notice instead of sleeping in a loop.
It only knows about commits made by this process: readers also re-check the
database now and then, which is how writes by another process (an operator
command, a second server) are seen.

Publishing happens on whatever thread committed; waiters are asyncio tasks,
woken on their own event loop; listeners (the embedding worker) are called on
the committing thread, and one that fails is logged, never the writer's error:
its write has already committed.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable

log = logging.getLogger("fastpad.store")


class CommitSignal:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._generation: dict[str, int] = {}
        self._waiters: dict[str, set[tuple[asyncio.AbstractEventLoop, asyncio.Event]]] = {}
        self._listeners: list[Callable[[str], None]] = []

    def listen(self, callback: Callable[[str], None]) -> Callable[[], None]:
        """Call ``callback(workspace_id)`` after every publish, on the committing
        thread (keep it cheap: the embedding worker only notes the workspace).
        Returns the function that stops it."""
        with self._lock:
            self._listeners.append(callback)

        def stop() -> None:
            with self._lock:
                if callback in self._listeners:
                    self._listeners.remove(callback)

        return stop

    def generation(self, workspace_id: str) -> int:
        """A number that changes whenever ``publish`` is called for the workspace.
        Read it *before* reading the feed, then ``wait`` with it: a commit in
        between is never missed."""
        with self._lock:
            return self._generation.get(workspace_id, 0)

    def publish(self, workspace_id: str) -> None:
        with self._lock:
            self._generation[workspace_id] = self._generation.get(workspace_id, 0) + 1
            waiters = self._waiters.pop(workspace_id, set())
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(workspace_id)
            except Exception:
                log.exception("a commit listener failed")
        for loop, event in waiters:
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:
                pass  # that waiter's event loop has closed; nobody is left to wake

    async def wait(self, workspace_id: str, seen: int, timeout: float) -> bool:
        """Until the workspace's generation differs from ``seen`` (True) or ``timeout`` seconds pass (False)."""
        waiter = (asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
            if self._generation.get(workspace_id, 0) != seen:
                return True
            self._waiters.setdefault(workspace_id, set()).add(waiter)
        try:
            await asyncio.wait_for(waiter[1].wait(), timeout)
            return True
        except asyncio.TimeoutError:
            return False
        finally:
            with self._lock:
                pending = self._waiters.get(workspace_id)
                if pending is not None:
                    pending.discard(waiter)
                    if not pending:
                        del self._waiters[workspace_id]


# One per process: workspace ids are globally unique, so stores opened side by
# side in one process (tests) share it harmlessly — at worst a waiter re-checks.
feed_commits = CommitSignal()
