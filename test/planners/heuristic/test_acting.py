"""The hand's steps: go to a thing before acting on it, free the hand first, open a destination before carrying."""

from __future__ import annotations

import pytest

from homiebot.core.contracts import Action, Subtask
from homiebot.planners.heuristic.acting import Decision, Hands
from homiebot.planners.heuristic.episode import Episode
from homiebot.planners.heuristic.memory import Memory


class Explored(Exception):
    """What the hands were sent to find."""


def hands(**mem) -> Hands:
    def explore(what: str):
        raise Explored(what)

    return Hands(Episode(mem=Memory(**mem)), explore)


def decided(call) -> Subtask:
    with pytest.raises(Decision) as d:
        call()
    return d.value.sub


KNOWN = {"fridge": "fridge", "black_table": "table", "red_mug": "mug"}


def test_acting_on_a_thing_goes_to_it_first() -> None:
    h = hands(known=KNOWN, support={"red_mug": "black_table"})
    assert decided(lambda: h.act(Action.PICK, "red_mug", "why")) == Subtask(action=Action.GO_TO, target="red_mug")
    h.ep.mem.near = "black_table"  # standing at what it rests on is near enough
    assert decided(lambda: h.act(Action.PICK, "red_mug", "why")) == Subtask(action=Action.PICK, target="red_mug")


def test_a_thing_is_put_down_where_the_robot_stands_or_on_the_first_surface() -> None:
    h = hands(known={**KNOWN, "white_shelf": "shelf"}, held="red_mug", near="white_shelf")
    assert decided(lambda: h.put_down("red_mug", "why")) == Subtask(action=Action.PUT, target="red_mug", place="white_shelf")
    h.ep.mem.near = "fridge"
    assert decided(lambda: h.put_down("red_mug", "why")) == Subtask(action=Action.GO_TO, target="black_table")


def test_with_no_surface_known_one_is_searched_for() -> None:
    h = hands(known={"fridge": "fridge", "red_mug": "mug"}, held="red_mug")
    with pytest.raises(Explored, match="a free surface"):
        h.put_down("red_mug", "why")


def test_bringing_opens_the_destination_with_a_free_hand_then_picks_and_puts() -> None:
    h = hands(known=KNOWN, support={"red_mug": "black_table"}, near="fridge")
    assert decided(lambda: h.bring("red_mug", "fridge")) == Subtask(action=Action.OPEN, target="fridge")
    h.ep.mem.opened.add("fridge")
    h.ep.mem.near = "black_table"
    assert decided(lambda: h.bring("red_mug", "fridge")) == Subtask(action=Action.PICK, target="red_mug")
    h.ep.mem.held, h.ep.mem.near = "red_mug", "fridge"
    assert decided(lambda: h.bring("red_mug", "fridge")) == Subtask(action=Action.PUT, target="red_mug", place="fridge")
    h.ep.mem.held = None
    h.ep.mem.done.add(("red_mug", "fridge"))
    h.ep.mem.support["red_mug"] = "fridge"
    h.bring("red_mug", "fridge")  # already there: nothing to do


def test_a_thing_two_goals_send_to_two_places_is_not_carried_back_and_forth() -> None:
    h = hands(known={"remote": "remote", "desk": "desk", "shelf": "shelf"}, done={("remote", "desk"), ("remote", "shelf")},
              support={"remote": "shelf"}, near="shelf")
    h.bring("remote", "desk")  # returns: it was put on the desk once, then moved on to the shelf
    h.bring("remote", "shelf")
