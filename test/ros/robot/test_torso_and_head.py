"""``Torso``, ``Head`` and ``TrajectoryArm`` alone (Fetch's), their goals taken by stand-in action clients."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from sensor_msgs.msg import JointState  # noqa: E402

from homiebot.core.robot import CommandCounters, RobotUnavailable, Unsupported  # noqa: E402
from homiebot.robots.profile import load_profile  # noqa: E402
from homiebot.ros.clients.robot.head import Head  # noqa: E402
from homiebot.ros.clients.robot.joints import JointStates  # noqa: E402
from homiebot.ros.clients.robot.lockstep import LockStep  # noqa: E402
from homiebot.ros.clients.robot.torso import Torso  # noqa: E402
from homiebot.ros.clients.robot.trajectory_arm import TrajectoryArm  # noqa: E402
from test.ros.robot.fakes import FakeNode, alive  # noqa: E402

PROFILE = load_profile("fetch")
JOINTS = PROFILE.topic(PROFILE.joint_states.name)


class FakeActionClient:
    def __init__(self, node, action_type, name) -> None:
        self.action_type, self._action_name = action_type, name


class FakeGoals:
    """ActionGoals that carry out a trajectory goal at once by publishing the joints it names."""

    def __init__(self, node: FakeNode, positions: dict[str, float], error_code: int = 0) -> None:
        self.node, self.positions, self.error_code, self.goals = node, positions, error_code, []

    def result(self, client, goal, timeout, timed=False):
        self.goals.append((client._action_name, goal, timeout, timed))
        self.positions.update(zip(goal.trajectory.joint_names, goal.trajectory.points[0].positions))
        for _ in range(3):  # the joint states after it
            publish(self.node, self.positions)
        return SimpleNamespace(error_code=self.error_code, error_string="")


def publish(node: FakeNode, positions: dict[str, float]) -> None:
    node.deliver(JOINTS, JointState(name=[PROFILE.joint_name(n) for n in positions], position=list(positions.values())))


@pytest.fixture(autouse=True)
def stand_in_clients(monkeypatch):
    monkeypatch.setattr("rclpy.action.ActionClient", FakeActionClient)


def test_the_torso_goes_to_a_height_and_is_measured_there():
    node = FakeNode()
    joints = JointStates(node, PROFILE, LockStep(None))
    goals = FakeGoals(node, {PROFILE.torso.joint: 0.1})
    counters = CommandCounters()
    torso = Torso(node, PROFILE, joints, goals, counters, alive, 1.0)  # type: ignore[arg-type]
    assert torso.client._action_name == PROFILE.topic(PROFILE.torso.trajectory.name)
    with pytest.raises(RobotUnavailable):
        torso.wait_measured(0.0)
    publish(node, goals.positions)
    assert torso.height() == pytest.approx(0.1)
    report = torso.set(0.3)
    name, goal, timeout, timed = goals.goals[0]
    assert goal.trajectory.joint_names == [PROFILE.torso.joint] and timed and timeout == pytest.approx(2.0 + 1.0)
    assert report.duration == pytest.approx(2.0) and counters.counts["torso_trajectory"] == 1
    assert torso.set(0.302).duration == 0.0 and len(goals.goals) == 1  # within tolerance: nothing sent
    with pytest.raises(ValueError, match="outside"):
        torso.set(5.0)


def test_a_torso_the_profile_leaves_unverified_is_not_commanded():
    node = FakeNode()
    profile = PROFILE.model_copy(update={"unverified": ["torso"]})
    torso = Torso(node, profile, JointStates(node, profile, LockStep(None)), None, CommandCounters(), alive, 1.0)  # type: ignore[arg-type]
    with pytest.raises(Unsupported):
        torso.set(0.2)


def test_the_arm_is_measured_and_moved_by_one_point_trajectories():
    node = FakeNode()
    joints = JointStates(node, PROFILE, LockStep(None))
    goals = FakeGoals(node, {})
    arm = TrajectoryArm(node, PROFILE, joints, goals, CommandCounters(), LockStep(None), alive, 1.0)  # type: ignore[arg-type]
    assert arm.kinematics is not None and arm.joints_of_arm() is None
    with pytest.raises(RobotUnavailable, match="lack the arm's joints"):
        arm.measured_joints()
    ready = arm.kinematics.inverse(PROFILE.arm_ready, 0.0, seed=np.zeros(len(arm.kinematics.names)))
    goals.positions.update({PROFILE.torso.joint: 0.3, **dict(zip(arm.kinematics.names, ready))})
    publish(node, goals.positions)
    here = arm.kinematics.forward(arm.measured_joints()).position
    assert np.allclose(here, PROFILE.arm_ready, atol=1e-3)
    report = arm.move(np.array([0.0, 0.0, 0.02]), None, 0.5)
    assert report.message == "" and goals.goals[0][1].trajectory.joint_names == list(arm.kinematics.names)
    assert np.allclose(arm.kinematics.forward(arm.measured_joints()).position, here + [0.0, 0.0, 0.02], atol=1e-3)


class FakeHeadGoals:
    def __init__(self, status: int) -> None:
        self.status, self.goals = status, []

    def response(self, client, goal, timeout, timed=False):
        self.goals.append(goal)
        return SimpleNamespace(status=self.status)


def head(goals: FakeHeadGoals) -> Head:
    node = FakeNode()
    clock = LockStep(lambda *_: (0, {}))  # lock-step: the step published the turned view
    joints = JointStates(node, PROFILE, clock)
    return Head(node, PROFILE, joints, None, goals, CommandCounters(), clock, alive, 0.05)  # type: ignore[arg-type]


def test_the_head_points_at_the_profiles_point_for_a_view():
    from action_msgs.msg import GoalStatus

    goals = FakeHeadGoals(GoalStatus.STATUS_SUCCEEDED)
    part = head(goals)
    view = next(iter(PROFILE.head.views))
    part.look(view)
    goal = goals.goals[0]
    assert (goal.target.point.x, goal.target.point.y, goal.target.point.z) == pytest.approx(PROFILE.head.views[view])
    assert goal.pointing_frame == PROFILE.head.pointing_frame and goal.pointing_axis.z == 1.0
    with pytest.raises(ValueError, match="no point for the view 'up'"):
        part.look("up")


def test_a_head_goal_that_did_not_succeed_is_unavailable():
    from action_msgs.msg import GoalStatus

    with pytest.raises(RobotUnavailable, match="did not turn the head to the front view"):
        head(FakeHeadGoals(GoalStatus.STATUS_ABORTED)).look("front")
