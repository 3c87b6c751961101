"""Fail the calls waiting on another node of the graph as soon as that node is lost, not at their timeout.

A node that calls another (the world calls the mapper; the executor's copy of the simulator calls the world) waited
out its call's timeout when the callee was killed mid-call: the world's 60 s map timeout held the next episode's
reset as long, the executor's 30 s held its next subtask. The heartbeats tell within a fraction of a second
(``NodeWatch``: a dead process of this machine at once, silence otherwise).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from rclpy.node import Node

from homiebot.ros.kit.watch import NodeWatch

SILENCE = 3.0  # s of silence after which a peer of another machine is taken for lost (the task manager's heartbeat_timeout)


class Abortable(Protocol):
    """A blocking caller (``ServiceCaller``, ``ActionCaller``)."""

    def abort(self, reason: str) -> None:
        """Fail the calls waiting now and every later one until ``resume``."""

    def resume(self) -> None:
        """Accept calls again."""


class PeerWatch:
    """The callers of each peer node (by name), failed with the watch's reason once that peer is lost. ``begin`` at
    each episode's start: the callers accept calls again and the peers beating now are watched. ``hang_timeout``:
    how long a peer of this machine whose process runs may be silent (the calls' own timeout is a fair bound)."""

    def __init__(self, node: Node, callers: dict[str, Iterable[Abortable]], hang_timeout: float) -> None:
        self.callers = {name: list(group) for name, group in callers.items()}
        self.watch = NodeWatch(node, SILENCE, self._lost, belongs=lambda name: name in self.callers, hang_timeout=hang_timeout)

    def begin(self) -> None:
        """A new episode: resume every caller, watch the peers that beat now."""
        for group in self.callers.values():
            for caller in group:
                caller.resume()
        self.watch.begin()

    def _lost(self, node: str, reason: str) -> None:
        for caller in self.callers.get(node, ()):
            caller.abort(reason)
