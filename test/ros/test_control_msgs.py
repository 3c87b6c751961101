"""The control_msgs package that ``make`` builds (tools/build_interfaces.py): Fetch's arm, gripper and
head actions across processes, with the wire types of the real control_msgs.

A plain rclpy server (it never imports homiebot) serves the three actions under the Fetch drivers'
names in a process of its own; this process's plain rclpy clients send goals and read feedback and
results. The RIHS01 type hashes the server's endpoints announce on the wire are compared with the
hashes of the upstream control_msgs definitions (Jazzy branch, 5.x), computed with rosidl's type
description generator and written here. Localhost discovery and a ROS_DOMAIN_ID of their own (2-4).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

import rclpy  # noqa: E402
from action_msgs.msg import GoalStatus  # noqa: E402
from builtin_interfaces.msg import Duration  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402
from trajectory_msgs.msg import JointTrajectoryPoint  # noqa: E402

from homiebot.ros.kit.services import OrderedActionClient  # noqa: E402
from test.ros_domains import domain_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DOMAIN = domain_of(__name__)
try:
    from control_msgs.action import FollowJointTrajectory, GripperCommand, PointHead
    from control_msgs.msg import GripperCommand as GripperCommandMsg
    from control_msgs.msg import JointTolerance
except ImportError as error:  # make builds it: its absence is a failure, not a skip
    pytest.fail(f"control_msgs is not built ({error}): run `make setup` or "
                f"`{sys.executable} tools/build_interfaces.py`", pytrace=False)

ARM = "arm_controller/follow_joint_trajectory"
GRIPPER = "gripper_controller/gripper_action"
HEAD = "head_controller/point_head"
FETCH_ARM_JOINTS = ["shoulder_pan_joint", "shoulder_lift_joint", "upperarm_roll_joint", "elbow_flex_joint",
                    "forearm_roll_joint", "wrist_flex_joint", "wrist_roll_joint"]
# RIHS01 hashes of the upstream definitions (ros-controls/control_msgs, jazzy branch), as rosidl computes them.
UPSTREAM_HASHES = {
    "control_msgs/action/FollowJointTrajectory_FeedbackMessage":
        "RIHS01_80398fcb9674a79081a9906e2ccf0c804dd7cb15e22e362e606ee87186beab71",
    "control_msgs/action/GripperCommand_FeedbackMessage":
        "RIHS01_392ff03fcd872f9dc2405cbeb2897fcf011ad9998458b6aa85c603b8a49e431d",
    "control_msgs/action/PointHead_FeedbackMessage":
        "RIHS01_b1f724f986375e8f9cf96246c232cdb29362398ce352c645e2af8f99b28743f2",
}
UPSTREAM_TYPE_HASHES = {
    "control_msgs/action/FollowJointTrajectory": "RIHS01_738ebcb7a2d7cfa42f9f1001cc99ce3a4383d1cfe508015d9be8485e4b1c66f6",
    "control_msgs/action/FollowJointTrajectory_Goal": "RIHS01_8a9060704b269608f5a340934cc26e66869dd14bdac29e2e7fd9ec8b9882d205",
    "control_msgs/action/FollowJointTrajectory_SendGoal_Request":
        "RIHS01_179c93691f1f6d1d115881ff88c3917b7cc6eac2ba4bf56766cc7c4389e19ef1",
    "control_msgs/action/GripperCommand": "RIHS01_e17c0e644eccf14bea84a0a93e0977182872c2eb7873ca6694900059b46dbc84",
    "control_msgs/action/PointHead": "RIHS01_7074c3bddad393f3db72da02a8bb0fe3d832c21447452694b496965bdbfc9cc1",
    "control_msgs/msg/JointTolerance": "RIHS01_c254f9cece0f3b733017b6990fd46d1326e25242d6b8844398c97d9a88e7d648",
    "control_msgs/msg/JointComponentTolerance": "RIHS01_739ea7566931944d33830fa10f1bf5e7a7fbdc3172bce7a7eaac642bd6e3ffa4",
    "control_msgs/msg/GripperCommand": "RIHS01_57eb8f326c9889ca8bb34ead82cc94cc09bf6bc5c3b6c09546dca3a00b589890",
}

# A stand-in for Fetch's controllers, written as a third party would with rclpy and control_msgs only.
SERVER = r"""
import math, sys, rclpy
from rclpy.action import ActionServer
from rclpy.node import Node
from control_msgs.action import FollowJointTrajectory, GripperCommand, PointHead

