"""The recipe for text-only models (SmolLM2 and the like): an export whose views are described in words
(each episode replayed to detect what its views showed), LoRA SFT of a tiny random Llama on it, and the
`trained` planner planning with the adapter through the normal loop."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
torch = pytest.importorskip("torch")
pytest.importorskip("trl")
pytest.importorskip("peft")

from homiebot.bench.suite import load_suite, suite_path  # noqa: E402
from homiebot.config import RunConfig  # noqa: E402
from homiebot.core.records import load_episode  # noqa: E402
from homiebot.planners.trained import TrainedPlanner  # noqa: E402
from homiebot.planners.view_text import NOTHING  # noqa: E402
from homiebot.runtime import run_episode  # noqa: E402
from homiebot.training.export import export  # noqa: E402
from homiebot.training.text_views import VIEWS_HEADER, describe_rounds  # noqa: E402
from homiebot.training.train import TrainError, train  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "MUJOCO_GL": os.environ.get("MUJOCO_GL", "osmesa"), "HF_HUB_OFFLINE": "1",
       "OMP_NUM_THREADS": "1"}


@pytest.fixture(scope="module")
def boot(tmp_path_factory) -> Path:
    """Oracle episodes of one train task under the default failure profile (full views: depth and segmentation)."""
    root = tmp_path_factory.mktemp("text")
    suite = root / "suite"
    suite.mkdir()
    tid = [t.id for t in load_suite("home100", "train")][0]
    shutil.copy(suite_path("home100") / f"{tid}.yaml", suite)
    done = subprocess.run([sys.executable, "-m", "homiebot.cli", "bootstrap", "--out", str(root / "boot"), "--suites", str(suite),
                           "--failure-scales", "1", "--runs", "1", "--seed", "3", "--workers", "1"],
                          capture_output=True, text=True, env=ENV, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    stats = export([root / "boot" / "runs"], "sft", root / "text", views="text")
    assert stats["views"] == "text" and stats["records"] > 0
    return root


def _records(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "data.jsonl").read_text().splitlines()]


def test_text_export_describes_each_rounds_own_views(boot: Path) -> None:
    images = _records(boot / "boot" / "sft")
    text = _records(boot / "text")
    assert [r["id"] for r in text] == [r["id"] for r in images]  # the replay reproduced every round: none left out
    assert not (boot / "text" / "images").exists()
    for rec in text:
        assert rec["images"] == [] and "<image>" not in rec["conversations"][0]["value"]
        system, user, answer = (m["content"] for m in rec["messages"])
        assert "four cameras (front, left, back, right) detect" in system
        lines = user.split("\n")
        assert lines[1] == VIEWS_HEADER and [ln.split(":")[0] for ln in lines[3:7]] == ["front", "left", "back", "right"]
        # every name described is one the planner could know that round (what the views showed, rooms ...)
        named = {m for ln in lines[3:7] if NOTHING not in ln for m in re.findall(r"(?:^\w+: |, )(\w+) \(", ln)}
        assert named and all(n in rec["known"] for n in named)
        assert answer == next(r for r in images if r["id"] == rec["id"])["messages"][2]["content"]


def test_a_replay_that_differs_from_the_record_describes_only_the_rounds_before(boot: Path) -> None:
    folder = next((boot / "boot" / "runs").rglob("episode.json")).parent
    record = load_episode(folder)
    assert len(record.steps) >= 3
    full = describe_rounds(record)
    assert sorted(full) == [s.round for s in record.steps]
    other = '{"analysis": "elsewhere", "subtask": ["Go to", "no_such_place"], "model": "NoMaD"}'
    steps = [record.steps[0], record.steps[1].model_copy(update={"raw_output": other}), *record.steps[2:]]
    changed = record.model_copy(update={"steps": steps})
    assert sorted(describe_rounds(changed)) == [record.steps[0].round]


def test_sft_of_a_tiny_text_model_saves_an_adapter_the_trained_planner_plans_with(boot: Path, demo_task) -> None:
    with pytest.raises(TrainError, match="--views text"):  # a text-only base refuses records with images
        train("sft", boot / "boot" / "sft", "tiny:causal_lm", boot / "refused", steps=1)
    manifest = train("sft", boot / "text", "tiny:causal_lm", boot / "model", steps=2, batch=2, lr=0.01, lora_r=4, lora_alpha=8)
    assert manifest["vision"] is False and manifest["image_size"] is None and len(manifest["losses"]) == 2
    assert (boot / "model" / "adapter" / "adapter_model.safetensors").is_file()
    planner = TrainedPlanner(path=str(boot / "model"), max_new_tokens=16, constrained=True)
    assert planner.vision is False and planner.needs_views == ("depth", "segmentation")
    cfg = RunConfig.model_validate({"skill_profile": "perfect", "max_rounds": 2})
    record, _ = run_episode(cfg, demo_task, planner=planner)
    assert len(record.steps) == 2
    assert all(s.output is not None for s in record.steps)  # constrained: every round parses
    assert VIEWS_HEADER in record.steps[0].prompt  # it read the views in words


def test_compact_prompt_trains_and_plans_with_the_same_words(boot: Path, demo_task) -> None:
    from homiebot.training.compact import compact_turns

    manifest = train("sft", boot / "text", "tiny:causal_lm", boot / "compact", steps=1, lora_r=4, lora_alpha=8, prompt="compact")
    assert manifest["template"] == "compact" and manifest["records_left_out"] == 0
    cfg = RunConfig.model_validate({"skill_profile": "perfect", "max_rounds": 1})
    default = TrainedPlanner(path=str(boot / "compact"), max_new_tokens=8, constrained=True, template=None)
    compact = TrainedPlanner(path=str(boot / "compact"), max_new_tokens=8, constrained=True)
    assert compact.template == "compact"  # from the manifest
    first, _ = run_episode(cfg, demo_task, planner=default)
    second, _ = run_episode(cfg, demo_task, planner=compact)
    # the round as the default template wrote it, rewritten, is word for word what the compact planner was given
    assert compact_turns(default.prompts.system(), first.steps[0].prompt, "json") == (compact.prompts.system(), second.steps[0].prompt)
    assert second.steps[0].prompt.startswith("Task: ") and "\nSeen:\n" in second.steps[0].prompt
    assert len(compact.prompts.system()) < len(default.prompts.system()) / 3


def test_a_time_budget_stops_and_saves_and_resume_goes_on(boot: Path, capfd) -> None:
    out = boot / "budget"
    first = train("sft", boot / "text", "tiny:causal_lm", out, steps=3, lora_r=4, lora_alpha=8, budget_min=1e-6)
    assert first["stopped_by_budget"] is True and first["steps"] == 1 and (out / "adapter").is_dir()
    assert "step 1/3  loss " in capfd.readouterr().err
    again = train("sft", boot / "text", "tiny:causal_lm", out, steps=3, lora_r=4, lora_alpha=8, resume=True)
    assert again["stopped_by_budget"] is False and again["steps"] == 3
    with pytest.raises(TrainError, match="finished training"):
        train("sft", boot / "text", "tiny:causal_lm", out, steps=4, resume=True)
    with pytest.raises(TrainError, match="no checkpoint"):
        train("sft", boot / "text", "tiny:causal_lm", boot / "fresh", steps=1, resume=True)
    with pytest.raises(TrainError, match="--prompt"):
        train("sft", boot / "text", "tiny:causal_lm", boot / "fresh2", steps=1, prompt="short")
