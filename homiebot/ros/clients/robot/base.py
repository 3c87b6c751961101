"""``Base``: the mobile base's velocity commands on the profile's ``cmd_vel``.

A held velocity is re-sent every ``RESEND`` seconds, so the driver's own timeout (the profile's ``cmd_vel_timeout``:
spot_ros2's ``cmd_duration``, 0.125 s) never fires mid-command and does fire when this process dies; a gap over
it (a slow process: the base stopped in between, a real robot stutters) is counted (``cmd_vel_gaps``), logged,
and the longest gap kept (``longest_gap``). In lock-step one message is held by the simulation for exactly the
command's duration.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np
from geometry_msgs.msg import Twist
from rclpy.node import Node

from homiebot.core.robot import BasePose, CommandCounters, MotionReport
from homiebot.robots.profile import RobotProfile
from homiebot.ros.clients.robot.lockstep import LockStep

RESEND = 0.05  # s between two cmd_vel messages while a velocity is held


class Base:
    """Publishes base velocities (geometry_msgs/Twist) within the profile's limits."""

    def __init__(self, node: Node, profile: RobotProfile, counters: CommandCounters, lockstep: LockStep,
                 alive: Callable[[], BasePose], stopped: Callable[[int], None] = lambda ns: None) -> None:
        self.profile, self.counters, self.lockstep, self._alive, self._stopped = profile, counters, lockstep, alive, stopped
        self.node = node
        self.cmd_pub = node.create_publisher(Twist, profile.topic(profile.cmd_vel.name), 10)
        self.longest_gap = 0.0  # s: the longest time between two cmd_vel of one held velocity (real time)

    def drive(self, linear: float, angular: float, duration: float) -> MotionReport:
        """Hold a velocity (clipped to the limits) for ``duration`` seconds; the report gives the odometry's travel."""
        lim = self.profile.limits
        v = float(np.clip(linear, -lim.max_linear, lim.max_linear))
        w = float(np.clip(angular, -lim.max_angular, lim.max_angular))
        start = self._alive()
        msg = Twist()
        msg.linear.x, msg.angular.z = v, w
        end = time.monotonic() + duration
        sent, gaps = None, 0
        while True:
            self._alive()
            self.cmd_pub.publish(msg)
            now = time.monotonic()
            if sent is not None and now - sent > self.profile.cmd_vel_timeout:
                gaps += 1  # the driver stopped the base in between: a real robot stutters
            if sent is not None:
                self.longest_gap = max(self.longest_gap, now - sent)
            sent = now
            self.counters.add("cmd_vel")
            self.lockstep.sent("cmd_vel")
            if self.lockstep.active:  # lock-step: the simulation holds it for exactly the duration
                self.lockstep.pause(duration)
                break
            left = end - time.monotonic()
            if left <= 0:
                break
            time.sleep(min(RESEND, left))
        if gaps:
            for _ in range(gaps):
                self.counters.add("cmd_vel_gaps")
            self.node.get_logger().warning(f"{self.profile.robot}: {gaps} gap(s) between cmd_vel messages over the driver's "
                                           f"{self.profile.cmd_vel_timeout:g} s (this process was slow): the base stopped "
                                           "in between")
        here = self._alive()
        return MotionReport(clipped=(v, w) != (linear, angular), distance=math.dist((start.x, start.y), (here.x, here.y)),
                            duration=duration)

    def stop(self) -> None:
        """A zero velocity, now; ``stopped`` hears when (wall clock ns), so that what is seen next is seen since."""
        self.cmd_pub.publish(Twist())
        self._stopped(self.node.get_clock().now().nanoseconds)
        self.counters.add("stop")
        self.lockstep.sent("cmd_vel")


__all__ = ["RESEND", "Base"]
