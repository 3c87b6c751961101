"""Mapped perception end to end: the heuristic and oracle planners solve tasks whose targets start out
of view by exploring; F2 comes from the map; the map follows the robot's own Pick; the observation
carries no simulator names; configuration errors are clear."""

from __future__ import annotations

import pytest

from homiebot.config import RunConfig
from homiebot.core.contracts import Action, ErrorCode, PlannerOutput, Subtask
from homiebot.core.errors import ConfigError, ErrorDetector
from homiebot.core.tasks import load_task
from homiebot.executor import run_attempt
from homiebot.runtime import build_skills, build_world, run_episode, scene_for
from homiebot.skills.base import SkillContext
from homiebot.worlds.home.generate import generate_task
from homiebot.worlds.perceiving import PerceivingWorld

DEMO = "config/tasks/demo.yaml"


def mapped(**extra) -> RunConfig:
    data = {"perception": {"mode": "mapped"}, "world": {"name": "embedded_home", "params": {"width": 128, "height": 128}},
            "skill_profile": "perfect", "max_rounds": 30}
    return RunConfig.model_validate({**data, **extra})


def subtasks(record) -> list[str]:
    return [st.output.subtask.text() for st in record.steps if st.output is not None]


@pytest.mark.parametrize("task", [DEMO, 1, 4, 5])
def test_heuristic_explores_and_solves(task) -> None:
    task = load_task(DEMO) if task == DEMO else generate_task(task)
    record, _ = run_episode(mapped(), task)
    assert record.goal_satisfied, subtasks(record)
    assert any(s.startswith("[Explore,") for s in subtasks(record))  # the targets were not in view at the start


def test_heuristic_with_default_failures_recovers() -> None:
    cfg = mapped()
    cfg.skill_profile = "default"
    record, _ = run_episode(cfg, load_task(DEMO))
    assert record.goal_satisfied, subtasks(record)


def test_oracle_explores_when_the_map_does_not_know_a_name() -> None:
    record, _ = run_episode(mapped(planner={"name": "oracle"}), load_task(DEMO))
    assert record.goal_satisfied
    first = record.steps[0]
    assert first.feedback.code is ErrorCode.F2 and "explore" in first.feedback.message
    assert subtasks(record)[1].startswith("[Explore,")


@pytest.fixture()
def demo_world():
    cfg = mapped()
    world = build_world(cfg, scene_for(load_task(DEMO)))
    yield cfg, world
    world.close()


def test_observation_has_no_simulator_names_and_the_map_is_the_belief(demo_world) -> None:
    _, world = demo_world
    assert isinstance(world, PerceivingWorld)
    obs = world.observe(0)
    assert obs.labels == {}
    assert all(v.segmentation is None and v.depth is not None for v in obs.views.values())
    names = set(world.belief.names())
    assert "green_can" not in names and "kitchen" in names
    assert world.map_summary()["round"] == 0


def test_f2_from_the_map_names_candidates_and_pick_marks_held(demo_world) -> None:
    cfg, world = demo_world
    skills = build_skills(cfg, world)
    caps = {m: s.actions for m, s in skills.skills.items()}
    world.observe(0)
    detector = ErrorDetector(world.belief, caps)
    never = detector.check(PlannerOutput(subtask=Subtask(action=Action.GO_TO, target="purple elephant"), model="NoMaD"))
    assert never.feedback is not None and never.feedback.code is ErrorCode.F2
    ctx = SkillContext(0, 1, 1, 1)
    run_attempt(skills.skills["NoMaD"], Subtask(action=Action.EXPLORE, target="living_room"), world, ctx)
    run_attempt(skills.skills["NoMaD"], Subtask(action=Action.EXPLORE, target="kitchen"), world, ctx)
    res = detector.check(PlannerOutput(subtask=Subtask(action=Action.GO_TO, target="purple elephant"), model="NoMaD"))
    assert res.feedback.code is ErrorCode.F2 and "seen:" in res.feedback.message  # candidates from the map
    can = detector.check(PlannerOutput(subtask=Subtask(action=Action.GO_TO, target="green can"), model="PixNav"))
    assert can.feedback is None and can.subtask.target.startswith("can_")
    can_id = can.subtask.target
    assert run_attempt(skills.skills["PixNav"], can.subtask, world, ctx).success
    world.observe(1)
    pick = detector.check(PlannerOutput(subtask=Subtask(action=Action.PICK, target="green_can"), model="RT-1-X"))
    assert pick.feedback is None, pick.feedback
    assert run_attempt(skills.skills["RT-1-X"], pick.subtask, world, ctx).success
    assert world.map.get(can_id).held and world.inventory() == [can_id] and world.ground_truth().held == "green_can"
    put = detector.check(PlannerOutput(subtask=Subtask(action=Action.PUT, target="green can", place="fridge"), model="RT-1-X"))
    assert put.feedback is None or put.feedback.code in (ErrorCode.D1, ErrorCode.L3)  # grounded: only distance or door left
    if put.feedback is None:
        assert put.subtask.target == can_id


def test_explore_needs_a_mapping_world() -> None:
    from homiebot.skills.explore import ExploreSkill
    from homiebot.worlds.home.world import EmbeddedHome

    world = EmbeddedHome(scene_for(load_task(DEMO)), width=64, height=64)
    try:
        assert "mapped" in ExploreSkill("NoMaD").supports(world)
    finally:
        world.close()


def test_mapped_defaults_and_config_errors() -> None:
    assert mapped().skills[0].name == "explore" and RunConfig().skills[0].name == "privileged_navigation"
    explicit = RunConfig.model_validate({"perception": {"mode": "mapped"}, "skills": [{"name": "privileged_navigation", "model": "N"}]})
    assert [s.name for s in explicit.skills] == ["privileged_navigation"]
    scene = scene_for(load_task(DEMO))
    with pytest.raises(ConfigError, match="unknown detector 'nope'"):
        build_world(mapped(perception={"mode": "mapped", "detector": {"name": "nope"}}), scene)
    with pytest.raises(ConfigError, match="perception"):
        build_world(mapped(perception={"mode": "mapped", "map": {"bogus": 1}}), scene)


def test_describe_in_prompt_adds_the_map_text() -> None:
    cfg = mapped(perception={"mode": "mapped", "describe_in_prompt": True}, max_rounds=2)
    record, _ = run_episode(cfg, load_task(DEMO))
    assert "semantic map" in record.steps[-1].prompt
    plain, _ = run_episode(mapped(max_rounds=1), load_task(DEMO))
    assert "semantic map" not in plain.steps[0].prompt
