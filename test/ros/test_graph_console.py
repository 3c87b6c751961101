"""What a user sees of a graph run: ``homiebot submit`` prints an episode as ``homiebot run`` does
(errors on stderr), the log of ``homiebot up`` has a line per task, per round and per episode, and
``submit`` exits with the status ``run`` gives the same instruction.

The graph is ``homiebot up`` itself (the default config), with localhost-only discovery and a
ROS_DOMAIN_ID of its own.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from homiebot import cli  # noqa: E402
from homiebot.ros.kit.environment import ros_environment  # noqa: E402
from test.ros_domains import domain_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "config" / "tasks" / "demo.yaml"
DOMAIN = domain_of(__name__)
ROUND = re.compile(r"^round +\d+ \| .{42} \| \S+ +\| (ok |[A-Z]\d ) \| +\d+\.\d\ds( \| .+)?$")


@pytest.fixture(scope="module")
def up(tmp_path_factory):
    """``homiebot up`` (no bag: nothing here reads one) and where its output goes."""
    folder = tmp_path_factory.mktemp("console")
    env = ros_environment(DOMAIN)
    log = folder / "up.log"
    with log.open("w") as sink:
        proc = subprocess.Popen([sys.executable, "-m", "homiebot.cli", "up", "--out", str(folder / "runs"), "--no-bag"], cwd=ROOT,
                                env=env, stdout=sink, stderr=subprocess.STDOUT, text=True)
    try:
        yield {"env": env, "log": log, "out": folder}
    finally:
        proc.send_signal(2)  # SIGINT: the graph stops its nodes
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()  # a process we started
            proc.wait()


def submit(up, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "homiebot.cli", "submit", *args, "--timeout", "240"], cwd=ROOT, env=up["env"],
                          capture_output=True, text=True, timeout=300)


def wait_for_log(up, text: str, timeout: float = 60.0) -> str:
    """The log of ``homiebot up`` once it contains ``text`` (the task manager prints as it publishes)."""
    deadline = time.monotonic() + timeout
    while True:
        log = up["log"].read_text()
        if text in log or time.monotonic() > deadline:
            return log
        time.sleep(0.2)


def test_submit_prints_the_episode_as_run_does_and_up_logs_its_task_rounds_and_end(up):
    out = submit(up, "--task", str(DEMO))
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stderr.strip() == "", out.stderr
    lines = out.stdout.splitlines()
    task_id = re.search(r"^accepted as submission (\S+)", out.stdout, re.M).group(1)  # type: ignore[union-attr]
    assert "task: put the green can from the brown table into the fridge  (planner heuristic, seed 0, profile default)" in lines
    rounds = [line for line in lines if line.startswith("round ")]
    assert rounds and all(ROUND.match(line) for line in rounds), rounds
    assert any(" | NoMaD   | " in line for line in rounds)  # the model of each round
    failed = [line for line in rounds if not re.search(r"\| ok  \|", line)]
    assert failed and all(len(line.split(" | ")) == 6 and line.split(" | ")[-1].strip() for line in failed), failed  # with its message
    assert re.search(r"^goal reached; ended with End after \d+ rounds \(\d+ failed\), path \d+\.\d m, \d+\.\d s$", out.stdout, re.M)
    record = lines[-1].removeprefix("episode record: ")
    assert lines[-1].startswith("episode record: ") and Path(record).is_file()

    log = wait_for_log(up, "episode demo_seed0: goal")
    assert f"submission {task_id}, episode demo_seed0: task: put the green can" in log, log
    logged = [line for line in log.splitlines() if line.startswith("round ")]
    assert logged[-len(rounds):] == rounds  # the very lines submit printed
    assert re.search(rf"^episode demo_seed0: goal reached; ended with End after .*; episode record: {re.escape(record)}$", log, re.M)


@pytest.mark.parametrize("instruction, status, error", [
    ("asdkj qwe zzz", 2, "the heuristic planner does not understand 'asdkj qwe zzz'"),  # refused: the user's to fix
    ("fly to the moon", 1, None),  # read, but nothing in it grounds: reported, ended without the goal
])
def test_submit_exits_with_the_status_of_run(up, tmp_path, capsys, instruction, status, error):
    ran = cli.main(["run", instruction, "--scene", "0", "--out", str(tmp_path), "--no-images"])
    run_out = capsys.readouterr()
    out = submit(up, instruction, "--scene", "0")
    assert (ran, out.returncode) == (status, status), (run_out, out.stdout, out.stderr)
    if error is None:
        assert out.stderr.strip() == "" and "stopped to report what it could not do" in out.stdout, out.stdout + out.stderr
        return
    assert error in run_out.err and error in out.stderr and "homiebot: error:" in out.stderr
    assert "error" not in out.stdout and "what was recorded" not in out.stderr  # nothing ran: no record
    log = wait_for_log(up, f"refused: {error}")
    assert re.search(rf"^episode \S+ refused: {re.escape(error)}", log, re.M) and "Traceback" not in log, log
