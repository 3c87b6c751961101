"""The ``RunTask`` action (``homiebot_msgs/action/RunTask`` on ``/homiebot/run_task``), both ends.

The task manager serves it: a goal becomes a submission of its queue, and the submission's status
events (accepted, running, round, warning, finished, failed) become the goal's feedback and result,
and ``homiebot_msgs/TaskStatus`` messages on /homiebot/task/status for everyone else.
``homiebot submit`` and any ROS 2 client (``ros2 action send_goal``, a node in another language) use
it the same way. The conversions live here, next to each other, so that the two ends cannot drift.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from typing import Any

import yaml
from homiebot_msgs.action import RunTask
from homiebot_msgs.msg import Feedback, Subtask, TaskStatus
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.action.server import ServerGoalHandle
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.task import Future

from homiebot.core.contracts import Subtask as SubtaskContract
from homiebot.ros.clients.goal_checks import GoalError, check_seed, parse_task, task_file_data
from homiebot.ros.kit import services
from homiebot.ros.messages.common import subtask_msg, subtask_text

ACTION_NAME = "run_task"
# The goal, result and cancel requests wait here until the executor takes them, one a turn; at rclpy's depth of 10
# a burst of 40 goals sent at once got 11 answers (test_graph, benchmarks/bench_ros_races.py). Replies leave as
# deep a queue.
REQUESTS = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST)
# goals queued or running at once: more are rejected (``accepted: false``), never dropped unanswered
MAX_GOALS = 500
PENDING_LIMIT = 60.0  # s an accepted goal may take to start its execute callback before it is no longer counted
STATUS_TOPIC = "task/status"
# The last round's feedback (a topic) and the goal's result (a reply) travel apart, and rclpy's action client
# drops a feedback that arrives after its goal's result: the result leaves at least this long after it.
FEEDBACK_LEAD = 0.05  # seconds
# the last events stay available to a watcher that joins (or is matched) late; plain subscribers get new ones
STATUS_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST,
                        durability=DurabilityPolicy.TRANSIENT_LOCAL)


# ---------------------------------------------------------------- goal <-> submission


def goal_to_request(goal: RunTask.Goal) -> dict[str, Any]:
    """The submission a goal stands for (what ``/homiebot/task/submit`` would carry, without an id); GoalError
    for a goal that asks for nothing or cannot be read (``goal_checks``: nothing runs for it)."""
    request: dict[str, Any] = {}
    if goal.instruction:
        request["instruction"] = goal.instruction
    if goal.scene:
        scene = goal.scene.strip()
        request["scene"] = check_seed(scene) if scene.isdigit() else scene
    if goal.task_file:
        request["task_file"] = goal.task_file
    if goal.task_yaml:
        request["task"] = parse_task(goal.task_yaml, "task_yaml")
    if not request:
        raise GoalError("the goal is empty: give an instruction (with a scene), a task_file or a task_yaml")
    if goal.use_seed:
        request["seed"] = int(goal.seed)
    return request


def request_to_goal(request: dict[str, Any]) -> RunTask.Goal:
    """The goal for a submission as ``homiebot submit`` builds it (instruction/scene, task_file, seed)."""
    goal = RunTask.Goal()
    goal.instruction = request.get("instruction") or ""
    goal.scene = "" if request.get("scene") is None else str(request["scene"])
    goal.task_file = request.get("task_file") or ""
    if request.get("task") is not None:
        goal.task_yaml = yaml.safe_dump(request["task"], sort_keys=False)
    if request.get("seed") is not None:
        goal.use_seed, goal.seed = True, int(request["seed"])
    return goal


# ---------------------------------------------------------------- status events <-> feedback and result


def _subtask_msg(text: str | None) -> Subtask:
    """A round's subtask text as the typed message; words that are no subtask are kept as the action."""
    if not text:
        return Subtask()
    try:
        return subtask_msg(SubtaskContract.from_text(text))
    except ValueError:
        return Subtask(action=text)


