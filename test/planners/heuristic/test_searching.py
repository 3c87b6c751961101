"""The search looks in the likeliest room first, then surfaces from close by, then containers, and reports
what a complete search did not find."""

from __future__ import annotations

import pytest

from homiebot.core.contracts import Action, ErrorCode, Feedback, Subtask
from homiebot.planners.heuristic.acting import Decision, Hands
from homiebot.planners.heuristic.episode import Episode
from homiebot.planners.heuristic.feedback import learn
from homiebot.planners.heuristic.memory import Memory
from homiebot.planners.heuristic.searching import Search


def search(**mem) -> Search:
    ep = Episode(mem=Memory(**mem))
    hands = Hands(ep, explore=lambda what: s.explore(what))
    s = Search(ep, hands)
    return s


def next_look(s: Search, what: str) -> Subtask:
    with pytest.raises(Decision) as d:
        s.explore(what)
    return d.value.sub


def test_rooms_are_ranked_by_what_the_phrase_says() -> None:
    s = search()
    assert s.room_rank("bedroom chair", "bedroom") == 0
    assert s.room_rank("bedroom chair", "kitchen") == 3
    assert s.room_rank("the fridge", "kitchen") == 1
    assert s.room_rank("the mug", "kitchen") == 2


def test_the_usual_room_of_the_furniture_named_is_explored_first() -> None:
    s = search(known={"kitchen": "room", "bedroom": "room", "office": "room"})
    assert next_look(s, "the fridge") == Subtask(action=Action.GO_TO, target="kitchen")


def test_a_complete_search_ends_with_a_report_of_what_was_seen_instead() -> None:
    s = search(known={"kitchen": "room", "black_table": "table", "red_mug": "mug"}, rooms_visited={"kitchen"},
               inspected={"black_table"}, glimpsed={"black_table"}, support={"red_mug": "black_table"})
    assert s.done("the white mug")
    assert next_look(s, "the white mug") == Subtask(action=Action.END)
    assert s.ep.report is not None and s.ep.report.startswith("I could not find the white mug anywhere")
    assert s.ep.report.endswith("I saw red_mug on the black_table")


def test_a_flat_thing_may_hide_on_a_surface_seen_from_close_by_but_a_round_one_does_not() -> None:
    s = search(known={"white_shelf": "shelf", "sink": "sink"})
    assert s.may_hide("white_shelf", "the white book") and not s.may_hide("white_shelf", "the white bottle")
    assert s.may_hide("sink", "the white bottle")  # a basin's rim hides what lies low in it
    assert not s.may_hide("white_shelf", "the kitchen")


def test_a_door_that_failed_to_open_is_tried_once_more_then_left() -> None:
    s = search(known={"kitchen": "room", "drawer": "drawer", "cabinet": "cabinet"}, rooms_visited={"kitchen"}, near="drawer")
    m = s.ep.mem
    opening = Subtask(action=Action.OPEN, target="cabinet")
    assert s.boxes_left() == ["cabinet", "drawer"]
    learn(m, (opening, "octo"), Feedback.fail(ErrorCode.E1, "too difficult"))
    assert s.boxes_left() == ["cabinet", "drawer"]
    learn(m, (opening, "rt1"), Feedback.fail(ErrorCode.E1, "too difficult"))
    assert s.boxes_left() == ["drawer"]
    learn(m, (Subtask(action=Action.OPEN, target="drawer"), "octo"), Feedback.ok())
    assert s.boxes_left() == [] and "drawer" in m.searched
