"""The arm alone: an end-effector goal approached until there, and Fetch's trajectory arm and torso lift ending
their goals (reached, refused, preempted by a restart) as the controllers do."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("control_msgs", reason="ROS 2 is an extra: pip install -e .[ros]")

from control_msgs.action import FollowJointTrajectory  # noqa: E402
from geometry_msgs.msg import PoseStamped  # noqa: E402
from trajectory_msgs.msg import JointTrajectoryPoint  # noqa: E402

from homiebot.robots.profile import load_profile  # noqa: E402
from homiebot.ros.messages.wire import WireError  # noqa: E402
from homiebot.ros.nodes.sim_driver.arm import SimArm  # noqa: E402
from homiebot.ros.nodes.sim_driver.goals import GoalNotes, goal_key  # noqa: E402
from homiebot.ros.nodes.sim_driver.torso import SimTorso  # noqa: E402
from homiebot.ros.nodes.sim_driver.trajectory import TrajectoryArm  # noqa: E402
from test.worlds.sim_driver.fakes import FakeGoalHandle, FakeNode, FakeRobot, finish, shared, start  # noqa: E402


def test_a_pose_goal_in_the_base_frame_is_lifted_to_the_homes_floor_frame_and_reached() -> None:
    profile, robot = load_profile("spot"), FakeRobot()
    node = FakeNode()
    lock, counters = shared()
    arm = SimArm(node, profile, robot, lock, counters)
    msg = PoseStamped()
    msg.pose.position.x, msg.pose.position.z, msg.pose.orientation.w = 0.7, 0.1, 1.0
    msg.header.frame_id = "spot/body"  # spot_ros2 hands the frame to the SDK, which knows "body", not tf's name
    node.subscriptions["/spot/arm_pose_commands"][1](msg)
    assert arm.goal is None and counters["arm_goals"] == 1 and "arm pose in frame 'spot/body'" in str(node.get_logger().lines)
    counters["arm_goals"] = 0
    msg.header.frame_id = profile.base_frame
    node.subscriptions["/spot/arm_pose_commands"][1](msg)
    assert arm.goal is not None and arm.goal[0][2] == pytest.approx(0.1 + profile.base_height) and counters["arm_goals"] == 1
    motion = arm.advance(0.02, joint_space=False)
    assert motion.message == "" and motion.before[0] == 0.5 and robot.hand[0][0] == pytest.approx(0.7)
    arm.advance(0.02, joint_space=False)
    assert arm.goal is None  # there: the goal is done


def trajectory_goal(names: list[str], positions: list[float], seconds: int = 2) -> FakeGoalHandle:
    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = names
    point = JointTrajectoryPoint(positions=positions)
    point.time_from_start.sec = seconds
    goal.trajectory.points = [point]
    return FakeGoalHandle(goal)


def make_fetch_arm() -> tuple[TrajectoryArm, SimArm, GoalNotes, FakeRobot]:
    profile, robot, node = load_profile("fetch"), FakeRobot(), FakeNode()
    lock, counters = shared()
    goals = GoalNotes(lock)
    arm = SimArm(node, profile, robot, lock, counters)
    return TrajectoryArm(node, profile, robot, arm, lambda: 0.0, goals, counters), arm, goals, robot


def test_a_trajectory_names_the_arms_joints_within_their_limits() -> None:
    trajectory, _, _, _ = make_fetch_arm()
    names = list(trajectory.kinematics.names)
    with pytest.raises(WireError, match="are not the arm's"):
        trajectory.final_point(trajectory_goal(names[:-1], [0.0] * 6).request)
    with pytest.raises(WireError, match="outside the joint limits of \\['shoulder_pan_joint'\\]"):
        trajectory.final_point(trajectory_goal(names, [3.0] + [0.0] * 6).request)
    q, seconds = trajectory.final_point(trajectory_goal(list(reversed(names)), [0.1 * i for i in range(7)][::-1]).request)
    assert list(q) == pytest.approx([0.1 * i for i in range(7)]) and seconds == 2  # by name, in the table's order


def test_a_trajectory_moves_the_hand_to_the_final_points_pose_and_succeeds_there() -> None:
    trajectory, arm, goals, robot = make_fetch_arm()
    rest = [float(v) for v in trajectory.kinematics.rest]
    handle = trajectory_goal(list(trajectory.kinematics.names), rest)
    run = trajectory.execute(handle)
    assert start(run) is None and trajectory.running
    assert np.allclose(arm.goal[0], trajectory.kinematics.forward(np.array(rest)).position)
    while trajectory.running and arm.goal is not None:
        trajectory.progress(arm.advance(0.02, joint_space=True))
    assert goals.ended(goal_key(handle))
    result = finish(run)
    assert handle.ended == "succeeded" and result.error_code == FollowJointTrajectory.Result.SUCCESSFUL


def test_a_restart_fails_the_running_trajectory_and_a_bad_one_is_refused_at_once() -> None:
    trajectory, _, goals, _ = make_fetch_arm()
    handle = trajectory_goal(list(trajectory.kinematics.names), [float(v) for v in trajectory.kinematics.rest])
    run = trajectory.execute(handle)
    start(run)
    trajectory.restart()
    assert finish(run).error_string == "the simulation restarted" and handle.ended == "aborted"
    bad = trajectory_goal(["elbow_flex_joint"], [0.0])
    result = start(trajectory.execute(bad))
    assert result.error_code == FollowJointTrajectory.Result.INVALID_JOINTS and bad.ended == "aborted" and goals.ended(goal_key(bad))


def test_the_torso_lifts_at_its_velocity_limit_and_holds_the_joint_in_the_table() -> None:
    trajectory, _, goals, _ = make_fetch_arm()
    torso = SimTorso(FakeNode(), trajectory.profile, trajectory, goals, trajectory.counters)
    assert torso.lift is not None and torso.lift.value == pytest.approx(0.3)
    handle = trajectory_goal(["torso_lift_joint"], [0.1], seconds=0)
    run = torso.execute(handle)
    start(run)
    torso.advance(1.0)
    assert torso.lift.value == pytest.approx(0.2)  # 0.1 m/s
    assert {j.name: j.value for j in trajectory.kinematics.joints}["torso_lift_joint"] == pytest.approx(0.2)
    torso.advance(1.0)
    assert not torso.running and finish(run).error_code == FollowJointTrajectory.Result.SUCCESSFUL and handle.ended == "succeeded"
