"""The sim driver's base alone: cmd_vel held until its timeout, applied only when powered and standing."""

from __future__ import annotations

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from geometry_msgs.msg import Twist  # noqa: E402

from homiebot.robots.profile import load_profile  # noqa: E402
from homiebot.ros.clients.robot.base import RESEND  # noqa: E402
from homiebot.ros.messages.wire import WireError  # noqa: E402
from homiebot.ros.nodes.sim_driver import upstream  # noqa: E402
from homiebot.ros.nodes.sim_driver.base import SimBase  # noqa: E402
from homiebot.ros.nodes.sim_driver.power import Power  # noqa: E402
from test.worlds.sim_driver.fakes import FakeNode, FakeWorld, shared  # noqa: E402


def make_base(needs_power: bool) -> tuple[SimBase, FakeNode, FakeWorld, list[float]]:
    node, world, now = FakeNode(), FakeWorld(), [100.0]
    lock, counters = shared()
    base = SimBase(node, load_profile("spot"), world, Power(needs_power), lambda: now[0], lock, counters)
    return base, node, world, now


def twist(v: float, w: float) -> Twist:
    msg = Twist()
    msg.linear.x, msg.angular.z = v, w
    return msg


def test_the_base_takes_cmd_vel_on_the_profiles_topic_and_publishes_odometry_there() -> None:
    base, node, _, _ = make_base(needs_power=False)
    assert "/spot/cmd_vel" in node.subscriptions and "/spot/odometry" in node.publishers
    base.publish(5)
    odom = node.publishers["/spot/odometry"].sent[-1]
    # spot_ros2 bdee4a4, spot_driver/src/conversions/robot_state.cpp, getOdom: prefix + "odom", prefix + "body"
    assert (odom.header.frame_id, odom.child_frame_id) == ("spot/odom", "spot/body")
    assert (odom.pose.pose.position.x, odom.pose.pose.position.y) == (1.0, 2.0)


def test_an_unpowered_base_holds_the_command_but_does_not_drive() -> None:
    base, _, world, now = make_base(needs_power=True)
    base.on_cmd_vel(twist(0.3, 0.1))
    base.advance(0.1, now[0])
    assert world.robot.drives == [] and base.counters["cmd_vel"] == 1 and base.counters["applied"] == 0
    assert base.odometry(0).twist.twist.linear.x == 0.0  # nothing moves it
    base.power.powered = base.power.standing = True
    base.advance(0.1, now[0])
    assert world.robot.drives == [(0.3, 0.1, 0.1)] and base.odometry(0).twist.twist.linear.x == 0.3


def test_without_a_new_command_the_base_stops_when_the_command_ends_mid_tick() -> None:
    base, _, world, now = make_base(needs_power=False)
    base.on_cmd_vel(twist(0.3, 0.0))
    base.advance(0.1, now[0] + base.duration - 0.01)
    base.advance(0.1, now[0] + base.duration + 0.04)  # ended 0.04 s before this tick's end: 0.06 s of it moved
    base.advance(0.1, now[0] + base.duration + 0.14)
    assert [d[2] for d in world.robot.drives] == pytest.approx([0.1, 0.06])
    assert base.command is None and base.counters["timeouts"] == 1


def test_the_profiles_timeout_is_spot_ros2s_cmd_duration_which_the_sim_driver_applies() -> None:
    # spot_ros2 bdee4a4, spot_driver/spot_driver/spot_ros2.py: self.declare_parameter("cmd_duration", 0.125)
    profile = load_profile("spot")
    assert profile.sim.driver == "spot_ros2" and upstream.CMD_DURATION == 0.125
    assert profile.cmd_vel_timeout == upstream.CMD_DURATION == upstream.cmd_duration(profile, "")
    assert upstream.cmd_duration(profile, 0.3) == 0.3 and upstream.cmd_duration(load_profile("fetch"), "") == load_profile("fetch").cmd_vel_timeout
    # the bridge re-sends a held velocity well within it
    assert RESEND < profile.cmd_vel_timeout / 2


def test_in_lock_step_a_command_sent_before_a_step_is_held_for_the_step() -> None:
    base, _, world, now = make_base(needs_power=False)
    base.on_cmd_vel(twist(0.3, 0.0))
    base.hold(now[0] + 1.0)
    for i in range(1, 11):
        base.advance(0.1, now[0] + 0.1 * i)
    assert sum(d[2] for d in world.robot.drives) == pytest.approx(1.0) and base.command is None


def test_a_non_finite_velocity_is_refused() -> None:
    base, _, _, _ = make_base(needs_power=False)
    with pytest.raises(WireError, match="non-finite"):
        base.on_cmd_vel(twist(float("nan"), 0.0))
    assert base.command is None and base.counters["cmd_vel"] == 0
