"""The robot interface: skills drive any ``Robot`` and judge attempts without simulator truth."""

from __future__ import annotations

import math

import numpy as np
import pytest

from homiebot.core.attempt_checks import RobotSignalsCheck
from homiebot.core.contracts import Action, ErrorCode, SkillFailure, Subtask
from homiebot.core.robot import BasePose, Unsupported
from homiebot.executor import Executor
from homiebot.policies.base import DiscreteMove, EndEffectorDelta, Move, Policy, PolicyObservation, Waypoints, apply_command
from homiebot.skills.base import SkillContext
from homiebot.skills.policy_skill import PolicySkill
from test.fakes import PlanarRobot, PlanarWorld

CTX = SkillContext(episode_seed=0, round=1, attempt=1, max_attempts=3)
GO = Subtask(action=Action.GO_TO, target="marker")


class StraightAhead(Policy):
    """A learned-looking policy: waypoints 0.5 m ahead, whatever it sees."""

    family = "nomad"
    image_size = (24, 32)
    rate_hz = 4.0

    def __init__(self) -> None:
        self.frames: list[tuple[int, int]] = []

    def act(self, obs: PolicyObservation) -> list:
        self.frames.append(obs.rgb.shape[:2])
        return [Waypoints(np.array([[0.25, 0.0], [0.5, 0.0]]))]


def test_default_waypoint_tracking_turns_then_drives_within_the_limits() -> None:
    robot = PlanarRobot()
    report = robot.follow_waypoints(np.array([[0.0, 1.0]]), None, 1.0)  # 90 degrees to the left
    assert all(abs(v) <= 0.5 and abs(w) <= 1.0 for _, v, w, _ in robot.commands)
    assert robot.commands[0][1] == 0.0 and robot.commands[0][2] > 0  # turns in place first
    assert report.duration == pytest.approx(1.0) and not report.collision
    for _ in range(6):
        goal = robot.pose.to_base((0.0, 1.0))
        robot.follow_waypoints(goal[None, :], None, 1.0)
    assert math.dist((robot.pose.x, robot.pose.y), (0.0, 1.0)) < 0.06


def test_commands_map_onto_the_interface_and_unsupported_parts_say_so() -> None:
    robot = PlanarRobot()
    apply_command(robot, DiscreteMove(Move.FORWARD), 0.5)
    assert robot.pose.x == pytest.approx(0.25)
    look = apply_command(robot, DiscreteMove(Move.LOOK_UP), 0.5)
    assert look.clipped and "no tilting head" in look.message
    with pytest.raises(Unsupported, match="has no arm"):
        apply_command(robot, EndEffectorDelta(np.zeros(3), np.zeros(3), 1.0), 0.2)


def test_a_learned_policy_reaches_its_goal_on_a_robot_without_simulator_truth() -> None:
    world = PlanarWorld()
    policy = StraightAhead()
    skill = PolicySkill("NoMaD", policy=policy, goal_gap=0.3, max_steps=40)
    assert skill.supports(world) is None
    assert isinstance(skill.check_for(world), RobotSignalsCheck)
    result = skill.run(GO, world, CTX)
    assert result.success, result.message
    assert set(policy.frames) == {(24, 32)}  # the camera read at the policy's size
    assert world.belief.distance_to("marker") <= 0.3
    assert result.path_length == pytest.approx(world.own_robot().pose.x, abs=1e-6)
    assert result.stats["steps"] == len(policy.frames)


def test_failures_carry_a_typed_reason_into_the_e1_details() -> None:
    timed_out = PolicySkill("NoMaD", policy=StraightAhead(), max_steps=2).run(GO, PlanarWorld(), CTX)
    assert not timed_out.success and timed_out.reason is SkillFailure.TIMEOUT
    assert "did not reach the marker" in timed_out.message
    gone = PlanarWorld(PlanarRobot(fail_after=3))
    run = Executor({"NoMaD": PolicySkill("NoMaD", policy=StraightAhead(), max_steps=40)}).execute(GO, "NoMaD", gone, 0, 1)
    fb = run.feedback
    assert fb.code is ErrorCode.E1 and fb.details["reason"] == "unavailable" and run.attempts == 3
    assert "stopped answering" in fb.message


def test_a_robot_that_overshot_a_thing_has_not_arrived_until_it_backs_off() -> None:
    from homiebot.core.attempt_checks import Tolerances
    from homiebot.core.errors import Entity

    world = PlanarWorld()
    check = RobotSignalsCheck(world.belief)
    robot, tol = world.own_robot(), Tolerances()
    robot.pose = BasePose(1.85, 0.0, 0.0)  # 0.05 m from the marker's edge: the arm could not extend (the detector's D2)
    assert not check.succeeded(GO, robot, tol) and not check.done_early(GO, robot, tol)
    robot.pose = BasePose(1.7, 0.0, 0.0)  # 0.2 m: at the standoff
    assert check.succeeded(GO, robot, tol) and check.done_early(GO, robot, tol)
    world.belief.lookup = lambda name: Entity(name, "room")  # type: ignore[method-assign]
    robot.pose = BasePose(1.9, 0.0, 0.0)  # inside a room is where a Go to a room ends
    assert check.succeeded(GO, robot, tol)
