"""Every test module that starts ROS 2 processes runs on the one worker that runs them one after another
(conftest.work_unit): their ROS_DOMAIN_ID ranges overlap, so two at once could join each other's graphs."""

from __future__ import annotations

import re
from pathlib import Path

from test.conftest import work_unit

ROOT = Path(__file__).resolve().parents[1]
STARTS_ROS = re.compile(r"ROS_DOMAIN_ID|ros_environment\(|rclpy\.init\(")


def test_every_module_that_starts_ros_runs_on_the_ros_worker() -> None:
    modules = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "test").rglob("test_*.py")
                     if p.name != Path(__file__).name and STARTS_ROS.search(p.read_text()))
    assert len(modules) > 20, modules  # the pattern still finds the graph tests
    assert [m for m in modules if work_unit(m) != "ros"] == []
