"""A real pretrained language model in the loop: SmolLM2-135M-Instruct, as the ``llm`` extra ships it.

One test serves it with llama.cpp's OpenAI-compatible server (its own process on a free loopback port,
ended by its process id) and runs the demo task through ``homiebot run`` with ``config/llm_local.yaml``;
another runs the ``hf`` planner on the same GGUF file in-process. A 135M model rarely finishes the task:
these tests check that every round is the model's own answer and that constrained answers always parse
(no F1), not that the goal is reached. Without the extra they skip, naming ``make llm``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from homiebot.core.contracts import ErrorCode
from homiebot.llm_server import LocalServer, server_available, smollm2_path

ROOT = Path(__file__).resolve().parents[2]
ROUNDS = 3

pytestmark = pytest.mark.skipif(server_available() is not None, reason=str(server_available()))


def test_smollm2_through_llama_cpp_server_plans_every_round(tmp_path):
    config = yaml.safe_load((ROOT / "config/llm_local.yaml").read_text())
    with LocalServer(threads=1, ready_timeout=180, log=tmp_path / "server.log") as server:  # one thread: no waiting on a partner
        config["planner"]["params"]["base_url"] = server.base_url  # the config names the port make llm-server uses
        path = tmp_path / "llm.yaml"
        path.write_text(yaml.safe_dump(config))
        env = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "osmesa"),
               "PYOPENGL_PLATFORM": os.environ.get("PYOPENGL_PLATFORM", "osmesa")}
        done = subprocess.run([sys.executable, "-m", "homiebot.cli", "run", "--task", str(ROOT / "config/tasks/demo.yaml"),
                               "--config", str(path), "--max-rounds", str(ROUNDS), "--out", str(tmp_path / "runs"),
                               "--no-images", "--quiet"], capture_output=True, text=True, timeout=600, env=env, cwd=ROOT)
    assert done.returncode in (0, 1), done.stderr[-2000:]  # goal reached, or not: both are the model's doing
    record = json.loads(next((tmp_path / "runs").rglob("episode.json")).read_text())
    steps = record["steps"]
    assert record["termination"] in ("end", "max_rounds") and len(steps) >= 1
    for step in steps:
        assert step["raw_output"].startswith('{"analysis": "')  # the grammar's shape, written by the model
        assert step["planner_usage"]["completion_tokens"] > 0
        assert (step.get("feedback") or {}).get("code") != ErrorCode.F1.value, step  # every answer parsed


def test_smollm2_gguf_in_process_with_the_hf_planner(demo_task):
    torch = pytest.importorskip("torch")
    pytest.importorskip("gguf", reason="the gguf package is not installed (make llm)")
    from homiebot.config import RunConfig
    from homiebot.planners.hf import HFPlanner
    from homiebot.runtime import run_episode

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # threads that wait for each other stall when other processes share the cores
    try:
        planner = HFPlanner(model_path=str(smollm2_path()), max_new_tokens=8, output_format="json")
        assert planner.family == "causal_lm" and planner.vision is False
        cfg = RunConfig.model_validate({"max_rounds": 2, "skill_profile": "perfect",
                                        "world": {"name": "embedded_home", "params": {"width": 96, "height": 96}}})
        record, _ = run_episode(cfg, demo_task, planner=planner)
    finally:
        torch.set_num_threads(threads)
        planner.close()
    assert len(record.steps) == 2
    for step in record.steps:
        assert step.raw_output.strip() and step.planner_usage["completion_tokens"] <= 8
        assert "What the cameras see:\nYou are in the bedroom." in (step.prompt or "") or step.round > 1


def test_a_text_only_model_refuses_vision_and_a_missing_file_is_named(tmp_path):
    from homiebot.planners.base import PlannerConfigError
    from homiebot.planners.hf import HFPlanner

    with pytest.raises(PlannerConfigError, match="text-only model .* set vision: false"):
        HFPlanner(model_path=str(smollm2_path()), vision=True)
    with pytest.raises(PlannerConfigError, match="does not exist"):
        HFPlanner(model_path=str(tmp_path / "none.gguf"))
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(PlannerConfigError, match="is not a folder or a .gguf file"):
        HFPlanner(model_path=str(tmp_path / "notes.txt"))