def event_to_feedback(event: dict[str, Any]) -> RunTask.Feedback | None:
    """The feedback for a status event that is not final (None for the final ones)."""
    state = event.get("state")
    fb = RunTask.Feedback()
    if state == "accepted":
        fb.state, fb.queue_position = RunTask.Feedback.QUEUED, int(event.get("queued") or 0)
    elif state == "running":
        fb.state = RunTask.Feedback.RUNNING
        fb.episode_id = str(event.get("episode") or "")
        fb.instruction, fb.planner = str(event.get("instruction") or ""), str(event.get("planner") or "")
        fb.seed, fb.profile = int(event.get("seed") or 0), str(event.get("profile") or "")
    elif state == "round":
        fb.state, fb.round = RunTask.Feedback.ROUND, int(event.get("round") or 0)
        fb.subtask, fb.model = _subtask_msg(event.get("subtask")), str(event.get("model") or "")
        success = bool(event.get("success", event.get("code") is None))
        fb.feedback = Feedback(success=success, code="" if success else str(event.get("code") or ""),
                               message=str(event.get("message") or ""))
        fb.stand_in, fb.seconds = str(event.get("stand_in") or ""), float(event.get("seconds") or 0.0)
    elif state == "warning":
        fb.state, fb.message = RunTask.Feedback.WARNING, str(event.get("reason") or "")
    else:
        return None
    return fb


def feedback_to_event(fb: RunTask.Feedback) -> dict[str, Any]:
    """A feedback message as the status event it came from (what the console lines are made of)."""
    if fb.state == RunTask.Feedback.QUEUED:
        return {"state": "accepted", "queued": fb.queue_position}
    if fb.state == RunTask.Feedback.RUNNING:
        return {"state": "running", "episode": fb.episode_id, "instruction": fb.instruction, "planner": fb.planner,
                "seed": fb.seed, "profile": fb.profile}
    if fb.state == RunTask.Feedback.ROUND:
        return {"state": "round", "round": fb.round, "subtask": subtask_text(fb.subtask), "model": fb.model or None,
                "code": fb.feedback.code or None, "success": fb.feedback.success, "message": fb.feedback.message,
                "seconds": fb.seconds, "stand_in": fb.stand_in or None}
    return {"state": "warning", "reason": fb.message}


def _error_code(event: dict[str, Any]) -> int:
    termination, cause = event.get("termination"), event.get("cause")
    if termination == "cancelled" or cause == "cancelled":
        return RunTask.Result.CANCELLED
    if termination == "interrupted" or cause == "interrupted":
        return RunTask.Result.INTERRUPTED
    if event.get("state") == "finished":
        return RunTask.Result.NONE
    if termination == "refused":
        return RunTask.Result.REFUSED
    return RunTask.Result.INVALID_TASK if cause in ("invalid", None) else RunTask.Result.GRAPH_ERROR


def _goal_state(value: Any) -> int:
    return TaskStatus.GOAL_UNKNOWN if value is None else TaskStatus.GOAL_REACHED if value else TaskStatus.GOAL_NOT_REACHED


def event_to_result(event: dict[str, Any], episode_id: str = "") -> RunTask.Result:
    """The result for a final status event (finished, failed)."""
    result = RunTask.Result()
    result.error_code = _error_code(event)
    result.error_msg = str(event.get("reason") or event.get("error") or "")
    result.goal_satisfied = _goal_state(event.get("goal_satisfied"))
    result.episode_id, result.record = episode_id, str(event.get("record") or "")
    result.termination, result.ended = str(event.get("termination") or ""), bool(event.get("ended"))
    result.rounds, result.failed_rounds = int(event.get("rounds") or 0), int(event.get("failed") or 0)
    result.path_length = float(event.get("path_length") or 0.0)
    result.setup_time, result.wall_time = float(event.get("setup_s") or 0.0), float(event.get("wall_time_s") or 0.0)
    result.why = str(event.get("why") or "")
    return result


def result_to_event(result: RunTask.Result) -> dict[str, Any]:
    """A result as the final status event ``homiebot submit`` prints and takes its exit status from."""
    goal = None if result.goal_satisfied == RunTask.Result.GOAL_UNKNOWN else result.goal_satisfied == RunTask.Result.GOAL_REACHED
    common = {"record": result.record or None, "termination": result.termination or None, "episode": result.episode_id}
    if result.error_code == RunTask.Result.NONE or (result.error_code == RunTask.Result.CANCELLED and result.record):  # ran, then cancelled
        return {"state": "finished", **common, "goal_satisfied": goal, "ended": result.ended, "rounds": result.rounds,
                "failed": result.failed_rounds, "path_length": result.path_length, "setup_s": result.setup_time,
                "wall_time_s": result.wall_time, "why": result.why or None, "error": result.error_msg or None}
    cause = {RunTask.Result.INVALID_TASK: "invalid", RunTask.Result.REFUSED: "invalid", RunTask.Result.INTERRUPTED: "interrupted",
             RunTask.Result.CANCELLED: "cancelled"}.get(result.error_code, "error")
    if cause == "interrupted":
        common["termination"] = "interrupted"
    return {"state": "failed", "cause": cause, "reason": result.error_msg, **common}


