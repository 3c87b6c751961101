"""``Head``: a head turned by PointHead goals (``head.point``: control_msgs/PointHead, Fetch).

``look(view)`` turns it to the profile's point for a view (or back to ``front``) and waits for the
result, for joint states and an image taken after it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from rclpy.node import Node

from homiebot.core.robot import BasePose, CommandCounters, MotionReport, RobotUnavailable, Unsupported
from homiebot.robots.profile import RobotProfile
from homiebot.ros.clients.robot.actions import ActionGoals, control_msgs
from homiebot.ros.clients.robot.cameras import Cameras
from homiebot.ros.clients.robot.joints import JointStates
from homiebot.ros.clients.robot.lockstep import LockStep


class Head:
    """The head's PointHead action client (``client``: None without a verified head in the profile)."""

    def __init__(self, node: Node, profile: RobotProfile, joints: JointStates, cameras: Cameras, actions: ActionGoals,
                 counters: CommandCounters, lockstep: LockStep, alive: Callable[[], BasePose], call_timeout: float) -> None:
        self.profile, self.joints, self.cameras, self.actions = profile, joints, cameras, actions
        self.counters, self.lockstep, self._alive, self.call_timeout = counters, lockstep, alive, call_timeout
        self.client = None
        if profile.head is not None and "head" not in profile.unverified:
            from rclpy.action import ActionClient

            self.client = ActionClient(node, control_msgs(profile.robot).PointHead, profile.topic(profile.head.point.name))

    def look(self, view: str = "front") -> MotionReport:
        """Turn the head to the profile's point for ``view`` (``front``: back to the front) by a PointHead
        goal; return once the driver says it is there and joint states and an image of the head camera
        from after that arrived (so the next read shows the turned view, placed where it looks)."""
        head = self.profile.head
        if head is None or self.client is None:
            raise Unsupported(f"{self.profile.robot} has no head the bridge can turn")
        if view != "front" and view not in head.views:
            raise ValueError(f"the head has no point for the view '{view}'; it has front, {', '.join(head.views)}")
        from action_msgs.msg import GoalStatus
        from builtin_interfaces.msg import Duration

        self._alive()
        goal = control_msgs(self.profile.robot).PointHead.Goal()
        goal.target.header.frame_id = head.frame or self.profile.base_frame
        goal.target.point.x, goal.target.point.y, goal.target.point.z = (float(v) for v in (head.front if view == "front" else head.views[view]))
        goal.pointing_axis.z = 1.0  # the optical axis of the pointing frame
        goal.pointing_frame = head.pointing_frame
        goal.min_duration = Duration(sec=int(head.min_duration), nanosec=int((head.min_duration % 1) * 1e9))
        goal.max_velocity = float(head.max_velocity)
        joints = self.joints.count
        name = self.client._action_name
        response = self.actions.response(self.client, goal, self.call_timeout + math.pi / head.max_velocity, timed=True)
        if response.status != GoalStatus.STATUS_SUCCEEDED:
            raise RobotUnavailable(f"{self.profile.robot}: {name} did not turn the head to the {view} view (goal status {response.status})")
        self.counters.add("point_head")
        self.joints.wait_fresh(joints)
        if self.lockstep.active:
            return MotionReport()  # lock-step: the last step published the joints and images of the instant it ended
        there = time.time_ns()
        deadline = time.monotonic() + self.call_timeout
        for _ in range(2):  # an image stamped after the turn, then the next: one whose exposure began after it
            while self.cameras.image_ns(head.camera) <= there:
                if time.monotonic() > deadline:
                    raise RobotUnavailable(f"{self.profile.robot}: no image from camera '{head.camera}' after the head turned")
                time.sleep(0.005)
            there = self.cameras.image_ns(head.camera)
        return MotionReport()


__all__ = ["Head"]
