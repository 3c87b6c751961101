"""``TrajectoryArm``: an arm taking joint trajectories (``arm.trajectory``: control_msgs/FollowJointTrajectory, Fetch).

The hand is the forward kinematics of the measured ``joint_states`` over the profile's kinematic table;
each end-effector delta is solved (IK seeded with the measured joints) into a one-point trajectory for
the table's joints, sent, and its result awaited. ``stow`` brings the hand to ``arm_ready``. Joints the
table holds (Fetch's torso lift) are read from the same joint_states when they carry them.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from rclpy.node import Node

from homiebot.core.robot import BasePose, CommandCounters, MotionReport, RobotUnavailable, Unsupported
from homiebot.robots.kinematics import Unreachable
from homiebot.robots.profile import RobotProfile
from homiebot.ros.clients.robot.actions import ActionGoals, control_msgs, trajectory_goal
from homiebot.ros.clients.robot.hand_motion import bridge_limits, limited_step
from homiebot.ros.clients.robot.joints import JointStates
from homiebot.ros.clients.robot.lockstep import LockStep


class TrajectoryArm:
    """The arm's trajectory action client (``client``, where the profile names ``arm.trajectory``) and, with a
    kinematic table, the table built (``kinematics``)."""

    def __init__(self, node: Node, profile: RobotProfile, joints: JointStates, actions: ActionGoals,
                 counters: CommandCounters, lockstep: LockStep, alive: Callable[[], BasePose], call_timeout: float) -> None:
        self.profile, self.joints, self.actions = profile, joints, actions
        self.counters, self.lockstep, self._alive, self.call_timeout = counters, lockstep, alive, call_timeout
        p = profile
        self.kinematics = p.kinematics.build() if p.kinematics is not None and "trajectory" in p.arm else None
        self.client = None
        if "trajectory" in p.arm:
            from rclpy.action import ActionClient

            self.client = ActionClient(node, control_msgs(p.robot).FollowJointTrajectory, p.topic(p.arm["trajectory"].name))

    def joints_of_arm(self) -> np.ndarray | None:
        """The kinematic table's joints from the newest joint_states (None when it lacks them)."""
        assert self.kinematics is not None
        msg = self.joints.latest
        if msg is not None:
            index = {n: i for i, n in enumerate(msg.name)}
            names = [self.profile.joint_name(n) for n in self.kinematics.names]
            if all(n in index and index[n] < len(msg.position) for n in names):
                torso = self.profile.torso.joint if self.profile.torso is not None else None
                for held in self.kinematics.held:  # a torso lift: where joint_states say it is
                    i = index.get(self.profile.joint_name(held), len(msg.position))
                    if i < len(msg.position):
                        self.kinematics.hold(held, float(msg.position[i]))
                    elif held == torso:
                        return None  # a commanded torso must be measured
                return np.array([float(msg.position[index[n]]) for n in names])
        return None

    def measured_joints(self) -> np.ndarray:
        """The kinematic table's joints as measured; RobotUnavailable when joint_states lack them."""
        q = self.joints_of_arm()
        if q is None:
            assert self.kinematics is not None
            torso = [self.profile.torso.joint] if self.profile.torso is not None else []
            raise RobotUnavailable(f"{self.profile.robot}: joint_states lack the arm's joints {[*torso, *self.kinematics.names]}")
        return q

    def move(self, translation: np.ndarray, rotation: np.ndarray | None, duration: float) -> MotionReport:
        """An end-effector delta as a one-point joint trajectory from the measured joints (see the module doc)."""
        assert self.kinematics is not None
        self._alive()
        lim = self.profile.limits
        q = self.measured_joints()
        here = self.kinematics.forward(q)
        t, turn, clipped = limited_step(translation, rotation, duration, bridge_limits(self.profile))
        target = np.clip(here.position + t, lim.workspace_min, lim.workspace_max)
        clipped = clipped or bool(np.any(target != here.position + t))
        if float(np.linalg.norm(target - here.position)) < 1e-4 and abs(turn) < 1e-4:
            self.lockstep.pause(duration)
            return MotionReport(clipped=clipped, duration=duration)
        try:
            goal = self.kinematics.inverse(target, here.yaw + turn, seed=q)
        except Unreachable:
            try:  # half the step, as far as the arm reaches
                goal = self.kinematics.inverse(here.position + (target - here.position) / 2, here.yaw + turn / 2, seed=q)
                clipped = True
            except Unreachable as err:
                self.lockstep.pause(duration)
                return MotionReport(clipped=True, duration=duration, message=str(err))
        report = self.send(goal, duration)
        report.clipped = report.clipped or clipped
        return report

    def stow(self) -> MotionReport:
        """The hand to the carry pose (``arm_ready``), in one move at the end-effector speed."""
        assert self.kinematics is not None
        q = self.measured_joints()
        distance = float(np.linalg.norm(self.kinematics.forward(q).position - np.array(self.profile.arm_ready)))
        try:
            goal = self.kinematics.inverse(self.profile.arm_ready, 0.0, seed=q)
        except Unreachable as err:
            raise Unsupported(f"{self.profile.robot}: arm_ready: {err}") from None
        return self.send(goal, max(distance / self.profile.limits.max_ee_speed, 0.5))

    def send(self, goal_q: np.ndarray, duration: float) -> MotionReport:
        """Send a one-point trajectory reaching ``goal_q`` after ``duration`` and wait for its result."""
        assert self.kinematics is not None and self.client is not None
        seconds = max(float(duration), 0.05)
        goal = trajectory_goal(self.profile.robot, list(self.kinematics.names), [float(v) for v in goal_q], seconds)
        result = self.actions.result(self.client, goal, seconds + self.call_timeout, timed=True)
        self.counters.add("arm_trajectory")
        self.joints.wait_fresh(self.joints.count)
        if result.error_code != 0:
            return MotionReport(clipped=True, duration=seconds, message=result.error_string or f"error {result.error_code}")
        return MotionReport(duration=seconds)


__all__ = ["TrajectoryArm"]
