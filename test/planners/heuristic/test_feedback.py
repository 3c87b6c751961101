"""Feedback on the last subtask updates memory: where the robot is, what is open, and what to repair."""

from __future__ import annotations

from homiebot.core.contracts import Action, ErrorCode, Feedback, Subtask
from homiebot.planners.heuristic.feedback import MAX_FAILS, learn
from homiebot.planners.heuristic.memory import Memory


def test_a_successful_go_to_a_room_visits_it() -> None:
    m = Memory(known={"kitchen": "room"})
    learn(m, (Subtask(action=Action.GO_TO, target="kitchen"), "nav"), Feedback.ok())
    assert m.near == "kitchen" and "kitchen" in m.inspected and "kitchen" in m.rooms_visited


def test_a_put_is_remembered_as_done() -> None:
    m = Memory(known={"red_mug": "mug", "fridge": "fridge"})
    learn(m, (Subtask(action=Action.PUT, target="red_mug", place="fridge"), "arm"), Feedback.ok())
    assert ("red_mug", "fridge") in m.done and m.support["red_mug"] == "fridge"


def test_a_closed_container_and_a_rejected_name_are_learnt() -> None:
    m = Memory(known={"red_mug": "mug", "fridge": "fridge"}, opened={"fridge"})
    learn(m, (Subtask(action=Action.PICK, target="red_mug"), "arm"), Feedback.fail(ErrorCode.L3, "closed", container="fridge"))
    assert "fridge" not in m.opened and m.support["red_mug"] == "fridge"
    learn(m, (Subtask(action=Action.PICK, target="red_mug"), "arm"), Feedback.fail(ErrorCode.F2, "no such thing", name="red_mug"))
    assert "red_mug" in m.forgotten and "red_mug" not in m.known


def test_a_thing_that_fails_too_often_is_given_up() -> None:
    m = Memory(known={"red_mug": "mug"}, near="red_mug")
    pick = Subtask(action=Action.PICK, target="red_mug")
    for i in range(MAX_FAILS):
        assert "red_mug" not in m.given_up
        learn(m, (pick, f"arm{i}"), Feedback.fail(ErrorCode.E1, "slipped"))
    assert m.fails[pick.text()] == ["arm0", "arm1", "arm2"] and "red_mug" in m.given_up and m.near is None


def test_a_forbidden_room_counts_as_searched() -> None:
    m = Memory(known={"bathroom": "room"})
    learn(m, (Subtask(action=Action.GO_TO, target="bathroom"), "nav"), Feedback.fail(ErrorCode.S2, "not there"))
    assert "bathroom" in m.banned and "bathroom" in m.rooms_visited


def test_nothing_is_learnt_before_the_first_subtask() -> None:
    m = Memory()
    learn(m, None, Feedback.ok())
    assert m == Memory()
