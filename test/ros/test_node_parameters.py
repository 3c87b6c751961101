"""Node parameters are the nodes' configuration: checked when a node starts and on every ``set_parameters``
(a plain rclpy client's NaN, 0, garbage is refused with a reason and the values stay); a value set, or given
in a ``--params-file``, takes effect when the node is configured (cleanup, then configure); a non-finite
number given at start-up stops the node with a one-line error (exit 2); an oversized id on /homiebot/cancel
is ignored with a bounded log line.

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
    client = node.create_client(kind, f"/homiebot/recorder/{name}")
    assert client.wait_for_service(timeout_sec=60), f"no /homiebot/recorder/{name}"
    future = client.call_async(request)
    rclpy.spin_until_future_complete(node, future, timeout_sec=30)
    return future.result()

double = ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=math.nan)
integer = ParameterValue(type=ParameterType.PARAMETER_INTEGER, integer_value=0)  # of the wrong type, too
text = ParameterValue(type=ParameterType.PARAMETER_STRING, string_value="{not: a file}" * 8)
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
    reasons = [reason for _, reason in answer["set"]]
    assert "must be a finite number" in reasons[0] and reasons[1] and "no such file" in reasons[2], answer
    assert answer["now"] == [0.1, 2.0, ""], answer


RECONFIGURE = """
import json, sys, time
import rclpy
from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState
from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

rclpy.init()
node = rclpy.create_node("plain_reconfigurer")
names = []
latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
node.create_subscription(String, "/homiebot/planner/backend", lambda m: names.append(m.data), latched)

def call(kind, name, request):
    client = node.create_client(kind, name)
    assert client.wait_for_service(timeout_sec=120), name
    future = client.call_async(request)
    rclpy.spin_until_future_complete(node, future, timeout_sec=60)
    return future.result()

def backend(count):
    end = time.monotonic() + 60
    while len(names) < count and time.monotonic() < end:
        rclpy.spin_once(node, timeout_sec=0.1)
    return names[-1] if names else None

seen = {"started": backend(1)}
value = ParameterValue(type=ParameterType.PARAMETER_STRING, string_value="heuristic")
result = call(SetParameters, "/homiebot/planner/set_parameters", SetParameters.Request(parameters=[Parameter(name="backend", value=value)]))
seen["set"] = [result.results[0].successful, result.results[0].reason]
time.sleep(1.0)
rclpy.spin_once(node, timeout_sec=0.1)
seen["before"] = names[-1]
for transition in (Transition.TRANSITION_DEACTIVATE, Transition.TRANSITION_CLEANUP, Transition.TRANSITION_CONFIGURE,
                   Transition.TRANSITION_ACTIVATE):
    assert call(ChangeState, "/homiebot/planner/change_state", ChangeState.Request(transition=Transition(id=transition))).success, transition
seen["after"] = backend(2)
print(json.dumps(seen))
"""


def test_a_params_file_and_a_set_parameter_take_effect_through_cleanup_and_configure(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text("/homiebot/planner:\n  ros__parameters:\n    backend: oracle\n")
    env = ros_environment(DOMAIN)
    log = tmp_path / "planner.log"
    with log.open("w") as sink:
        node = subprocess.Popen([sys.executable, "-m", "homiebot.ros.nodes.planner", "--ros-args", "-r", "__ns:=/homiebot",
                                 "--params-file", str(params)], cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT)
    try:
        done = subprocess.run([sys.executable, "-c", RECONFIGURE], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    finally:
        node.terminate()
        status = node.wait(30)
    assert done.returncode == 0, done.stderr[-2000:]
    # stopping after a cleanup cycle: once a ValueError in destroy_node (the heartbeat's QoS handlers were taken by cleanup)
    assert status == 0 and "Traceback" not in log.read_text(), log.read_text()[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["started"] == "oracle"  # the file's value, over the default
    assert seen["set"][0] is True, seen
    assert seen["before"] == "oracle" and seen["after"] == "heuristic", seen


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


SETTINGS = """
import json, sys, time
import rclpy
from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState
from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
from rcl_interfaces.srv import DescribeParameters, GetParameters, ListParameters, SetParameters
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

rclpy.init()
node = rclpy.create_node("plain_settings_client")
names = []
latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
node.create_subscription(String, "/homiebot/planner/backend", lambda m: names.append(m.data), latched)

def call(kind, name, request):
    client = node.create_client(kind, "/homiebot/planner/" + name)
    assert client.wait_for_service(timeout_sec=120), name
    future = client.call_async(request)
    rclpy.spin_until_future_complete(node, future, timeout_sec=60)
    return future.result()

def backend(count):
    end = time.monotonic() + 60
    while len(names) < count and time.monotonic() < end:
        rclpy.spin_once(node, timeout_sec=0.1)
    return names[-1] if names else None

def text(value):
    return ParameterValue(type=ParameterType.PARAMETER_STRING, string_value=value)

