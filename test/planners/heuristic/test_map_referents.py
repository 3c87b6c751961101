"""Phrases ground to map instances by category, colour, room words and the usual room of furniture."""

from __future__ import annotations

from homiebot.core.vocabulary import OBJECT_CLASSES, RECEPTACLE_TYPES
from homiebot.planners.heuristic.episode import Episode
from homiebot.planners.heuristic.map_referents import MapReferents
from homiebot.planners.heuristic.memory import Memory


def referents() -> MapReferents:
    m = Memory(mapped=True, known={"kitchen": "room", "bedroom": "room", "dining_room": "room", "can_1": "can", "can_2": "can",
                                   "table_1": "table", "table_2": "table", "desk_1": "desk"},
               rooms_visited={"kitchen", "bedroom", "dining_room"}, colour={"can_1": "green", "can_2": "red"},
               map_room={"table_1": "bedroom", "table_2": "dining_room", "desk_1": "bedroom", "can_1": "bedroom"},
               support={"can_1": "desk_1"}, map_xy={"table_1": (0.0, 0.0), "desk_1": (3.0, 0.0)}, robot_xy=(3.0, 1.0))
    return MapReferents(Episode(mem=m))


def test_colour_and_category_pick_the_instance() -> None:
    r = referents()
    assert r.ground("the red can", OBJECT_CLASSES) == "can_2"
    assert r.candidates("a can", OBJECT_CLASSES) == ["can_1", "can_2"]
    assert r.ground("the sofa", RECEPTACLE_TYPES) is None


def test_a_room_word_keeps_what_stands_there_and_the_usual_room_breaks_ties() -> None:
    r = referents()
    assert r.ground("the bedroom table", RECEPTACLE_TYPES) == "table_1"
    assert r.ground("the table", RECEPTACLE_TYPES) == "table_2"  # tables stand in dining rooms first
    assert r.usual_rank("table_2") == 0 and r.usual_rank("table_1") == 3


def test_places_said_in_a_room_are_its_furniture_surfaces_and_nearest_first() -> None:
    r = referents()
    assert r.said_places("the bedroom") == ["desk_1", "table_1"]
    assert r.rests_at("can_1", "the bedroom") and not r.rests_at("can_1", "the dining room")
    assert r.object("green can in the bedroom", "green can", "bedroom") == "can_1"
