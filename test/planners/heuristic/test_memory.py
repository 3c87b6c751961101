"""Memory answers what it can from what is known alone: kinds, rooms not visited, containers not looked into."""

from __future__ import annotations

from homiebot.planners.heuristic.memory import Memory


def memory() -> Memory:
    return Memory(known={"kitchen": "room", "bathroom": "room", "fridge": "fridge", "sink": "sink", "black_table": "table",
                         "red_mug": "mug", "green_can": "can"},
                  support={"red_mug": "black_table", "green_can": "black_table"}, rooms_visited={"kitchen"})


def test_kinds_and_what_is_unvisited_or_unsearched() -> None:
    m = memory()
    assert (m.kind("kitchen"), m.kind("fridge"), m.kind("red_mug"), m.kind("unknown_thing")) == ("room", "receptacle", "object", "object")
    assert m.unvisited_rooms() == ["bathroom"]
    assert m.closable("fridge") and not m.closable("black_table")
    assert m.unsearched_boxes() == ["fridge"]
    m.searched.add("fridge")
    assert m.unsearched_boxes() == []


def test_banned_names_are_not_offered_and_the_held_thing_rests_nowhere() -> None:
    m = memory()
    m.banned.add("green_can")
    assert m.of({"mug", "can"}) == {"red_mug": "mug"}
    m.held = "red_mug"
    assert m.on("black_table") == ["green_can"]


def test_basins_are_open_containers_not_stood_next_to() -> None:
    m = memory()
    assert m.basins() == ["sink"]
    m.inspected.add("sink")
    assert m.basins() == []


def test_a_room_is_named_with_or_without_its_room_word() -> None:
    m = Memory(known={"living_room": "room", "kitchen": "room"})
    assert m.room_named("the living") == "living_room"
    assert m.room_named("the kitchen") == "kitchen"
    assert m.room_named("the kitchen", skip={"kitchen"}) is None
    assert m.room_named("the garden") is None
