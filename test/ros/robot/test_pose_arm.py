"""``PoseArm`` alone (Spot's): goals published from the measured hand, unstowed first, a shortfall said."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from homiebot.core.robot import CommandCounters  # noqa: E402
from homiebot.robots.profile import load_profile  # noqa: E402
from homiebot.ros.clients.robot.joints import JointStates  # noqa: E402
from homiebot.ros.clients.robot.lockstep import LockStep  # noqa: E402
from homiebot.ros.clients.robot.pose_arm import PoseArm, shortfall  # noqa: E402
from test.ros.robot.fakes import FakeNode, FakeServices, alive  # noqa: E402

PROFILE = load_profile("spot")


def arm(node: FakeNode, services: FakeServices) -> PoseArm:
    clock = LockStep(None)
    return PoseArm(node, PROFILE, JointStates(node, PROFILE, clock), services, CommandCounters(), clock, alive)


def test_the_shortfall_of_a_hand_away_from_its_goal():
    goal = np.array([0.6, 0.0, 0.9])
    assert shortfall(None, goal, 0.0) == ""
    assert shortfall((goal + [0.0, 0.0, 0.01], 0.02), goal, 0.0) == ""
    assert shortfall((goal + [0.1, 0.0, 0.0], math.radians(30)), goal, 0.0) == (
        "the hand stopped 0.10 m from its goal; its yaw stopped 30 deg from the goal's (measured from joint_states)")


def test_without_joint_states_deltas_are_integrated_from_the_ready_pose():
    node, services = FakeNode(), FakeServices(("arm_unstow", "arm_stow"))
    part = arm(node, services)
    assert part.hand_chain is not None and part.measured_hand_pose() is None
    report = part.move(np.array([0.01, 0.0, 0.0]), np.array([0.0, 0.0, 0.01]), 0.1)
    assert services.called == ["arm_unstow"] and report.message == "" and not report.clipped
    sent = node.publishers[PROFILE.topic(PROFILE.arm["pose"].name)].sent
    assert len(sent) == 1 and sent[0].header.frame_id == PROFILE.base_frame
    ready = PROFILE.arm_ready
    assert sent[0].pose.position.x == pytest.approx(ready[0] + 0.01)
    assert sent[0].pose.position.z == pytest.approx(ready[2] - PROFILE.base_height)  # the driver's base frame
    assert part.ee_yaw == pytest.approx(0.01)
    part.move(np.zeros(3), np.zeros(3), 0.01)
    assert services.called == ["arm_unstow"]  # once after start-up
    part.stow()
    part.move(np.zeros(3), np.zeros(3), 0.01)
    assert services.called == ["arm_unstow", "arm_stow", "arm_unstow"]


def test_a_profile_without_pose_goals_has_no_publisher():
    node = FakeNode()
    clock = LockStep(None)
    fetch = load_profile("fetch")
    part = PoseArm(node, fetch, JointStates(node, fetch, clock), FakeServices(), CommandCounters(), clock, alive)
    assert part.arm_pub is None and part.hand_chain is None and node.publishers == {}
