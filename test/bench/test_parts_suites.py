"""The multi-part request suites: parts120 (frozen, test split, for evaluation) and parts_tune (train split, for
tuning), written by someone who saw only the homes and the goals.

Fast checks only (no episodes): every task loads in its split, its goal names things its home has, every request
has two to five parts, each phenomenon is well represented, every home holds three to five tasks, and the tuning
set shares neither homes nor instructions with parts120, nor homes with any other suite.
"""

from __future__ import annotations

import functools
from collections import Counter

import pytest

from homiebot.bench.suite import builtin_suites, load_suite
from homiebot.core.tasks import ObjectAt, Task

from .home_goals import assert_goal_fits_home

PHENOMENA = ("list", "quantity", "condition", "endstate", "correction", "casual")
# suite, fewest tasks, most tasks, split, the other split
SUITES = [("parts120", 120, 200, "test", "train"), ("parts_tune", 60, 90, "train", "test")]
NAMES = [s[0] for s in SUITES]


@functools.cache
def tasks_of(suite: str) -> tuple[Task, ...]:
    return tuple(load_suite(suite))


def seed_of(task: Task) -> int | None:
    if task.scene is not None:
        return task.scene.get("seed")
    return task.scene_seed


def tags_of(task: Task) -> list[str]:
    return task.id.split("_", 2)[2].split("-")


@pytest.mark.parametrize("suite, fewest, most, split, other", SUITES)
def test_every_task_loads_in_its_split(suite, fewest, most, split, other):
    tasks = tasks_of(suite)
    assert fewest <= len(tasks) <= most
    assert {t.split for t in tasks} == {split}
    assert len(load_suite(suite, split)) == len(tasks) and load_suite(suite, other) == []
    assert len({t.instruction.lower() for t in tasks}) == len(tasks)
    assert all(t.goal and t.keypaths and t.expert_length and t.scene is not None for t in tasks)
    assert all("human-style" in t.attributes for t in tasks)


@pytest.mark.parametrize("suite", NAMES)
def test_goals_reference_things_that_exist_in_their_homes(suite):
    for task in tasks_of(suite):
        assert_goal_fits_home(task)

@pytest.mark.parametrize("suite", NAMES)
def test_every_request_has_two_to_five_parts(suite):
    for task in tasks_of(suite):
        assert 2 <= len(task.goal or []) <= 5, task.id
        moves = sum(isinstance(c, ObjectAt) for c in task.goal or [])
        assert ("long-horizon" in task.attributes) == (moves >= 2), task.id


@pytest.mark.parametrize("suite", NAMES)
def test_phenomena_are_tagged_and_each_is_in_at_least_15_tasks_of_parts120(suite):
    counts = Counter(tag for t in tasks_of(suite) for tag in tags_of(t))
    assert set(counts) <= set(PHENOMENA)
    if suite == "parts120":
        for tag in PHENOMENA:
            assert counts[tag] >= 15, tag
    else:
        assert set(counts) == set(PHENOMENA)


@pytest.mark.parametrize("suite", NAMES)
def test_every_home_holds_three_to_five_tasks(suite):
    seeds = Counter(seed_of(t) for t in tasks_of(suite))
    assert None not in seeds
    assert set(seeds.values()) <= {3, 4, 5}
    for task in tasks_of(suite):
        assert task.id.split("_")[1] == f"home{seed_of(task)}", task.id


def test_the_tuning_set_is_apart_from_parts120():
    tune, held_out = tasks_of("parts_tune"), tasks_of("parts120")
    assert not {seed_of(t) for t in tune} & {seed_of(t) for t in held_out}
    assert not {t.instruction.lower() for t in tune} & {t.instruction.lower() for t in held_out}


@pytest.mark.parametrize("suite", NAMES)
def test_no_other_suite_uses_the_homes(suite):
    mine = {seed_of(t) for t in tasks_of(suite)}
    for other in builtin_suites():
        if other in NAMES:
            continue
        assert not mine & {seed_of(t) for t in load_suite(other)}, other
