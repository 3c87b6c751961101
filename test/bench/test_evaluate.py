"""Evaluation runs: deterministic seeds, kill -9 and resume, shards and merging, clear refusals."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from homiebot.bench import metrics
from homiebot.bench.evaluate import EvalError, evaluate, merge_results
from homiebot.bench.results import read_results
from homiebot.bench.suite import suite_path
from homiebot.config import RunConfig

from .test_suite import tiny_config

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def small_suite(tmp_path) -> Path:
    folder = tmp_path / "suite"
    folder.mkdir()
    for path in sorted(suite_path("home100").glob("*.yaml"))[:6]:
        shutil.copy(path, folder)
    return folder


def _by_key(folder: Path):
    return {r.key: r for r in read_results(folder / "results.jsonl").results}


def _same_runs(a: Path, b: Path) -> None:
    ra, rb = _by_key(a), _by_key(b)
    assert set(ra) == set(rb)
    for key in ra:
        assert ra[key].model_copy(update={"wall_time": 0}) == rb[key].model_copy(update={"wall_time": 0}), key


def test_kill_9_then_resume_matches_an_uninterrupted_run(small_suite, tmp_path):
    # larger views than elsewhere, so that the evaluation is still running when it is killed
    cfg = RunConfig.model_validate({**tiny_config("default").model_dump(mode="json"),
                                    "world": {"name": "embedded_home", "params": {"width": 128, "height": 128}}})
    full = tmp_path / "full"
    expected = evaluate(str(small_suite), cfg, full, runs=4, progress=False)

    cfg_file = tmp_path / "cfg.yaml"
    cfg_file.write_text(yaml.safe_dump(cfg.model_dump(mode="json")))
    killed = tmp_path / "killed"
    env = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "osmesa")}
    proc = subprocess.Popen([sys.executable, "-m", "homiebot.cli", "eval", "--suite", str(small_suite), "--config", str(cfg_file),
                             "--runs", "4", "--workers", "2", "--out", str(killed)], cwd=ROOT, env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    results = killed / "results.jsonl"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        if results.is_file() and results.read_text().count("\n") >= 4:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the evaluation finished before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)  # the evaluation and its workers, all started here
    proc.wait(timeout=60)
    done_before = results.read_text().count("\n")
    assert 4 <= done_before < 24
    with open(results, "a") as fh:
        fh.write('{"task_id": "000_cut_off_by_the_ki')  # a line the kill interrupted

    resumed = evaluate(str(small_suite), cfg, killed, runs=4, resume=True, progress=False)
    assert resumed["new_runs"] == 24 - done_before
    lines = [line for line in results.read_text().splitlines() if line.strip()]
    assert len(lines) == 24, "no run lost and none duplicated, the cut line removed"
    _same_runs(full, killed)
    for key in ("runs", "SR", "PLWSR", "TP", "SRR", "SER"):
        assert resumed[key] == expected[key], key


def test_resume_refuses_other_settings_and_plain_rerun_refuses_existing_results(small_suite, tmp_path):
    cfg = tiny_config("perfect")
    evaluate(str(small_suite), cfg, tmp_path / "e", runs=1, progress=False)
    with pytest.raises(EvalError, match="--resume"):
        evaluate(str(small_suite), cfg, tmp_path / "e", runs=1, progress=False)
    with pytest.raises(EvalError, match="runs: was 1, now 2"):
        evaluate(str(small_suite), cfg, tmp_path / "e", runs=2, resume=True, progress=False)
    again = evaluate(str(small_suite), cfg, tmp_path / "e", runs=1, resume=True, progress=False)
    assert again["new_runs"] == 0 and again["runs"] == 6


def test_shards_merge_into_the_full_evaluation(small_suite, tmp_path):
    cfg = tiny_config("default")
    evaluate(str(small_suite), cfg, tmp_path / "full", runs=2, progress=False)
    for i in range(3):
        evaluate(str(small_suite), cfg, tmp_path / f"s{i}", runs=2, shard=f"{i}/3", progress=False)
    sizes = [len(_by_key(tmp_path / f"s{i}")) for i in range(3)]
    assert sizes == [4, 4, 4]
    assert merge_results([tmp_path / f"s{i}" for i in range(3)], tmp_path / "merged") == 12
    _same_runs(tmp_path / "full", tmp_path / "merged")
    with pytest.raises(EvalError, match="shard"):
        evaluate(str(small_suite), cfg, tmp_path / "bad", shard="3/3", progress=False)


def test_seeds_depend_on_task_and_run_only(small_suite, tmp_path):
    cfg = tiny_config("default")
    evaluate(str(small_suite), cfg, tmp_path / "a", runs=2, workers=2, progress=False)
    evaluate(str(small_suite), cfg, tmp_path / "b", runs=2, workers=1, progress=False)
    _same_runs(tmp_path / "a", tmp_path / "b")
    seeds = {r.seed for r in _by_key(tmp_path / "a").values()}
    assert len(seeds) == 12


def test_cli_eval_and_report(small_suite, tmp_path):
    env = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "osmesa")}
    out = tmp_path / "ev"
    cmd = [sys.executable, "-m", "homiebot.cli"]
    res = subprocess.run(cmd + ["eval", "--suite", str(small_suite), "--planner", "oracle", "--runs", "1", "--profile", "perfect",
                                "--split", "train",
                                "--out", str(out)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert "| 100.00 |" in res.stdout and "ep/s" in res.stderr
    rep = subprocess.run(cmd + ["report", str(out)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert rep.returncode == 0, rep.stderr
    assert "| oracle |" in rep.stdout and (out / "report" / "report.md").is_file()
    assert list((out / "report").glob("*.png"))
    bad = subprocess.run(cmd + ["report", str(tmp_path / "nothing")], cwd=ROOT, env=env, capture_output=True, text=True)
    assert bad.returncode == 2 and "no results.jsonl" in bad.stderr and "Traceback" not in bad.stderr
    again = subprocess.run(cmd + ["eval", "--suite", str(small_suite), "--planner", "oracle", "--runs", "1", "--out", str(out)],
                           cwd=ROOT, env=env,
                           capture_output=True, text=True)
    assert again.returncode == 2 and "--resume" in again.stderr


def test_metrics_of_results_file_match_in_memory_results(small_suite, tmp_path):
    seen = []
    evaluate(str(small_suite), tiny_config("default"), tmp_path / "m", runs=1, progress=False, on_result=seen.append)
    assert metrics.summary(seen) == metrics.summary(list(_by_key(tmp_path / "m").values()))
