"""``homiebot submit``'s side of RunTask without a graph: goals from submissions, events from feedback and
results, and the order they are shown in (homiebot/ros/clients/submit.py, homiebot/ros/clients/run_task.py)."""

from __future__ import annotations

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from homiebot_msgs.action import RunTask  # noqa: E402
from homiebot_msgs.msg import TaskStatus  # noqa: E402
from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402

from homiebot.ros.clients import submit as submit_module  # noqa: E402
from homiebot.ros.clients.run_task import (  # noqa: E402
    GoalError,
    event_to_feedback,
    event_to_result,
    event_to_status,
    feedback_to_event,
    goal_to_request,
    request_to_goal,
    result_to_event,
    status_to_event,
)
from homiebot.ros.clients.submit import _Follower  # noqa: E402

ROUND = {"state": "round", "round": 2, "subtask": "[Put, green_can, fridge]", "model": "rt1", "code": "L3", "success": False,
         "message": "the fridge is closed", "seconds": 1.5, "stand_in": None}
FINISHED = {"state": "finished", "record": "runs/x/episode.json", "ended": True, "goal_satisfied": True, "rounds": 2,
            "termination": "end", "setup_s": 0.5, "wall_time_s": 3.0, "failed": 1, "path_length": 4.25, "error": None,
            "why": None}


def test_a_submission_and_its_goal_are_the_same_request() -> None:
    for request in ({"instruction": "take the can", "scene": 3, "seed": 7}, {"task_file": "/tmp/t.yaml"},
                    {"task": {"id": "t", "instruction": "go to the sofa"}}, {"instruction": "x", "scene": "/tmp/s.yaml"}):
        assert goal_to_request(request_to_goal(request)) == request


def test_a_goal_whose_task_is_not_yaml_is_refused_with_the_field_named() -> None:
    with pytest.raises(GoalError, match="task_yaml"):
        goal_to_request(RunTask.Goal(task_yaml="{unclosed"))
    with pytest.raises(GoalError, match="task_yaml must be a task"):
        goal_to_request(RunTask.Goal(task_yaml="- a list"))


def test_round_feedback_is_typed_and_reads_back_as_the_event() -> None:
    fb = event_to_feedback(ROUND)
    assert fb is not None and fb.state == RunTask.Feedback.ROUND
    assert (fb.subtask.action, fb.subtask.target, fb.subtask.place) == ("Put", "green_can", "fridge")
    assert (fb.feedback.success, fb.feedback.code) == (False, fb.feedback.L3)
    assert feedback_to_event(fb) == ROUND
    end = feedback_to_event(event_to_feedback({"state": "round", "round": 3, "subtask": "[End]", "model": None, "code": None,
                                               "success": True, "message": "", "seconds": 0.0}))
    assert end["subtask"] == "[End]" and end["success"] and end["code"] is None


@pytest.mark.parametrize(("event", "code", "state"), [
    (FINISHED, RunTask.Result.NONE, "finished"),
    ({**FINISHED, "termination": "cancelled", "goal_satisfied": None}, RunTask.Result.CANCELLED, "finished"),
    ({"state": "failed", "cause": "invalid", "reason": "invalid submission: the instruction is empty"}, RunTask.Result.INVALID_TASK,
     "failed"),
    ({"state": "failed", "cause": "invalid", "termination": "refused", "reason": "could not read"}, RunTask.Result.REFUSED, "failed"),
    ({"state": "failed", "cause": "error", "termination": "error", "reason": "the planner node died"}, RunTask.Result.GRAPH_ERROR,
     "failed"),
    ({"state": "failed", "cause": "interrupted", "termination": "interrupted", "reason": "stopping"}, RunTask.Result.INTERRUPTED,
     "failed"),
    ({"state": "failed", "cause": "cancelled", "termination": "cancelled", "reason": "cancelled before it started"},
     RunTask.Result.CANCELLED, "failed"),
])
def test_every_ending_has_its_error_code_and_reads_back(event: dict, code: int, state: str) -> None:
    result = event_to_result(event, "ep1")
    assert result.error_code == code
    back = result_to_event(result)
    assert back["state"] == state and back["episode"] == "ep1"
    if state == "failed":
        assert back["reason"] == event["reason"] and back["cause"] == event["cause"]
    else:
        assert back["goal_satisfied"] == event["goal_satisfied"] and back["rounds"] == event["rounds"]


def test_a_result_that_overtakes_its_last_round_waits_for_it(monkeypatch: pytest.MonkeyPatch) -> None:
    out: list[str] = []
    follow = _Follower("abc", out.append, out.append)
    assert follow.show({"state": "round", **{k: v for k, v in ROUND.items() if k != "state"}, "round": 1}) is None
    assert follow.show(FINISHED) is None  # round 2 not shown yet
    assert follow.show(ROUND) is FINISHED
    assert "round 2" in out[-2].lower() or "[put, green_can, fridge]" in out[-2].lower()
    assert "episode record: runs/x/episode.json" in out[-1]


def test_a_result_whose_rounds_never_come_is_shown_after_a_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    out: list[str] = []
    follow = _Follower("abc", out.append, out.append)
    clock = [100.0]
    monkeypatch.setattr(submit_module.time, "monotonic", lambda: clock[0])
    assert follow.show(FINISHED) is None and follow.idle() is None
    clock[0] += submit_module.FEEDBACK_GRACE + 0.1
    assert follow.idle() is FINISHED and "episode record" in out[-1]


@pytest.mark.parametrize("event", [
    {"id": "abc", "state": "accepted", "queued": 2},
    {"id": "abc", "state": "running", "episode": "demo_seed1", "instruction": "take the can", "planner": "oracle", "seed": 1,
     "profile": "default", "setup_s": 0.25},
    {"id": "abc", **ROUND},
    {"id": "abc", "state": "warning", "reason": "the bag of this episode is incomplete"},
    {"id": "abc", **FINISHED, "why": "everything the instruction asks for is done", "error": None},
    {"id": "abc", "state": "failed", "cause": "error", "reason": "the planner node stopped", "record": "runs/x/episode.json",
     "termination": "error"},
])
def test_a_status_message_reads_back_as_its_event(event: dict) -> None:
    back = status_to_event(deserialize_message(serialize_message(event_to_status({"time": 12.5, **event})), TaskStatus))
    assert {k: v for k, v in back.items() if v is not None} == {k: v for k, v in event.items() if v is not None}
