"""The graph deployed on a robot, and the same graph against simulation: ``graph()`` for the shipped
robot run configurations (what ``homiebot up --config ...`` and ``real.launch.py robot:=... sim_driver:=...``
both start)."""

from __future__ import annotations

from pathlib import Path

import pytest

from homiebot.config import load_config
from homiebot.core.errors import ConfigError
from homiebot.core.resources import robot_config
from homiebot.ros.bringup.graph import GRAPH_NODES, graph

ROOT = Path(__file__).resolve().parents[2]
DEPLOYED = list(GRAPH_NODES)  # world (the ros2_robot bridge), mapper, planner, detector, executor, task manager, recorder


@pytest.mark.parametrize(("robot", "sim", "expected"), [
    ("spot", False, DEPLOYED),
    ("spot", True, ["sim_driver", *DEPLOYED]),
    ("fetch", False, DEPLOYED),
    ("fetch", True, ["sim_driver", *DEPLOYED]),
])
def test_graph_node_lists_for_each_robot_with_and_without_the_sim_driver(robot: str, sim: bool, expected: list[str]) -> None:
    config = robot_config(robot, sim)
    assert config == str(ROOT / "config" / ("robots" if sim else "") / (f"{robot}_sim.yaml" if sim else f"robot_{robot}.yaml"))
    specs = graph(config)
    assert [s.name for s in specs] == expected
    cfg = load_config(config)
    assert cfg.world.name == "ros2_robot" and cfg.world.params["profile"] == robot
    assert bool(cfg.world.params.get("sim_truth")) is sim  # simulator truth only next to the sim driver
    if sim:
        driver = specs[0]
        assert (driver.module, driver.executable) == ("homiebot.ros.nodes.sim_driver", "homiebot_sim_driver")
        assert driver.parameters["robot"] == robot
        assert Path(driver.parameters["scene"]) == ROOT / "config" / "scenes" / "demo.yaml"  # relative to the config file
    executor = next(s for s in specs if s.name == "executor")
    assert executor.parameters["attempt_timeout"] == 300.0  # a robot moves in real time
    manager = next(s for s in specs if s.name == "task_manager")
    assert manager.parameters["execute_timeout"] == 300.0 * cfg.attempts + 30.0  # every attempt of a subtask fits
    # the rest of the graph is the same on the robot and against simulation
    assert [(s.name, s.module) for s in graph(robot_config(robot, not sim)) if s.name != "sim_driver"] == \
        [(s.name, s.module) for s in specs if s.name != "sim_driver"]


def test_an_unknown_robot_names_the_shipped_ones() -> None:
    with pytest.raises(ValueError, match="no run configuration for robot 'pr2'.*shipped robots: fetch, spot"):
        robot_config("pr2")


def test_a_sim_driver_without_a_robot_profile_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\nsim_driver: {scene: '3'}\n")
    with pytest.raises(ConfigError, match="sim_driver serves a robot profile: give world.params.profile"):
        load_config(bad)
