"""SafeRobot: limits clipped and reported, the watchdog, e-stop and cancel before every command."""

from __future__ import annotations

import time

import numpy as np
import pytest

from homiebot.core.contracts import Action, ErrorCode, SkillFailure, Subtask
from homiebot.core.robot import Stopped
from homiebot.executor import Executor
from homiebot.policies.base import Policy, PolicyObservation, Waypoints
from homiebot.safety import SafeRobot, SafetyGate, SafetySettings, SafetyState
from homiebot.skills.base import SkillContext
from homiebot.skills.policy_skill import PolicySkill
from test.fakes import PlanarRobot, PlanarWorld

GO = Subtask(action=Action.GO_TO, target="marker")


def kinds(state: SafetyState) -> list[str]:
    return [e.kind for e in state.events]


def test_commands_above_the_limits_are_clipped_to_them_and_reported_once() -> None:
    planar, state = PlanarRobot(), SafetyState()
    robot = SafeRobot(planar, SafetySettings(max_linear=0.3, max_linear_accel=1.0, max_angular_accel=3.0), state)
    assert robot.limits.max_linear == 0.3 and robot.limits.max_angular == 1.0  # the lower of settings and robot
    robot.drive(2.0, 5.0, 0.5)
    robot.drive(2.0, 5.0, 0.5)
    for _, v, w, _ in planar.commands:
        assert abs(v) <= 0.3 + 1e-12 and abs(w) <= 1.0 + 1e-12
    clips = [e for e in state.events if e.kind == "limit_clipped"]
    assert len(clips) == 1 and clips[0].details["limit"] == "base_speed"  # coalesced while it keeps clipping
    robot.drive(0.0, 0.0, 0.1)  # braking is never limited
    assert planar.commands[-1][1:3] == (0.0, 0.0)
    robot.drive(0.3, 0.0, 0.1)  # from rest: at most 1.0 m/s^2 * 0.1 s
    assert planar.commands[-1][1] == pytest.approx(0.1)
    assert [e.details["limit"] for e in state.events if e.kind == "limit_clipped"] == ["base_speed", "base_accel"]


def test_a_policy_that_stops_publishing_triggers_the_watchdog() -> None:
    planar, state = PlanarRobot(), SafetyState()
    robot = SafeRobot(planar, SafetySettings(watchdog=0.2), state)
    robot.drive(0.2, 0.0, 0.05)  # moving, then nothing more comes
    deadline = time.monotonic() + 10.0
    while planar.stopped == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert planar.stopped >= 1 and "watchdog_stop" in kinds(state)
    robot.close()


def test_a_stepped_robot_whose_clock_jumps_within_a_command_is_not_taken_for_a_silent_commander() -> None:
    """Lock-step: the robot's clock jumps by the whole command at the step's end, before drive() returns; a
    watchdog look in that moment took the command in flight for silence (a watchdog_stop in one of two
    identical episodes)."""

    class Stepped(PlanarRobot):
        def __init__(self) -> None:
            super().__init__()
            self.sim = 0.0

        def clock(self) -> float:
            return self.sim

        def drive(self, linear: float, angular: float, duration: float):
            report = super().drive(linear, angular, duration)
            self.sim += duration  # the step ended...
            time.sleep(0.3)  # ...and the bridge waits for the instant's odometry, several watchdog looks long
            return report

    stepped, state = Stepped(), SafetyState()
    robot = SafeRobot(stepped, SafetySettings(watchdog=0.2), state)
    for _ in range(3):
        robot.drive(0.2, 0.0, 1.0)  # each command one second of simulated time
    robot.stop()
    assert "watchdog_stop" not in kinds(state) and stepped.stopped == 1
    robot.close()


def test_an_estop_refuses_every_command_and_stops_the_robot_at_once() -> None:
    planar, state = PlanarRobot(), SafetyState()
    robot = SafeRobot(planar, SafetySettings(), state)
    state.engage_estop("test")
    assert planar.stopped == 1  # stopped when engaged, not at the next command
    with pytest.raises(Stopped, match="e-stop"):
        robot.drive(0.1, 0.0, 0.1)
    with pytest.raises(Stopped):
        robot.navigate_to(1.0, 0.0)
    assert planar.commands == []
    state.release_estop("test")
    robot.drive(0.1, 0.0, 0.1)
    assert len(planar.commands) == 1 and kinds(state) == ["estop", "estop_released"]


class EstopAt(Policy):
    """Drives ahead; at control step ``at`` someone presses the e-stop (before this step's commands)."""

    family = "nomad"
    image_size = (8, 8)
    rate_hz = 4.0

    def __init__(self, state: SafetyState, at: int, robot: PlanarRobot) -> None:
        self.state, self.at, self.robot = state, at, robot
        self.commands_at_estop: int | None = None

    def act(self, obs: PolicyObservation) -> list:
        if obs.step == self.at:
            self.state.engage_estop("operator")
            self.commands_at_estop = len(self.robot.commands)
        return [Waypoints(np.array([[0.25, 0.0], [0.5, 0.0]]))]


def test_an_estop_mid_skill_stops_the_base_within_one_control_period_and_is_not_retried() -> None:
    world = PlanarWorld()
    gate = SafetyGate(SafetySettings())
    gate.attach(world)
    policy = EstopAt(gate.state, at=3, robot=world.own_robot())
    skill = PolicySkill("NoMaD", policy=policy, max_steps=40)
    run = Executor({"NoMaD": skill}, interruption=gate.state.interruption).execute(GO, "NoMaD", world, 0, 1)
    assert policy.commands_at_estop is not None and len(world.own_robot().commands) == policy.commands_at_estop
    assert run.attempts == 1 and run.feedback.code is ErrorCode.E1 and run.feedback.details["reason"] == SkillFailure.STOPPED.value
    gate.state.release_estop()
    gate.state.cancel("operator")
    again = skill.run(GO, world, SkillContext(0, 2, 1, 3))
    assert not again.success and again.reason is SkillFailure.STOPPED and "cancelled" in again.message


def test_the_estop_heartbeat_trips_once_per_silence() -> None:
    from homiebot.safety.state import Deadman

    now = [0.0]
    deadman = Deadman(0.5, clock=lambda: now[0])
    now[0] = 0.4
    assert not deadman.expired()
    now[0] = 0.6
    assert deadman.expired() and not deadman.expired()  # once, not on every check
    deadman.beat()
    now[0] = 1.0
    assert not deadman.expired()
    now[0] = 1.2
    assert deadman.expired()
