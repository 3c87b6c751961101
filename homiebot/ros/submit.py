"""``homiebot submit``: send a task to a running graph and follow it until its record is written."""

from __future__ import annotations

import json
import sys
import time
import uuid
from collections.abc import Callable

import rclpy
from rclpy.node import Node
from std_msgs.msg import String

from homiebot.console import round_line, task_line, verdict_line
from homiebot.ros.common import init, spin_in_background
from homiebot.ros.rpc import RELIABLE
from homiebot.ros.safety import CANCEL_TOPIC
from homiebot.ros.wire import read_json, safe_callback

FINAL = ("finished", "failed", "duplicate")
CANCEL_WAIT = 20.0  # s to wait for a cancelled episode's record after Ctrl-C (a second Ctrl-C stops waiting)


def _to_stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def submit(request: dict, timeout: float = 600.0, connect_timeout: float = 30.0, wait: bool = True,
           echo: Callable[[str], None] = lambda text: print(text, flush=True), warn: Callable[[str], None] = _to_stderr) -> dict:
    """Publish a submission and return the final status event (state finished or failed); without
    ``wait``, the first event once the task manager has the task (accepted, or later). Events are
    printed as ``homiebot run`` prints an episode (``echo``), warnings and errors with ``warn``."""
    chosen_id = "id" in request  # an id of our own making is new: a "duplicate" can only answer our own repeats
    request = {"id": uuid.uuid4().hex[:12], **request}
    init(None)
    node = Node(f"homiebot_submit_{request['id']}")
    events: list[dict] = []
    node.create_subscription(String, "/homiebot/task/status", safe_callback(node, "/homiebot/task/status", lambda m: _keep(events, m)),
                             RELIABLE)
    pub = node.create_publisher(String, "/homiebot/task/submit", RELIABLE)
    cancel = node.create_publisher(String, CANCEL_TOPIC, RELIABLE)  # matched by the time a Ctrl-C may need it
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
        follow = _Follower(request["id"], events, echo, warn, repeats_only=not chosen_id)
        resent = time.monotonic()
        try:
            while time.monotonic() < deadline:
                if not follow.heard() and time.monotonic() - resent > 0.5:
                    # not heard of yet: the task manager may not have matched us when we sent (it ignores repeats)
                    pub.publish(message)
                    resent = time.monotonic()
                if follow.heard() and not wait:
                    first = (follow.mine() or [{"id": request["id"], "state": "accepted"}])[0]
                    _show(first, echo, warn)
                    return first
                if (final := follow.show_new()) is not None:
                    return final
                time.sleep(0.05)
        except KeyboardInterrupt:
            if not (wait and follow.running()):
                raise
            # as Ctrl-C stops `homiebot run`: the episode is cancelled, and its record saved
            cancel.publish(String(data=request["id"]))
            warn(f"homiebot: interrupted; cancelling episode {follow.episode()} (its record is saved)")
            end = time.monotonic() + CANCEL_WAIT
            while time.monotonic() < end:
                if (final := follow.show_new()) is not None:
                    return final
                time.sleep(0.05)
            raise
        raise TimeoutError(f"task {request['id']} did not finish within {timeout:g} s")
    finally:
        executor.shutdown()
        thread.join(timeout=5)
        node.destroy_node()
        rclpy.try_shutdown()


class _Follower:
    """The status events of one submission, shown as they come."""

    def __init__(self, rid: str, events: list[dict], echo: Callable[[str], None], warn: Callable[[str], None],
                 repeats_only: bool = True) -> None:
        self.rid, self.events, self.echo, self.warn = rid, events, echo, warn
        self.repeats_only = repeats_only
        self.seen = 0

    def _all(self) -> list[dict]:
        return [e for e in list(self.events) if e.get("id") == self.rid]

    def heard(self) -> bool:
        """Whether the task manager has answered this submission at all (a "duplicate" reply included)."""
        return bool(self._all())

    def mine(self) -> list[dict]:
        """The events that tell this submission's story. A "duplicate" answers one of our repeats (the
        "accepted" of the first send can be lost while discovery completes) unless the caller chose the id
        and it is the first thing heard."""
        mine = self._all()
        if not self.repeats_only and mine:
            return mine[:1] + [e for e in mine[1:] if e.get("state") != "duplicate"]
        return [e for e in mine if e.get("state") != "duplicate"]

    def show_new(self) -> dict | None:
        """Show the events not shown yet; the final one (finished, failed, duplicate) once it came."""
        mine = self.mine()
        for e in mine[self.seen:]:
            _show(e, self.echo, self.warn)
            if e.get("state") in FINAL:
                return e
        self.seen = len(mine)
        return None

    def running(self) -> bool:
        return any(e.get("state") == "running" for e in self.mine())

    def episode(self) -> str:
        return next((str(e.get("episode")) for e in self.mine() if e.get("state") == "running"), self.rid)


def _show(event: dict, echo: Callable[[str], None], warn: Callable[[str], None]) -> None:
    text, error = _describe(event)
    (warn if error else echo)(text)


def _keep(events: list[dict], msg: String) -> None:
    value = read_json(msg.data)
    if isinstance(value, dict):
        events.append(value)


def _describe(e: dict) -> tuple[str, bool]:
    """An event as ``homiebot run`` would print it, and whether it is an error (for stderr)."""
    state = e.get("state")
    if state == "accepted":
        queued = int(e.get("queued") or 0)
        return f"accepted as submission {e.get('id')}" + (f" ({queued} ahead of it)" if queued else ""), False
    if state == "running" and e.get("planner"):
        return task_line(str(e.get("instruction")), str(e["planner"]), int(e.get("seed", 0)), str(e.get("profile"))), False
    if state == "round":
        return round_line(int(e["round"]), e.get("subtask"), e.get("model"), e.get("code"), float(e.get("seconds") or 0.0),
                          e.get("success", e.get("code") is None), str(e.get("message") or ""), e.get("stand_in")), False
    if state == "finished":
        seconds = float(e.get("setup_s") or 0.0) + float(e.get("wall_time_s") or 0.0)
        verdict = verdict_line(e.get("goal_satisfied"), bool(e.get("ended")), str(e.get("termination")), int(e.get("rounds") or 0),
                               int(e.get("failed") or 0), float(e.get("path_length") or 0.0), seconds)
        why = f"\nwhy it ended: {e['why']}" if e.get("why") else ""
        return f"\n{verdict}{why}\nepisode record: {e.get('record')}", False
    if state == "warning":
        return f"homiebot: warning: {e.get('reason')}", True
    if state in ("duplicate", "failed"):
        return f"homiebot: error: {e.get('reason')}" + (f"\nwhat was recorded: {e['record']}" if e.get("record") else ""), True
    return f"{state}" + (f": {e.get('instruction')}" if e.get("instruction") else ""), False

