"""The sim driver's clock: the wall clock in real time; in lock-step simulated time, which advances only on
``step`` calls and is published on ``/clock`` (as a simulator publishes its time)."""

from __future__ import annotations

import time
from typing import Any

from rosgraph_msgs.msg import Clock

from homiebot.ros.messages.common import stamp_of


class SimClock:
    """The time the driver moves by and stamps with (``lockstep``: simulated nanoseconds in ``sim_ns``)."""

    def __init__(self, node: Any, lockstep: bool) -> None:
        self.lockstep = lockstep
        self.sim_ns = 0
        self.publisher = node.create_publisher(Clock, "/clock", 10) if lockstep else None

    def seconds(self) -> float:
        """The driver's clock: simulated seconds in lock-step, else the monotonic clock."""
        return self.sim_ns / 1e9 if self.lockstep else time.monotonic()

    def stamp_ns(self) -> int:
        """Message stamps: simulated time in lock-step, else the wall clock."""
        return self.sim_ns if self.lockstep else time.time_ns()

    def advance(self, seconds: float) -> None:
        """Simulated time moves on by ``seconds`` (lock-step)."""
        self.sim_ns += round(seconds * 1e9)

    def publish(self, stamp: int) -> None:
        """Tell ``/clock`` the instant ``stamp`` (lock-step only; in real time there is no /clock)."""
        if self.publisher is not None:
            self.publisher.publish(Clock(clock=stamp_of(stamp)))
