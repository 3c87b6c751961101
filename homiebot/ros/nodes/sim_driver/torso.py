"""A profile's torso lift with its own trajectory controller (Fetch's ``torso_controller/follow_joint_trajectory``):
its goals move the lift's joint to the final point at the joint's velocity limit (``homiebot.robots.lift``),
held in the arm's kinematic table; the home's hand stays where it is (the home's arm stands in for Fetch's),
so the arm's joints are solved again for it when the lift stops."""

from __future__ import annotations

from typing import Any

from rclpy.task import Future

from homiebot.robots.lift import SimLift
from homiebot.robots.profile import RobotProfile
from homiebot.ros.nodes.sim_driver.goals import GoalNotes
from homiebot.ros.nodes.sim_driver.trajectory import TrajectoryArm

SUCCESSFUL = 0  # FollowJointTrajectory.Result's


class SimTorso:
    """The lift (``lift``: None without a torso or a trajectory arm) and its running goal."""

    def __init__(self, node: Any, profile: RobotProfile, arm: TrajectoryArm, goals: GoalNotes, counters: dict[str, int]) -> None:
        self.node, self.profile, self.arm = node, profile, arm
        self.goals, self._lock, self.counters = goals, goals.lock, counters
        self.lift = SimLift.of(profile) if arm.kinematics is not None else None
        self._running: tuple[Future, Any] | None = None  # (result, goal handle)

    @property
    def running(self) -> bool:
        """Whether a lift goal runs."""
        return self._running is not None

    def serve(self, group: Any) -> Any:
        """The torso's action server, for a profile with a torso (else None)."""
        if self.lift is None or self.profile.torso is None:
            return None
        from control_msgs.action import FollowJointTrajectory
        from rclpy.action import ActionServer

        return ActionServer(self.node, FollowJointTrajectory, self.profile.topic(self.profile.torso.trajectory.name), self.execute,
                            callback_group=group)

    async def execute(self, handle: Any) -> Any:
        """The torso's trajectory controller: the lift moves to the final point; a new goal preempts it."""
        from control_msgs.action import FollowJointTrajectory

        assert self.lift is not None
        result = FollowJointTrajectory.Result()
        try:
            target, seconds = self.lift.goal(handle.request.trajectory)
        except ValueError as err:
            result.error_code, result.error_string = result.INVALID_JOINTS, str(err)
            self.goals.refuse(handle)
            return result
        done = Future()
        with self._lock:
            self.counters["torso_goals"] = self.counters.get("torso_goals", 0) + 1
            if self._running is not None:  # a new goal preempts the running one
                self.end((FollowJointTrajectory.Result.PATH_TOLERANCE_VIOLATED, "preempted by a new goal"))
            self.lift.start(target, seconds)
            self._running = (done, handle)
            self.goals.note(handle, ended=False)
        result.error_code, result.error_string = await done
        if result.error_code == FollowJointTrajectory.Result.SUCCESSFUL:
            handle.succeed()
        else:
            handle.abort()
        return result

    def advance(self, dt: float) -> None:
        """Move the lift for ``dt`` seconds (under the lock), held in the table; at the end the arm's joints are
        solved again for the home's hand."""
        assert self.lift is not None and self.arm.kinematics is not None
        reached = self.lift.advance(dt)
        self.arm.kinematics.hold(self.lift.joint, self.lift.value)
        if reached:
            self.arm.solve_again()
            self.end((SUCCESSFUL, ""))

    def end(self, outcome: tuple[int, str]) -> None:
        """End the running goal with (error code, text) (under the lock)."""
        assert self._running is not None
        done, handle = self._running
        self._running = None
        self.goals.note(handle, ended=True)
        done.set_result(outcome)
