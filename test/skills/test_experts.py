"""Expert policies drive PolicySkill to success through the real control path in the demo home."""

from __future__ import annotations

import math

import numpy as np
import pytest

from homiebot.core.contracts import Action, Subtask
from homiebot.policies.base import DiscreteMove, EndEffectorDelta, Move, PolicyObservation, Waypoints
from homiebot.skills.base import SkillContext
from homiebot.skills.policy_skill import PolicySkill
from homiebot.worlds.home.experts import EndEffectorExpert, NavigationWaypointExpert
from homiebot.worlds.home.scene import load_scene
from homiebot.worlds.home.state import RobotPose
from homiebot.worlds.home.world import EmbeddedHome
from test.conftest import ROOT

CTX = SkillContext(episode_seed=0, round=1, attempt=1, max_attempts=3)
SIZE = (32, 32)


@pytest.fixture(scope="module")
def world():
    w = EmbeddedHome(load_scene(ROOT / "config" / "scenes" / "demo.yaml"), width=32, height=32, depth=False, segmentation=False)
    yield w
    w.close()


def skill(model: str, policy: str, **params) -> PolicySkill:
    return PolicySkill(model, policy=policy, image_size=SIZE, **params)


def test_nomad_style_waypoints_reach_a_receptacle(world) -> None:
    world.reset()
    nomad = skill("NoMaD", "expert_waypoints")
    result = nomad.run(Subtask(action=Action.GO_TO, target="brown_table"), world, CTX)
    assert result.success, result.message
    assert world.state.distance_to("brown_table") <= 0.3
    assert result.path_length > 3.0 and result.stats["steps"] > 10 and result.stats["collisions"] == 0
    assert result.stats["sim_seconds"] == pytest.approx(result.stats["steps"] / 4.0)  # NoMaD runs at 4 Hz
    nomad.close()


def test_pixnav_style_discrete_moves_reach_a_visible_object(world) -> None:
    world.reset()
    world.state.robot = RobotPose(4.2, 2.0, 0.0)  # in the kitchen doorway, the table and can ahead
    pix = skill("PixNav", "expert_discrete")
    result = pix.run(Subtask(action=Action.GO_TO, target="green_can"), world, CTX)
    assert result.success, result.message
    assert world.state.distance_to("green_can") <= 0.45 + 1e-9
    pix.close()


def test_octo_style_open_opens_the_fridge(world) -> None:
    world.reset()
    world.state.robot = RobotPose(1.35, 1.2, math.pi)
    octo = skill("octo", "expert_ee", policy_params={"chunk": 4})
    result = octo.run(Subtask(action=Action.OPEN, target="fridge"), world, CTX)
    assert result.success, result.message
    assert world.state.is_open["fridge"] and world.state.open_fraction("fridge") >= 0.9
    assert world.state.held is None and world.state.arm == world.state.arm.carry()  # let go and stowed
    close = octo.run(Subtask(action=Action.CLOSE, target="fridge"), world, CTX)
    assert close.success, close.message
    assert not world.state.is_open["fridge"]
    octo.close()


def test_rt1x_style_pick_lifts_a_can_and_put_places_it(world) -> None:
    world.reset()
    world.state.robot = RobotPose(6.35, 2.7, 0.0)
    rt1 = skill("RT-1-X", "expert_ee")
    result = rt1.run(Subtask(action=Action.PICK, target="green_can"), world, CTX)
    assert result.success, result.message
    assert world.state.held == "green_can" and world.state.locations["green_can"].relation == "held"
    put = rt1.run(Subtask(action=Action.PUT, target="green_can", place="brown_table"), world, CTX)
    assert put.success, put.message
    assert world.state.locations["green_can"].receptacle == "brown_table" and world.state.held is None
    rt1.close()


def test_pick_out_of_reach_says_so(world) -> None:
    world.reset()
    world.state.robot = RobotPose(5.6, 2.7, 0.0)  # 1.7 m from the can
    result = skill("RT-1-X", "expert_ee").run(Subtask(action=Action.PICK, target="green_can"), world, CTX)
    assert not result.success
    assert "out of the arm's reach" in result.message and "go closer" in result.message


def test_experts_speak_the_policy_contract_with_bounded_steps(world) -> None:
    world.reset()
    ctl = world.robot
    nav = NavigationWaypointExpert()
    nav.attach(world, ctl, Subtask(action=Action.GO_TO, target="fridge"))
    nav.reset()
    obs = PolicyObservation(rgb=np.zeros((*nav.image_size, 3), np.uint8))
    (cmd,) = nav.act(obs)
    assert isinstance(cmd, Waypoints) and cmd.points.shape == (8, 2)
    assert np.all(np.linalg.norm(np.diff(cmd.points, axis=0), axis=1) <= 0.25 + 1e-6)
    world.state.robot = RobotPose(6.35, 2.7, 0.0)
    ee = EndEffectorExpert(max_translation=0.04, chunk=4)
    ee.attach(world, ctl, Subtask(action=Action.PICK, target="green_can"))
    ee.reset()
    chunk = ee.act(obs)
    assert len(chunk) == 4 and all(isinstance(c, EndEffectorDelta) for c in chunk)
    assert all(np.linalg.norm(c.translation) <= 0.04 + 1e-9 for c in chunk)
    with pytest.raises(RuntimeError, match="attach"):
        EndEffectorExpert().act(obs)
    assert DiscreteMove(Move.STOP).move is Move.STOP
