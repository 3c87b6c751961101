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
    (["run", "--max-rounds", "0"], "--max-rounds must be at least 1"),
    (["run", "--profile", "clumsy"], "unknown failure profile 'clumsy'"),
    (["run", "dance the tango", "--scene", "1", "--planner", "oracle"], "needs a task goal"),
    (["run", "dance the tango", "--scene", "1"], "does not understand 'dance the tango'"),
    (["run", "put the apple in the fridge", "--scene", "no/such/scene.yaml"], "cannot read scene file"),
    (["run", "--task", str(DEMO_TASK), "--explore"], "--explore builds the map the planner keeps: it needs mapped perception"),
    (["run", "--task", str(DEMO_TASK), "--config", "config/sif_mapped.yaml", "--explore", "0"], "--explore 0: max_stops"),
])
def test_user_errors_exit_2_with_a_message(args, message, tmp_path):
    out = homiebot(*args, "--out", str(tmp_path))
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert message in out.stderr
    assert "Traceback" not in out.stderr
    assert not list(tmp_path.iterdir()), "a failed start must not leave half-written folders"


def test_explore_maps_the_home_before_the_instruction(tmp_path):
    """Mapped perception knows nothing at the start: without --explore the heuristic explores rooms in its first
    rounds (see test/perception/test_mapped_mode.py); after the exploration phase the fridge is in its map."""
    out = homiebot("run", "--task", str(DEMO_TASK), "--config", "config/sif_mapped.yaml", "--explore", "--no-images",
                   "--out", str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert "exploring the home first (at most 40 frontier stops), then the instruction" in out.stdout
    assert "round  1 | [Go to, fridge_1]" in out.stdout, out.stdout


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


def _config(tmp_path, text: str):
    path = tmp_path / "cfg.yaml"
    path.write_text(text + "world: {name: embedded_home, params: {width: 64, height: 64, depth: false, segmentation: false}}\n")
    return str(path)


@pytest.mark.parametrize("case", ["empty instruction", "out is a file", "binary config", "unknown planner for up"])
def test_more_user_errors_exit_2_with_one_line(case, tmp_path):
    out_dir = tmp_path / "out"
    if case == "empty instruction":
        args = ["run", "", "--out", str(out_dir)]
    elif case == "out is a file":
        (tmp_path / "file").write_text("x")
        args = ["run", "--scene", "1", "--out", str(tmp_path / "file")]
    elif case == "binary config":
        (tmp_path / "bin.yaml").write_bytes(bytes(range(256)) * 4)
        args = ["run", "--config", str(tmp_path / "bin.yaml"), "--out", str(out_dir)]
    else:
        pytest.importorskip("rclpy")
        args = ["up", "--config", _config(tmp_path, "planner: {name: gpt-9}\n"), "--domain-id", "199", "--out", str(out_dir)]
    out = homiebot(*args)
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert out.stderr.startswith("homiebot: error: ") and out.stderr.count("\n") == 1, out.stderr
    assert not out_dir.exists()


@pytest.mark.parametrize("outputs, status, verdict", [
    (["[End]"], 1, "goal NOT reached"),  # finished without reaching the goal
    ([""], 3, "ended by planner_error"),  # the planner never answers: could not run
])
def test_run_exit_status_says_the_outcome(outputs, status, verdict, tmp_path):
    import json

    cfg = _config(tmp_path, f"planner: {{name: replay, params: {{outputs: {json.dumps(outputs)}, then_end: false}}}}\n")
    out = homiebot("run", "--task", str(DEMO_TASK), "--config", cfg, "--out", str(tmp_path / "o"), "--no-images")
    assert out.returncode == status, (out.stdout, out.stderr)
    assert verdict in out.stdout


def test_sigterm_of_run_saves_the_record_as_interrupted(tmp_path):
    import signal

    from homiebot.core.records import load_episode

    # the same room again and again, up to 1000 rounds: long enough to be stopped in the middle
    cfg = _config(tmp_path, "planner: {name: replay, params: {outputs: ['[Go to, kitchen]'], then_end: false}}\nmax_rounds: 1000\n")
    env = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "osmesa")}
    proc = subprocess.Popen([sys.executable, "-m", "homiebot.cli", "run", "--task", str(DEMO_TASK), "--config", cfg, "--out",
                             str(tmp_path / "o"), "--no-images"], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in proc.stdout:
        if line.startswith("round  3"):
            break
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    folders = list((tmp_path / "o").iterdir())
    assert [f.name for f in folders] == ["demo_seed0"], "saved, and no .partial folder left"
    record = load_episode(folders[0])
    assert record.termination == "interrupted" and len(record.steps) >= 3


def test_the_same_task_twice_gives_two_records(tmp_path):
    for _ in range(2):
        out = homiebot("run", "--task", str(DEMO_TASK), "--planner", "oracle", "--profile", "perfect", "--out", str(tmp_path), "--no-images")
        assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo_seed0", "demo_seed0_2"]
    assert f"episode record: {tmp_path / 'demo_seed0_2' / 'episode.json'}" in out.stdout


def test_main_called_in_process_gives_the_callers_signal_handlers_back() -> None:
    """`main` sets SIGPIPE to the default (a `| head` ends the command quietly) only while it runs: a
    caller's later write to a closed pipe must stay an exception, not kill the caller."""
    import signal

    from homiebot.cli import main

    before = {s: signal.getsignal(s) for s in (signal.SIGPIPE, signal.SIGTERM, signal.SIGINT)}
    assert main(["plugins"]) == 0
    assert {s: signal.getsignal(s) for s in before} == before


def test_a_stand_in_is_named_at_start_and_in_every_round_it_runs(tmp_path):
    import json

    answer = json.dumps({"analysis": "to the kitchen", "subtask": ["Go to", "kitchen"], "model": "NoMaD"})
    cfg = _config(tmp_path, f"""planner: {{name: replay, params: {{outputs: [{json.dumps(answer)}]}}}}
skills:
  - {{name: policy_skill, model: NoMaD, actions: [Go to], fallback: sim_nav,
     params: {{policy: pixnav, policy_params: {{checkpoint: {tmp_path / 'no_such.pth'}}}}}}}
  - {{name: privileged_navigation, model: sim_nav}}
  - {{name: privileged_manipulation, model: RT-1-X}}
""")
    out = homiebot("run", "--task", str(DEMO_TASK), "--config", cfg, "--profile", "perfect", "--out", str(tmp_path / "o"), "--no-images")
    assert out.returncode == 1, (out.stdout, out.stderr)  # End after one round: the demo goal is not reached
    assert "homiebot: notice: NoMaD cannot run here (checkpoint not found" in out.stderr
    assert "sim_nav runs in its place" in out.stderr
    first = next(line for line in out.stdout.splitlines() if line.startswith("round  1"))
    assert "| sim_nav for NoMaD (not installed) | ok" in first, first
    assert "why it ended: " in out.stdout


@pytest.mark.parametrize("args, message", [
    (["eval", "--suite", "home100", "--runs", "-1"], "--runs must be at least 1 (got -1)"),
    (["bootstrap", "--workers", "0"], "--workers must be at least 1 (got 0)"),
    (["run", "--task", str(DEMO_TASK), "--max-rounds", "0"], "--max-rounds must be at least 1 (got 0)"),
])
def test_a_bad_count_is_refused_before_a_folder_is_made(args, message, tmp_path):
    out = homiebot(*args, "--out", str(tmp_path / "o"))
    assert out.returncode == 2 and message in out.stderr and out.stderr.count("\n") == 1, out.stderr
    assert not (tmp_path / "o").exists()


def test_an_out_folder_that_cannot_be_written_is_refused_in_one_line():
    out = homiebot("run", "--task", str(DEMO_TASK), "--out", "/proc/self")  # exists, is a folder, takes no files (even as root)
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert "--out /proc/self: cannot write there" in out.stderr and out.stderr.count("\n") == 1, out.stderr


@pytest.mark.parametrize("text, message", [
    ("planer: {name: oracle}\n", "planer: unknown key; did you mean 'planner'?"),
    ("output: {videos: true}\n", "output.videos: unknown key; did you mean 'video'?"),
    ("skills:\n  - {name: privileged_navigation, modle: NoMaD}\n", "skills.0.modle: unknown key; did you mean 'model'?"),
    ("detector: {zzz: 1}\n", "detector.zzz: unknown key (known: far, near, suggest_names)"),
])
def test_a_misspelled_config_key_names_the_nearest_known_one(text, message, tmp_path):
    from homiebot.config import load_config
    from homiebot.core.errors import ConfigError

    path = tmp_path / "cfg.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value) == f"{path}: {message}"


def test_dagger_stopped_before_any_episode_says_nothing_was_recorded(tmp_path, monkeypatch, capsys):
    from homiebot import cli
    from homiebot.training import dagger

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt  # what SIGTERM raises (cli._interrupt), here before the first episode finished

    monkeypatch.setattr(dagger, "dagger", stopped)
    status = cli.main(["dagger", "--model", str(tmp_path / "m"), "--data", str(tmp_path / "d"), "--out", str(tmp_path / "o")])
    assert status == 130
    err = capsys.readouterr().err
    assert "interrupted before any episode finished; nothing was recorded" in err and "kept" not in err, err


def test_ctrl_c_of_a_pooled_evaluation_prints_one_line_and_no_traceback(tmp_path):
    """Ctrl-C reaches the whole process group (the driver and its pool workers): one line, status 130,
    the finished results kept for --resume."""
    import signal

    env = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "osmesa")}
    out = tmp_path / "ev"
    proc = subprocess.Popen([sys.executable, "-m", "homiebot.cli", "eval", "--suite", "home100", "--planner", "oracle", "--runs", "1",
                             "--workers", "2", "--out", str(out)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    for line in proc.stderr:  # the progress bar
        if "1/100" in line:  # one finished: the workers are in their next episodes or between them
            break
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    said = [line for line in err.splitlines() if line.strip() and not line.startswith("[")]
    assert said == ["homiebot: interrupted; what was recorded so far has been saved"], err
    assert len((out / "results.jsonl").read_text().splitlines()) >= 1


def test_run_refuses_an_overlong_instruction_as_the_graph_does(tmp_path):
    """`run` and `submit` give the same status for the same input: the task manager's default limit."""
    from homiebot.core.tasks import MAX_INSTRUCTION_CHARS, instruction_too_long

    long = "put the red apple in the fridge " * (MAX_INSTRUCTION_CHARS // 20)
    out = homiebot("run", long, "--out", str(tmp_path / "o"))
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip() == f"homiebot: error: {instruction_too_long(long)}"
    assert f"{len(long)} characters; at most {MAX_INSTRUCTION_CHARS}" in out.stderr and "Traceback" not in out.stderr
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())
    assert instruction_too_long("x" * MAX_INSTRUCTION_CHARS) is None
