"""Every test module that starts ROS 2 processes runs on the one worker that runs them one after another
(conftest.work_unit), and has ROS_DOMAIN_IDs of its own (test/ros_domains.py)."""

from __future__ import annotations

import re
from pathlib import Path

from test.conftest import work_unit
from test.ros_domains import BLOCK, MODULES, domain_of

ROOT = Path(__file__).resolve().parents[1]
STARTS_ROS = re.compile(r"ROS_DOMAIN_ID|ros_environment\(|rclpy\.init\(|domain_of\(")


def _modules_starting_ros() -> list[Path]:
    return sorted(p for p in (ROOT / "test").rglob("test_*.py") if p.name != Path(__file__).name and STARTS_ROS.search(p.read_text()))


def test_every_module_that_starts_ros_runs_on_the_ros_worker() -> None:
    modules = [p.relative_to(ROOT).as_posix() for p in _modules_starting_ros()]
    assert len(modules) > 20, modules  # the pattern still finds the graph tests
    assert [m for m in modules if work_unit(m) != "ros"] == []


def test_every_module_that_starts_ros_has_domains_of_its_own() -> None:
    """test/ros_domains.py gives each module its own ids; test_up only starts ``up`` with ids it refuses."""
    stems = {p.stem.removeprefix("test_") for p in _modules_starting_ros()}
    assert sorted(stems - set(MODULES) - {"up"}) == []
    assert sorted(set(MODULES) - stems) == []  # none left over from a removed module
    ids = [domain_of(f"test.{stem}", nth) for stem, count in MODULES.items() for nth in range(count)]
    assert len(set(ids)) == len(ids) and all(1 <= i <= 232 for i in ids) and sum(MODULES.values()) <= BLOCK