def event_to_status(event: dict[str, Any]) -> TaskStatus:
    """A status event as published on /homiebot/task/status."""
    msg = TaskStatus(id=str(event.get("id") or ""), state=str(event.get("state") or ""), cause=str(event.get("cause") or ""),
                     reason=str(event.get("reason") or ""))
    stamp = float(event.get("time") or 0.0)
    msg.stamp.sec, msg.stamp.nanosec = int(stamp), int((stamp % 1) * 1e9)
    msg.queued = int(event.get("queued") or 0)
    msg.episode_id = str(event.get("episode") or "")
    msg.instruction, msg.planner = str(event.get("instruction") or ""), str(event.get("planner") or "")
    msg.seed, msg.profile, msg.setup_time = int(event.get("seed") or 0), str(event.get("profile") or ""), float(event.get("setup_s") or 0.0)
    fb = event_to_feedback(event) if event.get("state") == "round" else None
    if fb is not None:
        msg.round, msg.subtask, msg.model, msg.feedback = fb.round, fb.subtask, fb.model, fb.feedback
        msg.stand_in, msg.seconds = fb.stand_in, fb.seconds
    msg.record, msg.termination = str(event.get("record") or ""), str(event.get("termination") or "")
    msg.ended, msg.goal_satisfied = bool(event.get("ended")), _goal_state(event.get("goal_satisfied"))
    msg.rounds, msg.failed_rounds = int(event.get("rounds") or 0), int(event.get("failed") or 0)
    msg.path_length, msg.wall_time = float(event.get("path_length") or 0.0), float(event.get("wall_time_s") or 0.0)
    msg.why, msg.error = str(event.get("why") or ""), str(event.get("error") or "")
    return msg


def status_to_event(msg: TaskStatus) -> dict[str, Any]:
    """A ``TaskStatus`` message as the status event it was made from (what the console lines are made of)."""
    event: dict[str, Any] = {"id": msg.id, "state": msg.state}
    if msg.state == TaskStatus.ACCEPTED:
        event["queued"] = msg.queued
    elif msg.state == TaskStatus.RUNNING:
        event.update(episode=msg.episode_id, instruction=msg.instruction, planner=msg.planner, seed=msg.seed, profile=msg.profile,
                     setup_s=msg.setup_time)
    elif msg.state == TaskStatus.ROUND:
        fb = RunTask.Feedback(state=RunTask.Feedback.ROUND, round=msg.round, subtask=msg.subtask, model=msg.model,
                              feedback=msg.feedback, stand_in=msg.stand_in, seconds=msg.seconds)
        event.update(feedback_to_event(fb))
    elif msg.state == TaskStatus.WARNING:
        event["reason"] = msg.reason
    else:  # finished, failed
        goal = None if msg.goal_satisfied == TaskStatus.GOAL_UNKNOWN else msg.goal_satisfied == TaskStatus.GOAL_REACHED
        event.update({k: v for k, v in (("cause", msg.cause), ("reason", msg.reason), ("record", msg.record),
                                        ("termination", msg.termination), ("why", msg.why), ("error", msg.error)) if v})
        if msg.state == TaskStatus.FINISHED:
            event.update(goal_satisfied=goal, ended=msg.ended, rounds=msg.rounds, failed=msg.failed_rounds,
                         path_length=msg.path_length, setup_s=msg.setup_time, wall_time_s=msg.wall_time)
    return event


# ---------------------------------------------------------------- the server


Report = Callable[[dict[str, Any]], None]
Accept = Callable[[dict[str, Any], Report], None]
Reject = Callable[[str, str, Report], None]


class _Goal:
    """One goal in flight: its handle, the future its execute callback awaits, its episode id."""

    def __init__(self, handle: ServerGoalHandle) -> None:
        self.handle = handle
        self.done: Future = Future()
        self.episode = ""
        self.fed_at = 0.0  # time.monotonic() of the latest feedback


