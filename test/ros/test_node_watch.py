"""The task manager's watch of the graph's heartbeats (``NodeWatch``), in-process on a domain of its own: a node whose
heartbeat says it is no longer active (a lifecycle deactivate or cleanup mid-episode) is reported at once, naming
it, where before the episode waited out a call's timeout (a cleaned-up mapper stalled it 30 s and the detector was
blamed); an optional node (the recorder) is reported without ending the episode."""

from __future__ import annotations

import threading
import time
import uuid

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

import rclpy  # noqa: E402
from homiebot_msgs.msg import Heartbeat  # noqa: E402
from rclpy.context import Context  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402

from homiebot.ros.kit.common import HEARTBEAT_QOS, HEARTBEAT_TOPIC  # noqa: E402
from homiebot.ros.kit.watch import NodeWatch  # noqa: E402
from test.ros_domains import domain_of  # noqa: E402

DOMAIN = domain_of(__name__)
ACTIVE, INACTIVE, UNCONFIGURED = 3, 2, 1


class Beating:
    """A node of the graph beating with a lifecycle state the test sets."""

    def __init__(self, name: str, context: Context, executor: SingleThreadedExecutor) -> None:
        self.node = Node(name, context=context, namespace="/homiebot")
        self.pub = self.node.create_publisher(Heartbeat, HEARTBEAT_TOPIC, HEARTBEAT_QOS)
        self.beat = Heartbeat(node=name, instance=uuid.uuid4().hex, pid=4242, state=ACTIVE)
        self.node.create_timer(0.1, lambda: self.pub.publish(self.beat))
        executor.add_node(self.node)


@pytest.fixture
def graph():
    context = Context()
    rclpy.init(context=context, domain_id=DOMAIN)
    executor = SingleThreadedExecutor(context=context)
    lost: list[tuple[str, str]] = []
    manager = Node("task_manager", context=context, namespace="/homiebot")
    executor.add_node(manager)
    nodes = {name: Beating(name, context, executor) for name in ("mapper", "recorder")}
    watch = NodeWatch(manager, 3.0, lambda node, reason: lost.append((node, reason)), optional=frozenset({"recorder"}),
                      belongs=lambda name: name in nodes)
    spinning = threading.Thread(target=executor.spin, daemon=True)
    spinning.start()
    try:
        yield watch, nodes, lost
    finally:
        watch.stop()
        executor.shutdown()
        rclpy.try_shutdown(context=context)


def until(test, seconds: float = 30.0) -> float:
    started = time.monotonic()
    while not test():
        assert time.monotonic() - started < seconds, "not within the time given"
        time.sleep(0.02)
    return time.monotonic() - started


def test_a_node_taken_out_of_service_mid_episode_is_named_at_once(graph) -> None:
    watch, nodes, lost = graph
    until(lambda: set(watch.alive()) == {"mapper", "recorder"})
    watch.begin()
    time.sleep(0.5)
    assert lost == [] and watch.lost is None  # active and beating: nothing to say
    nodes["recorder"].beat.state = INACTIVE  # optional: reported, the episode goes on
    until(lambda: lost)
    assert lost[0][0] == "recorder" and "lifecycle state: inactive" in lost[0][1] and watch.lost is None
    nodes["mapper"].beat.state = UNCONFIGURED
    took = until(lambda: watch.lost is not None)
    assert took < 2.0, took  # a heartbeat period and a look, not a call's timeout
    assert watch.lost == ("the mapper node is not active (lifecycle state: unconfigured): taken out of service mid-episode; "
                          "the episode cannot go on")
    watch.end()


def test_a_node_not_saying_its_state_is_taken_as_active(graph) -> None:
    watch, nodes, lost = graph
    for beating in nodes.values():
        beating.beat.state = 0  # a sender that does not say (the field's default)
    until(lambda: set(watch.alive()) == {"mapper", "recorder"})
    watch.begin()
    time.sleep(1.0)
    assert lost == [] and watch.lost is None
    watch.end()


def test_a_node_last_heard_not_active_is_watched_once_its_replacement_beats(graph) -> None:
    """The episode begins while the last word of the mapper is "inactive" (it was taken out of service and stopped; the
    node started in its place is not heard yet): that is not a loss of this episode. Once the new process beats active,
    it is watched like any other."""
    watch, nodes, lost = graph
    nodes["mapper"].beat.state = INACTIVE
    until(lambda: set(watch.alive()) == {"mapper", "recorder"} and watch._beats["mapper"][3] == INACTIVE)
    watch.begin()
    time.sleep(1.0)
    assert lost == [] and watch.lost is None
    nodes["mapper"].beat.instance, nodes["mapper"].beat.state = uuid.uuid4().hex, ACTIVE  # the replacement
    time.sleep(1.0)
    assert lost == [] and watch.lost is None
    nodes["mapper"].beat.state = INACTIVE  # the replacement taken out of service: now it is a loss
    until(lambda: watch.lost is not None)
    assert "the mapper node is not active" in watch.lost
    watch.end()
