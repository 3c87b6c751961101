"""``Base`` alone: velocities clipped to the profile's limits, held by re-sending or by a lock-step step."""

from __future__ import annotations

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from homiebot.core.robot import CommandCounters  # noqa: E402
from homiebot.robots.profile import load_profile  # noqa: E402
from homiebot.ros.clients.robot.base import Base  # noqa: E402
from homiebot.ros.clients.robot.lockstep import LockStep  # noqa: E402
from test.ros.robot.fakes import FakeNode, alive  # noqa: E402

PROFILE = load_profile("spot")


def test_a_held_velocity_is_re_sent_and_clipped():
    node, counters = FakeNode(), CommandCounters()
    base = Base(node, PROFILE, counters, LockStep(None), alive)
    pub = node.publishers[PROFILE.topic(PROFILE.cmd_vel.name)]
    report = base.drive(2.0, 0.1, 0.12)
    assert report.clipped and report.duration == 0.12 and report.distance == 0.0
    assert 2 <= len(pub.sent) <= 4 and counters.counts["cmd_vel"] == len(pub.sent)  # every RESEND s
    assert pub.sent[0].linear.x == PROFILE.limits.max_linear and pub.sent[0].angular.z == 0.1
    base.stop()
    assert pub.sent[-1].linear.x == 0.0 and counters.counts["stop"] == 1


def test_lock_step_holds_one_message_for_the_duration():
    steps = []
    clock = LockStep(lambda seconds, after, until, cameras: (steps.append((seconds, after)) or (1, {"cmd_vel": after.get("cmd_vel", 0)})))
    node = FakeNode()
    base = Base(node, PROFILE, CommandCounters(), clock, alive)
    report = base.drive(0.1, 0.0, 3.0)
    assert not report.clipped and len(node.publishers[PROFILE.topic(PROFILE.cmd_vel.name)].sent) == 1
    assert steps == [(3.0, {"cmd_vel": 1})]


def test_a_gap_over_the_drivers_timeout_is_counted_and_said():
    """A process too slow to re-send within spot_ros2's 0.125 s cmd_duration makes a real Spot stutter: noticed."""
    import time

    node, counters = FakeNode(), CommandCounters()
    slow = [0]

    def slow_alive():
        slow[0] += 1
        if slow[0] == 3:  # the second look at the robot inside the loop: this process stalls
            time.sleep(PROFILE.cmd_vel_timeout + 0.05)
        return alive()

    base = Base(node, PROFILE, counters, LockStep(None), slow_alive)
    base.drive(0.2, 0.0, 0.3)
    assert counters.counts["cmd_vel_gaps"] == 1 and base.longest_gap > PROFILE.cmd_vel_timeout
    assert "gap(s) between cmd_vel messages over the driver's 0.125 s" in node.logger.lines[-1]
