"""Routing by model choice: the planner's model runs (and is recorded), an uninstalled model is answered
with F1 naming the models that can run, and a configured fallback runs in its place and says so."""

from __future__ import annotations

import pytest

from homiebot.config import RunConfig, SkillSpec
from homiebot.core.contracts import Action, ErrorCode
from homiebot.core.tasks import Task
from homiebot.runtime import build_skills, run_episode
from homiebot.worlds.home.scene import load_scene
from test.conftest import ROOT

SCENE = load_scene(ROOT / "config" / "scenes" / "demo.yaml")
WORLD = {"name": "embedded_home", "params": {"width": 32, "height": 32, "depth": False, "segmentation": False}}
SMALL = [32, 32]
FUMBLE = [{"kind": "ee", "translation": [0, 0, 0], "rotation": [0, 0, 0], "gripper": 1.0, "terminate": True}]


def expert_skills() -> list[SkillSpec]:
    """Policy skills through the real control path; RT-1-X is a scripted policy that never grasps."""
    return [
        SkillSpec(name="policy_skill", model="NoMaD", params={"policy": "expert_waypoints", "image_size": SMALL}),
        SkillSpec(name="policy_skill", model="PixNav", params={"policy": "expert_discrete", "image_size": SMALL}),
        SkillSpec(name="policy_skill", model="octo", actions=[Action.PICK, Action.PUT, Action.OPEN, Action.CLOSE],
                  params={"policy": "expert_ee", "image_size": SMALL}),
        SkillSpec(name="policy_skill", model="RT-1-X", actions=[Action.PICK, Action.PUT, Action.OPEN, Action.CLOSE],
                  params={"policy": "scripted", "policy_params": {"commands": FUMBLE, "family": "rt1x"}, "image_size": SMALL}),
    ]


def uninstalled_nomad(tmp_path, fallback: str | None) -> SkillSpec:
    return SkillSpec(name="policy_skill", model="NoMaD", fallback=fallback,
                     params={"policy": "nomad", "policy_params": {"checkpoint": str(tmp_path / "models" / "nomad.pth")}})


def step(subtask: str, model: str) -> str:
    return f"Analysis: routing test.\nSubtask: {subtask}\nModel: {model}"


def run(skills: list[SkillSpec], outputs: list[str]):
    cfg = RunConfig(seed=0, max_rounds=len(outputs) + 1, skill_profile="perfect", world=WORLD, skills=skills,
                    planner={"name": "replay", "params": {"outputs": outputs}})
    record, _ = run_episode(cfg, Task(id="routing", instruction="put the green can in the fridge", scene=SCENE))
    return record


def test_the_planners_model_choice_is_honoured_and_recorded() -> None:
    record = run(expert_skills(), [
        step("[Go to, green_can]", "PixNav"),
        step("[Pick, green_can]", "RT-1-X"),
        step("[Pick, green_can]", "octo"),
        step("[Go to, kitchen]", "NoMaD"),
    ])
    steps = record.steps[:4]
    assert [s.output.model for s in steps] == ["PixNav", "RT-1-X", "octo", "NoMaD"]
    assert [s.skill for s in steps] == ["policy:expert_discrete", "policy:scripted", "policy:expert_ee", "policy:expert_waypoints"]
    go, fumble, pick, room = (s.feedback for s in steps)
    assert go.status == "success" and pick.status == "success" and room.status == "success"
    assert fumble.status == "fail" and fumble.code is ErrorCode.E1 and "RT-1-X failed to grasp the green_can" in fumble.message
    assert steps[1].attempts == 3 and steps[2].attempts == 1


def check_nomad(tmp_path, fallback: str | None):
    """What the detector answers to a planner choosing the uninstalled NoMaD for a Go to, with the skills,
    executor and detector wired exactly as ``run_episode`` wires them."""
    from homiebot.core.contracts import PlannerOutput, Subtask
    from homiebot.core.errors import ErrorDetector
    from homiebot.executor import Executor
    from homiebot.worlds.home.world import EmbeddedHome

    cfg = RunConfig(world=WORLD, skills=[uninstalled_nomad(tmp_path, fallback), *expert_skills()[1:]])
    world = EmbeddedHome(SCENE, width=32, height=32, depth=False, segmentation=False)
    skillset = build_skills(cfg, world)
    executor = Executor(skillset.skills, unavailable=skillset.unavailable, fallbacks=skillset.fallbacks)
    try:
        detector = ErrorDetector(world.belief, executor.capabilities(), unavailable=executor.unavailable)
        output = PlannerOutput(analysis="", subtask=Subtask(action=Action.GO_TO, target="kitchen"), model="NoMaD")
        return skillset, detector.check(output)
    finally:
        executor.close()
        world.close()


