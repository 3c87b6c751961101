"""MapKeeper on what it is handed: a home's observations and camera rig, a gripper flag and the home's hints
(any source of them would do). It maps what the views show, binds map ids to the simulator's names, follows
a Pick and a lost grip, and on a robot (no hints) keeps the ids."""

from __future__ import annotations

import pytest

from homiebot.core.contracts import Action, Subtask
from homiebot.perception.detectors import SimTruthDetector
from homiebot.perception.map_keeper import MapKeeper
from homiebot.worlds.home.generate import generate_scene
from homiebot.worlds.home.mapping import rig_from_home
from homiebot.worlds.home.world import EmbeddedHome


@pytest.fixture(scope="module")
def home():
    world = EmbeddedHome(generate_scene(0), width=128, height=128)
    world.reset()
    yield world
    world.close()


def _keeper(home, holding: list[bool], hints: bool = True) -> MapKeeper:
    keeper = MapKeeper(SimTruthDetector(), home.floor_plan(), holding=lambda: holding[0],
                       hints=home.perception_hints() if hints else None)
    obs = home.observe(1)
    seen, report = keeper.update(obs, rig_from_home(home))
    assert report.created and seen.round == obs.round and keeper.map.instances() == []  # glimpsed once: not confirmed
    keeper.update(home.observe(1), rig_from_home(home))  # a second sighting confirms (min_sightings: 2)
    assert len(keeper.update_times) == 2
    return keeper


def test_what_the_views_show_is_mapped_and_bound_to_the_simulators_names(home) -> None:
    holding = [False]
    keeper = _keeper(home, holding)
    instances = list(keeper.map.instances())
    assert instances and all(keeper.belief.lookup(i.id) is not None for i in instances)
    names = set(home.state.layout.objects) | set(home.state.layout.receptacles)
    bound = {i.id: keeper.bind(Subtask(action=Action.GO_TO, target=i.id)).target for i in instances}
    assert any(target in names for target in bound.values()), bound  # privileged skills act on simulator objects
    assert keeper.room_of(instances[0].id) == instances[0].room
    assert keeper.bind(Subtask(action=Action.GO_TO, target="kitchen")).target == "kitchen"  # a room is its own name


def test_a_pick_is_held_until_the_gripper_loses_it(home) -> None:
    holding = [False]
    keeper = _keeper(home, holding)
    objects = [i for i in keeper.map.instances() if i.kind == "object"]
    assert objects, "the first views of home 0 show objects"
    picked = objects[0]
    holding[0] = True
    keeper.note(Subtask(action=Action.PICK, target=picked.id), True)
    assert keeper.held_id() == picked.id and keeper.map.get(picked.id).held
    holding[0] = False  # dropped: the next update makes it stale, to be found again
    keeper.update(home.observe(2), rig_from_home(home))
    assert keeper.held_id() is None and not keeper.map.get(picked.id).held
    keeper.new_episode()
    assert list(keeper.map.instances()) == [] and keeper.update_times == []


def test_on_a_robot_ids_pass_through(home) -> None:
    keeper = _keeper(home, [False], hints=False)
    some = next(iter(keeper.map.instances()))
    assert keeper.bind(Subtask(action=Action.GO_TO, target=some.id)).target == some.id
