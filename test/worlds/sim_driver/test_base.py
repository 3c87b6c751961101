"""The sim driver's base alone: cmd_vel held until its timeout, applied only when powered and standing."""

from __future__ import annotations

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from geometry_msgs.msg import Twist  # noqa: E402

from homiebot.robots.profile import load_profile  # noqa: E402
from homiebot.ros.messages.wire import WireError  # noqa: E402
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
    assert (odom.header.frame_id, odom.child_frame_id) == ("odom", "body")
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


def test_without_a_new_command_the_base_stops_after_the_timeout() -> None:
    base, _, world, now = make_base(needs_power=False)
    base.on_cmd_vel(twist(0.3, 0.0))
    base.advance(0.1, now[0] + base.profile.cmd_vel_timeout - 0.01)
    base.advance(0.1, now[0] + base.profile.cmd_vel_timeout + 0.01)
    assert len(world.robot.drives) == 1 and base.command is None and base.counters["timeouts"] == 1


def test_a_non_finite_velocity_is_refused() -> None:
    base, _, _, _ = make_base(needs_power=False)
    with pytest.raises(WireError, match="non-finite"):
        base.on_cmd_vel(twist(float("nan"), 0.0))
    assert base.command is None and base.counters["cmd_vel"] == 0
