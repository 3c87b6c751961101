"""``homiebot submit``: send a task to a running graph and follow it until its record is written."""

from __future__ import annotations

import json
import time
import uuid

import rclpy
from rclpy.node import Node
from std_msgs.msg import String

from homiebot.ros.common import init, spin_in_background
from homiebot.ros.rpc import RELIABLE
from homiebot.ros.wire import read_json, safe_callback


def submit(request: dict, timeout: float = 600.0, connect_timeout: float = 30.0, wait: bool = True, echo=print) -> dict:
    """Publish a submission and return the final status event (state finished or failed); without
    ``wait``, the first event once the task manager has the task (accepted, or later)."""
    request = {"id": uuid.uuid4().hex[:12], **request}
    init(None)
    node = Node(f"homiebot_submit_{request['id']}")
    events: list[dict] = []
    node.create_subscription(String, "/homiebot/task/status", safe_callback(node, "/homiebot/task/status", lambda m: _keep(events, m)),
                             RELIABLE)
    pub = node.create_publisher(String, "/homiebot/task/submit", RELIABLE)
    executor, thread = spin_in_background(node)
    try:
        deadline = time.monotonic() + connect_timeout
        while pub.get_subscription_count() == 0 or node.count_publishers("/homiebot/task/status") == 0:
            if time.monotonic() > deadline:
                raise TimeoutError("no task manager is listening on /homiebot/task/submit; start the graph with `homiebot up` "
                                   "(same ROS_DOMAIN_ID) first")
            time.sleep(0.05)
        message = String(data=json.dumps(request))
        pub.publish(message)
        deadline = time.monotonic() + timeout
        seen, resent = 0, time.monotonic()
        while time.monotonic() < deadline:
            mine = [e for e in list(events) if e.get("id") == request["id"]]
            if mine:  # after the first event, "duplicate" only answers our own repeats
                mine = mine[:1] + [e for e in mine[1:] if e.get("state") != "duplicate"]
            if not mine and time.monotonic() - resent > 0.5:
                # not heard of yet: the task manager may not have matched us when we sent (it ignores repeats)
                pub.publish(message)
                resent = time.monotonic()
            if mine and not wait:
                echo(_describe(mine[0]))
                return mine[0]
            for e in mine[seen:]:
                echo(_describe(e))
                if e.get("state") in ("finished", "failed", "duplicate"):
                    return e
            seen = len(mine)
            time.sleep(0.05)
        raise TimeoutError(f"task {request['id']} did not finish within {timeout:g} s")
    finally:
        executor.shutdown()
        thread.join(timeout=5)
        node.destroy_node()
        rclpy.try_shutdown()


def _keep(events: list[dict], msg: String) -> None:
    value = read_json(msg.data)
    if isinstance(value, dict):
        events.append(value)


def _describe(e: dict) -> str:
    state = e.get("state")
    if state == "round":
        return f"round {e['round']:2d} | {e.get('subtask') or '[invalid output]':<42} | {e.get('code') or 'ok'}"
    if state == "finished":
        return (f"finished: {'goal reached' if e.get('goal_satisfied') else 'goal not reached'}, {e.get('termination')} after "
                f"{e.get('rounds')} rounds\nepisode record: {e.get('record')}")
    if state == "warning":
        return f"warning: {e.get('reason')}"
    if state == "duplicate":
        return f"refused: {e.get('reason')}"
    if state == "failed":
        return f"failed: {e.get('reason')}" + (f"\nwhat was recorded: {e['record']}" if e.get("record") else "")
    return f"{state}" + (f": {e.get('instruction')}" if e.get("instruction") else "")
