"""``Gripper`` alone (Spot's: open / close services and the driver's manipulator state)."""

from __future__ import annotations

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from homiebot.core.robot import CommandCounters, RobotUnavailable  # noqa: E402
from homiebot.robots.profile import load_profile  # noqa: E402
from homiebot.ros.clients.robot.gripper import GRIPPER_HOLD, Gripper  # noqa: E402
from homiebot.ros.clients.robot.lockstep import LockStep  # noqa: E402
from test.ros.robot.fakes import FakeNode, FakeServices, alive  # noqa: E402

PROFILE = load_profile("spot")


def gripper(node: FakeNode, services: FakeServices, clock: LockStep) -> Gripper:
    return Gripper(node, PROFILE, services, None, CommandCounters(), clock, alive, 0.05)  # type: ignore[arg-type]


def test_a_repeated_command_in_force_is_not_sent_again(monkeypatch):
    now = [10.0]
    clock = LockStep(None)
    monkeypatch.setattr(clock, "clock", lambda: now[0])
    services = FakeServices(("gripper_open", "gripper_close"))
    part = gripper(FakeNode(), services, clock)
    part.set(0.9)
    part.set(0.7)  # the same goal for a service gripper: closed
    assert services.called == ["gripper_close"]
    now[0] += GRIPPER_HOLD + 0.1
    part.set(1.0)
    assert services.called == ["gripper_close", "gripper_close"]  # no longer in force
    part.forget()
    part.set(1.0)
    assert len(services.called) == 3
    part.set(0.0)
    assert services.called[-1] == "gripper_open"


def test_the_state_is_read_from_a_message_after_the_last_command(monkeypatch):
    monkeypatch.setattr("homiebot.ros.clients.robot.gripper.gripper_reading", lambda msg: msg)
    node = FakeNode()
    part = gripper(node, FakeServices(), LockStep(None))
    topic = PROFILE.topic(PROFILE.gripper_state.name)
    assert part.reads_state and topic in node.subscriptions
    node.deliver(topic, (1.0, False))
    node.deliver(topic, (1.0, False))
    assert part.state().open_fraction == 1.0
    part.set(1.0)
    node.deliver(topic, (0.0, True))  # may have been on its way before the close returned
    with pytest.raises(RobotUnavailable, match="no gripper state on"):
        part.state()
    node.deliver(topic, (0.1, True))
    state = part.state()
    assert state.holding and state.open_fraction == 0.1
