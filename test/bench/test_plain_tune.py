"""The plain_tune suite: everyday instructions for tuning, written like plain200 but in other homes.

Fast checks only (no episodes): every task loads, is a train task, its goal names things its home has,
and it shares neither homes nor instructions with plain200.
"""

from __future__ import annotations

from collections import Counter

from homiebot.bench.suite import load_suite
from homiebot.tasks import ContainerState, ObjectAt, check_goal_names
from homiebot.vocabulary import RECEPTACLE_TYPES
from homiebot.worlds.home.scene import parse_scene

SUITE = "plain_tune"
PHENOMENA = ("polite", "correction", "either", "reason", "typo", "nonnative", "aside", "colour", "class", "room")


def test_every_task_loads_and_is_a_train_task():
    tasks = load_suite(SUITE)
    assert len(tasks) == 150
    assert {t.split for t in tasks} == {"train"}
    assert len(load_suite(SUITE, "train")) == 150 and load_suite(SUITE, "test") == []
    assert len({t.instruction for t in tasks}) == len(tasks)
    assert all(t.goal and t.keypaths and t.expert_length and t.scene is not None for t in tasks)
    assert all("human-style" in t.attributes for t in tasks)


def test_thirty_homes_of_five_tasks_apart_from_plain200():
    tasks = load_suite(SUITE)
    seeds = Counter(t.scene["seed"] for t in tasks)
    assert set(seeds) == set(range(67600, 67630)) and set(seeds.values()) == {5}
    held_out = load_suite("plain200")
    assert not set(seeds) & {t.scene["seed"] for t in held_out}
    assert not {t.instruction.lower() for t in tasks} & {t.instruction.lower() for t in held_out}


def test_goals_reference_things_that_exist_in_their_homes():
    for task in load_suite(SUITE):
        scene = parse_scene(task.scene, task.id)
        recs = {r.name: r for r in scene.receptacles}
        objs = {o.name: o for o in scene.objects}
        check_goal_names(task, set(recs) | set(objs) | {r.name for r in scene.rooms})
        for cond in task.goal or []:
            if isinstance(cond, ObjectAt) and cond.object_class is not None:
                members = [o for o in objs.values() if o.object_class == cond.object_class]
                assert len(members) >= 2, f"{task.id}: fewer than two {cond.object_class} in the home"
            if isinstance(cond, ContainerState):
                assert RECEPTACLE_TYPES[recs[cond.receptacle].type].articulated, f"{task.id}: {cond.receptacle} has no door"


def test_each_phenomenon_is_in_at_least_15_tasks():
    counts = Counter(tag for t in load_suite(SUITE) for tag in t.id.split("_", 2)[2].split("-"))
    assert set(counts) <= set(PHENOMENA)
    for tag in PHENOMENA:
        assert counts[tag] >= 15, tag
