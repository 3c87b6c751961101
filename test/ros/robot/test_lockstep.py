"""``LockStep``: real time sleeps, lock-step steps wait for the commands sent since the last step."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from homiebot.ros.clients.robot.lockstep import LockStep  # noqa: E402


def test_real_time_sleeps_and_keeps_the_monotonic_clock():
    clock = LockStep(None)
    assert not clock.active and clock.sim_ns == -1
    before = time.monotonic()
    clock.pause(0.02)
    assert time.monotonic() - before >= 0.02
    assert abs(clock.clock() - time.monotonic()) < 0.01
    clock.sync()  # nothing to ask in real time
    assert clock.sim_ns == -1


def test_a_step_waits_for_the_commands_sent_since_the_last():
    steps = []

    def step(seconds, after, until, cameras):
        steps.append((seconds, after, until))
        assert cameras is None  # no render function: every camera at every step
        return 2_000_000_000 + len(steps), {"cmd_vel": 5, "arm_goals": 1}

    clock = LockStep(step)
    clock.sync()
    assert steps == [(0.0, {}, None)] and clock.sim_ns == 2_000_000_001
    clock.sent("cmd_vel")
    clock.sent("cmd_vel")
    clock.pause(0.5, until="goal")
    assert steps[-1] == (0.5, {"cmd_vel": 7}, "goal")  # the driver's 5 and this bridge's 2 since
    clock.pause(0.1)
    assert steps[-1] == (0.1, {}, None)  # nothing sent since: counted afresh
    assert clock.clock() == pytest.approx(2.000000003)


def test_an_expected_instant_never_goes_back():
    clock = LockStep(lambda *_: (0, {}))
    clock.expect_instant(50)
    clock.expect_instant(10)
    assert clock.sim_ns == 50


def test_with_rendering_on_demand_a_step_renders_the_cameras_read_before_and_a_miss_is_asked_for_once():
    steps, asked = [], []

    def step(seconds, after, until, cameras):
        steps.append(cameras)
        return 1_000 * len(steps), {}

    clock = LockStep(step, render=lambda cameras: asked.append(cameras) or clock.sim_ns)
    clock.sync()
    assert steps == [None]  # a sync renders every camera
    clock.pause(0.25)
    assert steps[-1] == []  # nothing read yet: nothing rendered
    assert clock.ask("hand") and not clock.ask("hand") and asked == [["hand"]]  # once an instant
    clock.reading("hand")
    clock.pause(0.25)
    assert steps[-1] == ["hand"]  # what the skill read, the next step renders
    clock.pause(0.25)
    assert steps[-1] == []  # read at no instant since
    assert LockStep(step).ask("hand") is False  # a driver that renders every camera: nothing to ask
