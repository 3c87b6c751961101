"""The embedded home served as a Spot driver, checked by a plain rclpy client that does not import homiebot
and knows only spot_ros2's names and types (written here, not read from the profile)."""

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

CLIENT = r'''
import json, math, sys, threading, time
import rclpy
from rclpy.node import Node
from rclpy.executors import SingleThreadedExecutor
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from sensor_msgs.msg import CameraInfo, Image, JointState
from std_srvs.srv import Trigger

rclpy.init()
node = Node("spot_client")
seen = {"odom": None, "images": {}, "info": {}, "joints": 0}
def on_odom(m):
    seen["odom"] = (m.pose.pose.position.x, m.pose.pose.position.y, m.header.frame_id, m.child_frame_id)
node.create_subscription(Odometry, "/spot/odometry", on_odom, 10)
node.create_subscription(JointState, "/spot/joint_states", lambda m: seen.__setitem__("joints", seen["joints"] + 1), 10)
for cam in ("frontleft", "back", "hand"):
    node.create_subscription(Image, f"/spot/camera/{cam}/image",
                             lambda m, c=cam: seen["images"].__setitem__(c, (m.encoding, m.height, m.width, len(m.data))), 5)
    node.create_subscription(CameraInfo, f"/spot/camera/{cam}/camera_info",
                             lambda m, c=cam: seen["info"].__setitem__(c, (m.height, m.width, list(m.k))), 5)
seen["raw"] = None
def keep_raw(m):
    seen["raw"] = (m.height, m.width, bytes(m.data))
node.create_subscription(Image, "/spot/camera/frontleft/image", keep_raw, 5)
cmd = node.create_publisher(Twist, "/spot/cmd_vel", 10)
clients = {s: node.create_client(Trigger, f"/spot/{s}") for s in ("claim", "power_on", "stand", "estop/gentle")}
executor = SingleThreadedExecutor()
executor.add_node(node)
spinner = threading.Thread(target=executor.spin, daemon=True)
spinner.start()

def wait(cond, limit, what):
    end = time.time() + limit
    while time.time() < end:
        if cond():
            return
        time.sleep(0.02)
    sys.exit(f"timed out waiting for {what}: {seen}")

def call(name):
    assert clients[name].wait_for_service(timeout_sec=60), name
    future = clients[name].call_async(Trigger.Request())
    wait(future.done, 30, f"the {name} service")
    return future.result().success

def drive(v, seconds):
    end = time.time() + seconds
    while time.time() < end:
        cmd.publish(Twist(linear=Twist().linear.__class__(x=v)))
        time.sleep(0.05)

wait(lambda: seen["odom"] and len(seen["images"]) == 3 and len(seen["info"]) == 3 and seen["raw"] and cmd.get_subscription_count(),
     120, "the driver")
out = {"frames": seen["odom"][2:], "images": seen["images"], "info": {c: v[:2] for c, v in seen["info"].items()}}
h, w, data = seen["raw"]
corners = [data[0], data[w - 1], data[(h - 1) * w], data[h * w - 1]]
out["frontleft_corners"] = min(corners)  # a sensor's corners see something: never the 0 of a turned render's gap
out["frontleft_zero_fraction"] = data.count(0) / len(data)
def where():
    return seen["odom"][:2]
def moved(since):
    return math.dist(since, where())
start = where()
drive(0.3, 1.0)
out["moved_unpowered"] = moved(start)
out["stand_unpowered"] = call("stand")
out["claim"], out["power_on"], out["stand"] = call("claim"), call("power_on"), call("stand")
start = where()
drive(0.3, 1.5)
out["moved_powered"] = moved(start)
time.sleep(1.0)  # no new cmd_vel: the driver's timeout stops the base
settled = where()
time.sleep(1.0)
out["drift_after_timeout"] = moved(settled)
out["estop"] = call("estop/gentle")
start = where()
drive(0.3, 1.0)
out["moved_after_estop"] = moved(start)
out["joint_states"] = seen["joints"]
# the simulator-only services, typed (homiebot_msgs), with an error code in every answer
from homiebot_msgs.msg import PolicyCommand, Subtask
from homiebot_msgs.srv import GoalSatisfied, SimExpertAct, SimExpertReset, SimMode, SimStep, SimTruth
def sim(kind, name, request):
    client = node.create_client(kind, f"/homiebot/sim/{name}")
    assert client.wait_for_service(timeout_sec=60), name
    future = client.call_async(request)
    wait(future.done, 30, f"the sim {name} service")
    return future.result()
mode = sim(SimMode, "mode", SimMode.Request())
out["mode"] = [mode.error_code, mode.lockstep]
# the simulator's truth, typed: the service's and the topic's (homiebot_msgs/GroundTruth)
from homiebot_msgs.msg import GroundTruth
def truth_facts(t):
    names = {e.name: e for e in t.belief.entities}
    return [t.robot, t.header.stamp.sec > 0, "fridge" in names and names["fridge"].kind == "receptacle",
            len(json.loads(t.dynamic)["robot"]), len(t.labels) > 0, {c.key for c in t.counters} >= {"cmd_vel"}]
out["truth"] = truth_facts(sim(SimTruth, "truth", SimTruth.Request()).truth)
topic_truth = []
node.create_subscription(GroundTruth, "/homiebot/sim/ground_truth", topic_truth.append, 5)
wait(lambda: topic_truth, 30, "a message on /homiebot/sim/ground_truth")
out["topic_truth"] = truth_facts(topic_truth[0])
step = sim(SimStep, "step", SimStep.Request(seconds=0.5))
out["step_in_real_time"] = [step.error_code == SimStep.Response.INVALID_REQUEST, step.error_msg]
act = sim(SimExpertAct, "expert/act", SimExpertAct.Request())
out["act_before_reset"] = [act.error_code == SimExpertAct.Response.INVALID_REQUEST, act.error_msg]
bad = sim(GoalSatisfied, "goal", GoalSatisfied.Request(goal="{not json"))
out["bad_goal"] = [bad.error_code == GoalSatisfied.Response.INVALID_REQUEST, bad.error_msg]
goal = sim(GoalSatisfied, "goal", GoalSatisfied.Request(goal=json.dumps([{"kind": "object_at", "object": "green_can", "receptacle": "fridge"}])))
out["goal"] = [goal.error_code, goal.known, goal.satisfied]
unknown = sim(SimExpertReset, "expert/reset", SimExpertReset.Request(policy="no_such_expert", subtask=Subtask(action="Go to", target="kitchen")))
out["unknown_expert"] = unknown.error_code == SimExpertReset.Response.INVALID_REQUEST
garbage = sim(SimExpertReset, "expert/reset", SimExpertReset.Request(policy="expert_waypoints", subtask=Subtask(action="Fly", target="x")))
out["garbage_subtask"] = [garbage.error_code == SimExpertReset.Response.INVALID_REQUEST, garbage.error_msg]
reset = sim(SimExpertReset, "expert/reset", SimExpertReset.Request(policy="expert_waypoints", subtask=Subtask(action="Go to", target="kitchen")))
out["reset"] = [reset.error_code, reset.family]
act = sim(SimExpertAct, "expert/act", SimExpertAct.Request(step=0))
out["act"] = [act.error_code, len(act.commands) > 0 and act.commands[0].kind == PolicyCommand.WAYPOINTS]
print(json.dumps(out), flush=True)
executor.shutdown()
spinner.join(timeout=10)
node.destroy_node()
rclpy.try_shutdown()
'''