class RunTaskServer:
    """Serves ``RunTask``: ``accept(request, report)`` queues a submission (the task manager's) and
    ``report`` receives its status events; ``reject(id, reason, report)`` fails a goal that cannot be read
    as a submission (with the same events); ``cancel(id)`` cancels it, queued or running."""

    def __init__(self, node: Node, accept: Accept, reject: Reject, cancel: Callable[[str], None]) -> None:
        self.node, self._accept, self._reject, self._cancel = node, accept, reject, cancel
        self._goals: dict[str, _Goal] = {}
        self._lock = threading.Lock()
        # setting a future from the task manager's worker thread does not wake the executor: this does
        self._wake = node.create_guard_condition(lambda: None)
        # when each goal accepted but not started yet was accepted (one whose reply could not be sent never starts:
        # forgotten after PENDING_LIMIT)
        self._pending: deque[float] = deque()
        self.server = ActionServer(node, RunTask, ACTION_NAME, execute_callback=self._execute,
                                   goal_callback=self._on_goal, cancel_callback=self._on_cancel,
                                   goal_service_qos_profile=REQUESTS, result_service_qos_profile=REQUESTS,
                                   cancel_service_qos_profile=REQUESTS)

    @staticmethod
    def goal_id(handle: ServerGoalHandle) -> str:
        """The submission id of a goal: its UUID, as ``homiebot submit`` prints it."""
        return uuid.UUID(bytes=bytes(handle.goal_id.uuid)).hex[:12]

    def _on_goal(self, goal: RunTask.Goal) -> GoalResponse:
        """Every goal is answered: accepted (and then run, or aborted with the reason it cannot run), or rejected
        (``accepted: false``) while MAX_GOALS goals are waiting or running."""
        now = time.monotonic()
        with self._lock:
            while self._pending and now - self._pending[0] > PENDING_LIMIT:
                self._pending.popleft()
            full = len(self._goals) + len(self._pending) >= MAX_GOALS
            if not full:
                self._pending.append(now)
        if full:
            self.node.get_logger().warning(f"RunTask: a goal was rejected: {MAX_GOALS} goals are queued or running; "
                                           "send it again when some have ended", throttle_duration_sec=5.0)
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def _on_cancel(self, handle: ServerGoalHandle) -> CancelResponse:
        rid = self.goal_id(handle)
        with self._lock:
            known = rid in self._goals
        if known:
            self._cancel(rid)
        return CancelResponse.ACCEPT if known else CancelResponse.REJECT

    async def _execute(self, handle: ServerGoalHandle) -> RunTask.Result:
        with self._lock:
            if self._pending:
                self._pending.popleft()
        if not services.serving(self.node):
            handle.abort()
            return RunTask.Result(error_code=RunTask.Result.INACTIVE, error_msg=services.inactive(self.node))
        rid = self.goal_id(handle)
        goal = _Goal(handle)
        with self._lock:
            self._goals[rid] = goal
        report: Report = lambda event: self._report(rid, event)  # noqa: E731
        try:
            try:
                request = goal_to_request(handle.request)
                if "task_file" in request and not {"instruction", "scene", "task"} & set(request):
                    task_file_data(request["task_file"])  # read now under the limits: a file that cannot be is refused at once
            except GoalError as err:
                self._reject(rid, f"invalid goal: {err}", report)
            except Exception as err:  # noqa: BLE001 - whatever a goal holds, it is answered with the reason
                self._reject(rid, f"invalid goal: {type(err).__name__}: {str(err)[:200]}", report)
            else:
                self._accept({**request, "id": rid}, report)
        except Exception as err:  # noqa: BLE001 - never an abort without a reason, nor a goal left in the table
            if not goal.done.done():
                self._reject(rid, f"invalid goal: {type(err).__name__}: {str(err)[:200]}", report)
        try:
            result: RunTask.Result = await goal.done
        finally:
            with self._lock:
                self._goals.pop(rid, None)
        if result.error_code == RunTask.Result.NONE:
            handle.succeed()
        elif result.error_code == RunTask.Result.CANCELLED and handle.is_cancel_requested:
            handle.canceled()
        else:
            handle.abort()
        return result

    def _report(self, rid: str, event: dict[str, Any]) -> None:
        """A status event of goal ``rid``: feedback, or the result that ends the goal."""
        with self._lock:
            goal = self._goals.get(rid)
        if goal is None or goal.done.done():
            return
        if event.get("state") == "running":
            goal.episode = str(event.get("episode") or "")
        fb = event_to_feedback(event)
        if fb is not None:
            goal.handle.publish_feedback(fb)
            goal.fed_at = time.monotonic()
            return
        time.sleep(max(0.0, goal.fed_at + FEEDBACK_LEAD - time.monotonic()))
        goal.done.set_result(event_to_result(event, goal.episode))
        self._wake.trigger()
