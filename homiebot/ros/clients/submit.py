"""``homiebot submit``: send a task to a running graph and follow it until its record is written."""

from __future__ import annotations

import queue
import sys
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import rclpy
from homiebot_msgs.action import RunTask
from homiebot_msgs.msg import TaskStatus
from rclpy.node import Node
from rclpy.task import Future

from homiebot.core.console import round_line, task_line, verdict_line
from homiebot.ros.clients.run_task import (
    ACTION_NAME,
    STATUS_QOS,
    STATUS_TOPIC,
    RunTaskServer,
    request_to_goal,
    result_to_event,
    status_to_event,
)
from homiebot.ros.kit.common import init, spin_in_background
from homiebot.ros.kit.names import DEFAULT_NAMESPACE
from homiebot.ros.kit.services import OrderedActionClient

FINAL = ("finished", "failed")
FEEDBACK_GRACE = 2.0  # s a final event waits for the round events it counts but that have not arrived
CANCEL_WAIT = 20.0  # s to wait for a cancelled episode's record after Ctrl-C (a second Ctrl-C stops waiting)
LOST_AFTER = 2.0  # s the task manager that took the goal must be missing from the graph before it counts as gone


class TaskManagerLost(RuntimeError):
    """The task manager that took the goal left the graph (its process died) before it answered."""


def _to_stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def submit(request: dict, timeout: float = 600.0, connect_timeout: float = 30.0, wait: bool = True,
           echo: Callable[[str], None] = lambda text: print(text, flush=True), warn: Callable[[str], None] = _to_stderr,
           namespace: str = DEFAULT_NAMESPACE) -> dict:
    """Send a submission as a ``RunTask`` goal to the graph in ``namespace`` and return its final status event
    (state finished or failed); without ``wait``, the first event once the task manager has queued it. Events
    are printed as ``homiebot run`` prints an episode (``echo``), warnings and errors with ``warn``."""
    init(None)
    node = Node(f"homiebot_submit_{uuid.uuid4().hex[:12]}", namespace=namespace)
    client = OrderedActionClient(node, RunTask, ACTION_NAME)  # goals are sent from this thread, not the spinning one
    # What is shown comes from task/status: it keeps its recent events for a subscriber matched
    # late, where a goal's first feedback can be lost while discovery completes. The result ends it.
    statuses = _Statuses()
    node.create_subscription(TaskStatus, STATUS_TOPIC, statuses.add, STATUS_QOS)
    executor, thread = spin_in_background(node)
    try:
        if not client.wait_for_server(timeout_sec=connect_timeout):
            raise TimeoutError(f"no task manager serves {node.resolve_topic_name(ACTION_NAME)}; start the graph with "
                               "`homiebot up` (same ROS_DOMAIN_ID and --namespace) first")
        sent = client.send_goal_async(request_to_goal(request))
        handle = _wait(sent, connect_timeout, "the task manager did not answer the goal")
        if not handle.accepted:
            raise TimeoutError("the task manager refused the goal")
        rid = RunTaskServer.goal_id(handle)
        events = statuses.of(rid)
        got = handle.get_result_async()
        got.add_done_callback(lambda f: events.put({"id": rid, **result_to_event(f.result().result)}))
        follow = _Follower(rid, echo, warn, _Server(node))
        try:
            if (final := follow.until_final(events, timeout, queued_is_enough=not wait)) is not None:
                return final
        except KeyboardInterrupt:
            if not wait:
                raise
            # as Ctrl-C stops `homiebot run`: the episode is cancelled (or dropped from the queue), its record saved
            handle.cancel_goal_async()
            warn(f"homiebot: interrupted; cancelling {'episode ' + follow.episode if follow.episode else 'submission ' + rid}"
                 + (" (its record is saved)" if follow.episode else ""))
            if (final := follow.until_final(events, CANCEL_WAIT)) is not None:
                return final
            raise
        handle.cancel_goal_async()
        raise TimeoutError(f"task {rid} did not finish within {timeout:g} s (cancelled)")
    finally:
        client.destroy()
        executor.shutdown()
        thread.join(timeout=5)
        node.destroy_node()
        rclpy.try_shutdown()


