"""Evaluation on Ray: same results as the local pool, worker loss retried, driver kill resumed.

A private Ray head is started here (node address 127.0.0.1, 2 CPUs, no dashboard, its own temp dir,
ports and a random auth token) and killed by its process group at the end. Ray's GCS and raylet
listen on every interface whatever the node address (no Ray option changes that), so outside a
private network namespace the token is what keeps others out. The evaluations run through the CLI.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from homiebot.bench.evaluate import evaluate, job_resources
from homiebot.bench.executors import RAY_MISSING, ExecutorError, JobResources, LocalExecutor, make_executor
from homiebot.bench.results import read_results
from homiebot.bench.suite import suite_path
from homiebot.config import RunConfig

ROOT = Path(__file__).resolve().parents[2]
TASKS, RUNS = 4, 2
ray = pytest.importorskip("ray", reason="Ray is an extra: pip install -e .[ray]")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


TOKEN = secrets.token_hex(32)  # the head's own token: ~/.ray/auth_token may belong to another cluster or change meanwhile


def _env() -> dict[str, str]:
    path = os.environ.get("PYTHONPATH", "")
    return {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "osmesa"), "RAY_USAGE_STATS_ENABLED": "0",
            "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": TOKEN, "PYTHONPATH": f"{ROOT}{os.pathsep}{path}" if path else str(ROOT)}


@dataclass(frozen=True)
class Head:
    address: str
    session: int  # the session of the head's processes (its workers' too): the only ones a test may kill


@pytest.fixture(scope="module")
def head():
    """A Ray head on 127.0.0.1 with 2 CPUs, in a session of its own."""
    tmp = tempfile.mkdtemp(prefix="hbray", dir="/tmp")  # short: Ray's socket paths must fit 107 characters
    port = _free_port()
    cmd = [str(Path(sys.executable).parent / "ray"), "start", "--head", "--block", "--node-ip-address", "127.0.0.1",
           "--port", str(port), "--num-cpus", "2", "--num-gpus", "0", "--include-dashboard", "false", "--disable-usage-stats",
           "--temp-dir", tmp, "--dashboard-agent-listen-port", str(_free_port()), "--dashboard-agent-grpc-port", str(_free_port()),
           "--runtime-env-agent-port", str(_free_port()), "--metrics-export-port", str(_free_port())]
    log = open(Path(tmp) / "head.log", "w")
    proc = subprocess.Popen(cmd, env=_env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    address = f"127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while "will now block" not in (Path(tmp) / "head.log").read_text():
            assert proc.poll() is None, (Path(tmp) / "head.log").read_text()[-2000:]
            assert time.monotonic() < deadline, "the Ray head did not start"
            time.sleep(0.2)
        yield Head(address, proc.pid)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the head and everything it started (its own process group)
        proc.wait(timeout=60)
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """A slice of home100, the oracle with the failure profile (seeds matter), and the local pool's results."""
    base = tmp_path_factory.mktemp("ray")
    suite = base / "suite"
    suite.mkdir()
    for path in sorted(suite_path("home100").glob("*.yaml"))[:TASKS]:
        shutil.copy(path, suite)
    cfg = RunConfig.model_validate({"planner": {"name": "oracle"}, "skill_profile": "default",
                                    "world": {"name": "embedded_home", "params": {"width": 32, "height": 32, "depth": False,
                                                                                  "segmentation": False}}})
    cfg_file = base / "cfg.yaml"
    cfg_file.write_text(yaml.safe_dump(cfg.model_dump(mode="json")))
    evaluate(str(suite), cfg, base / "local", runs=RUNS, progress=False, executor=LocalExecutor(1))
    return suite, cfg_file, base / "local"


def _eval_cmd(suite: Path, cfg_file: Path, out: Path, address: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "homiebot.cli", "eval", "--suite", str(suite), "--config", str(cfg_file), "--runs", str(RUNS),
            "--executor", "ray", "--address", address, "--out", str(out), *extra]


def _lines(folder: Path) -> list[str]:
    return [line for line in (folder / "results.jsonl").read_text().splitlines() if line.strip()]


