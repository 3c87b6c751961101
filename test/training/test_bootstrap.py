"""Bootstrap then export is reproducible: byte-identical files from two processes with different --workers."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from homiebot.bench.suite import builtin_suites, load_suite, suite_path
from homiebot.training.bootstrap import PERSONA_SUITE, default_suites, scaled_profile

ROOT = Path(__file__).resolve().parents[2]
pytest.importorskip("datasets")


def _digests(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _bootstrap(suite: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MUJOCO_GL": os.environ.get("MUJOCO_GL", "osmesa")}
    cmd = [sys.executable, "-m", "homiebot.cli", "bootstrap", "--out", str(out), "--suites", str(suite), "--failure-scales", "2",
           "--runs", "1", "--seed", "3", *extra]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)


def test_bootstrap_export_is_byte_identical_across_processes_and_workers(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    train = [t.id for t in load_suite("home100", "train")][:2]
    for tid in train:
        shutil.copy(suite_path("home100") / f"{tid}.yaml", suite)
    one = _bootstrap(suite, tmp_path / "w1", "--workers", "1")
    two = _bootstrap(suite, tmp_path / "w2", "--workers", "2")
    assert one.returncode == 0 and two.returncode == 0, one.stderr[-2000:] + two.stderr[-2000:]
    for fmt in ("sft", "dpo"):
        a, b = _digests(tmp_path / "w1" / fmt), _digests(tmp_path / "w2" / fmt)
        assert a == b
        assert {"data.jsonl", "data.parquet", "hf/state.json", "README.md", "stats.json"} <= set(a)
        assert any(k.startswith("images/") for k in a)
    assert "sft: " in one.stdout and "2 runs (2 new)" in one.stdout
    assert "stage 1/1 suite x2 [" in one.stderr and "exporting dpo from" in one.stderr, one.stderr  # each bar names its stage
    again = _bootstrap(suite, tmp_path / "w1", "--workers", "1", "--resume")  # nothing to run; the export is rebuilt the same
    assert again.returncode == 0 and "2 runs (0 new)" in again.stdout, again.stderr[-2000:]
    assert _digests(tmp_path / "w1" / "dpo") == _digests(tmp_path / "w2" / "dpo")
    # search labels: `bootstrap --search-labels` (workers 1) and `export --search-labels` of the workers-2 runs agree byte for byte
    searched = _bootstrap(suite, tmp_path / "w1", "--workers", "1", "--resume", "--search-labels")
    assert searched.returncode == 0, searched.stderr[-2000:]
    assert "sft: 10 records (episodes_other_split 0, search 2, success 8)" in searched.stdout  # two oracle rounds relabelled
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "homiebot.cli", "export", str(tmp_path / "w2" / "runs"), "--format", "sft",
                           "--search-labels", "--suite", str(suite), "--out", str(tmp_path / "w2" / "sft_search")],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert _digests(tmp_path / "w1" / "sft") == _digests(tmp_path / "w2" / "sft_search")
    assert _digests(tmp_path / "w1" / "dpo") == _digests(tmp_path / "w2" / "dpo")  # DPO pairs are not relabelled


def test_default_suites_and_scaled_profiles() -> None:
    assert default_suites() == ["home100"] + ([PERSONA_SUITE] if PERSONA_SUITE in builtin_suites() else [])
    assert scaled_profile(0) == "perfect" and scaled_profile(1) == "default"
    doubled = scaled_profile(2)
    assert isinstance(doubled, dict) and doubled["name"] == "default_x2" and doubled["mismatch"] == 0.5
    assert doubled["actions"]["Pick"] == {"hard": 0.16, "slip": 0.5, "drop": 0.0, "overshoot": 0.0}


def test_ctrl_c_of_bootstrap_prints_one_line_and_no_traceback(tmp_path: Path) -> None:
    """Ctrl-C reaches the driver and its pool workers at once: one line, status 130, no worker traceback."""
    import signal

    env = {**os.environ, "PYTHONPATH": str(ROOT), "MUJOCO_GL": os.environ.get("MUJOCO_GL", "osmesa")}
    cmd = [sys.executable, "-m", "homiebot.cli", "bootstrap", "--out", str(tmp_path / "b"), "--suites", "home100", "--failure-scales",
           "1,2", "--runs", "1", "--workers", "2"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.startswith("stage 1/2 home100 x1 ["):  # the first episode finished; the workers are at the next
            break
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    said = [line for line in err.splitlines() if line.strip() and not line.startswith("stage ")]
    assert said == ["homiebot: interrupted; what was recorded so far has been saved"], err
