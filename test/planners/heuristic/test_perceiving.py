"""The map's summary replaces what is known: rooms, instances (not stale ones), door states, the robot's room; and what
a thing seen in the views is taken to rest on."""

from __future__ import annotations

from homiebot.perception.visible import Sighting, supports
from homiebot.planners.heuristic.memory import Memory
from homiebot.planners.heuristic.perceiving import read_map, resting_on

ROOMS = [{"name": "kitchen", "rect": [0, 0, 5, 5]}, {"name": "bedroom", "rect": [5, 0, 10, 5]}]


def summary(*instances: dict) -> dict:
    return {"robot": [1.0, 1.0], "rooms": ROOMS, "instances": list(instances)}


FRIDGE = {"id": "fridge_1", "label": "fridge", "kind": "receptacle", "colour": "white", "position": [4.0, 4.0, 0.9],
          "room": "kitchen", "is_open": True}
CAN = {"id": "can_1", "label": "can", "kind": "object", "colour": "green", "position": [4.0, 4.0, 1.0], "room": "kitchen",
       "support": "fridge_1"}


def test_the_map_is_the_authority_on_what_exists() -> None:
    m = Memory(known={"old_thing": "mug"}, forgotten={"can_1"})
    read_map(m, summary(FRIDGE, CAN, {**CAN, "id": "can_2", "stale": True}), can_explore=True)
    assert m.mapped and m.known == {"kitchen": "room", "bedroom": "room", "fridge_1": "fridge", "can_1": "can"}
    assert m.support["can_1"] == "fridge_1" and m.colour["can_1"] == "green" and m.map_xy["can_1"] == (4.0, 4.0)
    assert m.robot_room == "kitchen" and m.robot_xy == (1.0, 1.0) and "fridge_1" in m.opened and not m.forgotten
    assert m.rooms_visited == set()  # with Explore, a room counts as searched once explored


def test_a_shut_door_and_the_room_stood_in_without_explore() -> None:
    m = Memory(opened={"fridge_1"})
    read_map(m, summary({**FRIDGE, "is_open": False}), can_explore=False)
    assert "fridge_1" not in m.opened and m.rooms_visited == {"kitchen"}


def sight(name: str, category: str, bbox: tuple[int, int, int, int], depth: float | None, view: str = "left") -> Sighting:
    r0, c0, r1, c1 = bbox
    return Sighting(name, category, view, (r1 - r0 + 1) * (c1 - c0 + 1), bbox, depth)


def test_a_thing_rests_on_the_furniture_at_its_own_depth_not_the_larger_one_behind_it():
    """Seen across a room (as from a sofa 1.9 m away), a candle put on a table lies inside the table's box and inside
    the larger box of the TV stand behind it; both are within the depth tolerance. The table holds it."""
    seen = {"purple_candle": [sight("purple_candle", "candle", (40, 60, 45, 63), 1.90)],
            "black_table": [sight("black_table", "table", (38, 40, 70, 90), 1.80)],
            "tv_stand": [sight("tv_stand", "tv_stand", (20, 30, 80, 120), 2.21)]}
    under = supports(seen, "purple_candle")
    assert under == ["tv_stand", "black_table"]  # the larger first
    assert resting_on(seen, "purple_candle", under) == "black_table"


def test_without_depth_the_largest_holds_it():
    seen = {"cup": [sight("cup", "cup", (40, 60, 45, 63), None)],
            "counter": [sight("counter", "kitchen_counter", (38, 40, 70, 90), None)],
            "shelf": [sight("shelf", "shelf", (20, 30, 80, 120), None)]}
    assert resting_on(seen, "cup", supports(seen, "cup")) == "shelf"
