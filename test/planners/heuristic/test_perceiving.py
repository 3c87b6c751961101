"""The map's summary replaces what is known: rooms, instances (not stale ones), door states, the robot's room."""

from __future__ import annotations

from homiebot.planners.heuristic.memory import Memory
from homiebot.planners.heuristic.perceiving import read_map

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
