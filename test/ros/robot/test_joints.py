"""``JointStates`` alone: joints by their table names, the history an image's stamp picks from."""

from __future__ import annotations

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from sensor_msgs.msg import JointState  # noqa: E402

from homiebot.core.robot import RobotUnavailable  # noqa: E402
from homiebot.robots.profile import load_profile  # noqa: E402
from homiebot.ros.clients.robot.joints import JointStates  # noqa: E402
from homiebot.ros.clients.robot.lockstep import LockStep  # noqa: E402
from test.ros.robot.fakes import FakeNode, stamp  # noqa: E402

PROFILE = load_profile("spot")
TOPIC = PROFILE.topic(PROFILE.joint_states.name)


def joint_state(ns: int, **positions: float) -> JointState:
    msg = JointState(name=list(positions), position=list(positions.values()))
    msg.header.stamp = stamp(ns)
    return msg


def test_joints_by_table_name_with_the_profiles_prefix():
    node = FakeNode()
    joints = JointStates(node, PROFILE, LockStep(None))
    with pytest.raises(RobotUnavailable, match="nothing arrived"):
        joints.values(["arm_sh0"], "the arm")
    node.deliver(TOPIC, joint_state(2_500_000_000, **{PROFILE.joint_name("arm_sh0"): 0.3}))
    q, when = joints.values(["arm_sh0"], "the arm")
    assert list(q) == [0.3] and when == 2.5 and joints.count == 1 and joints.stamp() == 2_500_000_000
    with pytest.raises(RobotUnavailable, match=f"needs the joint '{PROFILE.joint_name('arm_el0')}'"):
        joints.values(["arm_el0"], "the arm")


def test_the_joint_states_nearest_a_stamp():
    node = FakeNode()
    joints = JointStates(node, PROFILE, LockStep(None))
    name = PROFILE.joint_name("arm_sh0")
    for i in range(5):
        node.deliver(TOPIC, joint_state(i * 100, **{name: float(i)}))
    assert joints.values(["arm_sh0"], "x", at_ns=210)[0][0] == 2.0
    assert joints.values(["arm_sh0"], "x")[0][0] == 4.0


def test_fresh_joints_are_the_second_after_a_count():
    node = FakeNode()
    joints = JointStates(node, PROFILE, LockStep(lambda *_: (0, {})))  # lock-step: counting only
    node.deliver(TOPIC, joint_state(1, a=0.0))
    node.deliver(TOPIC, joint_state(2, a=0.0))
    node.deliver(TOPIC, joint_state(3, a=0.0))
    joints.wait_fresh(1, timeout=0.0)  # already there: returns at once
    assert joints.count == 3


def test_no_joint_states_in_the_profile_subscribes_to_nothing():
    node = FakeNode()
    JointStates(node, PROFILE.model_copy(update={"joint_states": None}), LockStep(None))
    assert node.subscriptions == {}
