"""``LockStep``: where the bridge's time comes from, the wall clock or a lock-step simulation's steps.

In lock-step (the sim driver's ``step``) every wait for motion advances simulated time instead of
sleeping, after the commands sent before it arrived: the step is told how many of each kind of command
the driver must have counted first. Odometry and images stamped before the last step's instant are stale. A
driver that renders on demand renders at a step only the cameras read at the instant before; a reader asks for
any other at the instant it reads it.
"""

from __future__ import annotations

import time
from collections.abc import Callable

# seconds, the driver's command counts to wait for, an action goal's id to run until it ended (or None) and the
# cameras to render at the new instant (None: all) -> the new simulated time in ns and the driver's counts
StepFunction = Callable[[float, dict[str, int], str | None, list[str] | None], tuple[int, dict[str, int]]]
RenderFunction = Callable[[list[str]], int]  # cameras to render at the present instant -> that instant (ns)


class LockStep:
    """The bridge's clock: real time when ``step`` is None, else a simulation advanced by ``step``."""

    def __init__(self, step: StepFunction | None, render: RenderFunction | None = None) -> None:
        """``render``: the driver renders cameras on demand; each step then renders only the cameras read at the
        instant before (a skill reads its camera every step), and a camera read that the step did not render is
        asked for (``ask``). Without it every step renders every camera."""
        self._step, self._render = step, render
        self._read: set[str] = set()  # cameras read at the present instant
        self._asked: set[str] = set()  # cameras asked for at the present instant
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
            self.sim_ns, self._driver_counts = self._step(0.0, {}, None, None)
            self._read, self._asked = set(), set()

    def pause(self, duration: float, until: str | None = None) -> None:
        """Let ``duration`` seconds of motion happen: real time, or a lock-step simulation step (with
        ``until``, an action goal's id: ending at the tick the driver ended that goal)."""
        if self._step is None:
            time.sleep(duration)
            return
        after = {k: self._driver_counts.get(k, 0) + n for k, n in self._sent.items() if n}
        cameras = sorted(self._read) if self._render is not None else None
        self.sim_ns, self._driver_counts = self._step(duration, after, until, cameras)
        self._sent = dict.fromkeys(self._sent, 0)
        self._read, self._asked = set(), set()

    def reading(self, camera: str) -> None:
        """``camera`` is read at the present instant (the next step renders it)."""
        self._read.add(camera)

    def ask(self, camera: str) -> bool:
        """Lock-step with rendering on demand: have the driver render ``camera`` at the present instant, once per
        instant; False when this clock cannot ask (its frames then come with every step)."""
        if self._render is None or camera in self._asked:
            return False
        self._asked.add(camera)
        self._render([camera])
        return True

    def clock(self) -> float:
        """Simulated seconds in lock-step (time passes only in steps), else the monotonic clock."""
        return self.sim_ns / 1e9 if self._step is not None else time.monotonic()

    def expect_instant(self, ns: int) -> None:
        """Odometry and images stamped before ``ns`` are stale from now on (another process stepped, or the
        simulation restarted): the cameras read and asked for belong to the instant before."""
        if int(ns) > self.sim_ns:
            self.sim_ns = int(ns)
            self._read, self._asked = set(), set()


__all__ = ["LockStep", "RenderFunction", "StepFunction"]