def _assert_same(folder: Path, reference: Path) -> None:
    """Every job exactly once, each identical to the local run but for its wall time."""
    content = read_results(folder / "results.jsonl")
    assert len(_lines(folder)) == TASKS * RUNS and content.duplicates == 0 and content.skipped == 0
    got = {r.key: r.model_copy(update={"wall_time": 0}) for r in read_results(folder / "results.jsonl").results}
    want = {r.key: r.model_copy(update={"wall_time": 0}) for r in read_results(reference / "results.jsonl").results}
    assert got == want
    assert not [r for r in got.values() if r.termination in ("error", "planner_error")], "no infrastructure failure in the results"


def _wait_for_lines(path: Path, n: int, proc: subprocess.Popen, stderr: Path, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not (path.is_file() and path.read_text().count("\n") >= n):
        assert proc.poll() is None, f"the evaluation ended before it could be interrupted: {stderr.read_text()[-2000:]}"
        assert time.monotonic() < deadline, "no results in time"
        time.sleep(0.05)


def test_ray_results_equal_the_local_pool(head, setup, tmp_path):
    suite, cfg_file, local = setup
    res = subprocess.run(_eval_cmd(suite, cfg_file, tmp_path / "r", head.address), cwd=ROOT, env=_env(), capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "Ray, 1 node, 2 CPUs" in res.stdout and "ETA" in res.stderr
    _assert_same(tmp_path / "r", local)
    report = subprocess.run([sys.executable, "-m", "homiebot.cli", "report", str(tmp_path / "r")], cwd=ROOT, env=_env(),
                            capture_output=True, text=True, timeout=300)
    assert report.returncode == 0 and "| oracle |" in report.stdout


def _busy_workers(session: int) -> list[int]:
    """PIDs of this head's Ray workers executing a job (Ray titles a busy worker 'ray::<function>')."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                title = (entry / "cmdline").read_bytes().split(b"\0")[0]
                sid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[3])
            except (OSError, IndexError, ValueError):
                continue
            if title.startswith(b"ray::_ray_job") and sid == session:
                pids.append(int(entry.name))
    return pids


def test_killed_worker_jobs_are_retried_and_the_set_is_complete(head, setup, tmp_path):
    suite, cfg_file, local = setup
    out = tmp_path / "w"
    err_file = tmp_path / "stderr.txt"
    with open(err_file, "w") as err:
        proc = subprocess.Popen(_eval_cmd(suite, cfg_file, out, head.address, "--retries", "5"), cwd=ROOT, env=_env(),
                                stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
        try:
            kills = 0
            deadline = time.monotonic() + 300
            while "lost to the infrastructure" not in err_file.read_text() and kills < 3 and time.monotonic() < deadline:
                assert proc.poll() is None, "the evaluation ended before a worker could be killed"
                busy = _busy_workers(head.session)
                if busy:
                    os.kill(busy[0], signal.SIGKILL)  # a Ray worker, mid-job
                    kills += 1
                    time.sleep(1.0)
                time.sleep(0.05)
            assert proc.wait(timeout=600) == 0, err_file.read_text()[-3000:]
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=60)
    stderr = err_file.read_text()
    assert kills, "no Ray worker was seen running a job"
    assert "lost to the infrastructure" in stderr and "WorkerCrashedError" in stderr and "retried" in stderr
    _assert_same(out, local)


def test_resume_after_the_driver_is_killed(head, setup, tmp_path):
    suite, cfg_file, local = setup
    out = tmp_path / "d"
    err_file = tmp_path / "stderr.txt"
    with open(err_file, "w") as err:
        proc = subprocess.Popen(_eval_cmd(suite, cfg_file, out, head.address), cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL,
                                stderr=err, start_new_session=True)
    try:
        _wait_for_lines(out / "results.jsonl", 2, proc, err_file)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)  # the driver only: Ray's workers belong to the head
        proc.wait(timeout=60)
    before = len(_lines(out))
    assert 2 <= before < TASKS * RUNS
    res = subprocess.run(_eval_cmd(suite, cfg_file, out, head.address, "--resume"), cwd=ROOT, env=_env(), capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    assert f"{TASKS * RUNS - before} new" in res.stdout
    _assert_same(out, local)


def test_executor_choice_errors_are_one_line(tmp_path, monkeypatch):
    with pytest.raises(ExecutorError, match="--executor ray"):
        make_executor("local", address="127.0.0.1:1")
    with pytest.raises(ExecutorError, match="unknown executor"):
        make_executor("slurm")
    with pytest.raises(ExecutorError, match="--workers"):
        make_executor("local", workers=0)
    # without Ray installed: one line naming the extra (Ray hidden from the CLI process)
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "ray.py").write_text("raise ImportError('No module named ray')\n")
    env = {**_env(), "PYTHONPATH": f"{hide}{os.pathsep}{_env()['PYTHONPATH']}"}
    res = subprocess.run([sys.executable, "-m", "homiebot.cli", "eval", "--suite", "home100", "--executor", "ray",
                          "--out", str(tmp_path / "x")], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and res.stderr.strip() == f"homiebot: error: {RAY_MISSING}"
    # an address where no cluster listens: one line, no traceback
    res = subprocess.run([sys.executable, "-m", "homiebot.cli", "eval", "--suite", "home100", "--executor", "ray", "--address",
                          f"127.0.0.1:{_free_port()}", "--out", str(tmp_path / "y")], cwd=ROOT,
                         env=_env(), capture_output=True, text=True, timeout=300)
    assert res.returncode == 2 and "cannot start or reach Ray at 127.0.0.1:" in res.stderr and "Traceback" not in res.stderr


def test_a_job_no_node_can_hold_is_refused_before_anything_runs(head, setup, tmp_path):
    suite, cfg_file, _ = setup
    data = yaml.safe_load(cfg_file.read_text())
    data["planner"]["resources"] = {"num_gpus": 1}
    gpu_cfg = tmp_path / "gpu.yaml"
    gpu_cfg.write_text(yaml.safe_dump(data))
    res = subprocess.run(_eval_cmd(suite, gpu_cfg, tmp_path / "g", head.address), cwd=ROOT, env=_env(), capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 2 and "no Ray node has what one job asks for (GPU 1" in res.stderr, res.stderr[-2000:]
    assert "Traceback" not in res.stderr and not _lines_or_none(tmp_path / "g")


def _lines_or_none(folder: Path) -> list[str]:
    return _lines(folder) if (folder / "results.jsonl").is_file() else []


def test_job_resources_sum_over_planner_world_and_skills():
    data = RunConfig().model_dump(mode="json")
    data["planner"] = {"name": "oracle", "resources": {"num_gpus": 0.5, "memory_mb": 4000}}
    data["skills"][0]["resources"] = {"num_gpus": 0.25, "num_cpus": 1}
    data["skills"][2]["resources"] = {"num_gpus": 0.25, "memory_mb": 1000}
    res = job_resources(RunConfig.model_validate(data))
    assert res == JobResources(num_cpus=2.0, num_gpus=1.0, memory_mb=5000)
    assert res.ray_options() == {"num_cpus": 2.0, "num_gpus": 1.0, "memory": 5000 * 1024 * 1024}
    assert job_resources(RunConfig()) == JobResources(num_cpus=1.0)
    data["planner"]["resources"] = {"num_gpus": -1}
    with pytest.raises(ValueError, match="num_gpus"):
        RunConfig.model_validate(data)


def test_sigterm_stops_a_ray_evaluation_like_ctrl_c(head, setup, tmp_path):
    suite, cfg_file, _ = setup
    out = tmp_path / "t"
    err_file = tmp_path / "stderr.txt"
    with open(err_file, "w") as err:
        proc = subprocess.Popen(_eval_cmd(suite, cfg_file, out, head.address), cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL,
                                stderr=err, start_new_session=True)
    try:
        _wait_for_lines(out / "results.jsonl", 1, proc, err_file)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=120) == 130, err_file.read_text()[-2000:]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=60)
    assert "interrupted; what was recorded so far has been saved" in err_file.read_text()
    assert read_results(out / "results.jsonl").skipped == 0
