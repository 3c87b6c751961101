"""Reports over evaluation folders: tolerant loading, the Markdown tables, the charts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from homiebot.bench.report import DASH, ReportError, load_results, render_charts, render_markdown, write_report
from homiebot.bench.results import RunResult, StepSummary

KEYPATH_T1 = [["[Pick, can]", "[Put, can, fridge]", "[End]"]]
KEYPATH_T2 = [["[Pick, apple]", "[Put, apple, table]", "[End]"]]


def step(action: str, target: str | None = None, place: str | None = None, code: str | None = None) -> StepSummary:
    return StepSummary(action=action, target=target, place=place, success=code is None, code=code)


def result(task_id: str, run: int, steps: list[StepSummary], keypaths=KEYPATH_T1, attributes=("short-horizon", "logical"),
           planner: str = "replay") -> RunResult:
    return RunResult(task_id=task_id, run=run, seed=run, planner=planner, attributes=list(attributes), keypaths=keypaths,
                     expert_length=3, steps=steps, ended=steps[-1].action == "End")


# A: succeeds in 5 steps (expert 3), one D1 on the way, then re-plans.
RUN_A = result("t1", 0, [step("Go to", "fridge"), step("Pick", "can"), step("Put", "can", "fridge", code="D1"),
                         step("Put", "can", "fridge"), step("End")])
# B: ends, but the Put went to the wrong place: TP 1/3; an E1 (executed, failed) Pick first.
RUN_B = result("t2", 0, [step("Pick", "apple", code="E1"), step("Pick", "apple"), step("Put", "apple", "sink"), step("End")],
               keypaths=KEYPATH_T2, attributes=("long-horizon",))
# C: hits the round limit: TP 0; an F2 (not executed) and a final L4 (not executed, not followed by a re-plan).
RUN_C = result("t1", 1, [step("Pick", "can", code="F2"), step("Go to", "table"), step("Open", "table", code="L4")])


def make_folder(path: Path, results: list[RunResult], meta: dict | None = None, extra: str = "") -> Path:
    path.mkdir(parents=True)
    if meta is not None:
        (path / "run.json").write_text(json.dumps(meta))
    (path / "results.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in results) + extra)
    return path


def cells(md: str, section: str, label: str) -> list[str]:
    """The cells of the first table row starting with label inside the section whose heading starts with section."""
    lines = md.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(section))
    for line in lines[start + 1:]:
        if line.startswith("## "):
            break
        parts = [p.strip() for p in line.strip().strip("|").split("|")]
        if line.startswith("|") and parts[0] == label:
            return parts[1:]
    raise AssertionError(f"no row {label!r} in section {section!r}")


META = {"planner": "replay", "suite": "mini", "split": "test", "runs": 2, "max_rounds": 20, "skill_profile": "perfect",
        "created": "2025-01-01T00:00:00"}


def test_main_table_values_by_hand(tmp_path: Path):
    folder = make_folder(tmp_path / "ev", [RUN_A, RUN_B, RUN_C], META)
    md = render_markdown([folder])
    # runs 3, tasks 2; SR 1/3; PLWSR (3/5)/3; TP (1 + 1/3 + 0)/3; SRR re-plans 1 of 3 in the success; SER 1 of 2 ending runs
    assert cells(md, "## 1.", "replay") == ["3", "2", "33.33", "20.00", "44.44", "33.33", "50.00"]
    assert "| Model | Runs | Tasks | SR | PLWSR | TP | SRR | SER |" in md
    assert "| replay | `ev` | mini | test | 2 | 20 | perfect | 2025-01-01T00:00:00 | – |" in md


def test_error_action_and_attribute_tables(tmp_path: Path):
    md = render_markdown([make_folder(tmp_path / "ev", [RUN_A, RUN_B, RUN_C], META)])
    errors = md[md.index("## 2."):md.index("## 3.")]
    assert "| Distance | D1 | target out of reach | 1 | 0 | 100.00% | 0.00% |" in errors
    assert "| Execution | E1 | skill failed on every attempt | 0 | 1 | 0.00% | 33.33% |" in errors
    assert "|  | L4 | action does not suit the target | 0 | 1 | 0.00% | 33.33% |" in errors
    assert "| **All** |  |  | 1 | 3 | 100.00% | 100.00% |" in errors
    assert "| Logical | 0 | 1 | 0.00% | 33.33% |" in errors  # per-category table
    # Go to 2/2, Pick 2/3 (the F2 Pick was never executed), Put 2/2 (the D1 Put neither), no executed Open/Close
    assert cells(md, "## 3.", "replay")[:6] == ["100.00% (2/2)", "66.67% (2/3)", "100.00% (2/2)", DASH, DASH, "85.71% (6/7)"]
    assert cells(md, "## 4.", "replay") == ["50.00 (2)", "0.00 (1)", DASH, "50.00 (2)", DASH]


def test_two_folders_two_rows_and_colliding_labels(tmp_path: Path):
    a = make_folder(tmp_path / "first", [RUN_A, RUN_B, RUN_C], META)
    b = make_folder(tmp_path / "second", [RUN_B], META)  # only failed runs
    md = render_markdown([a, b])
    assert cells(md, "## 1.", "replay (first)")[:3] == ["3", "2", "**33.33**"]
    assert cells(md, "## 1.", "replay (second)") == ["1", "1", "0.00", "0.00", "33.33", "0.00", "0.00"]
    assert "### replay (first)" in md and "### replay (second)" in md
    # no successful run in the second folder: no errors there, so its shares have no denominator
    second = md[md.index("### replay (second)"):md.index("## 3.")]
    assert "| **All** |  |  | 0 | 1 | – | 100.00% |" in second


def test_truncated_last_line_and_duplicate_key(tmp_path: Path):
    duplicate = result("t1", 0, [step("Pick", "can", code="F2")])  # same key as RUN_A, written later
    folder = make_folder(tmp_path / "ev", [RUN_A, RUN_B, RUN_C, duplicate], META, extra=RUN_B.model_dump_json()[:40])
    meta, results = load_results(folder)
    assert meta["suite"] == "mini"
    assert [r.key for r in results] == [("t1", 0), ("t2", 0), ("t1", 1)]
    assert results[0] == RUN_A
    md = render_markdown([folder])
    assert cells(md, "## 1.", "replay")[:3] == ["3", "2", "33.33"]
    assert cells(md, "## Evaluations", "replay")[-1] == "1 unreadable line(s) skipped; 1 duplicate run(s) ignored"


def test_missing_or_empty_results(tmp_path: Path):
    empty_dir = tmp_path / "nothing"
    empty_dir.mkdir()
    with pytest.raises(ReportError, match="nothing: no results.jsonl") as info:
        load_results(empty_dir)
    assert str(empty_dir) in str(info.value)
    assert isinstance(info.value, ValueError)
    empty = make_folder(tmp_path / "empty", [], META)
    with pytest.raises(ReportError, match="no complete results"):
        render_markdown([empty])
    garbage = make_folder(tmp_path / "garbage", [], META, extra='{"task_id": "t1", "ru')
    with pytest.raises(ReportError, match="1 unreadable line"):
        write_report([garbage], tmp_path / "out")
    with pytest.raises(ReportError):
        render_markdown([])


def test_missing_run_json_and_no_errors(tmp_path: Path):
    clean = result("t1", 0, [step("Pick", "can"), step("Put", "can", "fridge"), step("End")], planner="")
    folder = make_folder(tmp_path / "clean_eval", [clean])  # no run.json, no planner name anywhere
    meta, _ = load_results(folder)
    assert meta == {}
    md = render_markdown([folder])
    # SRR has no re-plan to divide by: "–", not 0
    assert cells(md, "## 1.", "clean_eval") == ["1", "1", "100.00", "100.00", "100.00", DASH, "100.00"]
    assert "| **All** |  |  | 0 | 0 | – | – |" in md
    assert cells(md, "## Evaluations", "clean_eval")[0:8] == ["`clean_eval`", DASH, DASH, DASH, DASH, DASH, DASH, DASH]
    # the planner stored in the results is the next fallback after run.json
    named = make_folder(tmp_path / "named", [clean.model_copy(update={"planner": "oracle"})])
    assert cells(render_markdown([named]), "## 1.", "oracle")[:2] == ["1", "1"]


def test_write_report_charts_are_pngs_and_linked(tmp_path: Path):
    a = make_folder(tmp_path / "first", [RUN_A, RUN_B, RUN_C], META)
    b = make_folder(tmp_path / "second", [RUN_B], {**META, "planner": "oracle / v2"})
    md_path = write_report([a, b], None)
    assert md_path == a / "report" / "report.md"
    md = md_path.read_text()
    pngs = sorted(md_path.parent.glob("*.png"))
    assert {p.name for p in pngs} == {"metrics.png", "error_overview.png", "errors_replay.png", "errors_oracle_v2.png"}
    for png in pngs:
        assert png.stat().st_size > 0
        with Image.open(png) as im:
            im.verify()
            assert im.format == "PNG"
        assert f"]({png.name})" in md
    assert "### oracle / v2" in md


def test_render_charts_deterministic(tmp_path: Path):
    folder = make_folder(tmp_path / "ev", [RUN_A, RUN_C], META)
    first = render_charts([folder], tmp_path / "one")
    second = render_charts([folder], tmp_path / "two")
    assert [p.name for p in first] == [p.name for p in second]
    for p, q in zip(first, second):
        assert p.read_bytes() == q.read_bytes()
    out = write_report([folder], tmp_path / "custom")
    assert out == tmp_path / "custom" / "report.md"
    assert "![Error-type shares – replay](errors_replay.png)" in out.read_text()


def test_code_outside_the_taxonomy(tmp_path: Path):
    odd = result("t2", 0, [step("Pick", "apple", code="TIMEOUT"), step("Pick", "apple", code="E1")], keypaths=KEYPATH_T2)
    folder = make_folder(tmp_path / "ev", [odd], META)
    md = render_markdown([folder])
    assert "| Other | TIMEOUT | outside the taxonomy | 0 | 1 | – | 50.00% |" in md
    assert "| **All** |  |  | 0 | 2 | – | 100.00% |" in md
    assert len(render_charts([folder], tmp_path / "charts")) == 3


def test_the_report_counts_safety_events(tmp_path) -> None:
    guarded = RUN_A.model_copy(update={"safety_events": {"keep_out": 2, "limit_clipped": 3, "approval": 4}})
    folder = make_folder(tmp_path / "safe", [guarded, RUN_B], {"planner": "replay"})
    text = render_markdown([folder])
    section = text.split("## 5. Safety events")[1]
    row = next(line for line in section.splitlines() if line.startswith("| ") and "Model" not in line and "---" not in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1:] == ["3", "2", "0", "0", "0", "4", "1/2"]


def test_the_asking_table_keeps_clear_tasks_apart(tmp_path) -> None:
    def asked(task_id: str, k: int, asks: list[tuple[bool, int | None]]) -> RunResult:
        steps = [StepSummary(action="Ask", target="which?", success=True, relevant=r, resolved=n) for r, n in asks]
        return result(task_id, 0, steps + [step("Pick", "can"), step("Put", "can", "fridge"), step("End")]).model_copy(
            update={"min_questions": k})

    runs = [asked("a1", 2, [(True, 2)]), asked("a2", 1, [(False, None)]), asked("c1", 0, [(False, None)])]
    md = render_markdown([make_folder(tmp_path / "ask", runs)])
    # a1: 1/(1+0+0), a2: 1/(1+1+1); QR (2/2 + 1/1) / 2; the clear task's question is counted apart
    assert cells(md, "Asking", "replay") == ["2", "100.00", "66.67", "1.00", "2", "1", "100.00", "1"]
