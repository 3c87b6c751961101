"""``Torso``: a torso lift on its own FollowJointTrajectory action (``torso``: Fetch's
``torso_controller/follow_joint_trajectory``), measured from joint_states.

Bringing the robot up puts it at the profile's ``height``, once the start-up services ran and only
when joint_states say it is elsewhere; the arm's table and the head camera's chain read it from
joint_states.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from rclpy.node import Node

from homiebot.core.robot import BasePose, CommandCounters, MotionReport, RobotUnavailable, Unsupported
from homiebot.robots.profile import RobotProfile
from homiebot.ros.clients.robot.actions import ActionGoals, control_msgs, trajectory_goal
from homiebot.ros.clients.robot.joints import JointStates


class Torso:
    """The torso's trajectory action client (``client``: None without a verified torso in the profile)."""

    def __init__(self, node: Node, profile: RobotProfile, joints: JointStates, actions: ActionGoals,
                 counters: CommandCounters, alive: Callable[[], BasePose], call_timeout: float) -> None:
        self.profile, self.joints, self.actions = profile, joints, actions
        self.counters, self._alive, self.call_timeout = counters, alive, call_timeout
        self.client = None
        if profile.torso is not None and "torso" not in profile.unverified:
            from rclpy.action import ActionClient

            self.client = ActionClient(node, control_msgs(profile.robot).FollowJointTrajectory,
                                       profile.topic(profile.torso.trajectory.name))

    def height(self) -> float:
        """The torso lift from the newest joint_states; RobotUnavailable when they lack it."""
        assert self.profile.torso is not None
        return float(self.joints.values([self.profile.torso.joint], "the torso")[0][0])

    def wait_measured(self, deadline: float) -> None:
        """Wait until ``deadline`` for joint_states carrying the torso lift."""
        while True:
            try:
                self.height()
                return
            except RobotUnavailable:
                if time.monotonic() > deadline:
                    raise
            time.sleep(0.05)

    def set(self, height: float) -> MotionReport:
        """Put the torso lift at ``height`` (m, within its joint's limits) by a goal to its trajectory
        controller at the profile's ``max_velocity``; returns once the controller ended the goal and joint
        states from after it arrived. Nothing is sent when it is already within ``tolerance``."""
        torso = self.profile.torso
        if torso is None or self.client is None:
            raise Unsupported(f"{self.profile.robot} has no torso the bridge can command")
        spec = next(j for j in self.profile.kinematics.joints if j.name == torso.joint)  # type: ignore[union-attr]
        low, high = spec.limits or (-math.inf, math.inf)
        if not (math.isfinite(height) and low <= height <= high):
            raise ValueError(f"torso height {height} is outside {torso.joint}'s limits [{low}, {high}]")
        self._alive()
        here = self.height()
        if abs(here - height) <= torso.tolerance:
            return MotionReport()
        seconds = max(abs(height - here) / torso.max_velocity, 0.5)
        joints = self.joints.count
        result = self.actions.result(self.client, trajectory_goal(self.profile.robot, [torso.joint], [height], seconds),
                                     seconds + self.call_timeout, timed=True)
        self.counters.add("torso_trajectory")
        self.joints.wait_fresh(joints)
        name = self.client._action_name
        if result.error_code != 0:
            raise RobotUnavailable(f"{self.profile.robot}: {name} did not bring the torso to {height} m: "
                                   f"{result.error_string or f'error {result.error_code}'}")
        there = self.height()
        if abs(there - height) > 4 * torso.tolerance:
            raise RobotUnavailable(f"{self.profile.robot}: the torso is at {there:.3f} m after {name} said it reached {height} m")
        return MotionReport(duration=seconds)


__all__ = ["Torso"]
