"""The everyday-instruction suites: plain200 (frozen, test split, for evaluation) and plain_tune (train split,
for tuning), written by someone who saw only the homes and the goals.

Fast checks only (no episodes): every task loads in its split, its goal names things its home has, each
phenomenon is well represented, and the tuning set shares neither homes nor instructions with plain200.
"""

from __future__ import annotations

from collections import Counter

import pytest

from homiebot.bench.suite import load_suite

from .home_goals import assert_goal_fits_home

PHENOMENA = ("polite", "correction", "either", "reason", "typo", "nonnative", "aside", "colour", "class", "room")
# suite, tasks, split, the other split, fewest things of the class an "any X" goal leaves to choose from
SUITES = [("plain200", 200, "test", "train", 1), ("plain_tune", 150, "train", "test", 2)]


@pytest.mark.parametrize("suite, count, split, other, _", SUITES)
def test_every_task_loads_in_its_split(suite, count, split, other, _):
    tasks = load_suite(suite)
    assert len(tasks) == count
    assert {t.split for t in tasks} == {split}
    assert len(load_suite(suite, split)) == count and load_suite(suite, other) == []
    assert len({t.instruction for t in tasks}) == len(tasks)
    assert all(t.goal and t.keypaths and t.expert_length and t.scene is not None for t in tasks)
    assert all("human-style" in t.attributes for t in tasks)


@pytest.mark.parametrize("suite, _, __, ___, fewest", SUITES)
def test_goals_reference_things_that_exist_in_their_homes(suite, _, __, ___, fewest):
    for task in load_suite(suite):
        assert_goal_fits_home(task, fewest)

@pytest.mark.parametrize("suite", [s[0] for s in SUITES])
def test_each_phenomenon_is_in_at_least_15_tasks(suite):
    counts = Counter(tag for t in load_suite(suite) for tag in t.id.split("_", 2)[2].split("-"))
    assert set(counts) <= set(PHENOMENA)
    for tag in PHENOMENA:
        assert counts[tag] >= 15, tag


def test_the_tuning_set_is_thirty_homes_of_five_tasks_apart_from_plain200():
    tasks = load_suite("plain_tune")
    seeds = Counter(t.scene["seed"] for t in tasks)
    assert set(seeds) == set(range(67600, 67630)) and set(seeds.values()) == {5}
    held_out = load_suite("plain200")
    assert not set(seeds) & {t.scene["seed"] for t in held_out}
    assert not {t.instruction.lower() for t in tasks} & {t.instruction.lower() for t in held_out}
