"""Export of fixture episodes: literal counts per filter and per pair source, datasets that load,
images that open, DPO pairs whose chosen is the re-plan after the rejected failure."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from homiebot.cli import main
from homiebot.config import RunConfig
from homiebot.core.contracts import VIEW_NAMES, EpisodeRecord, ErrorCode, Feedback, PlannerOutput, StepRecord, Subtask
from homiebot.training.episodes import ExportError
from homiebot.training.export import export

ROOT = Path(__file__).resolve().parents[2]
datasets = pytest.importorskip("datasets")


def _step(rnd: int, sub: str | None, model: str | None, ok: bool = True, raw: str | None = None) -> StepRecord:
    output = None
    if sub is not None:
        output = PlannerOutput(analysis=f"round {rnd}", subtask=Subtask.from_text(sub), model=model)
        raw = json.dumps({"analysis": output.analysis, "subtask": sub, "model": model})
    fb = Feedback.ok() if ok else Feedback.fail(ErrorCode.F1 if output is None else ErrorCode.E1, "it failed")
    images = {v: f"images/round_{rnd:02d}_{v}.png" for v in VIEW_NAMES}
    return StepRecord(round=rnd, prompt=f"Task: fixture\nround {rnd}", raw_output=raw or "", output=output, feedback=fb,
                      inventory_before=[], inventory_after=[], images=images)


def _episode(root: Path, name: str, task: str, goal: bool, steps: list[tuple], seen: dict[int, list[str]] | None,
             scene: dict | None = None) -> None:
    folder = root / name
    (folder / "images").mkdir(parents=True)
    recs = [_step(i + 1, *s) for i, s in enumerate(steps)]
    for s in recs:
        for v in VIEW_NAMES:
            Image.new("RGB", (8, 8), (s.round * 20, VIEW_NAMES.index(v) * 60, 7)).save(folder / s.images[v])
        if seen is not None:
            (folder / "images" / f"round_{s.round:02d}_seen.json").write_text(json.dumps(seen.get(s.round, [])))
    record = EpisodeRecord(episode_id=name, instruction="fixture", task_id=task, planner="oracle", seed=1, max_rounds=20,
                           scene=scene or {"rooms": [{"name": "kitchen"}, {"name": "bedroom"}]}, steps=recs, goal_satisfied=goal,
                           ended=goal, termination="end" if goal else "max_rounds",
                           config=RunConfig().model_dump(mode="json"))
    (folder / "episode.json").write_text(record.model_dump_json())


@pytest.fixture
def fixture_episodes(tmp_path: Path) -> Path:
    root = tmp_path / "episodes"
    # A: successful; a Pick fails (E1) and is re-planned with octo; Go to fridge comes before the fridge was seen
    _episode(root, "A", "t_train", True, [
        ("[Go to, kitchen]", "NoMaD"), ("[Go to, apple]", "PixNav"), ("[Pick, apple]", "RT-1-X", False), ("[Pick, apple]", "octo"),
        ("[Go to, fridge]", "NoMaD"), ("[Put, apple, fridge]", "RT-1-X"), ("[End]", None)],
        {2: ["apple"], 6: ["fridge"]})
    # B: failed; an F1 then a fix, an E1 on the cabinet then a Go to it, then a Pick that no filter keeps
    _episode(root, "B", "t_train", False, [
        (None, None, False, "no idea"), ("[Go to, kitchen]", "NoMaD"), ("[Open, cabinet]", "octo", False), ("[Go to, cabinet]", "NoMaD"),
        ("[Pick, cup]", "RT-1-X")], {4: ["cabinet", "cup"]})
    # C: a test-split task; D: views' contents not recorded
    _episode(root, "C", "t_test", True, [("[Go to, kitchen]", "NoMaD"), ("[End]", None)], {})
    _episode(root, "D", "t_train", True, [("[Go to, kitchen]", "NoMaD"), ("[End]", None)], None)
    suite = tmp_path / "suite"
    suite.mkdir()
    # splits come from a results.jsonl beside the episodes, as in an evaluation folder
    (root / "results.jsonl").write_text("".join(json.dumps({"task_id": t, "split": s}) + "\n"
                                                for t, s in (("t_train", "train"), ("t_test", "test"))))
    return root


def test_sft_counts_per_filter(fixture_episodes: Path, tmp_path: Path) -> None:
    stats = export([fixture_episodes], "sft", tmp_path / "sft", suite=None)
    assert stats["records"] == 7
    assert stats["counts"] == {"success": 5, "replan": 3, "left_out_unseen": 1, "left_out_views_not_recorded": 2,
                               "episodes_other_split": 1}
    ids = [json.loads(line)["id"] for line in (tmp_path / "sft" / "data.jsonl").read_text().splitlines()]
    assert [i.rsplit("/", 2)[-2:] for i in ids] == [["A", f"round_0{r}"] for r in (1, 2, 4, 6, 7)] + [["B", "round_02"], ["B", "round_04"]]
    assert export([fixture_episodes], "sft", tmp_path / "unseen", suite=None, check_visible=False)["counts"] == {
        "success": 8, "replan": 3, "episodes_other_split": 1}
    assert export([fixture_episodes], "sft", tmp_path / "replan_only", suite=None, keep="replan")["records"] == 3
    assert export([fixture_episodes], "sft", tmp_path / "all_splits", suite=None, split="all")["records"] == 9


SCENE = {"rooms": [{"name": "kitchen"}, {"name": "bedroom"}],
         "receptacles": [{"name": "table", "room": "bedroom"}, {"name": "fridge", "room": "kitchen"},
                         {"name": "shelf", "room": "kitchen"}],
         "objects": [{"name": "apple", "on": "table"}, {"name": "milk", "in": "fridge"}, {"name": "pear", "on": "shelf"}]}


def test_search_labels_replace_rounds_that_name_unseen_things(tmp_path: Path) -> None:
    root = tmp_path / "episodes"
    # E: the oracle goes straight to things the views have not shown yet (rounds 1, 4 and 5)
    _episode(root, "E", "t_train", True, [
        ("[Go to, apple]", "PixNav"), ("[Pick, apple]", "RT-1-X"), ("[Go to, kitchen]", "NoMaD"), ("[Go to, milk]", "PixNav"),
        ("[Go to, pear]", "PixNav"), ("[End]", None)], {2: ["apple", "table"], 4: ["fridge"]}, scene=SCENE)
    (root / "results.jsonl").write_text(json.dumps({"task_id": "t_train", "split": "train"}) + "\n")
    plain = export([root], "sft", tmp_path / "plain", suite=None)
    assert plain["counts"] == {"success": 3, "left_out_unseen": 3, "episodes_other_split": 0}
    stats = export([root], "sft", tmp_path / "search", suite=None, search=True)
    # round 1: apple unseen, its room (bedroom) not reached -> Go to bedroom; round 4: milk unseen, its room
    # (kitchen) reached in round 3, its fridge seen and not reached -> Go to fridge; round 5: pear unseen, the
    # kitchen reached and its shelf never seen -> still left out
    assert stats["counts"] == {"success": 3, "search": 2, "left_out_unseen": 1, "episodes_other_split": 0}
    rows = [json.loads(line) for line in (tmp_path / "search" / "data.jsonl").read_text().splitlines()]
    assert [(r["round"], r["source"]) for r in rows] == [(1, ["search"]), (2, ["success"]), (3, ["success"]), (4, ["search"]),
                                                         (6, ["success"])]
    first, fourth = rows[0], rows[3]
    assert json.loads(first["messages"][2]["content"]) == {
        "analysis": "the apple is not in view yet; I look for it at the bedroom", "subtask": ["Go to", "bedroom"], "model": "NoMaD"}
    assert first["searched_for"] == "apple" and json.loads(first["original"])["subtask"] == ["Go to", "apple"]
    assert json.loads(fourth["messages"][2]["content"])["subtask"] == ["Go to", "fridge"] and fourth["searched_for"] == "milk"
    assert all(json.loads(r["messages"][2]["content"])["subtask"][1] in r["known"] for r in rows if r["source"] == ["search"])
    with pytest.raises(ExportError, match="one of the two"):
        export([root], "sft", tmp_path / "both", suite=None, search=True, check_visible=False)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "homiebot.cli", "export", str(root), "--format", "sft", "--search-labels",
                           "--suite", "", "--out", str(tmp_path / "cli")], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0 and done.stdout.startswith("5 sft records"), done.stderr
    assert (tmp_path / "cli" / "data.jsonl").read_bytes() == (tmp_path / "search" / "data.jsonl").read_bytes()


def test_dpo_counts_per_source(fixture_episodes: Path, tmp_path: Path) -> None:
    stats = export([fixture_episodes], "dpo", tmp_path / "dpo", suite=None)
    assert stats["records"] == 20
    assert {k: v for k, v in stats["counts"].items() if not k.startswith(("left_out", "episodes"))} == {
        "replan": 3, "order_change": 5, "action_change": 6, "model_change": 6}
    assert export([fixture_episodes], "dpo", tmp_path / "aug", suite=None, keep="model_change")["records"] == 6


def test_dpo_chosen_is_the_replan_after_the_rejected_failure(fixture_episodes: Path, tmp_path: Path) -> None:
    export([fixture_episodes], "dpo", tmp_path / "dpo", suite=None)
    rows = [json.loads(line) for line in (tmp_path / "dpo" / "data.jsonl").read_text().splitlines()]
    replans = {r["id"].split("/", 1)[1]: r for r in rows if r["source"] == "replan"}
    a = replans["A/round_03/replan"]
    episode = EpisodeRecord.model_validate_json((fixture_episodes / "A" / "episode.json").read_text())
    assert a["prompt"][1]["content"] == episode.steps[2].prompt  # the failed round's prompt ...
    assert a["images"][0].endswith("A/round_03_front.png")  # ... and views
    assert json.loads(a["rejected"][0]["content"])["model"] == "RT-1-X"  # the failed output
    assert json.loads(a["chosen"][0]["content"]) == {"analysis": "round 4", "subtask": ["Pick", "apple"], "model": "octo"}
    assert a["chosen_round"] == 4
    assert replans["B/round_01/replan"]["rejected"][0]["content"] == "no idea"  # unparseable output, verbatim
    by_source = {r["source"]: r for r in rows if r["id"].split("/", 1)[1].startswith("A/round_02")}
    assert json.loads(by_source["model_change"]["rejected"][0]["content"])["model"] == "NoMaD"
    assert json.loads(by_source["action_change"]["rejected"][0]["content"])["subtask"] == ["Move", "apple"]
    assert json.loads(by_source["order_change"]["rejected"][0]["content"])["subtask"] == ["Pick", "apple"]
    assert not any(json.loads(r["chosen"][0]["content"])["subtask"] == ["End"] for r in rows)  # End is never chosen


def test_sft_loads_with_datasets_and_images_open(fixture_episodes: Path, tmp_path: Path) -> None:
    out = tmp_path / "sft"
    export([fixture_episodes], "sft", out, suite=None)
    ds = datasets.load_from_disk(str(out / "hf"))
    assert len(ds) == 7 and [m["role"] for m in ds[0]["messages"]] == ["system", "user", "assistant"]
    views = ds[2]["images"]
    assert len(views) == 4 and views[0].size == (8, 8) and views[0].getpixel((0, 0)) == (80, 0, 7)  # round 4, front
    rows = datasets.load_dataset("json", data_files=str(out / "data.jsonl"), split="train")
    pq = datasets.load_dataset("parquet", data_files=str(out / "data.parquet"), split="train")
    assert rows["id"] == pq["id"] == ds["id"]
    for path in rows[0]["images"]:
        Image.open(out / path).verify()
    assert [p.rsplit("_", 1)[1] for p in rows[0]["images"]] == ["front.png", "left.png", "back.png", "right.png"]
    assert rows[0]["conversations"][0]["value"].startswith("<image>\n" * 4 + "Task: fixture")
    assert "| success | 5 |" in (out / "README.md").read_text()


def test_cli_export_errors_are_one_line(fixture_episodes: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "homiebot.cli", "export", str(fixture_episodes), "--format", "dpo", "--out",
                           str(tmp_path / "o")], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0 and done.stdout.startswith("20 dpo records"), done.stderr
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "episode.json").write_text("{not json")
    shutil.copytree(fixture_episodes / "A", tmp_path / "lone" / "A")  # no results.jsonl: the split comes from --suite
    for args, words in (([str(fixture_episodes), "--format", "dpo", "--out", str(tmp_path / "o")], "not an empty folder"),
                        ([str(fixture_episodes), "--format", "sft", "--out", str(tmp_path / "p"), "--sources", "bogus"], "knows the sources"),
                        ([str(tmp_path / "junk"), "--format", "sft", "--out", str(tmp_path / "q")], "not a readable episode record"),
                        ([str(tmp_path / "nothing"), "--format", "sft", "--out", str(tmp_path / "q")], "no such file"),
                        ([str(tmp_path / "lone"), "--format", "sft", "--out", str(tmp_path / "q"), "--suite", str(tmp_path / "none")],
                         "--suite")):
        assert main(["export", *args]) == 2
        err = capsys.readouterr().err
        assert words in err and len(err.strip().splitlines()) == 1, err
