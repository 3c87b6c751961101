"""Evaluation folders under stress: SIGTERM then --resume, one evaluation per folder at a time, every
unreadable results line reported, incomplete shard sets refused, a planner's refusal recorded."""

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

from homiebot.bench.evaluate import EvalError, evaluate, merge_results
from homiebot.bench.results import read_results
from homiebot.bench.suite import suite_path

from .test_suite import tiny_config

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "osmesa")}
CLI = [sys.executable, "-m", "homiebot.cli"]


@pytest.fixture
def small_suite(tmp_path) -> Path:
    folder = tmp_path / "suite"
    folder.mkdir()
    for path in sorted(suite_path("home100").glob("*.yaml"))[:6]:
        shutil.copy(path, folder)
    return folder


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=300)


def test_sigterm_loses_nothing_a_second_eval_is_locked_out_and_resume_completes(small_suite, tmp_path):
    cfg = tiny_config("default").model_dump(mode="json")
    cfg["world"]["params"].update(width=128, height=128)  # slow enough to be stopped in the middle
    cfg_file = tmp_path / "cfg.yaml"
    cfg_file.write_text(yaml.safe_dump(cfg))
    out = tmp_path / "ev"
    args = ["eval", "--suite", str(small_suite), "--config", str(cfg_file), "--runs", "4", "--out", str(out)]
    proc = subprocess.Popen([*CLI, *args], cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    results = out / "results.jsonl"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        if results.is_file() and results.read_text().count("\n") >= 3:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the evaluation finished before it could be stopped"
    second = cli(*args, "--resume")
    assert second.returncode == 2 and "in use by another evaluation" in second.stderr and second.stderr.count("\n") == 1
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in err, err
    done = read_results(results)
    assert 3 <= len(done.results) < 24 and done.skipped <= 1
    resumed = cli(*args, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    final = read_results(results)
    assert len(final.results) == 24 and final.duplicates == 0
    assert {r.key for r in done.results} <= {r.key for r in final.results}


def test_report_warns_about_every_skipped_line(small_suite, tmp_path):
    evaluate(str(small_suite), tiny_config("perfect"), tmp_path / "e", runs=1, progress=False)
    with open(tmp_path / "e" / "results.jsonl", "a") as fh:
        fh.write("not json\n{\"task_id\": 5}\n")
    rep = cli("report", str(tmp_path / "e"))
    assert rep.returncode == 0, rep.stderr
    warnings = [line for line in rep.stderr.splitlines() if line.startswith("homiebot: warning:")]
    assert len(warnings) == 2 and "line 7" in warnings[0] and "line 8" in warnings[1]


def test_merge_refuses_an_incomplete_set_of_shards_unless_allowed(small_suite, tmp_path):
    cfg = tiny_config("perfect")
    for i in (0, 2):
        evaluate(str(small_suite), cfg, tmp_path / f"s{i}", runs=1, shard=f"{i}/3", progress=False)
    with pytest.raises(EvalError, match="shard 1/3 is not among them"):
        merge_results([tmp_path / "s0", tmp_path / "s2"], tmp_path / "m")
    refused = cli("merge", str(tmp_path / "s0"), str(tmp_path / "s2"), "--out", str(tmp_path / "m"))
    assert refused.returncode == 2 and "--allow-partial" in refused.stderr and not (tmp_path / "m").exists()
    ok = cli("merge", str(tmp_path / "s0"), str(tmp_path / "s2"), "--out", str(tmp_path / "m"), "--allow-partial")
    assert ok.returncode == 0 and "merged 4 runs" in ok.stdout
    lines = (tmp_path / "s2" / "results.jsonl").read_text().splitlines()
    (tmp_path / "s2" / "results.jsonl").write_text("\n".join(lines[:1]) + "\n")  # a shard with runs still to do
    evaluate(str(small_suite), cfg, tmp_path / "s1", runs=1, shard="1/3", progress=False)
    with pytest.raises(EvalError, match="shard 2/3 has 1 of its 2 runs"):
        merge_results([tmp_path / f"s{i}" for i in range(3)], tmp_path / "m2")


def test_a_planner_that_refuses_an_instruction_gives_a_refused_run_and_the_eval_goes_on(small_suite, tmp_path):
    first = sorted(small_suite.glob("*.yaml"))[0]
    data = yaml.safe_load(first.read_text())
    data["instruction"] = "dance the tango"
    first.write_text(yaml.safe_dump(data))
    cfg = tiny_config("perfect").model_copy(update={"planner": tiny_config("perfect").planner.model_copy(update={"name": "heuristic"})})
    summary = evaluate(str(small_suite), cfg, tmp_path / "h", runs=1, progress=False)
    assert summary["runs"] == 6
    results = {r.task_id: r for r in read_results(tmp_path / "h" / "results.jsonl").results}
    refused = results[data["id"]]
    assert refused.termination == "refused" and "dance the tango" in refused.error and not refused.steps
    assert all(r.termination != "refused" for k, r in results.items() if k != data["id"])
