"""The exploration phase before a task: the map it builds, the unseen changes after it, a path that starts at 0."""

from __future__ import annotations

import math

import pytest

from homiebot.config import RunConfig
from homiebot.core.tasks import Exploration, Task, TaskError, load_task
from homiebot.runtime import build_world, run_episode, scene_for

from ..conftest import ROOT

DEMO = ROOT / "config" / "scenes" / "demo.yaml"
# the person takes the mug from the desk to the living room table before the task: the robot explored while it
# stood on the desk and does not see it move
MOVED = {"position": [2.5, 4.0], "script": [{"round": 0, "pick": "white_mug"}, {"round": 0, "place": "brown_table"},
                                            {"round": 0, "walk": "bathroom"}]}


def mapped(**extra) -> RunConfig:
    data = {"perception": {"mode": "mapped"}, "world": {"name": "embedded_home", "params": {"width": 256, "height": 256}},
            "skill_profile": "perfect", "max_rounds": 30}
    return RunConfig.model_validate({**data, **extra})


def task(**extra) -> Task:
    return Task(id="mug", instruction="put the white mug in the fridge", scene_file=str(DEMO),
                goal=[{"kind": "object_at", "object": "white_mug", "receptacle": "fridge"}], **extra)


def test_exploring_maps_the_home_before_the_task_and_then_the_unseen_changes_happen() -> None:
    t = task(person=MOVED, explore=Exploration(max_stops=30))
    world = build_world(mapped(), scene_for(t))
    try:
        world.reset()
        assert world.exploration_stops > 3
        assert world.path_length() == 0.0  # the task's path starts after the exploration
        mugs = [i for i in world.map.instances() if i.label == "mug"]
        assert mugs and min(math.dist(i.position[:2], (3.8, 8.07)) for i in mugs) < 0.8  # seen on the desk
        truth = world.ground_truth()
        assert truth.locations["white_mug"].receptacle == "white_desk"  # not moved yet: the robot was looking
        world.observe(1)  # the task begins: the round-0 steps happened meanwhile
        assert truth.locations["white_mug"].receptacle == "brown_table"
        assert truth.person.events[1].endswith("put white_mug on the brown_table")
    finally:
        world.close()


def test_without_an_exploration_phase_the_map_starts_empty_of_far_things() -> None:
    world = build_world(mapped(), scene_for(task(person=MOVED)))
    try:
        world.reset()
        assert world.exploration_stops == 0
        assert not [i for i in world.map.instances() if i.label == "mug"]
    finally:
        world.close()


def test_an_explored_task_is_solved_where_the_object_went() -> None:
    record, _ = run_episode(mapped(), task(person=MOVED, explore=Exploration(max_stops=30)))
    assert record.goal_satisfied, "\n".join(f"{s.output.subtask.text() if s.output else '-'} {s.feedback.message[:80]}" for s in record.steps)
    picks = [s for s in record.steps if s.output and s.output.subtask.action.value == "Pick" and s.feedback.success]
    assert picks and record.path_length > 0


def test_a_bad_exploration_field_is_refused(tmp_path) -> None:
    (tmp_path / "t.yaml").write_text(f"instruction: go to the kitchen\nscene_file: {DEMO}\nexplore: {{max_stops: 0}}\n")
    with pytest.raises(TaskError, match="explore.max_stops"):
        load_task(tmp_path / "t.yaml")