class _Statuses:
    """Status events by submission id, as they come; one queue per id (events before anyone asked are kept)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queues: dict[str, queue.Queue[dict]] = {}

    def _queue(self, rid: str) -> queue.Queue[dict]:
        with self._lock:
            return self._queues.setdefault(rid, queue.Queue())

    def add(self, msg: TaskStatus) -> None:
        self._queue(msg.id).put(status_to_event(msg))

    def of(self, rid: str) -> queue.Queue[dict]:
        """The events of submission ``rid``, those already heard first."""
        return self._queue(rid)


def _wait(future: Future, timeout: float, what: str) -> Any:
    end = time.monotonic() + timeout
    while not future.done():
        if time.monotonic() > end:
            raise TimeoutError(f"{what} within {timeout:g} s")
        time.sleep(0.02)
    return future.result()


class _Follower:
    """Shows one submission's events in order and tells the final one. Status events and the result travel
    apart (a topic, a service): a result that overtakes its last rounds' events waits for them."""

    def __init__(self, rid: str, echo: Callable[[str], None], warn: Callable[[str], None], server: _Server | None = None) -> None:
        self.rid, self.echo, self.warn, self.server = rid, echo, warn, server
        self.episode = ""
        self.rounds = 0  # the last round shown
        self.final: dict | None = None
        self.final_since = 0.0

    def show(self, event: dict) -> dict | None:
        """Show ``event``; returns the final event (finished, failed) once its rounds have been shown."""
        state = event.get("state")
        if state in FINAL:
            self.final, self.final_since = event, time.monotonic()
        else:
            if state == "running":
                self.episode = str(event.get("episode") or "")
            if state == "round":
                self.rounds = max(self.rounds, int(event.get("round") or 0))
            _show(event, self.echo, self.warn)
        return self._ready()

    def _ready(self) -> dict | None:
        final = self.final
        if final is None:
            return None
        behind = final.get("state") == "finished" and self.rounds < int(final.get("rounds") or 0)
        if behind and time.monotonic() - self.final_since < FEEDBACK_GRACE:
            return None
        _show(final, self.echo, self.warn)
        return final

    def idle(self) -> dict | None:
        """Called when no event came for a while: the final event, if it has waited long enough. Raises
        TaskManagerLost when the task manager that took the goal is gone: no result will come."""
        final = self._ready()
        if final is None and self.server is not None and self.server.gone():
            episode = f" (episode {self.episode})" if self.episode else ""
            raise TaskManagerLost(f"the task manager stopped while it ran submission {self.rid}{episode}: no result will come. "
                                  "`homiebot up` restarts it, and it saves what the episode recorded into the graph's --out folder")
        return final

    def until_final(self, events: queue.Queue[dict], seconds: float, queued_is_enough: bool = False) -> dict | None:
        """Show events from ``events`` for at most ``seconds``; the final one (or, with ``queued_is_enough``, the
        first ``accepted``), None when time ran out."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                event = events.get(timeout=0.1)
            except queue.Empty:
                if (final := self.idle()) is not None:
                    return final
                continue
            if queued_is_enough and event["state"] == "accepted":
                _show(event, self.echo, self.warn)
                return event
            if (final := self.show(event)) is not None:
                return final
        return None


class _Server:
    """Whether the task manager that took a goal is still in the graph, told by the identity of its action
    feedback publisher: a process that was killed sends no result, and one restarted in its place is
    another publisher that knows nothing of the goal. The successor shows within seconds; a killed
    process without one leaves discovery only when its lease ends (Fast DDS: 20 s)."""

    def __init__(self, node: Node) -> None:
        self.node = node
        self.owner: set[bytes] = set()
        self.missing_since: float | None = None
        self.checked = 0.0

    def _publishers(self) -> set[bytes]:
        return {bytes(info.endpoint_gid) for info in self.node.get_publishers_info_by_topic(f"{ACTION_NAME}/_action/feedback")}

    def gone(self) -> bool:
        now = time.monotonic()
        if now - self.checked < 0.5:
            return False
        self.checked = now
        present = self._publishers()
        if not self.owner:  # the first look that finds it names the owner
            self.owner = present
            return False
        if self.owner & present and not present - self.owner:  # a newcomer is its successor: the graph restarted it
            self.missing_since = None
            return False
        self.missing_since = self.missing_since or now
        return now - self.missing_since >= LOST_AFTER


def _show(event: dict, echo: Callable[[str], None], warn: Callable[[str], None]) -> None:
    text, error = _describe(event)
    (warn if error else echo)(text)


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

