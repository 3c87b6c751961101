"""A bounded hand-off from the robot's loop to a viewer thread: the loop never waits on the viewer."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class Item:
    """One thing for the viewer; ``droppable`` items (images) are skipped when the viewer is behind,
    the others (timeline entries, a few bytes each) are always kept."""

    apply: Callable[[], None]
    droppable: bool = True


class DropQueue:
    """Runs queued callables on a background thread. ``put`` never blocks: when ``limit`` droppable
    items wait already, the new droppable item is dropped (counted in ``dropped``)."""

    def __init__(self, limit: int = 8, name: str = "homiebot-viewer") -> None:
        self.limit = limit
        self.dropped = 0
        self.done = 0
        self.errors: list[str] = []
        self._items: deque[Item] = deque()
        self._waiting = 0  # droppable items in the queue
        self._cv = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def put(self, apply: Callable[[], None], droppable: bool = True) -> bool:
        """Queue ``apply``; False when it was dropped (the viewer is behind) or the queue is closed."""
        with self._cv:
            if self._closed:
                return False
            if droppable and self._waiting >= self.limit:
                self.dropped += 1
                return False
            self._items.append(Item(apply, droppable))
            self._waiting += droppable
            self._cv.notify()
        return True

    def _run(self) -> None:
        while True:
            with self._cv:
                while not self._items and not self._closed:
                    self._cv.wait()
                if not self._items:
                    return
                item = self._items.popleft()
                self._waiting -= item.droppable
            try:
                item.apply()
            except Exception as err:  # a viewer fault must never reach the robot's loop
                if len(self.errors) < 10:
                    self.errors.append(f"{type(err).__name__}: {err}")
            self.done += 1

    def close(self, timeout: float = 30.0) -> None:
        """Finish what is queued (up to ``timeout`` seconds) and stop the thread."""
        with self._cv:
            self._closed = True
            self._cv.notify()
        self._thread.join(timeout)
