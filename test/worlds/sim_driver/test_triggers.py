"""The driver's Trigger services alone: power, stance, stop and the gripper and arm roles, as on the robot."""

from __future__ import annotations

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from geometry_msgs.msg import Twist  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402

from homiebot.robots.profile import load_profile  # noqa: E402
from homiebot.ros.nodes.sim_driver.arm import SimArm  # noqa: E402
from homiebot.ros.nodes.sim_driver.base import SimBase  # noqa: E402
from homiebot.ros.nodes.sim_driver.gripper import SimGripper  # noqa: E402
from homiebot.ros.nodes.sim_driver.power import Power  # noqa: E402
from homiebot.ros.nodes.sim_driver.triggers import DriverTriggers  # noqa: E402
from test.worlds.sim_driver.fakes import FakeNode, FakeWorld, shared  # noqa: E402


def make_triggers() -> tuple[DriverTriggers, FakeNode, FakeWorld]:
    profile = load_profile("spot").model_copy(deep=True)
    profile.sim.power_on_seconds = 0.0
    node, world = FakeNode(), FakeWorld()
    lock, counters = shared()
    power = Power(profile.sim.needs_power)
    base = SimBase(node, profile, world, power, lambda: 0.0, lock, counters)
    arm = SimArm(node, profile, world.robot, lock, counters)
    gripper = SimGripper(node, profile, world.robot, lock, counters)
    return DriverTriggers(node, profile, power, base, arm, gripper, lock, counters), node, world


def call(node: FakeNode, name: str) -> tuple[bool, str]:
    response = node.services[name][1](Trigger.Request(), Trigger.Response())
    return response.success, response.message


def test_the_profiles_trigger_services_are_served_under_its_names() -> None:
    _, node, _ = make_triggers()
    assert {"/spot/power_on", "/spot/stand", "/spot/estop/gentle", "/spot/claim"} <= set(node.services)
    assert all(srv is Trigger for srv, _ in node.services.values())


def test_standing_needs_power_and_an_estop_cuts_it_and_stops_the_base() -> None:
    triggers, node, _ = make_triggers()
    assert call(node, "/spot/stand") == (False, "the robot is not powered on: call power_on first")
    assert call(node, "/spot/power_on")[0] and call(node, "/spot/stand")[0] and triggers.power.can_move
    triggers.base.on_cmd_vel(Twist())
    assert call(node, "/spot/estop/gentle") == (True, "motor power cut")
    assert not triggers.power.powered and not triggers.power.standing and triggers.base.command is None
    assert triggers.counters["services"] == 4


def test_the_gripper_and_arm_roles_reach_the_homes_robot() -> None:
    triggers, _, world = make_triggers()
    assert triggers.run("gripper_close") == (True, "gripper closed") and world.robot.closure == 1.0
    assert triggers.run("gripper_open") == (True, "gripper open") and world.robot.closure == 0.0
    assert triggers.run("arm_stow") == (True, "arm stowed") and world.robot.stowed == 1
    assert triggers.run("arm_unstow") == (True, "arm ready")
    assert triggers.run("claim") == (True, "claim: done")
