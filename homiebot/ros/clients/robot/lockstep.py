"""``LockStep``: where the bridge's time comes from, the wall clock or a lock-step simulation's steps.

In lock-step (the sim driver's ``step``) every wait for motion advances simulated time instead of
sleeping, after the commands sent before it arrived: the step is told how many of each kind of command
the driver must have counted first. Odometry and images stamped before the last step's instant are stale.
"""

from __future__ import annotations

import time
from collections.abc import Callable

# seconds, the driver's command counts to wait for and an action goal's id to run until it ended, or None
# -> the new simulated time in ns and the driver's counts
StepFunction = Callable[[float, dict[str, int], str | None], tuple[int, dict[str, int]]]


class LockStep:
    """The bridge's clock: real time when ``step`` is None, else a simulation advanced by ``step``."""

    def __init__(self, step: StepFunction | None) -> None:
        self._step = step
        self.sim_ns = -1  # the simulated time of the last step (images older than it are stale)
        self._driver_counts: dict[str, int] = {}  # the driver's command counts after the last step
        self._sent = {"cmd_vel": 0, "arm_goals": 0}  # and what this bridge sent since

    @property
    def active(self) -> bool:
        """Whether time passes only in simulation steps."""
        return self._step is not None

    def sent(self, kind: str) -> None:
        """Note a command of ``kind`` (``cmd_vel``, ``arm_goals``): the next step waits for the driver to count it."""
        self._sent[kind] += 1

    def sync(self) -> None:
        """Lock-step: take the driver's present instant and counts (a step of no time) that the next step waits beyond."""
        if self._step is not None:
            self.sim_ns, self._driver_counts = self._step(0.0, {}, None)

    def pause(self, duration: float, until: str | None = None) -> None:
        """Let ``duration`` seconds of motion happen: real time, or a lock-step simulation step (with
        ``until``, an action goal's id: ending at the tick the driver ended that goal)."""
        if self._step is None:
            time.sleep(duration)
            return
        after = {k: self._driver_counts.get(k, 0) + n for k, n in self._sent.items() if n}
        self.sim_ns, self._driver_counts = self._step(duration, after, until)
        self._sent = dict.fromkeys(self._sent, 0)

    def clock(self) -> float:
        """Simulated seconds in lock-step (time passes only in steps), else the monotonic clock."""
        return self.sim_ns / 1e9 if self._step is not None else time.monotonic()

    def expect_instant(self, ns: int) -> None:
        """Odometry and images stamped before ``ns`` are stale from now on."""
        self.sim_ns = max(self.sim_ns, int(ns))


__all__ = ["LockStep", "StepFunction"]
