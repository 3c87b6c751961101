"""A robot driver the graph needs but does not start: ``homiebot up`` names what of it is missing in one
line and stops with status 3; the sim driver (started with a seed, as docs/robots.md shows it) serves
everything the check looks for.

Processes run with localhost-only discovery and a ROS_DOMAIN_ID of their own, one module at a time.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from homiebot.ros.up import ros_environment  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DOMAIN = 99  # apart from the other tests' domains (test_graph_console's graph is stopped before this module runs)

CHECK = """
import json, rclpy
from rclpy.node import Node
from homiebot.robots.profile import load_profile
from homiebot.ros.robot import missing_driver_interfaces
rclpy.init()
node = Node("driver_check")
print(json.dumps(missing_driver_interfaces(node, load_profile("spot"), 120.0)))
"""


def test_up_without_the_robot_driver_names_what_is_missing_and_exits_3(tmp_path):
    out = subprocess.run([sys.executable, "-m", "homiebot.cli", "up", "--config", str(ROOT / "config" / "robot_spot.yaml"),
                          "--out", str(tmp_path), "--no-bag", "--domain-id", str(DOMAIN)], cwd=ROOT, env=ros_environment(),
                         capture_output=True, text=True, timeout=180)
    assert out.returncode == 3, out.stdout + out.stderr
    said = [line for line in out.stderr.splitlines() if "error" in line]
    assert len(said) == 1, out.stderr
    line = said[0]
    assert line.startswith(f"homiebot world: error: the spot robot driver is not running on ROS_DOMAIN_ID={DOMAIN} ")
    for name in ("nothing publishes /spot/odometry", "/spot/camera/frontleft/image", "nothing subscribes to /spot/cmd_vel",
                 "no service /spot/claim, /spot/power_on, /spot/stand"):
        assert name in line, line
    assert "start the driver first" in line and "config/robots/spot_sim.yaml" in line
    assert "Traceback" not in out.stdout + out.stderr


def test_the_sim_driver_takes_a_seed_as_an_integer_and_serves_what_the_check_looks_for():
    env = ros_environment(DOMAIN)
    driver = subprocess.Popen([sys.executable, "-m", "homiebot.worlds.home.sim_driver", "--ros-args", "-p", "robot:=spot",
                               "-p", "scene:=0", "-p", "camera_size:=24x32"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    try:
        check = subprocess.run([sys.executable, "-c", CHECK], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
        assert driver.poll() is None, driver.communicate()[1]
        assert check.returncode == 0, check.stderr
        assert json.loads(check.stdout.strip().splitlines()[-1]) == {}
    finally:
        if driver.poll() is None:
            driver.terminate()  # a process we started
        driver.communicate(timeout=30)


def test_a_scene_that_is_neither_a_seed_nor_a_file_name_is_a_parameter_error():
    out = subprocess.run([sys.executable, "-m", "homiebot.worlds.home.sim_driver", "--ros-args", "-p", "scene:=1.5"], cwd=ROOT,
                         env=ros_environment(DOMAIN), capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "parameter 'scene' = 1.5: expected str or int" in out.stderr, out.stderr
    assert "Traceback" not in out.stderr
