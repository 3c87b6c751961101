"""The e-stop topic's heartbeat mode: the e-stop engages when the operator's device falls silent."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

import rclpy  # noqa: E402
from rclpy.context import Context  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402
from std_msgs.msg import Bool  # noqa: E402

from homiebot.ros.kit.safety import ESTOP_TOPIC, LATCHED, SafetyLink  # noqa: E402
from homiebot.safety.state import SafetyState  # noqa: E402
from test.ros_domains import domain_of  # noqa: E402


def test_a_silent_heartbeat_engages_the_estop_and_only_a_release_clears_it(monkeypatch) -> None:
    monkeypatch.setenv("ROS_DOMAIN_ID", str(domain_of(__name__)))
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    context = Context()
    rclpy.init(context=context)
    node = Node("heartbeat_test", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    state = SafetyState()
    SafetyLink(node, state, authority=True, heartbeat=0.5)
    device = node.create_publisher(Bool, ESTOP_TOPIC, LATCHED)

    def spin_for(seconds: float, beat: bool) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if beat:
                device.publish(Bool(data=False))
            executor.spin_once(timeout_sec=0.05)

    try:
        spin_for(1.5, beat=True)
        assert not state.estopped  # the device keeps beating
        spin_for(3.0, beat=False)
        assert state.estopped and state.events[-1].details["source"] == "heartbeat lost"
        spin_for(0.5, beat=False)
        assert state.estopped  # silence does not release it
        spin_for(0.5, beat=True)  # the device is back: it says `false`, which releases
        assert not state.estopped
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown(context=context)
