"""The plain200 suite: everyday instructions written by someone who saw only the homes and the goals.

Fast checks only (no episodes): every task loads, is a test task, and its goal names things its home has.
"""

from __future__ import annotations

from collections import Counter

from homiebot.bench.suite import load_suite
from homiebot.tasks import ContainerState, ObjectAt, check_goal_names
from homiebot.vocabulary import RECEPTACLE_TYPES
from homiebot.worlds.home.scene import parse_scene

SUITE = "plain200"
PHENOMENA = ("polite", "correction", "either", "reason", "typo", "nonnative", "aside", "colour", "class", "room")


def test_every_task_loads_and_is_a_test_task():
    tasks = load_suite(SUITE)
    assert len(tasks) == 200
    assert {t.split for t in tasks} == {"test"}
    assert len(load_suite(SUITE, "test")) == 200 and load_suite(SUITE, "train") == []
    assert len({t.instruction for t in tasks}) == len(tasks)
    assert all(t.goal and t.keypaths and t.expert_length and t.scene is not None for t in tasks)
    assert all("human-style" in t.attributes for t in tasks)


def test_goals_reference_things_that_exist_in_their_homes():
    for task in load_suite(SUITE):
        scene = parse_scene(task.scene, task.id)
        recs = {r.name: r for r in scene.receptacles}
        objs = {o.name: o for o in scene.objects}
        check_goal_names(task, set(recs) | set(objs) | {r.name for r in scene.rooms})
        for cond in task.goal or []:
            if isinstance(cond, ObjectAt) and cond.object_class is not None:
                members = [o for o in objs.values() if o.object_class == cond.object_class]
                assert members, f"{task.id}: no {cond.object_class} in the home"
            if isinstance(cond, ContainerState):
                assert RECEPTACLE_TYPES[recs[cond.receptacle].type].articulated, f"{task.id}: {cond.receptacle} has no door"


def test_each_phenomenon_is_in_at_least_15_tasks():
    counts = Counter(tag for t in load_suite(SUITE) for tag in t.id.split("_", 2)[2].split("-"))
    assert set(counts) <= set(PHENOMENA)
    for tag in PHENOMENA:
        assert counts[tag] >= 15, tag
