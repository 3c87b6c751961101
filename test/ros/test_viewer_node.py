"""`homiebot up --view --save-rrd`: the viewer node subscribed to a running graph serves the rerun web
viewer on loopback and records the episode submitted to the graph: the four views, depth, and one
timeline entry per round of the episode's record (read back with rerun's own reader).

The graph runs with localhost-only discovery and a ROS_DOMAIN_ID of its own (40-49)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

rr_chunk = pytest.importorskip("rerun.chunk")
pytest.importorskip("rclpy")

from homiebot.core.records import load_episode  # noqa: E402
from homiebot.ros.kit.environment import ros_environment  # noqa: E402
from test.ros_domains import domain_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "config" / "tasks" / "demo.yaml"
DOMAIN = domain_of(__name__)


def test_viewer_node_serves_and_records_the_graph(tmp_path):
    cfg = tmp_path / "graph.yaml"
    cfg.write_text("planner: {name: oracle}\nworld: {name: embedded_home, params: {width: 64, height: 64}}\n")
    rrd = tmp_path / "graph.rrd"
    env = {**ros_environment(DOMAIN), "PYTHONPATH": str(ROOT)}
    log = tmp_path / "up.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "homiebot.cli", "up", "--config", str(cfg), "--out", str(tmp_path / "runs"), "--no-bag",
                                 "--domain-id", str(DOMAIN), "--view", "--save-rrd", str(rrd)],
                                env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while "live view: http://127.0.0.1:" not in log.read_text():
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.5)
        url = log.read_text().split("live view: ")[1].split()[0]
        port = int(url.split(":")[2].split("/")[0])
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
        done = subprocess.run([sys.executable, "-m", "homiebot.cli", "submit", "--task", str(DEMO), "--seed", "0", "--timeout", "240"],
                              env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        time.sleep(2)  # the last messages reach the viewer
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    record = load_episode(next((tmp_path / "runs").glob("*/episode.json")))
    rows: dict[str, list] = {}
    for chunk in rr_chunk.RrdReader(str(rrd)).store().stream():
        rows.setdefault(chunk.entity_path, []).extend(chunk.to_record_batch().to_pylist())
    for view in ("front", "left", "back", "right"):
        # frames are skipped when the viewer is behind (a loaded machine): at least one of each arrives
        assert rows.get(f"/views/{view}") and rows.get(f"/depth/{view}"), log.read_text()[-3000:]
    entries = rows["/timeline/rounds"]
    assert sorted(e["round"] for e in entries) == [s.round for s in record.steps]
