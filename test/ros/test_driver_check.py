"""A robot driver the graph needs but does not start: ``homiebot up`` names what of it is missing in one
line and stops with status 3; the sim driver (started with a seed, as docs/robots.md shows it) serves
everything the check looks for. A Spot driver that waits for an operator's E-Stop (spot_ros2 answers no
service until one is registered) is waited for by the bridge, and, when none is registered, the bridge and
``homiebot up`` say so in one line.

Processes run with localhost-only discovery and a ROS_DOMAIN_ID of their own, one module at a time.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from homiebot.ros.kit.environment import ros_environment  # noqa: E402
from test.ros_domains import domain_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DOMAIN = domain_of(__name__)

CHECK = """
import json, rclpy
from rclpy.node import Node
from homiebot.robots.profile import load_profile
from homiebot.ros.clients.robot import missing_driver_interfaces
rclpy.init()
node = Node("driver_check")
print(json.dumps(missing_driver_interfaces(node, load_profile("spot"), 120.0)))
"""


BRIDGE = """
import json, time
from homiebot.core.robot import RobotUnavailable
from homiebot.robots.profile import load_profile
from homiebot.ros.clients.robot import Ros2Robot
robot = Ros2Robot(load_profile("spot"), connect_timeout=120.0)
try:
    robot.start()
    print(json.dumps({"up": time.time(), "claim": robot.counters.counts.get("service:claim", 0),
                      "stand": robot.counters.counts.get("service:stand", 0)}))
except RobotUnavailable as err:
    print(json.dumps({"error": str(err)}))
finally:
    robot.close()
"""


def start_spot_driver(env: dict, estop_registered_after: str) -> subprocess.Popen:
    """The sim driver as Spot, its simulated operator registering an E-Stop after that many seconds (or never)."""
    return subprocess.Popen([sys.executable, "-m", "homiebot.ros.nodes.sim_driver", "--ros-args", "-p", "robot:=spot",
                             "-p", "scene:=0", "-p", "camera_size:=24x32", "-p", f"estop_registered_after:={estop_registered_after}"],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def stop(driver: subprocess.Popen) -> str:
    """End a driver this test started; its log."""
    if driver.poll() is None:
        driver.terminate()
    try:
        return driver.communicate(timeout=30)[1]
    except subprocess.TimeoutExpired:
        driver.kill()
        return driver.communicate()[1]


def test_the_bridge_waits_for_an_estop_registered_late_then_brings_spot_up():
    env = ros_environment(DOMAIN)
    driver = start_spot_driver(env, "4")  # within the profile's 10 s wait, however long the streams take to come
    try:
        run = subprocess.run([sys.executable, "-c", BRIDGE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    finally:
        log = stop(driver)
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out.get("claim") == 1 and out.get("stand") == 1, out
    registered = re.search(r"\[(\d+\.\d+)\] \[[\w.]+\]: sim driver: an E-Stop is registered", log)
    assert registered, log[-3000:]
    assert out["up"] >= float(registered.group(1)), (out, registered.group(0))  # nothing was served before it


def test_without_a_registered_estop_the_bridge_and_up_say_so_in_one_line(tmp_path):
    env = ros_environment(DOMAIN)
    driver = start_spot_driver(env, "never")
    try:
        # both wait out the same 10 s for an answer: side by side
        with ThreadPoolExecutor(2) as pool:
            bridge = pool.submit(subprocess.run, [sys.executable, "-c", BRIDGE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
            up_run = pool.submit(subprocess.run, [sys.executable, "-m", "homiebot.cli", "up", "--config", str(ROOT / "config" / "robot_spot.yaml"),
                                                  "--out", str(tmp_path), "--no-bag", "--domain-id", str(DOMAIN)], cwd=ROOT,
                                 env=ros_environment(), capture_output=True, text=True, timeout=240)
            run, up = bridge.result(), up_run.result()
        alive = driver.poll() is None
    finally:
        log = stop(driver)
    assert alive, log[-3000:]
    assert "waiting for an E-Stop to be registered (never" in log
    assert run.returncode == 0, run.stderr[-3000:]
    error = json.loads(run.stdout.strip().splitlines()[-1]).get("error", "")
    expected = ("the spot robot driver (/spot/spot_ros2) answers none of its services (/spot/claim, /spot/power_on, /spot/stand) "
                "within 10 s: no E-Stop is registered: register one from the tablet or an E-Stop client before starting")
    assert error == expected
    assert up.returncode == 3, up.stdout[-2000:] + up.stderr[-3000:]
    said = [line for line in up.stderr.splitlines() if "error" in line]
    assert said == [f"homiebot world: error: {expected} (ROS_DOMAIN_ID={DOMAIN}), then `homiebot up` again"], up.stderr[-3000:]
    assert "Traceback" not in up.stdout + up.stderr


def test_a_driver_that_answers_nothing_is_described_as_one_waiting_for_an_estop():
    from homiebot.robots.profile import load_profile
    from homiebot.ros.clients.driver_check import describe_missing_driver

    line = describe_missing_driver(load_profile("spot"), {"unanswered": ["/spot/claim"]}, "7", "config/robots/spot_sim.yaml")
    assert line == ("the spot robot driver (/spot/spot_ros2) answers none of its services (/spot/claim, /spot/power_on, "
                    "/spot/stand) within 10 s: no E-Stop is registered: register one from the tablet or an E-Stop client "
                    "before starting (ROS_DOMAIN_ID=7), then `homiebot up` again")


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
    driver = subprocess.Popen([sys.executable, "-m", "homiebot.ros.nodes.sim_driver", "--ros-args", "-p", "robot:=spot",
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
    out = subprocess.run([sys.executable, "-m", "homiebot.ros.nodes.sim_driver", "--ros-args", "-p", "scene:=1.5"], cwd=ROOT,
                         env=ros_environment(DOMAIN), capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "parameter 'scene' = 1.5: expected str or int" in out.stderr, out.stderr
    assert "Traceback" not in out.stderr
