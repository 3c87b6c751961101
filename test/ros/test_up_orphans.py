"""A ``homiebot up`` killed with SIGKILL takes its nodes with it: none is left running under init, where
a new graph beside it would break the next episode (nodes get SIGTERM at their parent's death).

The graph runs with localhost-only discovery and a ROS_DOMAIN_ID of its own (188-190)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from homiebot.ros.kit.environment import ros_environment  # noqa: E402
from test.ros_domains import domain_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DOMAIN = domain_of(__name__)


def running(pid: int) -> bool:
    """The process exists and is not a zombie waiting to be reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="parent-death signals are Linux's")
def test_nodes_end_when_up_is_killed(tmp_path):
    cfg = tmp_path / "graph.yaml"
    cfg.write_text("planner: {name: oracle}\nworld: {name: embedded_home, params: {width: 64, height: 64}}\n")
    log = tmp_path / "up.log"
    with open(log, "w") as out:
        up = subprocess.Popen([sys.executable, "-m", "homiebot.cli", "up", "--config", str(cfg), "--out", str(tmp_path / "runs"),
                               "--no-bag", "--domain-id", str(DOMAIN)],
                              cwd=ROOT, env=ros_environment(DOMAIN), stdout=out, stderr=subprocess.STDOUT)
    nodes: dict[str, int] = {}
    try:
        deadline = time.monotonic() + 120
        while not (line := next((x for x in log.read_text().splitlines() if x.startswith("homiebot graph: ") and "(pid" in x), None)):
            assert up.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.2)
        nodes = {name: int(pid) for name, pid in re.findall(r"(\w+) \(pid (\d+)\)", line)}
        assert len(nodes) >= 5 and all(running(pid) for pid in nodes.values()), line
        up.kill()
        up.wait()
        deadline = time.monotonic() + 60  # a node mid start-up (importing, rendering) ends when it next runs
        while (left := [name for name, pid in nodes.items() if running(pid)]) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not left, f"still running after `up` was killed: {left}"
    finally:
        if up.poll() is None:
            up.kill()
            up.wait()
        for pid in nodes.values():
            if running(pid):
                os.kill(pid, signal.SIGKILL)