ARM_JOINTS = sys.argv[1].split(",")
rclpy.init()
node = Node("fetch_controllers")

def follow(handle):
    goal = handle.request
    result = FollowJointTrajectory.Result()
    unknown = [j for j in goal.trajectory.joint_names if j not in ARM_JOINTS]
    if unknown or not goal.trajectory.joint_names:
        handle.abort()
        result.error_code = FollowJointTrajectory.Result.INVALID_JOINTS
        result.error_string = f"unknown joints {unknown}"
        return result
    for point in goal.trajectory.points:
        feedback = FollowJointTrajectory.Feedback()
        feedback.header.frame_id = "base_link"
        feedback.joint_names = list(goal.trajectory.joint_names)
        feedback.desired = point
        feedback.actual = point
        handle.publish_feedback(feedback)
    handle.succeed()
    tol = {t.name: t.position for t in goal.goal_tolerance}
    result.error_code = FollowJointTrajectory.Result.SUCCESSFUL
    result.error_string = f"{len(goal.trajectory.points)} points, tolerances {tol}, late by {goal.goal_time_tolerance.sec} s"
    return result

def grip(handle):
    cmd = handle.request.command
    position = min(max(cmd.position, 0.0), 0.1)  # Fetch's gripper opens 0 to 0.1 m
    feedback = GripperCommand.Feedback(position=position, effort=cmd.max_effort, stalled=False, reached_goal=True)
    handle.publish_feedback(feedback)
    handle.succeed()
    return GripperCommand.Result(position=position, effort=cmd.max_effort, stalled=False,
                                 reached_goal=position == cmd.position)

def point(handle):
    goal = handle.request
    target = goal.target.point
    error = math.atan2(target.y, target.x)
    handle.publish_feedback(PointHead.Feedback(pointing_angle_error=error))
    handle.succeed()
    return PointHead.Result()

ActionServer(node, FollowJointTrajectory, "arm_controller/follow_joint_trajectory", follow)
ActionServer(node, GripperCommand, "gripper_controller/gripper_action", grip)
ActionServer(node, PointHead, "head_controller/point_head", point)
print("ready", "homiebot" in sys.modules, flush=True)
rclpy.spin(node)
"""


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROS_")}
    env.update(ROS_DOMAIN_ID=str(DOMAIN), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    env.pop("PYTHONPATH", None)  # the server needs nothing of this repository
    return env


@pytest.fixture(scope="module")
def server():
    proc = subprocess.Popen([sys.executable, "-c", SERVER, ",".join(FETCH_ARM_JOINTS)], env=_environment(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/")
    try:
        line = proc.stdout.readline()
        assert line.startswith("ready"), f"the action server did not start: {line!r} {proc.stderr.read() if proc.poll() is not None else ''}"
        assert line.split()[1] == "False", "the plain server imported homiebot"
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def node(server):
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=DOMAIN)
    client_node = Node("fetch_user", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(client_node)
    thread = threading.Thread(target=executor.spin, daemon=True)
    thread.start()
    try:
        yield client_node
    finally:
        executor.shutdown()
        client_node.destroy_node()
        rclpy.try_shutdown(context=context)


def _wait(future, what: str, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while not future.done() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert future.done(), f"no answer to {what} within {timeout} s"
    return future.result()


def _run(node: Node, action_type, name: str, goal) -> tuple[int, object, list]:
    """Send one goal through a fresh action client; returns (status, result, feedback messages). The client sends from
    this thread while another spins: rclpy's ActionClient would drop an answer that comes before it registered the goal."""
    client = OrderedActionClient(node, action_type, name)
    try:
        assert client.wait_for_server(timeout_sec=20.0), f"no {name} server"
        feedback: list = []
        handle = _wait(client.send_goal_async(goal, feedback_callback=lambda m: feedback.append(m.feedback)), f"{name} goal")
        assert handle.accepted, f"{name} refused the goal"
        answer = _wait(handle.get_result_async(), f"{name} result")
        return answer.status, answer.result, feedback
    finally:
        client.destroy()


