"""package.xml lists what the graph imports, under the rosdep keys a ROS user resolves."""

from __future__ import annotations

import ast
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# top-level import -> rosdep key
KEYS = {"rclpy": "rclpy", "action_msgs": "action_msgs", "rosgraph_msgs": "rosgraph_msgs", "builtin_interfaces": "builtin_interfaces", "std_msgs": "std_msgs", "sensor_msgs": "sensor_msgs",
        "geometry_msgs": "geometry_msgs", "nav_msgs": "nav_msgs", "std_srvs": "std_srvs", "trajectory_msgs": "trajectory_msgs",
        "control_msgs": "control_msgs", "launch": "launch", "launch_ros": "launch_ros",
        "numpy": "python3-numpy", "yaml": "python3-yaml", "pydantic": "python3-pydantic", "PIL": "python3-pil", "imageio": "python3-imageio",
        "mujoco": "python3-mujoco-pip", "rosbags": "python3-rosbags-pip", "matplotlib": "python3-matplotlib",
        "scipy": "python3-scipy"}
# what the nodes, the launch files and the code they run (world, records, reports) import; model
# back-ends (torch, transformers, jax ...) are optional and imported only when configured
SOURCES = ["homiebot/ros", "homiebot/worlds/home", "homiebot/records.py", "homiebot/bench/report.py", "launch"]
OPTIONAL = {"rerun", "foxglove"}  # the viz extra: only the optional viewer and Foxglove nodes import them


def imported(paths: list[str]) -> set[str]:
    names = set()
    for base in paths:
        files = [ROOT / base] if base.endswith(".py") else sorted((ROOT / base).rglob("*.py"))
        for path in files:
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Import):
                    names |= {a.name.split(".")[0] for a in node.names}
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names.add(node.module.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n not in ("homiebot", "perception", "planners", "skills")} - OPTIONAL


def test_every_third_party_import_of_the_graph_is_an_exec_depend():
    depends = {e.text for e in ET.parse(ROOT / "package.xml").getroot().iter("exec_depend")}
    modules = imported(SOURCES)
    unknown = modules - set(KEYS)
    assert not unknown, f"add a rosdep key for {sorted(unknown)} to KEYS and package.xml"
    missing = {m: KEYS[m] for m in modules if KEYS[m] not in depends}
    assert not missing, f"package.xml lacks exec_depends {missing}"
    assert "rclpy" in modules and "mujoco" in modules and "rosbags" in modules  # the scan sees the nodes' imports
