"""The mobile base: ``cmd_vel`` applied in real time within the profile's limits, with the ``cmd_vel_timeout``
real drivers have (with no new command the base stops), and odometry of where the home's robot is."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import Any

from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry

from homiebot.robots.profile import RobotProfile
from homiebot.ros.messages.common import stamp_of
from homiebot.ros.messages.wire import WireError, safe_callback
from homiebot.ros.nodes.sim_driver.numbers import finite
from homiebot.ros.nodes.sim_driver.power import Power


class SimBase:
    """The base's velocity command (``command``: v, w, when received on the driver's clock) and its odometry
    (``world``: the embedded home, whose own robot it drives)."""

    def __init__(self, node: Any, profile: RobotProfile, world: Any, power: Power, seconds: Callable[[], float],
                 lock: threading.Lock, counters: dict[str, int]) -> None:
        self.profile, self.world, self.robot, self.power = profile, world, world.own_robot(), power
        self._seconds, self._lock, self.counters = seconds, lock, counters
        self.command: tuple[float, float, float] | None = None
        self.odom_pub = node.create_publisher(Odometry, profile.topic(profile.odometry.name), 10)
        name = profile.cmd_vel.name
        node.create_subscription(Twist, profile.topic(name), safe_callback(node, name, self.on_cmd_vel), 10)

    def on_cmd_vel(self, msg: Twist) -> None:
        """Hold a velocity command until the next one or its timeout."""
        v, w = float(msg.linear.x), float(msg.angular.z)
        if not finite(v, w):
            raise WireError("cmd_vel with a non-finite velocity")
        with self._lock:
            self.counters["cmd_vel"] += 1
            self.command = (v, w, self._seconds())

    def stop(self) -> None:
        """Drop the held command (under the lock)."""
        self.command = None

    def advance(self, dt: float, now: float) -> None:
        """Drive the held command for ``dt`` seconds (under the lock; ``now``: the driver's clock); a command
        older than the timeout is dropped."""
        cmd = self.command
        if cmd is not None and now - cmd[2] > self.profile.cmd_vel_timeout:
            self.command, cmd = None, None
            self.counters["timeouts"] += 1
        if cmd is not None and self.power.can_move and dt > 0:
            self.robot.drive(cmd[0], cmd[1], dt)
            self.counters["applied"] += 1

    def odometry(self, stamp: int) -> Odometry:
        """Where the robot is, in the odometry frame, and the velocity it is driven at."""
        r = self.world.state.robot
        msg = Odometry()
        msg.header.stamp = stamp_of(stamp)
        msg.header.frame_id = self.profile.odom_frame
        msg.child_frame_id = self.profile.base_frame
        msg.pose.pose.position.x, msg.pose.pose.position.y = r.x, r.y
        msg.pose.pose.orientation.z, msg.pose.pose.orientation.w = math.sin(r.yaw / 2), math.cos(r.yaw / 2)
        cmd = self.command if self.power.can_move else None
        msg.twist.twist.linear.x, msg.twist.twist.angular.z = (cmd[0], cmd[1]) if cmd else (0.0, 0.0)
        return msg

    def publish(self, stamp: int) -> None:
        """Publish the odometry of the instant ``stamp``."""
        self.odom_pub.publish(self.odometry(stamp))
