"""``DriverWatch``: the driver's own node, watched apart from the state publisher whose odometry ``DriverHealth``
reads. spot_ros2 runs them as separate processes (``spot_ros2`` takes the commands and serves claim, power_on,
stand ...; ``spot_state_publisher`` sends odometry and status): odometry that flows says nothing about the node
the commands go to.

* Alive: the driver's node (the profile's ``estop_registration.node``, e.g. ``/spot/spot_ros2``) is asked for its
  parameter names (``list_parameters``: no effect on the robot) every ``PROBE_PERIOD`` seconds. Unanswered for
  ``SILENT_SHARE`` of the bridge's ``stale_after`` (0.8 s for the default 1 s), and then for as long again (a busy machine delays answers: a stall, not a death,
  unless none comes), it is gone: every command raises ``RobotUnavailable`` saying so. A killed process stays in
  the graph until the middleware's lease ends, so its absence from the graph is not waited for. While this
  bridge's own call to the driver is in flight (a power-on takes seconds) the node counts as answering.
* Restarted: a new process of the driver's node has new endpoints (its ``/parameter_events`` publisher, which every
  node has, gets a new id); its robot is unclaimed and unpowered, so the start-up procedure runs again before the
  next command (``bring_up``), or the command raises ``RobotUnavailable`` saying in one line why it could not.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from rcl_interfaces.srv import ListParameters
from rclpy.node import Node

from homiebot.core.robot import RobotUnavailable
from homiebot.robots.profile import RobotProfile

PROBE_PERIOD = 0.25  # s between two questions to the driver's node
SILENT_SHARE = 0.8  # of stale_after: how long without an answer before the node is waited for (as long again) and judged gone
RESTART_CHECK = 0.5  # s between two looks at the graph for a new process of the driver's node
PARAMETER_EVENTS = "/parameter_events"


class DriverWatch:
    """Asks the driver's node whether it answers, and notices a new process of it (see the module doc). Nothing is
    watched for a driver without a node of its own (``profile.driver_node()`` is None)."""

    def __init__(self, node: Node, profile: RobotProfile, bring_up: Callable[[], None], stale_after: float = 1.0) -> None:
        self.node, self.profile, self._bring_up = node, profile, bring_up
        self.silent_after = SILENT_SHARE * stale_after  # s without an answer before it is waited for, then judged gone
        self.name = profile.driver_node()
        self._lock = threading.Lock()
        self._answered = 0.0  # monotonic time of the newest answer
        self._pending: Any = None  # (future, monotonic time asked)
        self._busy = 0  # this bridge's own calls to the driver in flight
        self._ids: set[bytes] = set()  # the driver node's endpoints when it was brought up
        self._looked = 0.0  # monotonic time the graph was last asked for the node's endpoints
        self._retry = False  # a restarted driver could not be brought up: try again
        self.started = False
        self.gone = False  # judged gone
        self._client: Any = None
        self._timer: Any = None  # made when the robot is brought up, cancelled when the bridge closes

    # ---- the probe (the bridge node's executor) ---------------------------------------------------------
    def _probe(self) -> None:
        if not self.started or self._client is None:
            return
        now = time.monotonic()
        with self._lock:
            pending = self._pending
        if pending is not None:
            future, asked = pending
            if not future.done() and now - asked < self.silent_after:
                return  # still waiting for it
            if not future.done():  # a dead server never answers: ask again (a restarted one will)
                self._client.remove_pending_request(future)
        if not self._client.service_is_ready():
            return
        future = self._client.call_async(ListParameters.Request(depth=1))
        future.add_done_callback(self._on_answer)
        with self._lock:
            self._pending = (future, now)

    def _on_answer(self, future: Any) -> None:
        if future.cancelled() or future.exception() is not None:
            return
        with self._lock:
            self._answered = time.monotonic()

    # ---- the bridge's side ---------------------------------------------------------------------------
    def watch(self) -> None:
        """The robot was brought up: note the driver node's endpoints (a new one is a restarted driver) and start
        asking (the start-up found it answering)."""
        if self.name is None:
            return
        if self._client is None:
            self._client = self.node.create_client(ListParameters, f"{self.name}/list_parameters")
            self._timer = self.node.create_timer(PROBE_PERIOD, self._probe)
        with self._lock:
            self._answered = time.monotonic()
            self.started, self.gone, self._retry = True, False, False
        self._ids = self._endpoints() or self._ids

    def stop(self) -> None:
        """No more questions (the bridge is closing)."""
        self.started = False
        if self._timer is not None:
            self._timer.cancel()

    def busy(self, delta: int) -> None:
        """This bridge's own call to the driver starts (+1) or ends (-1): meanwhile the node counts as answering."""
        with self._lock:
            self._busy += delta
            self._answered = time.monotonic()

    def silent_for(self) -> float:
        """Seconds since the driver's node last answered (0 while this bridge's call to it is in flight)."""
        with self._lock:
            return 0.0 if self._busy else time.monotonic() - self._answered

    def _endpoints(self) -> set[bytes]:
        assert self.name is not None
        namespace, _, name = self.name.rpartition("/")
        return {bytes(info.endpoint_gid) for info in self.node.get_publishers_info_by_topic(PARAMETER_EVENTS)
                if info.node_name == name and info.node_namespace == (namespace or "/")}

    def check(self) -> None:
        """``RobotUnavailable`` when the driver's node is gone; a restarted one is brought up first."""
        if not self.started or self.name is None:
            return
        now = time.monotonic()
        if now - self._looked >= RESTART_CHECK:  # the graph is asked at most this often
            self._looked = now
            ids = self._endpoints()
            if not self._ids:
                self._ids = ids  # the graph had not listed it when it was brought up
            elif ids - self._ids or self._retry:
                self._restarted(ids)
        if self.silent_for() > self.silent_after:
            deadline = time.monotonic() + self.silent_after  # a busy machine delays answers: wait as long again
            while self.silent_for() > self.silent_after and time.monotonic() < deadline:
                time.sleep(0.01)
            silent = self.silent_for()
            if silent > self.silent_after:
                self.gone = True
                raise RobotUnavailable(f"{self.profile.robot}: its driver node {self.name} has not answered for {silent:.1f} s "
                                       f"while its odometry flows (it died or hangs): commands would do nothing")
        if self.gone:  # it answers again: the same process, which hung (a new one was brought up above)
            self.gone = False

    def _restarted(self, ids: set[bytes]) -> None:
        self._ids = ids
        self.node.get_logger().warning(f"{self.profile.robot}: its driver node {self.name} restarted; bringing it up again "
                                       f"({', '.join(self.profile.startup) or 'no start-up services'})")
        try:
            self._bring_up()
        except RobotUnavailable as err:
            self._retry = True  # try again at the next command
            raise RobotUnavailable(f"{self.profile.robot}: its driver node {self.name} restarted and could not be brought "
                                   f"up again: {err}") from None
        self.watch()


__all__ = ["PROBE_PERIOD", "SILENT_SHARE", "DriverWatch"]
