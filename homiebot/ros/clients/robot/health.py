"""``DriverHealth``: the driver's odometry, and from it whether the driver is alive and the same process.

* A driver that stops publishing odometry for ``stale_after`` seconds is gone: every command then
  raises ``RobotUnavailable`` (a skill attempt fails with the reason ``unavailable``).
* The driver's status (the profile's ``status``: ``DriverStatus``) says what stopped a robot whose odometry
  flows: an operator's E-Stop, a behaviour fault, motor power lost since start-up; every command then raises
  ``RobotUnavailable`` saying which.
* The driver's own node (spot_ros2, apart from the state publisher: ``DriverWatch``) that stops answering
  while odometry flows is gone too; a new process of it is brought up again.
* A driver process that comes back (a new odometry publisher) starts unpowered: the start-up procedure
  runs again before the next command, or the command raises ``RobotUnavailable`` saying why it could
  not be brought up.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

from nav_msgs.msg import Odometry
from rclpy.node import Node

from homiebot.core.robot import BasePose, RobotUnavailable
from homiebot.robots.profile import RobotProfile
from homiebot.ros.clients.robot.driver_watch import DriverWatch
from homiebot.ros.clients.robot.lockstep import LockStep
from homiebot.ros.clients.robot.status import DriverStatus
from homiebot.ros.messages.common import ns_of

DRIVER_CHECK = 1.0  # s between two looks at which processes publish odometry (a restarted driver is brought up again)


class DriverHealth:
    """Subscribes to the profile's odometry; ``alive`` is the newest pose, or ``RobotUnavailable`` when
    the driver is silent, and brings a restarted driver up again (``bring_up``)."""

    def __init__(self, node: Node, profile: RobotProfile, lockstep: LockStep, stale_after: float, call_timeout: float,
                 bring_up: Callable[[], None]) -> None:
        self.node, self.profile, self.lockstep = node, profile, lockstep
        self.stale_after, self.call_timeout = stale_after, call_timeout
        self._bring_up = bring_up
        self._lock = threading.Lock()
        self._odom: tuple[BasePose, float] | None = None  # (pose, monotonic time received)
        self._odom_ns = -1  # its stamp (ns)
        self.base_frame = ""  # the driver's base frame, as its odometry names it (child_frame_id)
        self.started = False  # start() got the streams: a restarted driver is brought up, closing runs the shut-down
        self._driver: set[bytes] = set()  # the odometry publishers start() brought up (a newcomer is a restarted driver)
        self._driver_checked = 0.0
        node.create_subscription(Odometry, profile.topic(profile.odometry.name), self._on_odom, 10)
        self.status = DriverStatus(node, profile)  # the driver's status topics (the profile's status), if any
        self.driver_watch: DriverWatch | None = None  # the driver's own node, when the bridge watches it

    def _on_odom(self, msg: Odometry) -> None:
        q = msg.pose.pose.orientation
        yaw = math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z))
        stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        pose = BasePose(float(msg.pose.pose.position.x), float(msg.pose.pose.position.y), yaw, stamp)
        with self._lock:
            self._odom = (pose, time.monotonic())
            self._odom_ns = ns_of(msg.header.stamp)
            self.base_frame = str(msg.child_frame_id)

    @property
    def latest(self) -> tuple[BasePose, float] | None:
        """The newest odometry and the monotonic time it arrived; None before the first."""
        with self._lock:
            return self._odom

    def alive(self) -> BasePose:
        """The newest pose (lock-step: of the last step's instant, waited for); ``RobotUnavailable`` when
        none came or the newest is older than ``stale_after``."""
        deadline = time.monotonic() + self.call_timeout
        while True:
            with self._lock:
                odom, stamp = self._odom, self._odom_ns
            if odom is None or stamp >= self.lockstep.sim_ns or time.monotonic() > deadline:
                break  # lock-step: the odometry of the last step's instant (waited for); late: judged stale below
            time.sleep(0.002)
        if odom is None:
            raise RobotUnavailable(f"{self.profile.robot}: no odometry on {self.profile.topic(self.profile.odometry.name)}")
        age = time.monotonic() - odom[1]
        if age > self.stale_after:
            odom = self._next_odometry(odom)  # a busy machine delays delivery: a stall, not a death, unless none comes
            age = time.monotonic() - odom[1]
        if age > self.stale_after:
            raise RobotUnavailable(f"{self.profile.robot}'s driver stopped publishing odometry {age:.1f} s ago (it died or hangs)")
        self._check_driver()
        if self.driver_watch is not None:
            self.driver_watch.check()  # the driver's own node (spot_ros2), apart from the odometry's publisher
        self.status.check()  # an operator's E-Stop, a behaviour fault, lost motor power: said as such
        return odom[0]

    def _next_odometry(self, old: tuple[BasePose, float]) -> tuple[BasePose, float]:
        """The first odometry newer than ``old``, waited for up to ``stale_after`` more seconds (``old`` if
        none comes): a message that arrives in that time shows the driver lives and this process was slow."""
        deadline = time.monotonic() + self.stale_after
        while time.monotonic() < deadline:
            with self._lock:
                if self._odom is not None and self._odom[1] > old[1]:
                    return self._odom
            time.sleep(0.01)
        return old

    def publishing(self) -> bool:
        """Whether the driver's odometry is fresh (it has not died or stopped)."""
        with self._lock:
            odom = self._odom
        return odom is not None and time.monotonic() - odom[1] <= self.stale_after

    def watch(self, deadline: float) -> None:
        """Mark the robot started and note which processes publish its odometry (waiting until ``deadline``
        for the graph to list one), so that a new publisher is recognised as a restarted driver."""
        self.started = True
        # the graph lists a publisher a moment after its first messages can arrive: an empty set here would make
        # the first command take the driver for a restarted one
        while not (publishers := self._odometry_publishers()) and time.monotonic() < deadline:
            time.sleep(0.05)
        self._driver, self._driver_checked = publishers, time.monotonic()

    def _odometry_publishers(self) -> set[bytes]:
        topic = self.profile.topic(self.profile.odometry.name)
        return {bytes(info.endpoint_gid) for info in self.node.get_publishers_info_by_topic(topic)}

    def _check_driver(self) -> None:
        """Bring a driver up again when a new process publishes its odometry: it was restarted, and a
        restarted driver is unpowered and unclaimed (its commands would be ignored)."""
        now = time.monotonic()
        if not self.started or now - self._driver_checked < DRIVER_CHECK:
            return
        self._driver_checked = now
        publishers = self._odometry_publishers()
        if not publishers - self._driver:
            return
        self._driver = publishers
        self.node.get_logger().warning(f"{self.profile.robot}: its driver restarted; bringing it up again "
                                       f"({', '.join(self.profile.startup) or 'no start-up services'})")
        try:
            self._bring_up()
        except RobotUnavailable as err:
            self._driver = set()  # try again at the next command
            raise RobotUnavailable(f"{self.profile.robot}: its driver restarted and could not be brought up again: {err}") from None


__all__ = ["DRIVER_CHECK", "DriverHealth"]
