"""The embedded home served as a Fetch driver: its FollowJointTrajectory, GripperCommand and PointHead
action servers, its joint_states and its head camera, checked by a plain rclpy client that does not import homiebot and
knows only the Fetch drivers' names and control_msgs (the package ``make`` builds)."""

from __future__ import annotations

import json
import math
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
from rclpy.action import ActionClient
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from builtin_interfaces.msg import Duration
from action_msgs.msg import GoalStatus
from sensor_msgs.msg import Image, JointState
from trajectory_msgs.msg import JointTrajectoryPoint
from control_msgs.action import FollowJointTrajectory, GripperCommand, PointHead

ARM = ["shoulder_pan_joint", "shoulder_lift_joint", "upperarm_roll_joint", "elbow_flex_joint", "forearm_roll_joint",
       "wrist_flex_joint", "wrist_roll_joint"]
rclpy.init()
node = Node("fetch_client")
seen = {}
node.create_subscription(JointState, "/joint_states", lambda m: seen.__setitem__("joints", dict(zip(m.name, m.position))), 10)
arm = ActionClient(node, FollowJointTrajectory, "/arm_controller/follow_joint_trajectory")
gripper = ActionClient(node, GripperCommand, "/gripper_controller/gripper_action")
head = ActionClient(node, PointHead, "/head_controller/point_head")
node.create_subscription(Image, "/head_camera/rgb/image_raw", lambda m: seen.__setitem__("image", (m.header.stamp.sec * 10**9 + m.header.stamp.nanosec, bytes(m.data))), 10)
executor = SingleThreadedExecutor()
executor.add_node(node)
spinner = threading.Thread(target=executor.spin, daemon=True)
spinner.start()

def done(future, limit=30):
    end = time.time() + limit
    while not future.done():
        if time.time() > end:
            sys.exit("no answer")
        time.sleep(0.01)
    return future.result()

def send(client, goal):
    handle = done(client.send_goal_async(goal))
    assert handle.accepted
    return done(handle.get_result_async()).result

def trajectory(names, positions, seconds=0.5):
    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = names
    goal.trajectory.points = [JointTrajectoryPoint(positions=positions, time_from_start=Duration(sec=0, nanosec=int(seconds * 1e9)))]
    return goal

assert arm.wait_for_server(timeout_sec=60) and gripper.wait_for_server(timeout_sec=60)
end = time.time() + 30
while "joints" not in seen and time.time() < end:
    time.sleep(0.05)
out = {"names": sorted(seen["joints"])}
q0 = [seen["joints"][n] for n in ARM]
turned = list(q0)
turned[0] += 0.15  # the shoulder pan: the hand swings to the left
r = send(arm, trajectory(list(reversed(ARM)), list(reversed(turned))))  # any joint order
time.sleep(0.2)
out["turn"] = {"code": r.error_code, "text": r.error_string, "pan_before": q0[0], "pan_after": seen["joints"]["shoulder_pan_joint"]}
r = send(arm, trajectory(["a", "b"], [0.0, 0.0]))
out["names_wrong"] = [r.error_code, r.error_string]
r = send(arm, trajectory(ARM, [math.nan] * 7))
out["nan"] = [r.error_code, r.error_string]
bent = list(q0)
bent[3] = 3.0
r = send(arm, trajectory(ARM, bent))
out["limits"] = [r.error_code, r.error_string]
goal = FollowJointTrajectory.Goal()
goal.trajectory.joint_names = ARM
r = send(arm, goal)
out["no_points"] = [r.error_code, r.error_string]
for name, position in (("close", 0.0), ("open", 0.1)):
    g = GripperCommand.Goal()
    g.command.position, g.command.max_effort = position, 60.0
    r = send(gripper, g)
    out[name] = {"position": r.position, "stalled": r.stalled, "reached": r.reached_goal}

def look(x, y, z, frame="base_link"):
    g = PointHead.Goal()
    g.target.header.frame_id = frame
    g.target.point.x, g.target.point.y, g.target.point.z = x, y, z
    g.pointing_axis.z, g.pointing_frame = 1.0, "head_camera_rgb_optical_frame"
    g.min_duration, g.max_velocity = Duration(sec=0, nanosec=200_000_000), 1.57
    feedback = []
    handle = done(head.send_goal_async(g, feedback_callback=lambda f: feedback.append(f.feedback.pointing_angle_error)))
    assert handle.accepted
    r = done(handle.get_result_async())
    time.sleep(0.3)  # joint states and an image from after the turn
    return {"status": r.status, "error": feedback[-1] if feedback else None, "pan": seen["joints"]["head_pan_joint"],
            "tilt": seen["joints"]["head_tilt_joint"], "image": seen["image"][1]}

