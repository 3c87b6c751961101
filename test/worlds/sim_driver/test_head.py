"""Fetch's head alone: the PointHead goal turns the pan and tilt over the camera chains' joints, at the goal's
speed and no sooner than its minimum duration, and the head camera renders the view the pan faces."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("control_msgs", reason="ROS 2 is an extra: pip install -e .[ros]")

from control_msgs.action import PointHead  # noqa: E402

from homiebot.robots.profile import load_profile  # noqa: E402
from homiebot.ros.nodes.sim_driver.chains import CameraChains  # noqa: E402
from homiebot.ros.nodes.sim_driver.goals import GoalNotes, goal_key  # noqa: E402
from homiebot.ros.nodes.sim_driver.head import SimHead  # noqa: E402
from test.worlds.sim_driver.fakes import FakeGoalHandle, FakeNode, FakeRobot, finish, shared, start  # noqa: E402


def make_head(now: list[float]) -> tuple[SimHead, CameraChains, GoalNotes]:
    profile = load_profile("fetch")
    lock, counters = shared()
    node, goals = FakeNode(), GoalNotes(lock)
    chains = CameraChains(node, profile, FakeRobot(), profile.kinematics.build(), lockstep=True)
    return SimHead(node, profile, chains, lambda: now[0], goals, counters), chains, goals


def point_at(x: float, y: float, z: float, frame: str = "base_link", speed: float = 1.0) -> FakeGoalHandle:
    goal = PointHead.Goal()
    goal.target.header.frame_id = frame
    goal.target.point.x, goal.target.point.y, goal.target.point.z = x, y, z
    goal.max_velocity = speed
    goal.min_duration.sec = 1
    return FakeGoalHandle(goal)


def test_the_head_chain_carries_pan_and_tilt_but_not_the_held_torso() -> None:
    head, chains, _ = make_head([0.0])
    assert head.chain is not None and set(chains.extra) == {"head_pan_joint", "head_tilt_joint"}
    assert head.view("head_camera") == "front"


def test_a_goal_to_the_left_turns_the_pan_at_its_speed_and_the_camera_sees_the_left_view() -> None:
    now = [0.0]
    head, chains, goals = make_head(now)
    handle = point_at(0.0, 3.0, 1.0)
    run = head.execute(handle)
    assert start(run) is None and head.running and goals.known(goal_key(handle))
    head.advance(0.5, 0.5)
    assert chains.extra["head_pan_joint"] == pytest.approx(0.5)  # 1 rad/s for half a second
    for tick in range(2, 40):
        if head.running:
            head.advance(0.5, tick * 0.5)
    assert not head.running and goals.ended(goal_key(handle))
    assert chains.extra["head_pan_joint"] == pytest.approx(math.pi / 2, abs=0.05) and head.view("head_camera") == "left"
    finish(run)
    assert handle.ended == "succeeded" and head.counters["head_goals"] == 1


def test_a_target_in_another_frame_is_aborted_at_once() -> None:
    head, _, goals = make_head([0.0])
    handle = point_at(1.0, 0.0, 1.0, frame="map")
    start(head.execute(handle))
    assert handle.ended == "aborted" and goals.ended(goal_key(handle)) and not head.running


def test_a_restart_fails_the_running_goal_and_the_chains_look_ahead_again() -> None:
    head, chains, _ = make_head([0.0])
    handle = point_at(0.0, -3.0, 1.0)
    run = head.execute(handle)
    start(run)
    head.advance(1.0, 1.0)
    head.restart()
    chains.restart()
    finish(run)
    assert handle.ended == "aborted" and chains.extra["head_pan_joint"] == 0.0 and head.view("head_camera") == "front"
