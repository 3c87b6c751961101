"""Shared fixtures: the demo scene and task, and a quick way to run an episode in-process."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("MUJOCO_GL", "osmesa")
os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")

from homiebot.ros.kit.dds_profile import use_profile  # noqa: E402

use_profile(os.environ)  # the graph's Fast DDS profile for the nodes a test runs in-process, as run_node gives a node

from homiebot.config import RunConfig  # noqa: E402
from homiebot.core.tasks import Task, load_task  # noqa: E402
from homiebot.runtime import run_episode  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEMO_TASK = ROOT / "config" / "tasks" / "demo.yaml"

# Modules that start ROS 2 processes outside test/ros/. Under pytest-xdist every ROS module runs on one worker,
# one after the other: two graphs at once would double the load their timing margins were set for (each module
# has ROS domains of its own, test/ros_domains.py). The other modules run beside them, each module on one worker.
ROS_MODULES = {"test/worlds/test_sim_driver.py", "test/worlds/test_sim_driver_fetch.py", "test/worlds/test_sim_driver_estop.py"}


def work_unit(nodeid: str) -> str:
    """The xdist work unit of a test: "ros" for the ROS modules, else its module."""
    module = nodeid.split("::", 1)[0]
    return "ros" if module.startswith("test/ros/") or module in ROS_MODULES else module


def pytest_sessionstart(session: pytest.Session) -> None:
    """Before the first test (in the controller only, before any worker starts a ROS process): Fast DDS
    shared memory that killed processes of earlier runs left in /dev/shm, which would fill it over many runs."""
    if hasattr(session.config, "workerinput"):
        return
    try:
        from homiebot.ros.kit.shm import clean_stale
    except ImportError:  # no ROS extra
        return
    clean_stale()


MODULE_SECONDS: dict[str, float] = {}  # module -> seconds of its tests (setup, call and teardown), as reported here


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Sum each module's time (under pytest-xdist the controller hears every worker's reports)."""
    module = report.nodeid.split("::", 1)[0]
    MODULE_SECONDS[module] = MODULE_SECONDS.get(module, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    """The slowest modules, and the ROS unit's total (one worker runs it, so it bounds the suite's wall time)."""
    if hasattr(config, "workerinput") or not MODULE_SECONDS:
        return
    ros = sum(t for m, t in MODULE_SECONDS.items() if work_unit(m) == "ros")
    rest = sum(t for m, t in MODULE_SECONDS.items() if work_unit(m) != "ros")
    terminalreporter.write_sep("=", f"slowest modules (ROS unit {ros / 60:.1f} min on one worker; the other modules {rest / 60:.1f} min)")
    for module, seconds in sorted(MODULE_SECONDS.items(), key=lambda item: -item[1])[:15]:
        terminalreporter.write_line(f"{seconds:8.1f}s {module}")


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist (the dev extra); absent without it
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """xdist's module scheduling with the ROS modules as one unit (the largest: xdist hands it out first)."""
    from xdist.scheduler import LoadScopeScheduling

    class ModulesAndRos(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return ModulesAndRos(config, log)


@pytest.fixture
def demo_task() -> Task:
    return load_task(DEMO_TASK)


def small_render() -> dict:
    """World parameters that keep tests fast: small views, no depth or segmentation."""
    return {"name": "embedded_home", "params": {"width": 64, "height": 64, "depth": False, "segmentation": False}}


def replay_config(outputs: list[str], profile: str | dict = "perfect", **overrides) -> RunConfig:
    return RunConfig.model_validate({"planner": {"name": "replay", "params": {"outputs": outputs}},
                                     "skill_profile": profile, "world": small_render(), **overrides})


def oracle_config(profile: str | dict = "perfect", **overrides) -> RunConfig:
    return RunConfig.model_validate({"planner": {"name": "oracle"}, "skill_profile": profile, "world": small_render(), **overrides})


def run(cfg: RunConfig, task: Task, out: Path | None = None):
    record, _ = run_episode(cfg, task, out)
    return record