@pytest.fixture(scope="module")
def client_view(tmp_path_factory):
    env = ros_environment(DOMAIN)
    script = tmp_path_factory.mktemp("client") / "client.py"
    script.write_text(CLIENT)
    scene = ROOT / "config" / "scenes" / "demo.yaml"
    driver = subprocess.Popen([sys.executable, "-m", "homiebot.ros.nodes.sim_driver", "--ros-args", "-p", "robot:=spot",
                               "-p", f"scene:={scene}", "-p", "camera_size:=60x80"], cwd=ROOT, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        run = subprocess.run([sys.executable, str(script)], cwd="/", env=env, capture_output=True, text=True, timeout=300)
    finally:
        driver.terminate()  # a process we started
        try:
            _, err = driver.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            driver.kill()
            _, err = driver.communicate()
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:] + err[-3000:]
    assert driver.returncode == 0 and "Traceback" not in err, err[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_streams_carry_spot_names_encodings_and_mountings(client_view) -> None:
    assert client_view["frames"] == ["spot/odom", "spot/body"]  # spot_ros2's, with its frame prefix (robot_state.cpp, getOdom)
    images = client_view["images"]
    # spot_ros2's default rgb_cameras: true: bgr8 from every camera (a decoded JPEG), at the published size
    # (camera_size) as the sensor gives it: turned as mounted, not upright
    assert images["frontleft"][:3] == ["bgr8", 60, 80] and images["frontleft"][3] == 60 * 80 * 3
    assert images["back"][:3] == ["bgr8", 60, 80] and images["hand"][:3] == ["bgr8", 60, 80]
    assert images["hand"][3] == 60 * 80 * 3
    assert client_view["info"]["frontleft"] == [60, 80] and client_view["joint_states"] > 10


def test_a_turned_camera_fills_its_whole_frame_as_a_sensor_does(client_view) -> None:
    """The front cameras are rendered upright, larger, and turned into the published frame: no empty corners."""
    assert client_view["frontleft_corners"] > 0 and client_view["frontleft_zero_fraction"] < 0.01


def test_cmd_vel_moves_the_base_only_after_power_on_and_stand(client_view) -> None:
    assert abs(client_view["moved_unpowered"]) < 1e-6 and client_view["stand_unpowered"] is False
    assert client_view["claim"] and client_view["power_on"] and client_view["stand"]
    assert client_view["moved_powered"] > 0.15  # about 0.3 m/s for 1.5 s, less what discovery and timing take


def test_the_simulator_services_are_typed_and_refuse_garbage_with_a_code(client_view) -> None:
    v = client_view
    assert v["mode"] == [0, False] and v["truth"] == v["topic_truth"] == ["spot", True, True, 3, True, True]
    assert v["step_in_real_time"][0] and "runs in real time" in v["step_in_real_time"][1]
    assert v["act_before_reset"][0] and "call expert/reset first" in v["act_before_reset"][1]
    assert v["bad_goal"][0] and "goal is not JSON" in v["bad_goal"][1]
    assert v["goal"] == [0, True, False]  # the can is not in the fridge at the start
    assert v["unknown_expert"] and v["garbage_subtask"][0] and "subtask" in v["garbage_subtask"][1]
    assert v["reset"] == [0, "nomad"] and v["act"] == [0, True]


def test_the_base_stops_without_new_cmd_vel_and_after_an_estop(client_view) -> None:
    assert abs(client_view["drift_after_timeout"]) < 1e-6
    assert client_view["estop"] and abs(client_view["moved_after_estop"]) < 1e-6
