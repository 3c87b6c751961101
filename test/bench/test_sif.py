"""Situated tasks (SIF): SPL on hand-made runs, the report's table, the shipped suite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from homiebot.bench import metrics as m
from homiebot.bench.report import render_markdown
from homiebot.bench.results import RunResult, StepSummary
from homiebot.bench.suite import load_suite
from homiebot.core.tasks import Situated

GIVE_PATH = [["[Pick, mug]", "[Give, mug, person]", "[End]"]]
DONE = [StepSummary(action="Pick", target="mug", success=True), StepSummary(action="Give", target="mug", place="person", success=True),
        StepSummary(action="End", success=True)]
HALF = DONE[:1]


def sif_run(n: int, steps: list[StepSummary], path: float, kind: str = "S_hum", hint: str = "clear",
            shortest: float | None = 10.0, planner: str = "heuristic") -> RunResult:
    return RunResult(task_id=f"t{n}", run=0, seed=0, planner=planner, keypaths=GIVE_PATH, steps=steps, path_length=path,
                     situated=Situated(kind=kind, hint=hint, shortest_path=shortest))  # type: ignore[arg-type]


RUNS = [
    sif_run(1, DONE, 12.5),  # success, 25 % longer than the oracle: 10 / 12.5 = 0.8
    sif_run(2, DONE, 8.0),  # success on a shorter path than the oracle's: counts 1, never more
    sif_run(3, HALF, 3.0),  # failure: 0
    sif_run(4, DONE, 20.0, kind="PnP"),  # success at twice the length: 0.5
]


def test_spl_weighs_each_success_by_the_shortest_path() -> None:
    assert m.spl(RUNS[:3]) == pytest.approx(100 * (0.8 + 1.0 + 0.0) / 3)  # 60.0
    assert m.spl(RUNS) == pytest.approx(100 * (0.8 + 1.0 + 0.0 + 0.5) / 4)  # 57.5
    assert m.spl([]) == 0.0
    no_path = sif_run(5, DONE, 5.0, shortest=None)
    plain = RunResult(task_id="p", run=0, seed=0, keypaths=GIVE_PATH, steps=DONE, path_length=1.0)
    assert m.spl([*RUNS[:3], no_path, plain]) == pytest.approx(60.0)  # only runs with a shortest path count


def test_a_clear_s_hum_run_that_followed_the_person_too_far_fails() -> None:
    def with_follow(metres: float) -> list[StepSummary]:
        return [StepSummary(action="Follow", target="person", success=True, path_length=metres / 2),
                StepSummary(action="Follow", target="person", success=True, path_length=metres / 2), *DONE]

    assert m.FOLLOW_LIMIT_M == pytest.approx(8.5)  # SIF: 50 timesteps of 0.17 m
    assert m.is_success(sif_run(1, with_follow(8.4), 12.0))
    followed_far = sif_run(2, with_follow(8.6), 12.0)
    assert m.followed(followed_far) == pytest.approx(8.6) and not m.is_success(followed_far)
    assert m.mean_tp([followed_far]) == 100.0  # every step was done; only the success is denied
    assert m.is_success(sif_run(3, with_follow(20.0), 25.0, hint="ambiguous"))  # the words did not say where: following is fair
    assert m.is_success(sif_run(4, with_follow(20.0), 25.0, kind="S_obj"))
    # a Go to is not following, however long
    assert m.is_success(sif_run(5, [StepSummary(action="Go to", target="bedroom", success=True, path_length=30.0), *DONE], 32.0))


def test_the_sif_table_groups_by_kind_and_hint() -> None:
    table = m.sif_table([*RUNS, sif_run(6, DONE, 10.0, kind="S_obj", hint="ambiguous")])
    assert list(table) == ["PnP", "S_obj ambiguous", "S_hum clear"]
    assert table["S_hum clear"] == {"runs": 3, "SR": pytest.approx(200 / 3), "SPL": pytest.approx(60.0)}
    assert table["PnP"] == {"runs": 1, "SR": 100.0, "SPL": 50.0}
    assert table["S_obj ambiguous"]["SPL"] == 100.0
    assert m.summary(RUNS)["SPL"] == pytest.approx(57.5)
    assert "SPL" not in m.summary([RunResult(task_id="p", run=0, seed=0, keypaths=GIVE_PATH, steps=DONE)])


def test_the_report_shows_sr_and_spl_per_kind(tmp_path: Path) -> None:
    folder = tmp_path / "ev"
    folder.mkdir()
    (folder / "results.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in RUNS))
    (folder / "run.json").write_text(json.dumps({"planner": "heuristic", "suite": "sif", "runs": 1}))
    md = render_markdown([folder])
    section = md[md.index("## Situated tasks (SIF)"):]
    assert "| heuristic | S_hum clear | 3 | 66.67 | 60.00 |" in section
    assert "| heuristic | PnP | 1 | 100.00 | 50.00 |" in section
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "results.jsonl").write_text(RunResult(task_id="p", run=0, seed=0, keypaths=GIVE_PATH, steps=DONE).model_dump_json() + "\n")
    assert "Situated tasks" not in render_markdown([plain])


def test_the_shipped_suite_covers_every_kind_in_seen_and_unseen_homes() -> None:
    tasks = load_suite("sif")
    groups = {(t.situated.group, t.situated.home) for t in tasks if t.situated is not None}
    assert {g for g, _ in groups} == set(m.SIF_GROUPS) and {h for _, h in groups} == {"seen", "unseen"}
    for t in tasks:
        assert t.situated is not None and t.situated.shortest_path and t.person is not None and t.explore is not None
        if t.situated.kind == "S_hum":
            assert t.goal is not None and t.goal[0].kind == "person_has" and "Give" in t.keypaths[0][1]
        if t.situated.kind == "S_obj":  # the object moves before the task, unseen
            assert all(step["round"] == 0 for step in t.person["script"])


def test_the_shipped_suite_is_what_the_builder_writes() -> None:
    """Rebuilding runs the oracle on every task: the same tasks and the same shortest paths come out."""
    from homiebot.builders.suites.sif import build_tasks

    built = {t.id: t for t in build_tasks()}
    shipped = {t.id: t for t in load_suite("sif")}
    assert built.keys() == shipped.keys()
    for tid, task in shipped.items():
        assert built[tid].instruction == task.instruction
        assert built[tid].situated == task.situated
