"""An action goal whose work is one blocking call that cannot be stopped from outside (a language model
generating): the call runs in a worker thread, the goal gets feedback while it runs, and a cancel ends the
goal at once; the call's answer, when it comes, is dropped. One call runs at a time, so a goal that arrives
while a cancelled call still runs waits for it (the backend behind it is not made for two callers).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from rclpy.action.server import ServerGoalHandle

T = TypeVar("T")

WAITING, WORKING = "waiting for an earlier generation to stop", "generating"


@dataclass
class Outcome(Generic[T]):
    """How a goal's work ended: its value, its exception, or neither when the goal was cancelled first."""

    value: T | None = None
    error: BaseException | None = None
    cancelled: bool = False


class GoalWork:
    """Runs one goal's blocking call at a time (see the module's text)."""

    def __init__(self, every: float = 0.5) -> None:
        """``every``: seconds between two feedback messages while the call runs."""
        self.every = every
        self._turn = threading.Lock()

    def run(self, handle: ServerGoalHandle, work: Callable[[], T], feedback: Callable[[float, str], Any]) -> Outcome[T]:
        """Run ``work`` for the goal of ``handle``; ``feedback(elapsed, stage)`` makes the feedback message."""
        started, done, dropped = time.monotonic(), threading.Event(), threading.Event()
        working = threading.Event()
        outcome: Outcome[T] = Outcome()

        def worker() -> None:
            with self._turn:
                if dropped.is_set():  # cancelled while it waited for its turn
                    done.set()
                    return
                working.set()
                try:
                    outcome.value = work()
                except BaseException as err:  # handed to the goal's thread, which reports it
                    outcome.error = err
                finally:
                    done.set()

        threading.Thread(target=worker, daemon=True, name="goal-work").start()
        while not done.wait(self.every):
            if handle.is_cancel_requested or not handle.is_active:
                dropped.set()
                return Outcome(cancelled=True)
            handle.publish_feedback(feedback(time.monotonic() - started, WORKING if working.is_set() else WAITING))
        if handle.is_cancel_requested:
            return Outcome(cancelled=True)
        return outcome
