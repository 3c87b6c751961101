"""The graph's blocking service client (``ServiceCaller``), in-process on a domain of its own: a request marked
idempotent is sent again while no answer comes (a new server's first answers are lost until its reply writer has
matched the client's reader, which the client cannot see), and the first answer to any copy counts; any other
request is sent once and times out; a call waiting on a peer that is lost (``PeerWatch``) fails at once."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

import rclpy  # noqa: E402
from homiebot_msgs.msg import Heartbeat  # noqa: E402
from homiebot_msgs.srv import ListModels  # noqa: E402
from rclpy.callback_groups import ReentrantCallbackGroup  # noqa: E402
from rclpy.context import Context  # noqa: E402
from rclpy.executors import MultiThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402

from homiebot.ros.kit.common import HEARTBEAT_QOS, HEARTBEAT_TOPIC  # noqa: E402
from homiebot.ros.kit.local_process import host_id  # noqa: E402
from homiebot.ros.kit.peers import PeerWatch  # noqa: E402
from homiebot.ros.kit.services import RESEND_FIRST, ServiceCaller, ServiceError, ServiceTimeout  # noqa: E402
from test.ros_domains import domain_of  # noqa: E402

DOMAIN = domain_of(__name__)


class Forgetful:
    """A models server that never answers its first request (as if the answer were lost), answers the others."""

    def __init__(self, context: Context, executor: MultiThreadedExecutor) -> None:
        self.node = Node("executor", context=context, namespace="/homiebot")
        self.requests = 0
        self.release = threading.Event()
        self.node.create_service(ListModels, "executor/models", self._serve, callback_group=ReentrantCallbackGroup())
        # it beats as the process below: killing that process is this node's death, as the watch sees it
        self.process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        self.beat = Heartbeat(node="executor", instance="f00d", pid=self.process.pid, host=host_id(), state=3)
        publisher = self.node.create_publisher(Heartbeat, HEARTBEAT_TOPIC, HEARTBEAT_QOS)
        self.node.create_timer(0.1, lambda: publisher.publish(self.beat))
        executor.add_node(self.node)

    def _serve(self, request: ListModels.Request, response: ListModels.Response) -> ListModels.Response:
        self.requests += 1
        if self.requests == 1:
            self.release.wait(30)  # held: its answer never comes while the test runs
            response.error_code, response.error_msg = ListModels.Response.FAILED, "the held first copy"
        return response


@pytest.fixture
def pair():
    context = Context()
    rclpy.init(context=context, domain_id=DOMAIN)
    executor = MultiThreadedExecutor(num_threads=4, context=context)
    server = Forgetful(context, executor)
    client = Node("task_manager", context=context, namespace="/homiebot")
    executor.add_node(client)
    caller = ServiceCaller(client, ListModels, "executor/models", "executor")
    peers = PeerWatch(client, {"executor": [caller]}, hang_timeout=30.0)
    spinning = threading.Thread(target=executor.spin, daemon=True)
    spinning.start()
    try:
        yield caller, server, peers
    finally:
        server.process.kill()
        server.process.wait()
        server.release.set()
        executor.shutdown()
        rclpy.try_shutdown(context=context)


def test_an_idempotent_request_is_sent_again_until_a_copy_is_answered(pair) -> None:
    caller, server, _ = pair
    started = time.monotonic()
    response = caller.call(ListModels.Request(), 20.0, idempotent=True)
    took = time.monotonic() - started
    assert response.error_code == ListModels.Response.NONE and server.requests >= 2
    assert RESEND_FIRST <= took < 20.0, took  # the second copy, sent after a second without an answer


def test_any_other_request_is_sent_once_and_times_out(pair) -> None:
    caller, server, _ = pair
    with pytest.raises(ServiceTimeout, match="the executor node did not answer 'models' within 3 s"):
        caller.call(ListModels.Request(), 3.0)
    assert server.requests == 1


def test_a_call_waiting_on_a_peer_that_died_fails_at_once(pair) -> None:
    caller, server, peers = pair
    deadline = time.monotonic() + 20
    while "executor" not in peers.watch.alive():
        assert time.monotonic() < deadline, "the peer's heartbeat never came"
        time.sleep(0.05)
    peers.begin()
    threading.Timer(1.0, server.process.kill).start()  # dies while the call waits on its held first request
    started = time.monotonic()
    with pytest.raises(ServiceError, match=f"the executor node died: its process \\(pid {server.process.pid}\\) has ended"):
        caller.call(ListModels.Request(), 20.0)
    assert time.monotonic() - started < 10.0  # not the call's 20 s
    server.release.set()
    server.beat.pid, server.beat.instance = os.getpid(), "beef"  # its successor (this process) beats
    while peers.watch.alive().get("executor") != os.getpid():
        time.sleep(0.05)
    peers.begin()  # the next episode: calls are accepted again
    assert caller.call(ListModels.Request(), 20.0).error_code == ListModels.Response.NONE
