"""The operator's E-Stop a driver may wait for (the profile's ``estop_registration``, spot_ros2): the driver's
Trigger services are on a node named as the real driver's, advertised from the start but answered (its
parameter services too) only once the simulated operator registered an E-Stop, while the streams go on."""

from __future__ import annotations

import math
import threading
from typing import Any

from rclpy.node import Node

from homiebot.robots.profile import RobotProfile
from homiebot.ros.kit.common import spin_in_background


def _estop_after(value: Any, profile: RobotProfile | None) -> float | None:
    """When the simulated operator registers an E-Stop (seconds from start-up; None: never), from the node
    parameter: empty for the profile's ``sim.estop_registered_after``, ``never`` or a negative number for never."""
    if isinstance(value, str):
        text = value.strip().lower()
        if text == "":
            return profile.sim.estop_registered_after if profile is not None else None
        if text == "never":
            return None
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"estop_registered_after must be seconds, 'never' or empty, not '{value}'") from None
    seconds = float(value)
    if not math.isfinite(seconds):
        raise ValueError(f"estop_registered_after must be finite, not {value}")
    return None if seconds < 0 else seconds


def _estop_check(value: Any) -> str | None:
    """A parameter check: the error text of a wrong ``estop_registered_after``, or None."""
    try:
        _estop_after(value, None)
    except ValueError as err:
        return str(err)
    return None


class EStopRegistration:
    """The node answering the driver's Trigger services (``node``): the simulator's services node, spinning
    already, or for a driver that waits for an E-Stop a node of the real driver's name that spins once the
    simulated operator registered one (``wait``)."""

    def __init__(self, node: Node, profile: RobotProfile, services_node: Node) -> None:
        self._log_node, self.profile = node, profile
        self._services_node = services_node
        self.node = services_node if profile.estop_registration is None else self._driver_node()
        self._executor: Any = None
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()  # the registration (a timer's thread) against close()
        self._closed = False

    def _driver_node(self) -> Node:
        """The node serving the Trigger services of a driver that waits for an E-Stop: named as the real driver's
        node (its parameter services are what the bridge and the driver check ask)."""
        p = self.profile
        assert p.estop_registration is not None
        namespace = f"/{p.namespace.strip('/')}" if p.namespace.strip("/") else "/"
        node = Node(p.estop_registration.node, namespace=namespace, use_global_arguments=False)
        # as spot_ros2's default (spot_ros2.py, declare_parameter("start_estop", False)): the operator's E-Stop, not one
        # of the driver's own (the simulated operator registers it: estop_registered_after)
        node.declare_parameter("start_estop", False)
        return node

    def wait(self, after: float | None) -> None:
        """For a driver that waits for an operator's E-Stop (spot_ros2): serve its services ``after`` seconds from
        now (None: never), when the simulated operator registers one. Until then they are advertised but
        unanswered, as the real driver's (its constructor blocks; its streams come from other nodes and go on)."""
        if self.profile.estop_registration is None:
            return  # the services answer on the simulator's services node, spinning already
        if after == 0.0:
            self.register()
            return
        self._log_node.get_logger().warning(
            f"sim driver: waiting for an E-Stop to be registered ({'never, as configured' if after is None else f'in {after:g} s'}); "
            f"{self.profile.driver_node()} answers no service until then")
        if after is not None:
            self._timer = threading.Timer(after, self.register)
            self._timer.daemon = True
            self._timer.start()

    def register(self) -> None:
        """An E-Stop is registered: the driver's node spins and answers from now on."""
        with self._lock:
            if self._executor is not None or self._closed:
                return
            self._executor, _ = spin_in_background(self.node)
        self._log_node.get_logger().info("sim driver: an E-Stop is registered; the driver serves its services")

    def halt(self) -> None:
        """The driver's node stops answering, as a crashed or hung driver process (its name and endpoints stay in
        the graph, as a killed process's do until the middleware's lease ends); the streams go on."""
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(timeout_sec=2.0)

    def restart(self) -> Node:
        """A new driver process: the old node goes, a new one of the same name (new endpoints) serves at once (the
        robot's E-Stop is registered already); the caller creates the services on it. Returns the new node."""
        assert self.profile.estop_registration is not None, "only a driver of its own node restarts"
        self.halt()
        with self._lock:  # the old one first: the graph keys a process's nodes by name (two of one name confuse it)
            self.node.destroy_node()
            self.node = self._driver_node()
        return self.node

    def serve(self) -> None:
        """Spin the driver's node (after ``restart`` created its services)."""
        with self._lock:
            if self._executor is None and not self._closed:
                self._executor, _ = spin_in_background(self.node)

    @property
    def registered(self) -> bool:
        """Whether the driver's own node spins (always for a driver that waits for no E-Stop)."""
        return self.profile.estop_registration is None or self._executor is not None

    def cancel(self) -> None:
        """No registration from now on (the driver is closing)."""
        with self._lock:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()

    def shutdown(self) -> None:
        """The driver's node stops spinning, if it spun (the node stays until ``destroy``)."""
        self.halt()

    def destroy(self) -> None:
        """Destroy the driver's own node (the services node is its owner's)."""
        if self.node is not self._services_node:
            self.node.destroy_node()
