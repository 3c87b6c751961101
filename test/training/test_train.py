"""`homiebot train` on a tiny random Qwen2-VL: a few LoRA steps, an adapter that the `trained` planner
loads (merged into the base) and plans with through the normal loop (F1 fed back, or parsed output)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
torch = pytest.importorskip("torch")
pytest.importorskip("trl")
pytest.importorskip("peft")

from homiebot.cli import main  # noqa: E402
from homiebot.config import RunConfig  # noqa: E402
from homiebot.core import registry  # noqa: E402
from homiebot.core.contracts import ErrorCode  # noqa: E402
from homiebot.planners.trained import TrainedPlanner  # noqa: E402
from homiebot.runtime import run_episode  # noqa: E402
from homiebot.training.export import export  # noqa: E402

from ..conftest import small_render  # noqa: E402
from .test_export import fixture_episodes  # noqa: E402,F401  (the fixture)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def trained_registered(monkeypatch):
    """A checkout not yet reinstalled has no `trained` entry point; the setup.py one points at the same class."""
    if "trained" not in registry.available("planners"):
        real = registry.load
        monkeypatch.setattr(registry, "load", lambda g, n: TrainedPlanner if (g, n) == ("planners", "trained") else real(g, n))


def _config(path: Path, **params) -> RunConfig:
    return RunConfig.model_validate({"planner": {"name": "trained", "params": {"path": str(path), "max_new_tokens": 12, **params}},
                                     "skill_profile": "perfect", "world": small_render(), "max_rounds": 2})


def test_train_sft_saves_an_adapter_the_trained_planner_plans_with(fixture_episodes, tmp_path, demo_task):  # noqa: F811
    export([fixture_episodes], "sft", tmp_path / "sft", suite=None)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-m", "homiebot.cli", "train", "sft", "--data", str(tmp_path / "sft"), "--base", "tiny:qwen2_vl",
                           "--out", str(tmp_path / "model"), "--steps", "2", "--lr", "0.01", "--lora-r", "4", "--lora-alpha", "8"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    manifest = json.loads((tmp_path / "model" / "homiebot_train.json").read_text())
    assert manifest["stage"] == "sft" and manifest["records"] == 7 and len(manifest["losses"]) == 2
    assert (tmp_path / "model" / "adapter" / "adapter_model.safetensors").is_file()

    planner = TrainedPlanner(path=str(tmp_path / "model"))
    planner._load()
    base = TrainedPlanner.__mro__[1](model_path=manifest["base"])  # the hf planner on the bare base model
    base._load()
    moved = [n for n, p in planner.model.named_parameters() if not torch.equal(p, dict(base.model.named_parameters())[n])]
    assert moved and all("proj" in n for n in moved)  # the adapter changed the attention projections, nothing else

    record, _ = run_episode(_config(tmp_path / "model"), demo_task)
    assert len(record.steps) == 2 and record.planner == "trained"
    for step in record.steps:  # a barely trained tiny model: what does not parse is fed back as F1, like any planner's
        assert step.output is not None or step.feedback.code is ErrorCode.F1
        assert step.planner_usage["prompt_tokens"] > 16
    record, _ = run_episode(_config(tmp_path / "model", constrained=True), demo_task)
    assert all(step.output is not None for step in record.steps)  # decoded by the model within the answer's skeleton


def test_train_refuses_bad_input_in_one_line(fixture_episodes, tmp_path, capsys):  # noqa: F811
    export([fixture_episodes], "dpo", tmp_path / "dpo", suite=None)
    cases = ((["sft", "--data", str(tmp_path / "dpo"), "--base", "tiny:qwen2_vl", "--out", str(tmp_path / "o")], "needs an export made with --format sft"),
             (["sft", "--data", str(tmp_path), "--base", "tiny:qwen2_vl", "--out", str(tmp_path / "o")], "not an export folder"),
             (["dpo", "--data", str(tmp_path / "dpo"), "--base", str(tmp_path / "none"), "--out", str(tmp_path / "o")], "never downloaded"),
             (["dpo", "--data", str(tmp_path / "dpo"), "--base", "tiny:qwen2_vl", "--out", str(tmp_path / "o"), "--steps", "0"], "at least 1"))
    for args, words in cases:
        assert main(["train", *args]) == 2
        err = capsys.readouterr().err
        assert words in err and len(err.strip().splitlines()) == 1, err
    with pytest.raises(Exception, match="no readable homiebot_train.json"):
        TrainedPlanner(path=str(tmp_path))
