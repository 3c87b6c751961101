"""The remembered suite: every task refers to a demonstration and checks the place it shows."""

from __future__ import annotations

from homiebot.bench.suite import load_suite
from homiebot.builders.suites.memory import build_tasks, demonstrated_place
from homiebot.planners.recalled import reference_in


def test_the_shipped_suite_is_what_the_builder_writes() -> None:
    assert {t.id: t for t in load_suite("remembered")} == {t.id: t for t in build_tasks()}


def test_every_task_refers_to_a_demonstration_and_checks_its_place() -> None:
    for task in load_suite("remembered"):
        obj, place = demonstrated_place(task.id.split("_")[0])
        assert reference_in(task.instruction) is not None
        assert task.goal is not None and [(g.object, g.receptacle) for g in task.goal] == [(obj, place)]  # type: ignore[union-attr]
        assert place.replace("_", " ") not in task.instruction  # the words never say where
