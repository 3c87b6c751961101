"""PolicySkill: the policy registry, observations, stop conditions and result messages."""

from __future__ import annotations

import math

import numpy as np
import pytest

from homiebot.core.contracts import Action, SkillFailure, Subtask
from homiebot.policies.base import EndEffectorDelta, Policy, PolicyObservation, Waypoints
from homiebot.skills.base import SkillContext
from homiebot.skills.policy_skill import (
    MANIPULATION,
    NAVIGATION,
    POLICIES,
    PolicySkill,
    known_policies,
    make_policy,
    register_policy,
)
from homiebot.worlds.home.scene import load_scene
from homiebot.worlds.home.state import RobotPose
from homiebot.worlds.home.world import EmbeddedHome
from test.conftest import ROOT

CTX = SkillContext(episode_seed=0, round=1, attempt=1, max_attempts=3)


@pytest.fixture(scope="module")
def world():
    w = EmbeddedHome(load_scene(ROOT / "config" / "scenes" / "demo.yaml"), width=32, height=32, depth=False, segmentation=False)
    yield w
    w.close()


class Recorder(Policy):
    """A stand-in learned navigation policy: records what it sees, drives straight ahead."""

    family = "nomad"
    image_size = (24, 32)
    rate_hz = 4.0

    def __init__(self, speed: float = 0.5) -> None:
        self.seen: list[PolicyObservation] = []
        self.goal = None
        self.speed = speed

    def reset(self, instruction: str = "", goal_image: np.ndarray | None = None) -> None:
        self.goal = goal_image

    def act(self, obs: PolicyObservation) -> list:
        self.seen.append(obs)
        return [Waypoints(np.array([[self.speed, 0.0]]))]


class Fumbler(Policy):
    """Closes the gripper where it is and declares itself done."""

    family = "rt1x"

    def act(self, obs: PolicyObservation) -> list:
        return [EndEffectorDelta(np.zeros(3), np.zeros(3), 1.0), EndEffectorDelta(np.zeros(3), np.zeros(3), 1.0, terminate=True)]


def test_registry_and_yaml_style_construction() -> None:
    assert {"expert_waypoints", "expert_discrete", "expert_ee"} <= set(known_policies())  # the home's entry points
    s = PolicySkill(model="octo", policy="expert_ee", policy_params={"chunk": 4}, rate_hz=10, max_steps=50)
    assert s.actions == MANIPULATION and s.rate_hz == 10 and s.policy.chunk == 4
    assert PolicySkill(model="NoMaD", policy="expert_waypoints").actions == NAVIGATION
    assert PolicySkill(model="X", policy="expert_ee", actions=["Pick"]).actions == frozenset({Action.PICK})
    with pytest.raises(ValueError, match="unknown policy 'nope'; registered: "):
        make_policy("nope")
    register_policy("test_recorder", Recorder)
    try:
        assert isinstance(make_policy("test_recorder", speed=0.1), Recorder)
    finally:
        POLICIES.pop("test_recorder")


def test_learned_policy_gets_camera_images_goal_view_and_mask(world) -> None:
    world.reset()
    rec = Recorder()
    s = PolicySkill("NoMaD", policy=rec, max_steps=3, max_collisions=100)
    result = s.run(Subtask(action=Action.GO_TO, target="fridge"), world, CTX)
    assert not result.success and "stopped" in result.message and "from the fridge" in result.message
    assert len(rec.seen) == 3 and rec.seen[0].rgb.shape == (24, 32, 3) and rec.seen[0].depth.shape == (24, 32)
    assert rec.goal is not None and rec.goal.shape == (24, 32, 3)
    mask = rec.seen[0].goal_mask
    assert mask is not None and mask.dtype == bool and mask.any()  # the fridge is in its goal view
    assert [o.step for o in rec.seen] == [0, 1, 2]
    assert result.stats["steps"] == 3 and result.stats["sim_seconds"] == pytest.approx(0.75)


def test_collision_limit_stops_the_attempt(world) -> None:
    world.reset()
    world.state.robot = RobotPose(2.5, 8.0, math.pi / 2)  # facing the bedroom's north wall
    s = PolicySkill("NoMaD", policy=Recorder(), max_steps=100, max_collisions=3)
    result = s.run(Subtask(action=Action.GO_TO, target="kitchen"), world, CTX)
    assert not result.success and "3 collisions" in result.message and "bumped" in result.message
    assert result.stats["steps"] < 100


def test_grasp_miss_message_is_actionable(world) -> None:
    world.reset()
    world.state.robot = RobotPose(6.35, 2.7, 0.0)
    result = PolicySkill("RT-1-X", policy=Fumbler()).run(Subtask(action=Action.PICK, target="green_can"), world, CTX)
    assert not result.success
    assert "closed on nothing" in result.message and "green_can" in result.message and "cm" in result.message


def test_failed_put_reports_the_dropped_object(world) -> None:
    world.reset()
    st = world.state
    st.robot = RobotPose(6.35, 2.7, 0.0)
    assert PolicySkill("RT-1-X", policy="expert_ee").run(Subtask(action=Action.PICK, target="green_can"), world, CTX).success

    class Dropper(Policy):
        def act(self, obs: PolicyObservation) -> list:
            return [EndEffectorDelta(np.array([-0.05, 0.0, 0.0]), np.zeros(3), 1.0)] * 8 + [
                EndEffectorDelta(np.zeros(3), np.zeros(3), 0.0, terminate=True)]

    result = PolicySkill("RT-1-X", policy=Dropper(), actions=["Put"]).run(
        Subtask(action=Action.PUT, target="green_can", place="fridge"), world, CTX)
    assert not result.success and result.dropped == "green_can"
    assert "instead of the fridge" in result.message and st.held is None


def test_skill_refuses_worlds_without_what_it_needs() -> None:
    from test.fakes import PlanarWorld

    class NoRobot(PlanarWorld):
        def own_robot(self) -> None:
            return None

    nav = PolicySkill("NoMaD", policy="expert_waypoints")
    assert "has no robot" in nav.supports(NoRobot())
    failed = nav.run(Subtask(action=Action.GO_TO, target="fridge"), NoRobot(), CTX)
    assert not failed.success and failed.reason is SkillFailure.UNAVAILABLE
    # an expert reads simulator truth: a world without it (a real robot) is refused with the reason
    assert "reads simulator truth" in nav.supports(PlanarWorld())
    # a manipulation model on a base-only robot
    arm = PolicySkill("RT-1-X", policy=Recorder(), actions=["Pick"])
    assert arm.supports(PlanarWorld()) == "the robot lacks an arm and a gripper"
    assert PolicySkill("NoMaD", policy=Recorder(), camera="hand").supports(PlanarWorld()).startswith("the robot lacks a camera named 'hand'")
