"""``DriverHealth`` alone: odometry kept, a silent driver refused, a restarted one brought up again."""

from __future__ import annotations

import math
import time

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from nav_msgs.msg import Odometry  # noqa: E402

from homiebot.core.robot import RobotUnavailable  # noqa: E402
from homiebot.robots.profile import load_profile  # noqa: E402
from homiebot.ros.clients.robot.health import DriverHealth  # noqa: E402
from homiebot.ros.clients.robot.lockstep import LockStep  # noqa: E402
from test.ros.robot.fakes import FakeNode, stamp  # noqa: E402

PROFILE = load_profile("spot")
TOPIC = PROFILE.topic(PROFILE.odometry.name)


def odometry(x: float, yaw: float, ns: int = 1_000_000_000) -> Odometry:
    msg = Odometry()
    msg.header.stamp = stamp(ns)
    msg.pose.pose.position.x = x
    msg.pose.pose.orientation.z, msg.pose.pose.orientation.w = math.sin(yaw / 2), math.cos(yaw / 2)
    return msg


def health(node: FakeNode, bring_up=lambda: None, stale_after: float = 0.2, lockstep: LockStep | None = None) -> DriverHealth:
    return DriverHealth(node, PROFILE, lockstep or LockStep(None), stale_after, 0.05, bring_up)


def test_the_newest_odometry_is_the_pose():
    node = FakeNode()
    part = health(node)
    assert node.subscriptions[TOPIC][2] == 10
    with pytest.raises(RobotUnavailable, match="no odometry on"):
        part.alive()
    node.deliver(TOPIC, odometry(1.5, 0.7))
    pose = part.alive()
    assert (pose.x, pose.yaw, pose.stamp) == (1.5, pytest.approx(0.7), 1.0) and part.publishing()


def test_a_silent_driver_is_unavailable():
    node = FakeNode()
    part = health(node, stale_after=0.02)
    node.deliver(TOPIC, odometry(0.0, 0.0))
    time.sleep(0.05)
    assert not part.publishing()
    with pytest.raises(RobotUnavailable, match="stopped publishing odometry"):
        part.alive()


def test_lock_step_odometry_of_an_older_instant_is_waited_for_then_judged():
    node = FakeNode()
    clock = LockStep(lambda *_: (0, {}))
    clock.expect_instant(5_000_000_000)
    part = health(node, stale_after=0.01, lockstep=clock)
    node.deliver(TOPIC, odometry(0.0, 0.0, ns=1_000_000_000))
    with pytest.raises(RobotUnavailable, match="stopped publishing"):  # waited call_timeout for a newer one
        part.alive()


def test_a_new_odometry_publisher_is_a_restarted_driver_brought_up_again():
    node = FakeNode()
    ups = []
    part = health(node, bring_up=lambda: ups.append(1), stale_after=5.0)
    node.deliver(TOPIC, odometry(0.0, 0.0))
    part.alive()
    assert ups == []  # not started: nothing to bring up
    node.publisher_gids = [b"first"]
    part.watch(time.monotonic() + 1.0)
    assert part.started
    part._driver_checked = 0.0  # the next look is due
    node.publisher_gids = [b"second"]
    part.alive()
    assert ups == [1] and "restarted" in node.logger.lines[0]
    part.alive()  # the same driver, looked at again only after DRIVER_CHECK
    assert ups == [1]


def test_a_restarted_driver_that_cannot_be_brought_up_is_tried_again_later():
    node = FakeNode()

    def refuse() -> None:
        raise RobotUnavailable("power_on refused")

    part = health(node, bring_up=refuse, stale_after=5.0)
    node.deliver(TOPIC, odometry(0.0, 0.0))
    node.publisher_gids = [b"first"]
    part.watch(time.monotonic() + 1.0)
    part._driver_checked, node.publisher_gids = 0.0, [b"second"]
    with pytest.raises(RobotUnavailable, match="could not be brought up again: power_on refused"):
        part.alive()
    assert part._driver == set()
