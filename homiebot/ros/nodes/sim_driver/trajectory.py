"""A profile's arm that takes joint trajectories (Fetch's ``arm_controller/follow_joint_trajectory``): the final
point's joints -> the hand's pose by the profile's kinematic table -> the home's arm approaches it at the
end-effector speed limit; the result says when it is there, or that the arm was blocked. The arm's joints
(published in ``joint_states``) are the home hand's pose solved back into the table after each motion."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from rclpy.task import Future

from homiebot.robots.kinematics import Unreachable
from homiebot.robots.profile import RobotProfile
from homiebot.ros.messages.wire import WireError
from homiebot.ros.nodes.sim_driver.arm import ArmMotion, SimArm
from homiebot.ros.nodes.sim_driver.chains import NEAR_M
from homiebot.ros.nodes.sim_driver.goals import GoalNotes
from homiebot.ros.nodes.sim_driver.numbers import finite

PATH_TOLERANCE_VIOLATED = -4  # FollowJointTrajectory.Result's, without importing control_msgs where no arm needs it


class TrajectoryArm:
    """The FollowJointTrajectory server of a trajectory arm (``kinematics``: its table, None for other arms) and
    the arm's joints (``joints``)."""

    def __init__(self, node: Any, profile: RobotProfile, robot: Any, arm: SimArm, seconds: Callable[[], float],
                 goals: GoalNotes, counters: dict[str, int]) -> None:
        self.node, self.profile, self.robot, self.arm = node, profile, robot, arm
        self._seconds, self.goals, self._lock, self.counters = seconds, goals, goals.lock, counters
        self.kinematics = profile.kinematics.build() if profile.kinematics is not None and "trajectory" in profile.arm else None
        self.joints = self.joints_of_home(self.kinematics.rest) if self.kinematics is not None else None
        self._running: tuple[Future, np.ndarray, float, Any] | None = None  # (result, joints, deadline, goal handle)

    @property
    def running(self) -> bool:
        """Whether a trajectory goal runs."""
        return self._running is not None

    def serve(self, group: Any) -> Any:
        """The action server, for a profile whose arm takes trajectories (else None)."""
        if "trajectory" not in self.profile.arm:
            return None
        from control_msgs.action import FollowJointTrajectory
        from rclpy.action import ActionServer, CancelResponse

        return ActionServer(self.node, FollowJointTrajectory, self.profile.topic(self.profile.arm["trajectory"].name), self.execute,
                            callback_group=group, cancel_callback=lambda _: CancelResponse.ACCEPT)

    def joints_of_home(self, seed: np.ndarray) -> np.ndarray:
        """The table's joints for where the home's hand is (the seed when the table cannot reach it)."""
        assert self.kinematics is not None
        here, yaw = self.robot.gripper_pose()
        try:
            return self.kinematics.inverse(here, yaw, seed=seed, spread=False, near=NEAR_M)  # in the spinning thread: keep it short
        except Unreachable as err:
            self.node.get_logger().warning(f"joint_states: the home's hand is out of the table's reach: {err}", throttle_duration_sec=10.0)
            return np.asarray(seed, dtype=float)

    def solve_again(self) -> None:
        """The arm's joints solved again for the home's hand, from the last ones (under the lock)."""
        if self.joints is not None:
            self.joints = self.joints_of_home(self.joints)

    def final_point(self, request: Any) -> tuple[np.ndarray, float]:
        """The final point's joints in table order and its time; WireError naming what is wrong."""
        assert self.kinematics is not None
        traj = request.trajectory
        names = list(traj.joint_names)
        if sorted(names) != sorted(self.kinematics.names):
            raise WireError(f"the trajectory's joints {names} are not the arm's {self.kinematics.names}")
        if not traj.points:
            raise WireError("a trajectory without points")
        last = traj.points[-1]
        if len(last.positions) != len(names) or not finite(*last.positions):
            raise WireError("the final point needs one finite position per joint")
        by_name = dict(zip(names, (float(v) for v in last.positions)))
        q = np.array([by_name[n] for n in self.kinematics.names])
        outside = [n for n, v, lo, hi in zip(self.kinematics.names, q, self.kinematics.lower, self.kinematics.upper)
                   if not lo - 1e-6 <= v <= hi + 1e-6]
        if outside:
            raise WireError(f"the final point is outside the joint limits of {outside}")
        return q, last.time_from_start.sec + last.time_from_start.nanosec * 1e-9

    async def execute(self, handle: Any) -> Any:
        """Run a trajectory goal: the hand goes to the final point's pose; a new goal preempts it."""
        from control_msgs.action import FollowJointTrajectory

        assert self.kinematics is not None
        result = FollowJointTrajectory.Result()
        try:
            q, seconds = self.final_point(handle.request)
        except WireError as err:
            result.error_code, result.error_string = result.INVALID_JOINTS, str(err)
            self.goals.refuse(handle)
            return result
        done = Future()
        ee = self.kinematics.forward(q)
        with self._lock:
            self.counters["arm_goals"] += 1
            if self._running is not None:  # a new goal preempts the running one, as the controller does
                self.end((FollowJointTrajectory.Result.PATH_TOLERANCE_VIOLATED, "preempted by a new goal"))
            self.arm.goal = (ee.position, ee.yaw)
            # the hand moves at the speed limit: a step takes its time (a joint-space path may be longer); twice that is a hand that cannot get there
            self._running = (done, q, self._seconds() + 2.0 * seconds + 0.5, handle)
            self.goals.note(handle, ended=False)
        code, message = await done
        result.error_code, result.error_string = code, message
        if code is None:  # cancelled: the arm stopped where it was
            result.error_code, result.error_string = FollowJointTrajectory.Result.SUCCESSFUL, message
            handle.canceled()
        elif code == FollowJointTrajectory.Result.SUCCESSFUL:
            handle.succeed()
        else:
            handle.abort()
        return result

    def progress(self, motion: ArmMotion) -> None:
        """After a tick's arm motion: end the running trajectory when there, blocked, late or cancelled (under the lock)."""
        from control_msgs.action import FollowJointTrajectory

        assert self._running is not None and self.kinematics is not None
        done, q, deadline, handle = self._running
        here, yaw = self.robot.gripper_pose()
        if handle.is_cancel_requested:
            code, text = None, "cancelled"
        elif self.arm.goal is None:
            code, text = FollowJointTrajectory.Result.SUCCESSFUL, ""
        elif float(np.linalg.norm(here - motion.before)) < 1e-5 and abs(yaw - motion.before_yaw) < 1e-5:
            code, text = FollowJointTrajectory.Result.GOAL_TOLERANCE_VIOLATED, motion.message or "the arm is blocked"
        elif self._seconds() > deadline:
            code, text = FollowJointTrajectory.Result.GOAL_TOLERANCE_VIOLATED, "the arm did not get there in time"
        else:
            return
        self.joints = self.joints_of_home(q)
        self.arm.goal = None
        self.end((code, text))

    def end(self, outcome: tuple[int | None, str]) -> None:
        """End the running goal with (error code or None when cancelled, text) (under the lock)."""
        assert self._running is not None
        done, handle = self._running[0], self._running[3]
        self._running = None
        self.goals.note(handle, ended=True)
        done.set_result(outcome)

    def restart(self) -> None:
        """The home restarted (under the lock): the running goal fails, the joints are solved for the hand at rest."""
        if self._running is not None:
            self.end((PATH_TOLERANCE_VIOLATED, "the simulation restarted"))
        if self.kinematics is not None:
            self.joints = self.joints_of_home(self.kinematics.rest)
