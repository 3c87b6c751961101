"""Scene files: validation with messages that name the problem, and generated homes."""

from __future__ import annotations

import copy

import pytest
import yaml

from homiebot.worlds.home.catalog import OBJECT_CLASSES, RECEPTACLE_TYPES
from homiebot.worlds.home.generate import generate_scene
from homiebot.worlds.home.scene import SceneError, dump_scene, load_scene, parse_scene
from homiebot.worlds.home.state import HomeState

from ..conftest import ROOT

DEMO = ROOT / "config" / "scenes" / "demo.yaml"


@pytest.fixture
def demo_data():
    return yaml.safe_load(DEMO.read_text())


def _build(data):
    return HomeState.from_spec(parse_scene(data, "test.yaml"))


def test_demo_scene_loads_with_bare_on_keys():
    spec = load_scene(DEMO)
    assert spec.objects[0].on == "brown_table" and spec.objects[0].relation == "on"
    assert parse_scene(yaml.safe_load(dump_scene(spec))) == spec


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d["receptacles"][0].update(type="fridgee"), "unknown receptacle type 'fridgee'"),
    (lambda d: d["receptacles"][0].update(room="garage"), "unknown room 'garage'"),
    (lambda d: d["objects"][0].update({"class": "dragon"}), "unknown object class 'dragon'"),
    (lambda d: d["objects"][0].update(color="plaid"), "unknown color 'plaid'"),
    (lambda d: d["objects"].append(dict(d["objects"][1])), "used twice"),
    (lambda d: d["objects"][1].update({"on": "fridge"}), "exactly one of"),
    (lambda d: d["objects"][0].update({True: "fridge"}), "objects go 'in' a fridge"),
    (lambda d: d["rooms"][0].update(type="dungeon"), "unknown room type"),
    (lambda d: d["rooms"][0].update(size=[1.0, 4.5]), "at least 2 m"),
    (lambda d: d.update(version=7), "version 7 is not supported"),
    (lambda d: d.update(colour="red"), "colour"),
    (lambda d: d["rooms"][0].update(name="Kitchen!"), "lower_snake_case"),
])
def test_schema_errors_name_the_field(demo_data, mutate, message):
    data = copy.deepcopy(demo_data)
    mutate(data)
    with pytest.raises(SceneError, match="test.yaml") as err:
        _build(data)
    assert message in str(err.value)


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d["receptacles"][0].update(position=[-0.2, 1.2]), "sticks out of room 'kitchen'"),
    (lambda d: d["receptacles"][1].update(position=[0.45, 1.6]), "overlap"),
    (lambda d: d["rooms"][1].update(origin=[4.0, 0.0]), "overlap"),
    (lambda d: d["rooms"][3].update(origin=[12.0, 9.0]), "cannot be reached"),
    (lambda d: d["robot"].update(position=[0.45, 1.2]), "inside furniture"),
    (lambda d: d["objects"][11].update(floor=[30.0, 1.0]), "outside every room"),
    (lambda d: d["objects"][0].update(offset=[5.0, 0.0]), "outside 'brown_table'"),
    (lambda d: d.update(doors=[["kitchen", "bathroom"]]), "do not share a wall"),
])
def test_geometry_errors_name_the_things(demo_data, mutate, message):
    data = copy.deepcopy(demo_data)
    mutate(data)
    with pytest.raises(SceneError, match=message):
        _build(data)


def test_missing_file_and_bad_yaml(tmp_path):
    with pytest.raises(SceneError, match="cannot read scene file"):
        load_scene(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("rooms: [\n")
    with pytest.raises(SceneError, match="not valid YAML"):
        load_scene(bad)


def test_generated_homes_are_valid_varied_and_deterministic():
    room_types, rec_types, classes, colors_per_table = set(), set(), set(), set()
    for seed in range(8):  # enough to cover every type and 18 classes (a home takes about a second)
        spec = generate_scene(seed)
        if seed < 3:
            assert spec == generate_scene(seed)
        state = HomeState.from_spec(spec)
        assert state.nav.is_free(state.robot.x, state.robot.y)
        room_types |= {r.type for r in spec.rooms}
        rec_types |= {r.type for r in spec.receptacles}
        classes |= {o.object_class for o in spec.objects}
        colors_per_table |= {r.color for r in spec.receptacles if r.type == "table"}
        names = [o.name for o in spec.objects]
        assert len(names) == len(set(names))
    assert len(room_types) >= 4
    assert {"table", "kitchen_counter", "sofa", "tv_stand", "chair", "sink", "cabinet", "drawer", "fridge"} <= rec_types
    assert len(classes) >= 18 and len(OBJECT_CLASSES) >= 20
    assert len(colors_per_table) >= 2
    assert sum(RECEPTACLE_TYPES[t].articulated for t in rec_types) == 3


def test_instances_of_a_class_are_told_apart_by_name():
    spec = load_scene(DEMO)
    sinks = [r.name for r in spec.receptacles if r.type == "sink"]
    assert sinks == ["kitchen_sink", "bathroom_sink"]
