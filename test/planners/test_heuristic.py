"""The heuristic planner solves each documented instruction form from perception and feedback alone."""

from __future__ import annotations

import pytest

from homiebot.agent import Agent
from homiebot.config import RunConfig
from homiebot.core.contracts import Action, ErrorCode
from homiebot.core.tasks import ContainerState, ObjectAt, Task
from homiebot.executor import Executor
from homiebot.planners.heuristic import HeuristicPlanner
from homiebot.planners.instructions import UnsupportedInstruction, parse_instruction
from homiebot.runtime import build_skills, build_world, make_task, run_episode, scene_for
from homiebot.worlds.home.goals import goal_holds

from ..conftest import DEMO_TASK

DEMO_SCENE = str(DEMO_TASK.parent.parent / "scenes" / "demo.yaml")


def heuristic_config(profile="perfect", **extra) -> RunConfig:
    # segmentation is what the heuristic perceives; small views keep it fast
    return RunConfig.model_validate({"planner": {"name": "heuristic"}, "skill_profile": profile,
                                     "world": {"name": "embedded_home", "params": {"width": 96, "height": 96, "depth": True}}, **extra})


def task(instruction: str, goal: list) -> Task:
    base = make_task("open the fridge", DEMO_SCENE)
    return base.model_copy(update={"instruction": instruction, "goal": goal, "id": "heuristic"})


CASES = [
    ("put the green can in the fridge", [ObjectAt(object="green_can", receptacle="fridge")]),
    ("could you bring the white mug to the brown table, please?", [ObjectAt(object="white_mug", receptacle="brown_table")]),
    ("move the yellow banana and the blue bowl onto the blue sofa",
     [ObjectAt(object="yellow_banana", receptacle="blue_sofa"), ObjectAt(object="blue_bowl", receptacle="blue_sofa")]),
    ("clear the kitchen counter onto the brown table",
     [ObjectAt(object="yellow_banana", receptacle="brown_table"), ObjectAt(object="blue_bowl", receptacle="brown_table")]),
    ("if there is no banana in the fridge, put one there", [ObjectAt(object_class="banana", receptacle="fridge")]),
    ("if there is no apple in the fridge, put one there", []),  # there is one: nothing to do
    ("keep 1 mug on the brown table", [ObjectAt(object_class="mug", receptacle="brown_table")]),
    ("put the blue towel on the white bed", [ObjectAt(object="blue_towel", receptacle="white_bed")]),  # hidden in a cabinet
    ("open the drawer", [ContainerState(receptacle="drawer", open=True)]),
    ("put the red book in the drawer, then close it",
     [ObjectAt(object="red_book", receptacle="drawer"), ContainerState(receptacle="drawer", open=False)]),
]


@pytest.mark.parametrize("instruction, goal", CASES, ids=[c[0][:40] for c in CASES])
def test_documented_forms_are_solved(instruction, goal):
    record, _ = run_episode(heuristic_config(max_rounds=30), task(instruction, goal))
    assert record.ended and record.goal_satisfied, [(s.subtask.text() if s.subtask else None, s.feedback.code) for s in record.steps]
    if not goal:
        assert not any(s.subtask and s.subtask.action in (Action.PICK, Action.PUT) for s in record.steps)


def test_find_and_fetch():
    rec, _ = run_episode(heuristic_config(), task("find the blue bowl", []))
    assert rec.steps[-2].subtask.text() == "[Go to, blue_bowl]" and rec.ended
    rec, _ = run_episode(heuristic_config(), task("fetch the white mug", []))
    assert rec.steps[-1].inventory_after == ["white_mug"] and rec.ended


def test_repairs_after_being_too_close():
    profile = {"actions": {"Go to": {"overshoot": 0.5}}}
    codes = []
    for seed in range(4):
        record, _ = run_episode(heuristic_config(profile, seed=seed), task("put the green can in the fridge",
                                                                          [ObjectAt(object="green_can", receptacle="fridge")]))
        assert record.goal_satisfied
        codes += [s.feedback.code for s in record.steps]
    assert ErrorCode.D2 in codes, "the overshooting navigation should have produced D2 at least once"


