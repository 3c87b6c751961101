"""The mobile base: ``cmd_vel`` applied in real time within the profile's limits, each for the driver's command
duration (``upstream.cmd_duration``: spot_ros2's ``cmd_duration`` 0.125 s, or the profile's ``cmd_vel_timeout``):
with no new command the base stops when the last one ends, mid-tick if need be, as the robot would. In lock-step
a command sent before a step is held for the whole step (the bridge stands for a process that would have re-sent
it meanwhile). Odometry of where the home's robot is."""

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
from homiebot.ros.nodes.sim_driver.upstream import odometry_frames


class SimBase:
    """The base's velocity command (``command``: v, w, when received on the driver's clock) and its odometry
    (``world``: the embedded home, whose own robot it drives)."""

    def __init__(self, node: Any, profile: RobotProfile, world: Any, power: Power, seconds: Callable[[], float],
                 lock: threading.Lock, counters: dict[str, int], duration: float | None = None) -> None:
        self.profile, self.world, self.robot, self.power = profile, world, world.own_robot(), power
        self._seconds, self._lock, self.counters = seconds, lock, counters
        self.duration = profile.cmd_vel_timeout if duration is None else duration  # s one cmd_vel moves the base
        self.command: tuple[float, float, float] | None = None  # v, w, and when it ends on the driver's clock
        self.frames = odometry_frames(profile)  # as the emulated driver stamps them (spot_ros2: spot/odom, spot/body)
        self.accepting = True  # false while the driver's own node is gone (driver_part): cmd_vel reaches nobody
        self.odom_pub = node.create_publisher(Odometry, profile.topic(profile.odometry.name), 10)
        name = profile.cmd_vel.name
        node.create_subscription(Twist, topic := profile.topic(name), safe_callback(node, topic, self.on_cmd_vel), 10)

    def on_cmd_vel(self, msg: Twist) -> None:
        """Hold a velocity command until the next one or its timeout."""
        v, w = float(msg.linear.x), float(msg.angular.z)
        if not finite(v, w):
            raise WireError("cmd_vel with a non-finite velocity")
        with self._lock:
            self.counters["cmd_vel"] += 1
            if self.accepting:
                self.command = (v, w, self._seconds() + self.duration)

    def hold(self, until: float) -> None:
        """Lock-step: the held command lasts at least until ``until`` (under the lock)."""
        if self.command is not None:
            self.command = (self.command[0], self.command[1], max(self.command[2], until))

    def stop(self) -> None:
        """Drop the held command (under the lock)."""
        self.command = None

    def advance(self, dt: float, now: float) -> None:
        """Drive the held command for the part of the ``dt`` seconds up to ``now`` (under the lock; the driver's
        clock) before it ended; an ended command is dropped."""
        cmd = self.command
        if cmd is None:
            return
        moving = min(dt, dt - (now - cmd[2])) if now > cmd[2] else dt
        if now >= cmd[2]:
            self.command = None
            self.counters["timeouts"] += 1
        if self.power.can_move and moving > 1e-9:
            self.robot.drive(cmd[0], cmd[1], moving)
            self.counters["applied"] += 1

    def odometry(self, stamp: int) -> Odometry:
        """Where the robot is, in the odometry frame, and the velocity it is driven at."""
        r = self.world.state.robot
        msg = Odometry()
        msg.header.stamp = stamp_of(stamp)
        msg.header.frame_id, msg.child_frame_id = self.frames
        msg.pose.pose.position.x, msg.pose.pose.position.y = r.x, r.y
        msg.pose.pose.orientation.z, msg.pose.pose.orientation.w = math.sin(r.yaw / 2), math.cos(r.yaw / 2)
        cmd = self.command if self.power.can_move else None
        msg.twist.twist.linear.x, msg.twist.twist.angular.z = (cmd[0], cmd[1]) if cmd else (0.0, 0.0)
        return msg

    def publish(self, stamp: int) -> None:
        """Publish the odometry of the instant ``stamp``."""
        self.odom_pub.publish(self.odometry(stamp))
