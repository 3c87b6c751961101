"""``PoseArm``: an arm taking end-effector goals (``arm.pose``: geometry_msgs/PoseStamped in the base frame, Spot).

Closed on the measured hand: each delta starts from where the forward kinematics of the arm's
joint_states (the profile's ``kinematics`` table) put the hand and the yaw of its approach axis, and a
hand that is still more than ``ARM_TOLERANCE`` from its goal, or turned more than ``ARM_YAW_TOLERANCE``
from the goal's yaw, when the command's time is up is said in the report's message. Without the arm's
joints in joint_states the deltas are integrated from the profile's ``arm_ready`` pose. Before the first
arm motion after start-up or a stow it calls ``arm_unstow``, which puts the hand there.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from geometry_msgs.msg import PoseStamped
from rclpy.node import Node

from homiebot.core.robot import BasePose, CommandCounters, MotionReport, RobotUnavailable
from homiebot.robots.profile import RobotProfile
from homiebot.ros.clients.robot.hand_motion import bridge_limits, limited_step
from homiebot.ros.clients.robot.joints import JointStates
from homiebot.ros.clients.robot.lockstep import LockStep
from homiebot.ros.clients.robot.services import TriggerServices

ARM_TOLERANCE = 0.03  # metres between a pose-goal arm's measured hand and its goal that a report says
ARM_YAW_TOLERANCE = math.radians(5.0)  # and radians between its measured yaw and the goal's


def shortfall(measured: tuple[np.ndarray, float] | None, target: np.ndarray, yaw: float) -> str:
    """What a report says of a hand (measured position, yaw) that stopped away from its goal; empty when it is
    there (or cannot be measured)."""
    if measured is None:
        return ""
    short = float(np.linalg.norm(measured[0] - target))
    turn = abs(math.remainder(measured[1] - yaw, 2 * math.pi))
    said = [f"the hand stopped {short:.2f} m from its goal" if short > ARM_TOLERANCE else "",
            f"its yaw stopped {math.degrees(turn):.0f} deg from the goal's" if turn > ARM_YAW_TOLERANCE else ""]
    said = [s for s in said if s]
    return f"{'; '.join(said)} (measured from joint_states)" if said else ""


class PoseArm:
    """The hand's estimate (``ee``, ``ee_yaw``: base frame) and, where the profile names ``arm.pose``, its
    goal publisher (``arm_pub``) and the kinematic chain that measures the hand (``hand_chain``)."""

    def __init__(self, node: Node, profile: RobotProfile, joints: JointStates, services: TriggerServices,
                 counters: CommandCounters, lockstep: LockStep, alive: Callable[[], BasePose]) -> None:
        self.profile, self.joints, self.services = profile, joints, services
        self.counters, self.lockstep, self._alive = counters, lockstep, alive
        p = profile
        self.ee = np.array(p.arm_ready, dtype=float)  # the integrated end-effector estimate (base frame)
        self.ee_yaw = 0.0  # and its yaw about the base's z axis
        self.ready = False  # stowed until arm_unstow puts the hand at the ready pose
        # measured through the kinematic table (the hand from joint_states) unless the arm takes trajectories
        self.hand_chain = (p.kinematics.build() if p.kinematics is not None and "trajectory" not in p.arm and "pose" in p.arm
                           else None)
        self.arm_pub = node.create_publisher(PoseStamped, p.topic(p.arm["pose"].name), 10) if "pose" in p.arm else None

    def move(self, translation: np.ndarray, rotation: np.ndarray, duration: float) -> MotionReport:
        """Send the hand by a base-frame delta from where it is measured (else estimated), cut to the limits and
        the workspace; wait ``duration`` and say how far from its goal the measured hand stopped."""
        assert self.arm_pub is not None
        self._alive()
        self.unstow()
        lim = self.profile.limits
        measured = self.measured_hand_pose()
        if measured is not None:  # closed loop: from where the hand is and how it is turned, not where it was sent
            self.ee, self.ee_yaw = measured
        t, turn, clipped = limited_step(translation, rotation, duration, bridge_limits(self.profile))
        target = np.clip(self.ee + t, lim.workspace_min, lim.workspace_max)
        yaw = math.remainder(self.ee_yaw + turn, 2 * math.pi)
        msg = PoseStamped()
        msg.header.frame_id = self.profile.base_frame
        # the driver's base frame sits base_height above homiebot's (on the floor)
        msg.pose.position.x, msg.pose.position.y = float(target[0]), float(target[1])
        msg.pose.position.z = float(target[2]) - self.profile.base_height
        msg.pose.orientation.z, msg.pose.orientation.w = math.sin(yaw / 2), math.cos(yaw / 2)
        self.arm_pub.publish(msg)
        self.counters.add("arm_pose")
        self.lockstep.sent("arm_goals")
        self.ee, self.ee_yaw = target, yaw
        count = self.joints.count
        self.lockstep.pause(duration)
        if measured is None:
            return MotionReport(clipped=clipped, duration=duration)
        self.joints.wait_fresh(count)  # the joints after the command's time, not from before it
        return MotionReport(clipped=clipped, duration=duration, message=shortfall(self.measured_hand_pose(), target, yaw))

    def measured_hand_pose(self) -> tuple[np.ndarray, float] | None:
        """The hand by the forward kinematics of the newest joint_states: its position in homiebot's base frame
        and the yaw of its approach axis; None without a table or without the arm's joints."""
        if self.hand_chain is None:
            return None
        try:
            q, _ = self.joints.values(self.hand_chain.names, "the arm")
        except RobotUnavailable:
            return None
        hand = self.hand_chain.forward(q)
        position = hand.position.copy()
        position[2] += self.profile.base_height  # the driver's base frame sits base_height above homiebot's
        return position, float(hand.yaw)

    def unstow(self) -> None:
        """Bring the hand to the ready pose the estimate starts from, once after start-up or a stow."""
        if self.ready:
            return
        if "arm_unstow" in self.services:
            count = self.joints.count
            self.services.call("arm_unstow")
            if self.hand_chain is not None:
                self.joints.wait_fresh(count)  # measured from here on: the joints after the unstow
        self.ee, self.ee_yaw = np.array(self.profile.arm_ready, dtype=float), 0.0
        self.ready = True

    def stow(self) -> MotionReport:
        """The profile's ``arm_stow`` service; the next motion unstows first."""
        self.services.call("arm_stow")
        self.ready = False
        return MotionReport()


__all__ = ["ARM_TOLERANCE", "ARM_YAW_TOLERANCE", "PoseArm", "shortfall"]
