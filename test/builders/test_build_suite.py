"""The suite builder: the default rebuilds the shipped home100 tasks; other first seeds write new homes'
tasks (extra training tasks for bootstrapping, docs/training.md)."""

from __future__ import annotations

from homiebot.bench.suite import load_suite
from homiebot.builders.suites.home import build_tasks


def test_the_default_rebuilds_the_shipped_suites_first_tasks() -> None:
    shipped = load_suite("home100")[:3]
    built = build_tasks(3)
    assert [(t.id, t.instruction, t.split) for t in built] == [(t.id, t.instruction, t.split) for t in shipped]


def test_another_first_seed_writes_other_homes_all_in_one_split_avoiding_instructions() -> None:
    shipped = load_suite("home100")
    avoid = [t.instruction for t in shipped]
    built = build_tasks(4, first_seed=20000, split="train", avoid=avoid)
    assert [t.id[:3] for t in built] == ["000", "001", "002", "003"] and {t.split for t in built} == {"train"}
    assert all(t.expert_length for t in built)  # the oracle solved each with perfect skills
    assert not {t.instruction for t in built} & set(avoid) and len({t.instruction for t in built}) == 4
    assert all(t.scene["seed"] >= 20000 for t in built) and all(t.scene["seed"] < 20000 for t in shipped)  # other homes


def test_the_command_writes_train_tasks_that_skip_the_test_instructions_of_a_suite(tmp_path) -> None:
    from homiebot.builders.suites.home import main
    from homiebot.core.tasks import load_task

    assert main(["--out", str(tmp_path), "--count", "2", "--first-seed", "30000", "--split", "train", "--avoid", "home100"]) == 0
    written = [load_task(p) for p in sorted(tmp_path.glob("*.yaml"))]
    test = {t.instruction for t in load_suite("home100", "test")}
    assert len(written) == 2 and all(t.split == "train" and t.instruction not in test for t in written)
