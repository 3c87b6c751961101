"""Node parameters are checked when a node starts and cannot be changed under it: a plain rclpy client's
``set_parameters`` (NaN, 0, garbage) is refused with a reason and the values stay; a non-finite number
given at start-up stops the node with a one-line error (exit 2); an oversized id on /homiebot/cancel is
ignored with a bounded log line.

Localhost-only discovery, a ROS_DOMAIN_ID of its own (188-190)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from homiebot.ros.kit.environment import ros_environment  # noqa: E402
from test.ros_domains import domain_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DOMAIN = domain_of(__name__)

# a client that knows only rclpy and rcl_interfaces
CLIENT = """
import json, math, sys, time
import rclpy
from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
from rcl_interfaces.srv import GetParameters, SetParameters

rclpy.init()
node = rclpy.create_node("plain_parameter_client")

def call(kind, name, request):
    client = node.create_client(kind, f"/recorder/{name}")
    assert client.wait_for_service(timeout_sec=60), f"no /recorder/{name}"
    future = client.call_async(request)
    rclpy.spin_until_future_complete(node, future, timeout_sec=30)
    return future.result()

double = ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=math.nan)
integer = ParameterValue(type=ParameterType.PARAMETER_INTEGER, integer_value=0)  # of the wrong type, too
text = ParameterValue(type=ParameterType.PARAMETER_STRING, string_value="\\x00" * 64)
request = SetParameters.Request(parameters=[Parameter(name="settle_quiet", value=double),
                                            Parameter(name="settle_limit", value=integer),
                                            Parameter(name="config", value=text)])
results = call(SetParameters, "set_parameters", request).results
values = call(GetParameters, "get_parameters", GetParameters.Request(names=["settle_quiet", "settle_limit", "config"])).values
print(json.dumps({"set": [[r.successful, r.reason] for r in results],
                  "now": [values[0].double_value, values[1].double_value, values[2].string_value]}))
"""


def test_set_parameters_is_refused_with_a_reason_and_changes_nothing(tmp_path):
    env = ros_environment(DOMAIN)
    node = subprocess.Popen([sys.executable, "-m", "homiebot.ros.nodes.recorder"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        done = subprocess.run([sys.executable, "-c", CLIENT], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    finally:
        node.terminate()
        node.wait(30)
    assert done.returncode == 0, done.stderr[-2000:]
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert [ok for ok, _ in answer["set"]] == [False, False, False]
    assert all("read-only" in reason or "read only" in reason for _, reason in answer["set"]), answer
    assert answer["now"] == [0.1, 2.0, ""], answer


def test_a_non_finite_number_at_start_up_stops_the_node_with_one_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "homiebot.ros.nodes.recorder", "--ros-args", "-p", "settle_quiet:=.inf"],
                          cwd=ROOT, env=ros_environment(DOMAIN), capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "parameter 'settle_quiet' = inf: must be a finite number" in done.stderr and "Traceback" not in done.stderr


FLOOD = """
import time, rclpy
from std_msgs.msg import String
rclpy.init()
node = rclpy.create_node("plain_cancel_flood")
pub = node.create_publisher(String, "/homiebot/cancel", 10)
end = time.monotonic() + 60
while pub.get_subscription_count() == 0:
    assert time.monotonic() < end, "nobody subscribes to /homiebot/cancel"
    time.sleep(0.1)
for _ in range(5):
    pub.publish(String(data="x" * 2_000_000))
    time.sleep(0.05)
time.sleep(2)
print("sent", flush=True)
"""


def test_an_oversized_cancel_is_ignored_in_a_bounded_log_line(tmp_path):
    """Before, each 2 MB id on /homiebot/cancel was logged whole ("no such episode"): 200 of them grew the log by 400 MB."""
    env = ros_environment(DOMAIN)
    log = tmp_path / "task_manager.log"
    with open(log, "w") as out:
        node = subprocess.Popen([sys.executable, "-m", "homiebot.ros.nodes.task_manager", "--ros-args", "-p", f"out_dir:={tmp_path / 'runs'}",
                                 "-p", "record_bag:=false"], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        done = subprocess.run([sys.executable, "-c", FLOOD], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        alive = node.poll() is None
    finally:
        node.terminate()
        node.wait(30)
    assert done.returncode == 0 and "sent" in done.stdout, done.stderr[-2000:]
    text = log.read_text()
    assert alive and text.count("ignored an id of 2000000 characters") == 5, text[-2000:]
    assert len(text) < 20_000, f"the log grew to {len(text)} characters"
