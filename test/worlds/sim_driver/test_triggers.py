"""The driver's Trigger services alone: power, stance, stop and the gripper and arm roles, as on the robot."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from geometry_msgs.msg import Twist  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402

from homiebot.robots.profile import load_profile  # noqa: E402
from homiebot.ros.nodes.sim_driver.arm import SimArm  # noqa: E402
from homiebot.ros.nodes.sim_driver.base import SimBase  # noqa: E402
from homiebot.ros.nodes.sim_driver.gripper import SimGripper  # noqa: E402
from homiebot.ros.nodes.sim_driver.lease import ALREADY_CLAIMED, SimLease  # noqa: E402
from homiebot.ros.nodes.sim_driver.power import Power  # noqa: E402
from homiebot.ros.nodes.sim_driver.triggers import DriverTriggers  # noqa: E402
from test.worlds.sim_driver.fakes import FakeNode, FakeWorld, shared  # noqa: E402


def make_triggers(lease: SimLease | None = None, real_time: bool = False) -> tuple[DriverTriggers, FakeNode, FakeWorld]:
    profile = load_profile("spot").model_copy(deep=True)
    profile.sim.power_on_seconds = 0.0
    node, world = FakeNode(), FakeWorld()
    lock, counters = shared()
    power = Power(profile.sim.needs_power)
    base = SimBase(node, profile, world, power, lambda: 0.0, lock, counters)
    arm = SimArm(node, profile, world.robot, lock, counters)
    gripper = SimGripper(node, profile, world.robot, lock, counters)
    return DriverTriggers(node, profile, power, base, arm, gripper, lock, counters, lease, real_time), node, world


def call(node: FakeNode, name: str) -> tuple[bool, str]:
    response = node.services[name][1](Trigger.Request(), Trigger.Response())
    return response.success, response.message


def test_the_profiles_trigger_services_are_served_under_its_names() -> None:
    _, node, _ = make_triggers()
    assert {"/spot/power_on", "/spot/stand", "/spot/estop/gentle", "/spot/claim"} <= set(node.services)
    assert all(srv is Trigger for srv, _ in node.services.values())


def test_standing_needs_power_and_power_off_cuts_it_and_stops_the_base() -> None:
    triggers, node, _ = make_triggers()
    assert call(node, "/spot/stand") == (False, "the robot is not powered on: call power_on first")
    assert call(node, "/spot/power_on")[0] and call(node, "/spot/stand")[0] and triggers.power.can_move
    triggers.base.on_cmd_vel(Twist())
    assert call(node, "/spot/power_off") == (True, "powered off")
    assert not triggers.power.powered and not triggers.power.standing and triggers.base.command is None
    assert triggers.counters["services"] == 4


def test_estop_gentle_replaces_the_operators_estop_and_holds_power_off_until_released() -> None:
    """spot_wrapper's assertEStop(severe=False) with no endpoint of its own: resetEStop (force_simple_setup makes the
    driver's endpoint the robot's only one, the operator's is gone), then settle and cut; power_on is refused until
    estop/release."""
    triggers, node, _ = make_triggers()
    assert call(node, "/spot/estop/release")[0] is False  # nothing of the driver's to release yet
    assert call(node, "/spot/power_on")[0] and call(node, "/spot/stand")[0]
    triggers.base.on_cmd_vel(Twist())
    assert call(node, "/spot/estop/gentle") == (True, "Success")
    power = triggers.power
    assert not power.powered and not power.standing and triggers.base.command is None
    assert power.driver_endpoint and power.estopped
    assert call(node, "/spot/power_on") == (False, "the robot is E-Stopped: the operator must release the E-Stop first")
    assert call(node, "/spot/estop/release") == (True, "Success") and not power.estopped
    assert call(node, "/spot/power_on")[0] and power.driver_endpoint  # the operator's endpoint does not come back


def test_claim_is_refused_while_another_client_holds_the_lease() -> None:
    triggers, node, _ = make_triggers(SimLease("tablet"))
    ok, message = call(node, "/spot/claim")
    assert not ok and message.startswith(ALREADY_CLAIMED) and "tablet" in message
    triggers.lease.holder = None  # the operator let it go
    assert call(node, "/spot/claim") == (True, "Success")
    assert call(node, "/spot/claim") == (True, "We already claimed the lease")
    assert call(node, "/spot/release") == (True, "Success") and triggers.lease.holder is None


def test_the_arms_services_power_on_and_stand_first_and_answer_when_the_motion_ended() -> None:
    """spot_wrapper's arm_unstow: ensure_arm_power_and_stand, then block_until_arm_arrives."""
    import time

    triggers, node, world = make_triggers(real_time=True)
    world.robot.hand = (world.robot.hand[0] + [0.0, 0.0, -0.1], 0.0)
    start = time.monotonic()
    assert call(node, "/spot/arm_unstow") == (True, "arm ready")
    took = time.monotonic() - start
    way = np.linalg.norm(np.asarray(triggers.profile.arm_ready) - [0.5, 0.0, 0.7])  # the fake hand's way to the ready pose
    expected = way / triggers.profile.limits.max_ee_speed
    assert triggers.arm.motion_seconds == pytest.approx(expected) and expected > 0.1 and took >= expected
    assert triggers.power.powered and triggers.power.standing
    triggers.power.operator_estop = True
    triggers.power.cut()
    ok, message = call(node, "/spot/arm_stow")
    assert not ok and "E-Stopped" in message and world.robot.stowed == 0


def test_the_gripper_and_arm_roles_reach_the_homes_robot() -> None:
    triggers, _, world = make_triggers()
    assert triggers.run("gripper_close") == (True, "gripper closed") and world.robot.closure == 1.0
    assert triggers.run("gripper_open") == (True, "gripper open") and world.robot.closure == 0.0
    assert triggers.run("arm_stow") == (True, "arm stowed") and world.robot.stowed == 1
    assert triggers.run("arm_unstow") == (True, "arm ready")
    assert triggers.run("claim") == (True, "Success")