def test_an_uninstalled_model_is_answered_with_f1_naming_the_models_that_can_run(tmp_path) -> None:
    skillset, checked = check_nomad(tmp_path, None)
    assert set(skillset.unavailable) == {"NoMaD"} and "NoMaD" not in skillset.skills
    assert checked.feedback is not None and checked.feedback.code is ErrorCode.F1
    msg = checked.feedback.message
    assert msg.startswith("NoMaD is not installed here (NoMaD unavailable: ")
    assert "git clone https://github.com/robodhruv/visualnav-transformer.git" in msg  # the install hint reaches the planner
    assert f"checkpoint not found at {tmp_path / 'models' / 'nomad.pth'}" in msg
    assert msg.endswith("Choose a model from [PixNav, RT-1-X, octo].")
    _, with_fallback = check_nomad(tmp_path, "PixNav")
    assert with_fallback.passed  # a model with a fallback is not refused


def test_an_uninstalled_model_in_an_episode_gets_the_install_hint(tmp_path) -> None:
    skills = [uninstalled_nomad(tmp_path, None), *expert_skills()[1:]]
    record = run(skills, [step("[Go to, green_can]", "NoMaD"), step("[Go to, green_can]", "PixNav")])
    first, second = record.steps[:2]
    assert first.feedback.code is ErrorCode.F1 and first.skill is None and first.output.model == "NoMaD"
    assert first.feedback.message.startswith("NoMaD is not installed here (NoMaD unavailable: ")
    assert "git clone https://github.com/robodhruv/visualnav-transformer.git" in first.feedback.message
    assert first.feedback.message.endswith("Choose a model from [PixNav, RT-1-X, octo].")
    assert second.feedback.status == "success" and second.skill == "policy:expert_discrete"


def test_a_configured_fallback_runs_in_its_place_and_says_so(tmp_path) -> None:
    skills = [uninstalled_nomad(tmp_path, "PixNav"), *expert_skills()[1:]]
    record = run(skills, [step("[Go to, green_can]", "NoMaD")])
    first = record.steps[0]
    assert first.output.model == "NoMaD" and first.skill == "policy:expert_discrete"
    assert first.feedback.status == "success"
    assert first.feedback.message == "NoMaD is not installed here; PixNav ran in its place"


def test_uninstalled_models_are_reported_at_start_up(tmp_path) -> None:
    from homiebot.worlds.home.world import EmbeddedHome

    cfg = RunConfig(world=WORLD, skills=[uninstalled_nomad(tmp_path, "PixNav"), *expert_skills()[1:]])
    world = EmbeddedHome(SCENE, width=32, height=32, depth=False, segmentation=False)
    try:
        skillset = build_skills(cfg, world)
        assert set(skillset.unavailable) == {"NoMaD"} and skillset.fallbacks == {"NoMaD": "PixNav"}
        assert "Python module 'vint_train' is not installed (install: git clone" in skillset.unavailable["NoMaD"]
        assert "Python module 'diffusion_policy' is not installed (same install)" in skillset.unavailable["NoMaD"]
        offered = {m.name: m for m in skillset.models}
        assert "runs as PixNav here" in offered["NoMaD"].description
    finally:
        for s in skillset.skills.values():
            s.close()
        world.close()


def test_the_learned_configuration_runs_with_its_fallbacks() -> None:
    """config/sim_learned.yaml: no model is installed here, every one runs as its fallback, and says so."""
    from homiebot.config import load_config

    cfg = load_config(ROOT / "config" / "sim_learned.yaml").model_copy(update={"world": RunConfig(world=WORLD).world, "max_rounds": 3})
    cfg = cfg.model_copy(update={"planner": RunConfig(planner={"name": "replay", "params": {"outputs": [
        step("[Go to, green_can]", "PixNav"), step("[Pick, green_can]", "RT-1-X")]}}).planner})
    record, _ = run_episode(cfg, Task(id="learned", instruction="pick up the green can", scene=SCENE))
    go, pick = record.steps[:2]
    assert go.skill == "policy:expert_waypoints" and go.feedback.message == "PixNav is not installed here; expert_nav ran in its place"
    assert pick.skill == "policy:expert_ee" and pick.feedback.message == "RT-1-X is not installed here; expert_manip ran in its place"
    assert go.feedback.status == "success" and pick.feedback.status == "success"


@pytest.mark.parametrize("name", ["nomad", "pixnav", "octo", "rt1x"])
def test_learned_policies_are_found_by_name_and_name_the_skill(name, tmp_path) -> None:
    from homiebot.skills.policy_skill import PolicySkill

    skill = PolicySkill("M", policy=name, policy_params={"checkpoint": str(tmp_path / "none")})
    assert skill.name == f"policy:{name}"
    assert "unavailable" in skill.availability() and str(tmp_path / "none") in skill.availability()
