"""Operator commands for a running graph: ``homiebot estop | release | cancel | approve``."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

import rclpy
from homiebot_msgs.msg import ApprovalDecision, ApprovalRequest
from rclpy.duration import Duration
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from std_msgs.msg import Bool, String
from std_srvs.srv import Trigger

from homiebot.ros.kit.common import init, spin_in_background
from homiebot.ros.kit.names import DEFAULT_NAMESPACE
from homiebot.ros.kit.safety import APPROVAL_REQUEST, APPROVAL_RESPONSE, CANCEL_TOPIC, ESTOP_TOPIC, LATCHED
from homiebot.ros.messages.common import RELIABLE, subtask_text
from homiebot.ros.messages.safety import decision_msg
from homiebot.ros.messages.wire import WireError, safe_callback


def _node(name: str, namespace: str) -> Node:
    init(None)
    return Node(f"homiebot_{name}_{int(time.time() * 1000) % 100000}", namespace=namespace)


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


def estop(engage: bool, timeout: float = 10.0, namespace: str = DEFAULT_NAMESPACE) -> str:
    """Engage (or release) the e-stop of the graph in ``namespace``: the Trigger service of the task manager
    when it answers, and always the latched ``estop`` topic, which every node follows."""
    node = _node("estop", namespace)
    pub = node.create_publisher(Bool, ESTOP_TOPIC, LATCHED)
    client = node.create_client(Trigger, "estop/engage" if engage else "estop/release")
    executor, thread = spin_in_background(node)
    try:
        pub.publish(Bool(data=engage))  # latched: nodes that start later still see it
        if client.wait_for_service(timeout_sec=timeout):
            future = client.call_async(Trigger.Request())
            _wait_for(future.done, timeout, "the task manager did not answer the e-stop service")
            return str(future.result().message)
        _wait_for(lambda: pub.get_subscription_count() > 0, timeout, f"nobody follows {pub.topic_name}")
        return f"e-stop {'engaged' if engage else 'released'} on {pub.topic_name}"
    finally:
        _close(node, executor, thread)


def cancel(episode_id: str = "", timeout: float = 10.0, namespace: str = DEFAULT_NAMESPACE) -> str:
    """Cancel the running episode (``episode_id``: its submission id; empty: whatever runs)."""
    node = _node("cancel", namespace)
    pub = node.create_publisher(String, CANCEL_TOPIC, RELIABLE)
    executor, thread = spin_in_background(node)
    try:
        _wait_for(lambda: pub.get_subscription_count() > 0, timeout, f"no task manager listens on {pub.topic_name}")
        time.sleep(0.2)  # discovery is not symmetric: give the task manager time to match this publisher
        pub.publish(String(data=episode_id))
        return f"cancel sent for {episode_id or 'the running episode'}"
    finally:
        _close(node, executor, thread)


def _request_taker(into: list[ApprovalRequest]) -> Callable[[ApprovalRequest], None]:
    """A subscription callback keeping the approval requests that name an id."""

    def take(msg: ApprovalRequest) -> None:
        if not msg.id:
            raise WireError("an approval request needs an id")
        into.append(msg)
    return take


def _prompt(ask: ApprovalRequest) -> str:
    """What the operator is asked about one request."""
    return (f"round {ask.round}: {subtask_text(ask.subtask) or '[]'} with {ask.model or 'no model'} — approve [a], "
            f"reject [r <reason>], edit [e [Action, target]]: ")


def approve_loop(stream: TextIO = sys.stdin, out: TextIO = sys.stdout, count: int | None = None,
                 namespace: str = DEFAULT_NAMESPACE) -> int:
    """Answer approval requests from the terminal until end of input (or ``count`` answers)."""
    node = _node("approve", namespace)
    requests: list[ApprovalRequest] = []
    node.create_subscription(ApprovalRequest, APPROVAL_REQUEST, safe_callback(node, APPROVAL_REQUEST, _request_taker(requests)),
                             LATCHED)
    pub = node.create_publisher(ApprovalDecision, APPROVAL_RESPONSE, 10)
    executor, thread = spin_in_background(node)
    from homiebot.core.contracts import Action, Subtask
    from homiebot.safety import approval

    answered: set[str] = set()
    try:
        while count is None or len(answered) < count:
            pending = [r for r in list(requests) if r.id not in answered]
            if not pending:
                time.sleep(0.05)
                continue
            ask = pending[0]
            out.write(_prompt(ask))
            out.flush()
            line = stream.readline()
            if not line:
                return 0
            decision = approval.read_decision(line, approval.ApprovalRequest(0, Subtask(action=Action.END), None))
            if decision is None:
                out.write("  answer a, r <reason> or e [Action, target]\n")
                continue
            _wait_for(lambda: pub.get_subscription_count() > 0, 10.0, f"no task manager listens on {pub.topic_name}")
            pub.publish(decision_msg(ask.id, decision))
            pub.wait_for_all_acked(Duration(seconds=5.0))  # reliable: the task manager has it, even if it matched us late
            answered.add(ask.id)
        return 0
    finally:
        _close(node, executor, thread)


__all__ = ["approve_loop", "cancel", "estop"]
