"""Calls between processes: a ping before the first call to a server, none after, and again once the
server process has been replaced.

The server runs in a process of its own; everything uses localhost discovery and a ROS_DOMAIN_ID of
its own.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

import rclpy  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402
from std_msgs.msg import String  # noqa: E402

from homiebot.ros.rpc import PING, RELIABLE, RpcClient, RpcError, RpcInterrupted  # noqa: E402
from homiebot.ros.up import ros_environment  # noqa: E402

DOMAIN = 30 + os.getpid() % 30  # apart from the graph tests' domains
SERVER = """
import sys, rclpy
from rclpy.node import Node
from homiebot.ros.common import spin_in_background
from homiebot.ros.rpc import BadRequest, RpcServer
rclpy.init()
node = Node("echo_server")

def strict(params, ctx):
    if not isinstance(params.get("n"), int):
        raise BadRequest("strict needs n, an integer")
    return params["n"]

RpcServer(node, "echo_test", {"echo": lambda params, ctx: {"echo": params, "server": sys.argv[1]}, "strict": strict})
executor, thread = spin_in_background(node)
thread.join()
"""


def start_server(tag: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", SERVER, tag], env=ros_environment(DOMAIN), **kwargs)


@pytest.fixture
def client():
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=DOMAIN)
    node = Node("echo_client", context=context)
    requests: list[str] = []
    node.create_subscription(String, "/homiebot/echo_test/request", lambda m: requests.append(json.loads(m.data).get("method")), RELIABLE)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    thread = threading.Thread(target=executor.spin, daemon=True)
    thread.start()
    try:
        yield RpcClient(node, "echo_test"), requests
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown(context=context)


def settle(requests: list[str], count: int) -> list[str]:
    """The methods requested so far, once ``count`` of them have been seen (our own messages too)."""
    deadline = time.monotonic() + 10
    while len(requests) < count and time.monotonic() < deadline:
        time.sleep(0.02)
    return list(requests)


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    proc.wait()


def test_a_ping_precedes_the_first_call_to_each_server_process(client):
    rpc, requests = client
    first = start_server("first")
    try:
        assert rpc.call("echo", {"n": 1}, timeout=60) == {"echo": {"n": 1}, "server": "first"}
        assert rpc.call("echo", {"n": 2}, timeout=60)["echo"] == {"n": 2}
        seen = settle(requests, 3)
        assert seen[-2:] == ["echo", "echo"] and set(seen[:-2]) == {PING}  # pings until one was answered, then calls only
    finally:
        stop(first)

    before = rpc._servers()
    requests.clear()
    second = start_server("second")
    try:
        # once the replacement is known, it is pinged before it is called (no timeout needed first)
        deadline = time.monotonic() + 60
        while not (rpc._servers() - before) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert rpc.call("echo", {"n": 3}, timeout=60) == {"echo": {"n": 3}, "server": "second"}
        seen = settle(requests, 2)
        assert seen[-1] == "echo" and PING in seen[:-1]
        # a forced check gets through to the live server whatever discovery still lists
        requests.clear()
        rpc.verify(timeout=30, force=True)
        assert settle(requests, 1)[0] == PING
    finally:
        stop(second)


def test_a_bad_request_is_answered_with_its_reason_and_logged_in_one_line(client):
    rpc, _ = client
    server = start_server("strict", stderr=subprocess.PIPE, text=True)
    try:
        assert rpc.call("strict", {"n": 3}, timeout=60) == 3
        with pytest.raises(RpcError, match="strict needs n, an integer") as err:
            rpc.call("strict", {"n": "three"}, timeout=60)
        assert err.value.remote_type == "BadRequest"
    finally:
        stop(server)
    log = server.stderr.read()
    assert "refused a 'strict' request: strict needs n, an integer" in log and "Traceback" not in log, log


def test_an_abort_ends_a_call_still_waiting_for_its_server_to_appear(client):
    """A stopping process aborts its calls; one waiting for a server that is gone (it stopped first)
    must end then, not at its deadline."""
    rpc, _ = client
    outcome: list[BaseException] = []

    def call() -> None:
        try:
            rpc.call("echo", {}, timeout=60.0)
        except BaseException as err:  # what the call ended with
            outcome.append(err)

    caller = threading.Thread(target=call, daemon=True)
    caller.start()
    time.sleep(0.3)
    assert caller.is_alive()  # no server: still waiting
    rpc.abort("stopping", interrupted=True)
    caller.join(5.0)
    assert not caller.is_alive() and len(outcome) == 1 and isinstance(outcome[0], RpcInterrupted), outcome