def test_follow_joint_trajectory_round_trip(node):
    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = FETCH_ARM_JOINTS
    goal.trajectory.points = [
        JointTrajectoryPoint(positions=[0.1 * i for i in range(7)], velocities=[0.0] * 7, time_from_start=Duration(sec=1)),
        JointTrajectoryPoint(positions=[-0.2] * 7, time_from_start=Duration(sec=3, nanosec=500)),
    ]
    goal.goal_tolerance = [JointTolerance(name="wrist_roll_joint", position=0.05)]
    goal.goal_time_tolerance = Duration(sec=2)
    status, result, feedback = _run(node, FollowJointTrajectory, ARM, goal)
    assert status == GoalStatus.STATUS_SUCCEEDED
    assert result.error_code == FollowJointTrajectory.Result.SUCCESSFUL
    assert result.error_string == "2 points, tolerances {'wrist_roll_joint': 0.05}, late by 2 s"
    # the feedback carries the trajectory back: every nested field crossed the wire twice
    assert len(feedback) == 2
    assert list(feedback[0].joint_names) == FETCH_ARM_JOINTS and feedback[0].header.frame_id == "base_link"
    assert list(feedback[0].desired.positions) == pytest.approx([0.1 * i for i in range(7)])
    assert feedback[1].actual.time_from_start == Duration(sec=3, nanosec=500)


def test_follow_joint_trajectory_with_wrong_joints_aborts_with_the_real_error_code(node):
    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = ["shoulder_pan_joint", "no_such_joint"]
    goal.trajectory.points = [JointTrajectoryPoint(positions=[0.0, 0.0], time_from_start=Duration(sec=1))]
    status, result, feedback = _run(node, FollowJointTrajectory, ARM, goal)
    assert status == GoalStatus.STATUS_ABORTED and feedback == []
    assert result.error_code == FollowJointTrajectory.Result.INVALID_JOINTS == -2
    assert "no_such_joint" in result.error_string


def test_gripper_command_round_trip(node):
    status, result, feedback = _run(node, GripperCommand, GRIPPER,
                                    GripperCommand.Goal(command=GripperCommandMsg(position=0.25, max_effort=60.0)))
    assert status == GoalStatus.STATUS_SUCCEEDED
    assert (result.position, result.effort, result.stalled, result.reached_goal) == (0.1, 60.0, False, False)
    assert feedback and feedback[0].reached_goal is True


def test_point_head_round_trip(node):
    goal = PointHead.Goal(pointing_frame="head_camera_link", max_velocity=1.0, min_duration=Duration(sec=1))
    goal.target.header.frame_id = "base_link"
    goal.target.point.x, goal.target.point.y = 1.0, 1.0
    status, _, feedback = _run(node, PointHead, HEAD, goal)
    assert status == GoalStatus.STATUS_SUCCEEDED
    assert feedback and feedback[0].pointing_angle_error == pytest.approx(0.7853981, abs=1e-6)


def test_the_wire_type_hashes_are_those_of_the_upstream_definitions(node):
    names = {ARM: "FollowJointTrajectory", GRIPPER: "GripperCommand", HEAD: "PointHead"}
    for action, type_name in names.items():
        topic = f"/{action}/_action/feedback"
        deadline = time.monotonic() + 20
        while not (infos := node.get_publishers_info_by_topic(topic)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert infos, f"nobody publishes {topic}"
        full = f"control_msgs/action/{type_name}_FeedbackMessage"
        assert {(i.topic_type, str(i.topic_type_hash)) for i in infos} == {(full, UPSTREAM_HASHES[full])}


def test_the_installed_type_descriptions_carry_the_upstream_hashes():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        from build_interfaces import prefix_paths, type_hashes
    finally:
        sys.path.remove(str(ROOT / "tools"))
    installed = type_hashes(prefix_paths(Path(sys.prefix)))
    assert {name: installed.get(name) for name in UPSTREAM_TYPE_HASHES} == UPSTREAM_TYPE_HASHES
    assert {name: installed.get(name) for name in UPSTREAM_HASHES} == UPSTREAM_HASHES


def test_build_is_current_and_a_rerun_does_nothing():
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "build_interfaces.py")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().endswith("up to date in " + str(Path(sys.prefix).resolve())), run.stdout


def test_build_into_an_environment_without_ros_fails_with_one_clear_line(tmp_path):
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "build_interfaces.py"), "--prefix", str(tmp_path)],
                         capture_output=True, text=True)
    assert run.returncode == 1
    assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr
    assert run.stderr.startswith("build_interfaces: interface package builtin_interfaces is not installed under")
    assert list(tmp_path.iterdir()) == []  # nothing written
