"""``MapAccess`` over a kept map: plain values equal to the map's, a look that keeps them, none without a map."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest

from homiebot.config import RunConfig
from homiebot.core.map_access import MapAccess, MappedPlace
from homiebot.core.tasks import Task
from homiebot.core.world import World
from homiebot.core.world_capabilities import MappedWorld
from homiebot.perception.map_access import KeptMap
from homiebot.runtime import build_world, scene_for

from ..conftest import ROOT

DEMO = ROOT / "config" / "scenes" / "demo.yaml"


def config(mode: str) -> RunConfig:
    return RunConfig.model_validate({"perception": {"mode": mode}, "skill_profile": "perfect",
                                     "world": {"name": "embedded_home", "params": {"width": 256, "height": 256}}})


def task() -> Task:
    return Task(id="mug", instruction="put the white mug in the fridge", scene_file=str(DEMO),
                goal=[{"kind": "object_at", "object": "white_mug", "receptacle": "fridge"}])


@pytest.fixture
def seen() -> Iterator[tuple[World, MapAccess]]:
    """The demo home in mapped perception after two looks from the start (an instance counts after two sightings)."""
    world = build_world(config("mapped"), scene_for(task()))
    try:
        world.reset()
        access = world.mapping()
        assert access is not None
        for _ in range(2):
            access.look()
        yield world, access
    finally:
        world.close()


def test_the_places_are_the_confirmed_instances_as_plain_values(seen: tuple[World, MapAccess]) -> None:
    world, access = seen
    assert isinstance(access, KeptMap)
    places = access.places()
    instances = world.map.instances()
    assert [p.id for p in places] == [i.id for i in instances] and places
    for p, i in zip(places, instances):
        assert isinstance(p, MappedPlace) and p.kind == i.kind and p.articulated == i.articulated
        assert math.isclose(p.x, float(i.position[0])) and math.isclose(p.y, float(i.position[1]))
        assert math.isclose(p.reach, 0.5 * float(max(i.extent[0], i.extent[1])))
        assert p.id in p.description
    assert {r.name for r in access.rooms()} == {r.name for r in world.map.rooms}


def test_a_look_keeps_what_was_mapped(seen: tuple[World, MapAccess]) -> None:
    _, access = seen
    before = {p.id for p in access.places()}
    assert before
    assert access.next_frontier() is not None  # the demo home is not all seen from the start
    access.look()
    assert before <= {p.id for p in access.places()}
    assert access.person_near((1e3, 1e3), within=1.0) is None


def test_a_world_without_mapped_perception_has_no_map_to_read() -> None:
    world = build_world(config("oracle"), scene_for(task()))
    try:
        world.reset()
        assert not isinstance(world, MappedWorld)  # it declares no map, so nothing reads one
    finally:
        world.close()
