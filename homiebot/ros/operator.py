"""Operator commands for a running graph: ``homiebot estop | release | cancel | approve``."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from std_msgs.msg import Bool, String
from std_srvs.srv import Trigger

from homiebot.ros.common import init, spin_in_background
from homiebot.ros.messages import RELIABLE
from homiebot.ros.safety import APPROVAL_REQUEST, APPROVAL_RESPONSE, CANCEL_TOPIC, ESTOP_TOPIC, LATCHED
from homiebot.ros.wire import read_json, safe_callback


def _node(name: str) -> Node:
    init(None)
    return Node(f"homiebot_{name}_{int(time.time() * 1000) % 100000}")


def _close(node: Node, executor: SingleThreadedExecutor, thread: threading.Thread) -> None:
    """Stop spinning, wait for the spin thread, then destroy: no callback may run during teardown."""
    time.sleep(0.2)  # let the last (latched) sample reach subscribers before this node goes
    executor.shutdown()
    thread.join(timeout=5.0)
    node.destroy_node()
    rclpy.try_shutdown()


def _wait_for(ready: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}; start the graph with `homiebot up` (same ROS_DOMAIN_ID) first")
        time.sleep(0.05)


def estop(engage: bool, timeout: float = 10.0) -> str:
    """Engage (or release) the e-stop: the Trigger service of the task manager when it answers, and
    always the latched ``/homiebot/estop`` topic, which every node follows."""
    node = _node("estop")
    pub = node.create_publisher(Bool, ESTOP_TOPIC, LATCHED)
    client = node.create_client(Trigger, "/homiebot/estop/engage" if engage else "/homiebot/estop/release")
    executor, thread = spin_in_background(node)
    try:
        pub.publish(Bool(data=engage))  # latched: nodes that start later still see it
        if client.wait_for_service(timeout_sec=timeout):
            future = client.call_async(Trigger.Request())
            _wait_for(future.done, timeout, "the task manager did not answer the e-stop service")
            return str(future.result().message)
        _wait_for(lambda: pub.get_subscription_count() > 0, timeout, "nobody follows /homiebot/estop")
        return f"e-stop {'engaged' if engage else 'released'} on {ESTOP_TOPIC}"
    finally:
        _close(node, executor, thread)


def cancel(episode_id: str = "", timeout: float = 10.0) -> str:
    """Cancel the running episode (``episode_id``: its submission id; empty: whatever runs)."""
    node = _node("cancel")
    pub = node.create_publisher(String, CANCEL_TOPIC, RELIABLE)
    executor, thread = spin_in_background(node)
    try:
        _wait_for(lambda: pub.get_subscription_count() > 0, timeout, f"no task manager listens on {CANCEL_TOPIC}")
        time.sleep(0.2)  # discovery is not symmetric: give the task manager time to match this publisher
        pub.publish(String(data=episode_id))
        return f"cancel sent for {episode_id or 'the running episode'}"
    finally:
        _close(node, executor, thread)


def approve_loop(stream: TextIO = sys.stdin, out: TextIO = sys.stdout, count: int | None = None) -> int:
    """Answer approval requests from the terminal until end of input (or ``count`` answers)."""
    node = _node("approve")
    requests: list[dict] = []
    node.create_subscription(String, APPROVAL_REQUEST, safe_callback(node, APPROVAL_REQUEST, lambda m: requests.append(read_json(m.data))),
                             LATCHED)
    pub = node.create_publisher(String, APPROVAL_RESPONSE, 10)
    executor, thread = spin_in_background(node)
    from homiebot.contracts import Action, Subtask
    from homiebot.safety.approval import ApprovalRequest, read_decision

    answered: set[str] = set()
    try:
        while count is None or len(answered) < count:
            pending = [r for r in requests if isinstance(r, dict) and r.get("id") not in answered]
            if not pending:
                time.sleep(0.05)
                continue
            ask = pending[0]
            out.write(f"round {ask.get('round')}: {ask.get('subtask')} with {ask.get('model')} — approve [a], reject [r <reason>], "
                      f"edit [e [Action, target]]: ")
            out.flush()
            line = stream.readline()
            if not line:
                return 0
            decision = read_decision(line, ApprovalRequest(0, Subtask(action=Action.END), None))
            if decision is None:
                out.write("  answer a, r <reason> or e [Action, target]\n")
                continue
            reply = {"id": ask["id"], "decision": decision.verdict, "reason": decision.reason,
                     "subtask": decision.subtask.text() if decision.subtask else None}
            pub.publish(String(data=json.dumps(reply)))
            answered.add(ask["id"])
        return 0
    finally:
        _close(node, executor, thread)


__all__ = ["approve_loop", "cancel", "estop"]