def test_replans_after_someone_closes_the_container():
    """Someone shuts the fridge while the robot fetches the can: Put meets L3, and the planner recovers."""
    t = task("put the green can in the fridge", [ObjectAt(object="green_can", receptacle="fridge")])
    cfg = heuristic_config(max_rounds=30)
    world = build_world(cfg, scene_for(t))
    skills = build_skills(cfg, world)
    agent = Agent(world, HeuristicPlanner(), Executor(skills.skills), skills.models, planner_name="heuristic")

    closed = []

    def person_closes_fridge(step):
        if not closed and step.subtask and step.subtask.action is Action.PICK and step.feedback.success:
            world.ground_truth().is_open["fridge"] = False  # once
            world.ground_truth().nav.set_open_state(world.ground_truth().is_open)
            closed.append(step.round)

    try:
        record = agent.run(t, 0, on_step=person_closes_fridge)
        assert goal_holds(world.ground_truth(), t.goal)
    finally:
        world.close()
    codes = [s.feedback.code for s in record.steps]
    assert ErrorCode.L3 in codes and record.ended


def test_unsupported_instruction_is_refused_clearly():
    with pytest.raises(UnsupportedInstruction, match="does not understand 'juggle three oranges'.*It understands: put"):
        parse_instruction("juggle three oranges")
    from homiebot.core.errors import ConfigError
    from homiebot.planners.base import PlannerConfigError

    with pytest.raises((PlannerConfigError, ConfigError), match="does not understand"):
        run_episode(heuristic_config(), task("juggle three oranges", []))


def test_selected_by_config_alone(tmp_path):
    cfg_file = tmp_path / "c.yaml"
    cfg_file.write_text("planner: {name: heuristic}\nskill_profile: perfect\nworld: {name: embedded_home, params: {width: 96, height: 96}}\n")
    from homiebot.config import load_config

    record, _ = run_episode(load_config(cfg_file), task("put the green can in the fridge",
                                                       [ObjectAt(object="green_can", receptacle="fridge")]))
    assert record.planner == "heuristic" and record.goal_satisfied


def test_an_object_of_every_kind_given_up_is_reported_not_called_done():
    """Every pick fails: the End names what was not moved (termination reported), never 'everything is done'."""
    profile = {"actions": {"Pick": {"hard": 1.0}}}
    record, _ = run_episode(heuristic_config(profile, max_rounds=40), task("put the bowls on the brown table",
                                                                           [ObjectAt(object="blue_bowl", receptacle="brown_table")]))
    assert record.termination == "reported" and not record.goal_satisfied, [
        (s.subtask.text() if s.subtask else None, s.feedback.code) for s in record.steps]
    assert "I could not move blue_bowl" in record.steps[-1].raw_output


def test_of_two_that_fit_the_one_already_at_the_destination_is_not_the_one_moved(tmp_path):
    """'put the candle on the desk' with one candle on the desk and one on the bed, both seen, nobody to ask:
    the one on the bed goes to the desk (moving the other would change nothing and claim done)."""
    import yaml

    scene = yaml.safe_load(open(DEMO_SCENE))
    scene["objects"] += [{"name": "red_candle", "class": "candle", "color": "red", "on": "white_desk"},
                         {"name": "white_candle", "class": "candle", "color": "white", "on": "white_bed"}]
    path = tmp_path / "two_candles.yaml"
    path.write_text(yaml.safe_dump(scene))
    t = make_task("put the candle on the desk", str(path)).model_copy(update={
        "goal": [ObjectAt(object="white_candle", receptacle="white_desk")], "id": "two_candles"})
    record, _ = run_episode(heuristic_config(max_rounds=30), t)
    moved = [s.subtask.target for s in record.steps if s.subtask and s.subtask.action is Action.PICK and s.feedback.success]
    assert moved == ["white_candle"] and record.goal_satisfied, [(s.subtask.text() if s.subtask else None) for s in record.steps]
