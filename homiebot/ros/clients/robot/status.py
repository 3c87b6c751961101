"""``DriverStatus``: the driver's status topics (the profile's ``status``: spot_ros2's ``status/estop``,
``status/power_states``, ``status/behavior_faults``), so that a robot that stopped says why: an operator's
E-Stop, a behaviour fault, motor power lost (``homiebot.robots.spot_status``). The newest message of each is kept
(the driver publishes them reliable and transient local: a late subscriber gets the last one)."""

from __future__ import annotations

import threading
from typing import Any

from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

from homiebot.core.robot import RobotUnavailable
from homiebot.robots.profile import RobotProfile
from homiebot.robots.spot_status import status_type, stop_reason
from homiebot.ros.messages.common import ns_of

# as spot_ros2's publishers (middleware_handle_base.hpp, makePublisherQoS: depth 1, transient local, reliable)
STATUS_QOS = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                        durability=DurabilityPolicy.TRANSIENT_LOCAL)


class DriverStatus:
    """The newest status message of each role; ``check()`` raises ``RobotUnavailable`` saying what stops the robot."""

    def __init__(self, node: Node, profile: RobotProfile) -> None:
        self.profile = profile
        self._lock = threading.Lock()
        self._latest: dict[str, Any] = {}
        self.powered_ns = -1  # when this bridge last powered the robot (wall clock, ns): power off stamped later is a loss
        self.unread = ""  # why the status is not read (its types are not built here), or ""
        for role, iface in profile.status.items():
            try:
                msg_type = status_type(role, profile.robot)
            except RobotUnavailable as err:
                self.unread = str(err)
                node.get_logger().warning(f"{err}; the robot's {role} status is not read")
                continue
            node.create_subscription(msg_type, profile.topic(iface.name), self._keeper(role), STATUS_QOS)

    def _keeper(self, role: str) -> Any:
        def keep(msg: Any) -> None:
            with self._lock:
                self._latest[role] = msg
        return keep

    def latest(self, role: str) -> Any | None:
        """The newest message of a role (estop, power, faults), or None."""
        with self._lock:
            return self._latest.get(role)

    def reason(self) -> str | None:
        """What stops the robot now, in one line, or None."""
        with self._lock:
            estop, power, faults = (self._latest.get(r) for r in ("estop", "power", "faults"))
        lost = power is not None and self.powered_ns >= 0 and ns_of(power.header.stamp) > self.powered_ns
        return stop_reason(estop, power, faults, lost)

    def check(self) -> None:
        """``RobotUnavailable`` naming what stops the robot (an operator's E-Stop, a fault, lost power), if anything."""
        reason = self.reason()
        if reason is not None:
            raise RobotUnavailable(f"{self.profile.robot}: {reason}")


__all__ = ["STATUS_QOS", "DriverStatus"]
