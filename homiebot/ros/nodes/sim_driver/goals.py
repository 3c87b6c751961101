"""The timed action goals (a trajectory, a head turn, a torso lift) the driver ran, by id: a lock-step
``step`` may wait for a goal to be running and end at the tick it ended."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

KEPT = 256  # the newest notes kept: a step asks for a goal just sent


def goal_key(handle: Any) -> str:
    """A goal's id as the client reads its goal_id (hex)."""
    return bytes(handle.goal_id.uuid).hex()


class GoalNotes:
    """Goal id -> whether it ended; written under the driver's ``lock``."""

    def __init__(self, lock: threading.Lock) -> None:
        self.lock = lock
        self._ended: OrderedDict[str, bool] = OrderedDict()

    def note(self, handle: Any, ended: bool) -> None:
        """Note a goal as running or ended (under the lock); the oldest notes go."""
        self._ended[goal_key(handle)] = ended
        while len(self._ended) > KEPT:
            self._ended.popitem(last=False)

    def known(self, key: str) -> bool:
        """Whether the goal ``key`` ran (is running or ended)."""
        return key in self._ended

    def ended(self, key: str) -> bool:
        """Whether the goal ``key`` ended."""
        return self._ended.get(key, False)

    def refuse(self, handle: Any) -> None:
        """A goal that cannot run: noted as ended at once (so a step waiting for it goes on) and aborted."""
        with self.lock:
            self.note(handle, ended=True)
        handle.abort()
