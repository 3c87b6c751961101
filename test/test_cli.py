"""The command line: progress, artifacts, and user errors without tracebacks."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from .conftest import DEMO_TASK, ROOT


def homiebot(*args: str, cwd=None) -> subprocess.CompletedProcess:
    env = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "osmesa")}
    return subprocess.run([sys.executable, "-m", "homiebot.cli", *args], capture_output=True, text=True,
                          cwd=cwd or ROOT, env=env, timeout=300)


def test_run_task_prints_progress_and_artifacts(tmp_path):
    out = homiebot("run", "--task", str(DEMO_TASK), "--planner", "oracle", "--profile", "perfect", "--out", str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert "round  1 | [Go to, fridge]" in out.stdout
    assert "goal reached; ended with End" in out.stdout
    assert f"episode record: {tmp_path / 'demo_seed0' / 'episode.json'}" in out.stdout
    assert (tmp_path / "demo_seed0" / "images" / "round_01_front.png").is_file()


def test_run_instruction_in_generated_scene(tmp_path):
    out = homiebot("run", "open the fridge", "--scene", "2", "--out", str(tmp_path), "--no-images", "--profile", "perfect")
    assert out.returncode == 0, out.stderr
    assert "[Open, fridge]" in out.stdout and "goal reached" in out.stdout


@pytest.mark.parametrize("args, message", [
    (["run", "--task", "no/such/task.yaml"], "cannot read task file"),
    (["run", "--config", "no/such.yaml"], "cannot read config file"),
    (["run", "--planner", "gpt-9"], "unknown planner 'gpt-9'; available: heuristic, hf, openai, oracle, replay"),
    (["run", "--max-rounds", "0"], "max_rounds"),
    (["run", "--profile", "clumsy"], "unknown failure profile 'clumsy'"),
    (["run", "dance the tango", "--scene", "1", "--planner", "oracle"], "needs a task goal"),
    (["run", "dance the tango", "--scene", "1"], "does not understand 'dance the tango'"),
    (["run", "put the apple in the fridge", "--scene", "no/such/scene.yaml"], "cannot read scene file"),
])
def test_user_errors_exit_2_with_a_message(args, message, tmp_path):
    out = homiebot(*args, "--out", str(tmp_path))
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert message in out.stderr
    assert "Traceback" not in out.stderr
    assert not list(tmp_path.iterdir()), "a failed start must not leave half-written folders"


def test_bad_config_value_names_the_field(tmp_path):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("detector: {far: -1}\n")
    out = homiebot("run", "--config", str(cfg), "--out", str(tmp_path / "o"))
    assert out.returncode == 2 and "detector.far" in out.stderr and "Traceback" not in out.stderr


def test_scene_command_prints_loadable_yaml(tmp_path):
    out = homiebot("scene", "5")
    assert out.returncode == 0
    path = tmp_path / "s.yaml"
    path.write_text(out.stdout)
    from homiebot.worlds.home.generate import generate_scene
    from homiebot.worlds.home.scene import load_scene

    assert load_scene(path) == generate_scene(5)
