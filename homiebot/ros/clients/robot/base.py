"""``Base``: the mobile base's velocity commands on the profile's ``cmd_vel``.

A held velocity is re-sent every ``RESEND`` seconds, so the driver's own timeout never fires
mid-command and does fire when this process dies; in lock-step one message is held by the
simulation for exactly the command's duration.
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
                 alive: Callable[[], BasePose]) -> None:
        self.profile, self.counters, self.lockstep, self._alive = profile, counters, lockstep, alive
        self.cmd_pub = node.create_publisher(Twist, profile.topic(profile.cmd_vel.name), 10)

    def drive(self, linear: float, angular: float, duration: float) -> MotionReport:
        """Hold a velocity (clipped to the limits) for ``duration`` seconds; the report gives the odometry's travel."""
        lim = self.profile.limits
        v = float(np.clip(linear, -lim.max_linear, lim.max_linear))
        w = float(np.clip(angular, -lim.max_angular, lim.max_angular))
        start = self._alive()
        msg = Twist()
        msg.linear.x, msg.angular.z = v, w
        end = time.monotonic() + duration
        while True:
            self._alive()
            self.cmd_pub.publish(msg)
            self.counters.add("cmd_vel")
            self.lockstep.sent("cmd_vel")
            if self.lockstep.active:  # lock-step: the simulation holds it for exactly the duration
                self.lockstep.pause(duration)
                break
            left = end - time.monotonic()
            if left <= 0:
                break
            time.sleep(min(RESEND, left))
        here = self._alive()
        return MotionReport(clipped=(v, w) != (linear, angular), distance=math.dist((start.x, start.y), (here.x, here.y)),
                            duration=duration)

    def stop(self) -> None:
        """A zero velocity, now."""
        self.cmd_pub.publish(Twist())
        self.counters.add("stop")
        self.lockstep.sent("cmd_vel")


__all__ = ["RESEND", "Base"]
