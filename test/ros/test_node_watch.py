"""The task manager's watch of the graph's heartbeats (``NodeWatch``), in-process on a domain of its own: a node whose
heartbeat says it is no longer active (a lifecycle deactivate or cleanup mid-episode) is reported at once, naming
it, where before the episode waited out a call's timeout (a cleaned-up mapper stalled it 30 s and the detector was
blamed); an optional node (the recorder) is reported without ending the episode; a node of this machine is judged by its
process (ended: named at once; stopped: after the timeout; running: only after the hang timeout)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
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
from homiebot.ros.kit.local_process import host_id  # noqa: E402
from homiebot.ros.kit.watch import NodeWatch  # noqa: E402
from test.ros_domains import domain_of  # noqa: E402

DOMAIN = domain_of(__name__)
ACTIVE, INACTIVE, UNCONFIGURED = 3, 2, 1
TIMEOUT, HANG_TIMEOUT = 3.0, 6.0


class Beating:
    """A node of the graph beating with a lifecycle state the test sets."""

    def __init__(self, name: str, context: Context, executor: SingleThreadedExecutor) -> None:
        self.node = Node(name, context=context, namespace="/homiebot")
        self.pub = self.node.create_publisher(Heartbeat, HEARTBEAT_TOPIC, HEARTBEAT_QOS)
        self.beat = Heartbeat(node=name, instance=uuid.uuid4().hex, pid=4242, state=ACTIVE)
        self.silent = False  # True: it stops beating
        self.node.create_timer(0.1, lambda: self.silent or self.pub.publish(self.beat))
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
    watch = NodeWatch(manager, TIMEOUT, lambda node, reason: lost.append((node, reason)), optional=frozenset({"recorder"}),
                      belongs=lambda name: name in nodes, hang_timeout=HANG_TIMEOUT)
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
    until(lambda: set(watch.alive()) == {"mapper", "recorder"} and watch._beats["mapper"].state == INACTIVE)
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


@pytest.fixture
def process():
    """A process of this machine standing for the mapper's (the test's nodes beat in its name)."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield proc
    proc.kill()
    proc.wait()


def beating_as(graph, pid: int, host: str | None = None) -> None:
    """The mapper beats as process ``pid`` of this machine (or of ``host``), a new instance, until the watch hears it."""
    watch, nodes, _ = graph
    nodes["mapper"].beat.pid, nodes["mapper"].beat.host = pid, host_id() if host is None else host
    nodes["mapper"].beat.instance = uuid.uuid4().hex  # a new process: looked up from its first beat
    until(lambda: set(watch.alive()) == {"mapper", "recorder"} and watch.alive()["mapper"] == pid)


def local_mapper(graph, pid: int, host: str | None = None):
    """The graph with the mapper beating as process ``pid`` of this machine (or of ``host``), watched for an episode."""
    beating_as(graph, pid, host)
    graph[0].begin()
    return graph


def test_a_node_of_this_machine_whose_process_ended_is_named_at_once(graph, process) -> None:
    watch, nodes, lost = local_mapper(graph, process.pid)
    time.sleep(0.5)
    assert watch.lost is None
    process.kill()  # not reaped yet: a zombie is as dead
    nodes["mapper"].silent = True
    took = until(lambda: watch.lost is not None)
    assert took < TIMEOUT, took  # a look at /proc, not the heartbeat's silence
    assert watch.lost == f"the mapper node died: its process (pid {process.pid}) has ended; the episode cannot go on"
    watch.end()


def test_a_silent_node_whose_process_runs_is_given_the_hang_timeout(graph, process) -> None:
    """A busy machine, or Fast DDS holding a live process's interpreter, silences it for seconds: not a death."""
    watch, nodes, lost = local_mapper(graph, process.pid)
    nodes["mapper"].silent = True
    silenced = time.monotonic()
    time.sleep(TIMEOUT + 1.0)
    assert watch.lost is None, watch.lost
    until(lambda: watch.lost is not None)
    assert time.monotonic() - silenced > HANG_TIMEOUT
    assert f"its process, pid {process.pid}, runs but is silent: it hangs" in watch.lost and "the mapper node stopped" in watch.lost
    watch.end()


def test_a_silent_node_whose_process_is_stopped_is_named_after_the_timeout(graph, process) -> None:
    watch, nodes, lost = local_mapper(graph, process.pid)
    process.send_signal(signal.SIGSTOP)
    nodes["mapper"].silent = True
    took = until(lambda: watch.lost is not None)
    assert TIMEOUT - 0.5 < took < HANG_TIMEOUT, took
    assert f"its process, pid {process.pid}, is stopped" in watch.lost
    watch.end()


def test_a_silent_node_of_another_machine_is_named_after_the_timeout(graph, process) -> None:
    """Its pid means nothing here (this machine's process of that pid runs): silence alone decides."""
    watch, nodes, lost = local_mapper(graph, process.pid, host="another-machine/pid:[1]")
    nodes["mapper"].silent = True
    took = until(lambda: watch.lost is not None)
    assert TIMEOUT - 0.5 < took < HANG_TIMEOUT, took
    assert "the mapper node stopped: no heartbeat for" in watch.lost and "(it died or hangs)" in watch.lost
    watch.end()


def test_a_node_whose_process_ended_is_missing_until_its_successor_beats(graph, process) -> None:
    """Killed a moment ago, its last beat still recent: the next episode waits for its successor instead of watching
    the dead process (which failed that episode at once, naming a node that was already back)."""
    watch, nodes, lost = graph
    beating_as(graph, process.pid)
    process.kill()
    process.wait()
    nodes["mapper"].silent = True
    took = until(lambda: watch.missing() == ["mapper"])
    assert took < TIMEOUT and "mapper" not in watch.alive()
    nodes["mapper"].beat.pid, nodes["mapper"].beat.instance = os.getpid(), uuid.uuid4().hex  # its successor: this process
    nodes["mapper"].silent = False
    until(lambda: watch.missing() == [])
    watch.begin()
    time.sleep(1.0)
    assert watch.lost is None and lost == []
    watch.end()


def test_a_node_whose_process_ended_just_before_the_episode_began_is_named_at_once(graph, process) -> None:
    """Killed between the wait for the nodes and the episode's start: watched all the same, and named at once (not
    left out, which let the episode wait out its executor's 8 s timeout)."""
    watch, nodes, lost = graph
    beating_as(graph, process.pid)
    process.kill()
    process.wait()
    watch.begin()
    took = until(lambda: watch.lost is not None)
    assert took < TIMEOUT and watch.lost.startswith("the mapper node died"), (took, watch.lost)
    watch.end()
