"""docs/graph.md is the running graph (tools/graph_doc.py starts it, reads it as ``ros2 node info`` does,
and compares); a stale page fails with the command that rewrites it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")
from test.ros_domains import domain_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DOMAIN = domain_of(__name__)


def test_the_graph_page_is_the_running_graph() -> None:
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "graph_doc.py"), "--check", "--domain-id", str(DOMAIN)],
                         capture_output=True, text=True, timeout=400)
    assert run.returncode == 0, run.stderr[-3000:]
    page = (ROOT / "docs" / "graph.md").read_text()
    # what the page must show, whatever else the graph has: the typed action and rounds, and every node
    assert "| `/homiebot/run_task` | homiebot_msgs/RunTask | action | task_manager |" in page
    assert "| `/homiebot/subtask` | homiebot_msgs/PlannerOutput | task_manager |" in page
    for node in ("world", "mapper", "planner", "detector", "executor", "task_manager", "recorder"):
        assert f"  {node}([{node}])" in page
