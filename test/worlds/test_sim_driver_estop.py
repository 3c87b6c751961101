"""The sim driver as a Spot driver that waits for an operator's E-Stop, as spot_ros2 does: its services are
advertised from the start but none is answered (its parameter services neither) until the simulated
operator registers one, while odometry, joint states and cameras flow. Checked by a plain rclpy client
that does not import homiebot and knows only spot_ros2's names and types."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from homiebot.robots.profile import load_profile  # noqa: E402
from homiebot.ros.kit.environment import ros_environment  # noqa: E402
from homiebot.ros.nodes.sim_driver import _estop_after, _estop_check  # noqa: E402
from test.ros_domains import domain_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DOMAIN = domain_of(__name__)

CLIENT = r'''
import json, sys, threading, time
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from nav_msgs.msg import Odometry
from rcl_interfaces.srv import ListParameters
from sensor_msgs.msg import Image, JointState
from std_srvs.srv import Trigger

patience = float(sys.argv[1])  # how long to wait for the answers
rclpy.init()
node = Node("spot_estop_client")
seen = {"odom": 0, "joints": 0, "image": 0}
node.create_subscription(Odometry, "/spot/odometry", lambda m: seen.__setitem__("odom", seen["odom"] + 1), 10)
node.create_subscription(JointState, "/spot/joint_states", lambda m: seen.__setitem__("joints", seen["joints"] + 1), 10)
node.create_subscription(Image, "/spot/camera/frontleft/image", lambda m: seen.__setitem__("image", seen["image"] + 1), 5)
claim = node.create_client(Trigger, "/spot/claim")
params = node.create_client(ListParameters, "/spot/spot_ros2/list_parameters")
executor = SingleThreadedExecutor()
executor.add_node(node)
spinner = threading.Thread(target=executor.spin, daemon=True)
spinner.start()

def wait(cond, limit):
    end = time.time() + limit
    while time.time() < end and not cond():
        time.sleep(0.02)
    return cond()

if not wait(lambda: seen["odom"] and seen["image"] and claim.service_is_ready() and params.service_is_ready(), 120):
    sys.exit(f"the driver's streams and services did not show: {seen}")
out = {"advertised": sorted(n for n, _ in node.get_service_names_and_types() if n.startswith("/spot/"))}
streams = dict(seen)
asked = time.time()
answers = {"claim": claim.call_async(Trigger.Request()), "list_parameters": params.call_async(ListParameters.Request())}
wait(lambda: all(f.done() for f in answers.values()), patience)
out["answered"] = {name: f.done() for name, f in answers.items()}
out["asked"], out["answered_at"] = asked, time.time()
out["claim"] = answers["claim"].result().success if answers["claim"].done() else None
out["streams_grew"] = {k: seen[k] > v for k, v in streams.items()}
print(json.dumps(out), flush=True)
executor.shutdown()
spinner.join(timeout=10)
node.destroy_node()
rclpy.try_shutdown()
'''


def run_client(tmp_path: Path, estop_registered_after: str, patience: float) -> tuple[dict, str]:
    """Start the sim driver as Spot with that E-Stop registration, run the plain client against it; what
    the client saw and the driver's log."""
    env = ros_environment(DOMAIN)
    script = tmp_path / "client.py"
    script.write_text(CLIENT)
    driver = subprocess.Popen([sys.executable, "-m", "homiebot.ros.nodes.sim_driver", "--ros-args", "-p", "robot:=spot",
                               "-p", "scene:=0", "-p", "camera_size:=24x32", "-p", f"estop_registered_after:={estop_registered_after}"],
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        run = subprocess.run([sys.executable, str(script), str(patience)], cwd="/", env=env, capture_output=True, text=True,
                             timeout=300)
    finally:
        driver.terminate()  # a process we started
        try:
            _, log = driver.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            driver.kill()
            _, log = driver.communicate()
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:] + log[-3000:]
    assert "Traceback" not in log, log[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1]), log


def test_without_a_registered_estop_the_services_are_advertised_but_none_answers(tmp_path) -> None:
    out, log = run_client(tmp_path, "never", 3.0)
    for name in ("/spot/claim", "/spot/power_on", "/spot/stand", "/spot/spot_ros2/list_parameters"):
        assert name in out["advertised"], out["advertised"]
    assert out["answered"] == {"claim": False, "list_parameters": False}
    assert out["streams_grew"] == {"odom": True, "joints": True, "image": True}  # the state and image publishers go on
    assert "waiting for an E-Stop to be registered (never, as configured)" in log


def test_once_an_estop_is_registered_the_driver_answers_and_not_before(tmp_path) -> None:
    out, log = run_client(tmp_path, "5", 60.0)
    assert out["answered"] == {"claim": True, "list_parameters": True} and out["claim"] is True
    registered = re.search(r"\[(\d+\.\d+)\] \[[\w.]+\]: sim driver: an E-Stop is registered", log)
    assert registered, log[-3000:]
    assert out["answered_at"] >= float(registered.group(1))  # a request sent before it waited for it


def test_the_registration_delay_comes_from_the_profile_unless_the_parameter_says_otherwise() -> None:
    spot = load_profile("spot")
    assert spot.sim.estop_registered_after == 1.0  # demos and tests wait a moment, as after an operator's click
    assert _estop_after("", spot) == 1.0 and _estop_after(2, spot) == 2.0 and _estop_after("0.5", spot) == 0.5
    assert _estop_after("never", spot) is None and _estop_after(-1.0, spot) is None
    never = spot.model_copy(update={"sim": spot.sim.model_copy(update={"estop_registered_after": None})})
    assert _estop_after("", never) is None
    assert _estop_check("soon") == "estop_registered_after must be seconds, 'never' or empty, not 'soon'"
    assert _estop_check("nan") is not None and _estop_check(3.0) is None