assert head.wait_for_server(timeout_sec=60)
front0 = look(3.0, 0.0, 1.0)
left = look(0.0, 3.0, 1.0)
back = look(-3.0, 0.0, 1.0)  # behind: the pan stops at its limit
front = look(3.0, 0.0, 1.0)
wrong = look(1.0, 0.0, 1.0, frame="map")
out["head"] = {"front0": [front0["status"], front0["pan"], front0["tilt"]], "left": [left["status"], left["pan"], left["tilt"]],
               "back": [back["status"], back["pan"], back["error"]], "front": [front["status"], front["pan"]],
               "left_differs": left["image"] != front0["image"], "front_again": front["image"] == front0["image"],
               "wrong_frame": [wrong["status"], wrong["pan"]], "succeeded": GoalStatus.STATUS_SUCCEEDED,
               "aborted": GoalStatus.STATUS_ABORTED}
print(json.dumps(out), flush=True)
executor.shutdown(timeout_sec=2)  # before the interpreter goes, or rcl aborts in its wait
spinner.join(2)
node.destroy_node()
rclpy.try_shutdown()
'''


def test_the_sim_driver_serves_fetchs_arm_and_gripper_actions_to_a_plain_client() -> None:
    env = ros_environment(DOMAIN)
    driver = subprocess.Popen([sys.executable, "-m", "homiebot.ros.nodes.sim_driver", "--ros-args", "-p", "robot:=fetch",
                               "-p", f"scene:={ROOT / 'config' / 'scenes' / 'demo.yaml'}", "-p", "camera_size:=30x40"],
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        out = subprocess.run([sys.executable, "-c", CLIENT], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    finally:
        driver.terminate()  # a process we started
        _, err = driver.communicate(timeout=30)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "Traceback" not in err, err[-2000:]
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["names"] == sorted(["torso_lift_joint", "head_pan_joint", "head_tilt_joint", "shoulder_pan_joint", "shoulder_lift_joint", "upperarm_roll_joint",
                                 "elbow_flex_joint", "forearm_roll_joint", "wrist_flex_joint", "wrist_roll_joint"])
    turn = r["turn"]
    assert turn["code"] == 0 and turn["text"] == "", turn  # SUCCESSFUL: the home's hand is where Fetch's would be
    assert turn["pan_after"] == pytest.approx(turn["pan_before"] + 0.15, abs=0.03)  # joint_states follow the arm
    assert r["names_wrong"][0] == -2 and "are not the arm's" in r["names_wrong"][1]  # INVALID_JOINTS
    assert r["nan"][0] == -2 and "finite" in r["nan"][1]
    assert r["limits"][0] == -2 and "outside the joint limits of ['elbow_flex_joint']" in r["limits"][1]
    assert r["no_points"][0] == -2 and "without points" in r["no_points"][1]
    assert r["close"] == {"position": 0.0, "stalled": False, "reached": True}  # closed on nothing
    assert r["open"]["position"] == pytest.approx(0.1) and r["open"]["reached"] is True
    h = r["head"]  # PointHead turns the head (joint_states follow) and the head camera sees the view the pan faces
    ok, aborted = h["succeeded"], h["aborted"]
    assert h["front0"][0] == ok and h["front0"][1] == pytest.approx(0.0, abs=1e-6) and 0.05 < h["front0"][2] < 0.2  # a little down
    assert h["left"][0] == ok and h["left"][1] == pytest.approx(math.atan2(3.0, 0.086875 - 0.053125), abs=1e-3)
    assert h["left_differs"] and h["front_again"]  # the left view, then the front view again
    assert h["back"][0] == ok and abs(h["back"][1]) == pytest.approx(1.57) and h["back"][2] > 1.5  # it cannot look back
    assert h["front"][0] == ok and h["front"][1] == pytest.approx(0.0, abs=1e-6)
    assert h["wrong_frame"] == [aborted, pytest.approx(0.0, abs=1e-6)]  # no tf in simulation: a target in map is refused