seen = {"started": backend(1)}
seen["names"] = sorted(call(ListParameters, "list_parameters", ListParameters.Request()).result.names)
values = call(GetParameters, "get_parameters", GetParameters.Request(names=["planner.name", "world.params.width", "perception.mode"])).values
seen["values"] = [values[0].string_value, values[1].integer_value, values[2].string_value]
described = call(DescribeParameters, "describe_parameters", DescribeParameters.Request(names=["perception.mode"])).descriptors[0]
seen["described"] = [described.description, described.additional_constraints]
refused = call(SetParameters, "set_parameters", SetParameters.Request(parameters=[Parameter(name="perception.mode", value=text("psychic"))]))
seen["refused"] = [refused.results[0].successful, refused.results[0].reason]
taken = call(SetParameters, "set_parameters", SetParameters.Request(parameters=[Parameter(name="planner.name", value=text("heuristic"))]))
seen["taken"] = taken.results[0].successful
for transition in (Transition.TRANSITION_DEACTIVATE, Transition.TRANSITION_CLEANUP, Transition.TRANSITION_CONFIGURE,
                   Transition.TRANSITION_ACTIVATE):
    assert call(ChangeState, "change_state", ChangeState.Request(transition=Transition(id=transition))).success, transition
seen["after"] = backend(2)
print(json.dumps(seen))
"""


def test_the_run_configurations_settings_are_the_nodes_parameters(tmp_path):
    """The planner node declares the settings of the sections it reads, with the config file's values; a params file
    changes one of them; a value the configuration refuses is refused with the reason; a value it takes applies at
    the next configure."""
    config = tmp_path / "run.yaml"
    config.write_text("planner: {name: oracle}\nworld: {name: embedded_home, params: {width: 256, height: 256}}\n")
    params = tmp_path / "params.yaml"
    params.write_text(f"/homiebot/planner:\n  ros__parameters:\n    config: {config}\n    world:\n      params: {{width: 128}}\n")
    env = ros_environment(DOMAIN)
    log = tmp_path / "planner.log"
    with log.open("w") as sink:
        node = subprocess.Popen([sys.executable, "-m", "homiebot.ros.nodes.planner", "--ros-args", "-r", "__ns:=/homiebot",
                                 "--params-file", str(params)], cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT)
    try:
        done = subprocess.run([sys.executable, "-c", SETTINGS], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    finally:
        node.terminate()
        status = node.wait(30)
    assert done.returncode == 0, done.stderr[-2000:] + log.read_text()[-2000:]
    assert status == 0 and "Traceback" not in log.read_text(), log.read_text()[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["started"] == "oracle"  # the config file's
    assert {"planner.name", "planner.params", "world.params.width", "perception.mode", "memory"} <= set(seen["names"])
    assert not any(n.startswith(("detector.", "safety.")) for n in seen["names"]), seen["names"]  # not sections it reads
    assert seen["values"] == ["oracle", 128, "oracle"]  # the file's, the params file's, the default
    assert seen["described"][0].startswith("oracle: simulator truth") and seen["described"][1] == "one of oracle, mapped"
    assert seen["refused"][0] is False and "perception.mode: Input should be 'oracle' or 'mapped'" in seen["refused"][1], seen
    assert seen["taken"] is True and seen["after"] == "heuristic", seen


def test_up_prints_what_each_node_gets_from_a_configuration(tmp_path):
    import yaml

    config = tmp_path / "run.yaml"
    config.write_text("planner: {name: oracle}\ndetector: {far: 2.5}\n")
    done = subprocess.run([sys.executable, "-m", "homiebot.cli", "up", "--config", str(config), "--namespace", "lab",
                           "--print-params"], cwd=tmp_path, env=ros_environment(DOMAIN), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    printed = yaml.safe_load(done.stdout)
    detector = printed["/lab/detector"]["ros__parameters"]
    assert detector["config"] == str(config) and detector["detector"] == {"far": 2.5, "near": 0.1, "suggest_names": True}
    assert printed["/lab/planner"]["ros__parameters"]["planner"] == {"name": "oracle", "params": "{}"}
    assert "detector" not in printed["/lab/planner"]["ros__parameters"]  # a section it does not read
    assert printed["/lab/recorder"]["ros__parameters"] == {"config": str(config)}
    assert not list(tmp_path.glob("runs"))  # nothing started, nothing written


@pytest.mark.parametrize("text, message", [
    ("/homiebot/detector:\n  ros__parameters:\n    detector: {fra: 3.0}\n",
     "/homiebot/detector has no parameter 'detector.fra'; did you mean 'detector.far'?"),
    ("/**:\n  ros__parameters:\n    memory: {root: memories}\n",
     "/** has no parameter 'memory.root'; 'memory' takes YAML text"),
    ("/robot1/planner:\n  ros__parameters:\n    backend: oracle\n",
     "/robot1/planner is not a node of this graph; its planner node is /homiebot/planner"),
])
def test_a_params_file_naming_a_parameter_no_node_has_is_refused_before_anything_starts(tmp_path, text, message):
    params = tmp_path / "params.yaml"
    params.write_text(text)
    done = subprocess.run([sys.executable, "-m", "homiebot.cli", "up", "--params-file", str(params), "--out", str(tmp_path / "runs")],
                          cwd=tmp_path, env=ros_environment(DOMAIN), capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert not (tmp_path / "runs").exists()
