"""The person in the embedded home: scripts, walking, carrying, rendering and detection."""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest

from homiebot.core.scenes import SceneError
from homiebot.core.tasks import Task, TaskError, load_task
from homiebot.core.yamlio import read_yaml
from homiebot.worlds.home.person import CARRIED, HAND_HEIGHT, ROUND_SECONDS, STEP_BACK, round_start
from homiebot.worlds.home.scene import parse_scene
from homiebot.worlds.home.scenes import HOME_SCENES
from homiebot.worlds.home.state import HomeState

from ..conftest import ROOT

DEMO = ROOT / "config" / "scenes" / "demo.yaml"
SCRIPT: list[dict[str, Any]] = [
    {"say": "I'll take my mug to the kitchen"},
    {"pick": "white_mug"},
    {"place": "kitchen_counter"},
    {"round": 4, "walk": "bathroom"},
]


def scene_data(person: dict[str, Any] | None = None) -> dict[str, Any]:
    data = read_yaml(DEMO, "scene file", SceneError)
    if person is not None:
        data["person"] = person
    return data


def state_with(person: dict[str, Any]) -> HomeState:
    return HomeState.from_spec(parse_scene(scene_data(person)))


def mug_state() -> HomeState:
    return state_with({"position": [2.5, 4.0], "yaw": 90, "script": SCRIPT})


@pytest.mark.parametrize("person, message", [
    ({"script": []}, "exactly one of 'position' or 'room'"),
    ({"room": "attic"}, "unknown room 'attic'"),
    ({"room": "kitchen", "script": [{"walk": "garage"}]}, "step 1 (walk): unknown place 'garage'"),
    ({"room": "kitchen", "script": [{"pick": "blue_cup"}]}, "step 1 (pick): unknown object 'blue_cup'"),
    ({"room": "kitchen", "script": [{"place": "fridge"}]}, "places on 'fridge' with nothing in hand"),
    ({"room": "kitchen", "script": [{"pick": "white_mug"}, {"pick": "red_book"}]}, "with the hand full"),
    ({"room": "kitchen", "script": [{"round": 3, "say": "hi"}, {"round": 2, "say": "bye"}]}, "time order"),
    ({"room": "kitchen", "script": [{"say": "hi", "walk": "bedroom"}]}, "exactly one of walk, pick, place, say"),
    ({"room": "kitchen", "script": [{"round": -1, "say": "hi"}]}, "greater than or equal to 0"),
    ({"room": "kitchen", "color": "plaid"}, "unknown color 'plaid'"),
    ({"room": "kitchen", "name": "fridge"}, "already a room, receptacle or object"),
    ({"room": "kitchen", "name": "Mum"}, "not a valid name"),
])
def test_bad_scripts_are_refused_with_the_reason(person: dict[str, Any], message: str) -> None:
    with pytest.raises(SceneError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_scene(scene_data(person))


def test_a_start_in_furniture_or_an_unreachable_walk_is_refused_when_the_home_is_built() -> None:
    with pytest.raises(SceneError, match="starts at .* inside furniture"):
        state_with({"position": [0.45, 1.2]})  # in the fridge
    with pytest.raises(SceneError, match=r"starts at \[2.6, 6.3\], where the robot stands"):
        state_with({"position": [2.6, 6.3]})  # the robot starts at (2.5, 6.2)
    s = state_with({"room": "bedroom"})  # the free middle of the robot's room: beside it, not on it
    assert math.dist((s.person.x, s.person.y), (s.robot.x, s.robot.y)) >= 0.59
    with pytest.raises(SceneError, match=r"step 1: 'person' has no free path to walk \(30.0, 30.0\)"):
        state_with({"room": "kitchen", "script": [{"walk": [30.0, 30.0]}]})


def test_walks_are_planned_on_the_free_floor_at_a_human_pace() -> None:
    s = mug_state()
    kinds = [(leg.kind, leg.step) for leg in s.person_legs]
    assert kinds == [("say", 1), ("walk", 2), ("pick", 2), ("walk", 3), ("place", 3), ("walk", 3), ("walk", 4)]
    back = s.person_legs[5]  # done for the round: a step back off the spot they put the mug down from
    assert back.target == "a step back" and math.dist(back.points[0], back.points[-1]) >= STEP_BACK
    assert s.layout.room_at(*back.points[-1]) == "kitchen"
    for leg in s.person_legs:
        if leg.kind == "walk":
            length = sum(math.dist(a, b) for a, b in zip(leg.points, leg.points[1:], strict=False))
            assert leg.end - leg.start == pytest.approx(length / 1.0)  # 1 m/s by default
            assert all(s.nav.is_free(x, y) for x, y in leg.points)
    walk4 = s.person_legs[-1]
    assert walk4.start == round_start(4) == 3 * ROUND_SECONDS  # waits for its round: the place ended earlier
    assert s.layout.room_at(*walk4.points[-1]) == "bathroom"


def test_the_person_walks_carries_and_places() -> None:
    s = mug_state()
    p = s.person
    assert p is not None and (p.x, p.y) == (2.5, 4.0)
    s.advance_people(0.0)
    assert p.said == [(0.0, "I'll take my mug to the kitchen")]
    pick = next(leg for leg in s.person_legs if leg.kind == "pick")
    half_way = pick.start / 2
    s.advance_people(half_way)
    assert p.moving and p.held is None
    assert 0.5 < math.dist((p.x, p.y), (2.5, 4.0)) < half_way + 1e-6  # never faster than 1 m/s
    s.advance_people(pick.start + 3.0)  # picked, and walking to the kitchen
    assert p.held == "white_mug"
    loc = s.locations["white_mug"]
    assert (loc.relation, loc.receptacle) == (CARRIED, None)
    x, y, z, _ = s.object_poses["white_mug"]
    assert z == HAND_HEIGHT and math.dist((x, y), (p.x, p.y)) == pytest.approx(0.5)
    assert s.room_of("white_mug") == s.layout.room_at(p.x, p.y)
    assert not s.grasp("white_mug").ok  # the robot cannot take it out of their hands
    s.advance_people(round_start(3))
    assert p.held is None
    assert s.locations["white_mug"].receptacle == "kitchen_counter"
    assert s.location("white_mug").room == "kitchen"
    s.advance_people(round_start(10))
    assert not p.moving and s.layout.room_at(p.x, p.y) == "bathroom"
    assert p.events == ["0s: said 'I'll take my mug to the kitchen'", f"{pick.start:.0f}s: picked white_mug",
                        f"{pick.end + (s.person_legs[3].end - s.person_legs[3].start):.0f}s: put white_mug on the kitchen_counter"]
    clock = p.clock
    s.advance_people(0.0)  # time never runs backwards
    assert p.clock == clock and s.layout.room_at(p.x, p.y) == "bathroom"


def test_an_object_the_robot_took_is_not_picked() -> None:
    s = mug_state()
    s.robot.x, s.robot.y = 3.8, 7.2  # beside the desk
    assert s.grasp("white_mug").ok
    s.advance_people(round_start(3))
    assert s.person is not None and s.person.held is None
    assert s.held == "white_mug"
    assert any("did not pick white_mug: the robot holds it" in e for e in s.person.events)


def test_person_state_travels_with_the_dynamic_state() -> None:
    s = mug_state()
    s.advance_people(8.0)
    other = mug_state()
    other.apply_dynamic(copy.deepcopy(s.dynamic()))
    assert other.person == s.person
    assert other.locations["white_mug"] == s.locations["white_mug"]
    plain = HomeState.from_spec(parse_scene(scene_data()))
    assert "person" not in plain.dynamic()  # homes without a person keep their state as before
    plain.apply_dynamic(plain.dynamic())
    assert plain.person is None


def test_the_person_is_rendered_and_detected_as_a_person() -> None:
    from homiebot.worlds.home.world import EmbeddedHome

    spec = parse_scene(scene_data({"position": [2.5, 5.0], "yaw": 90, "color": "red", "script": [{"round": 2, "walk": "bathroom"}]}))
    world = EmbeddedHome(spec, width=64, height=64)
    try:
        person_id = world.renderer.instance_ids["person"]
        obs = world.observe(1)  # the robot at (2.5, 6.2) faces south, where the person stands
        assert obs.labels[person_id].category == "person" and obs.labels[person_id].name == "person"
        front = obs.views["front"]
        assert front.segmentation is not None
        mask = front.segmentation == person_id
        assert mask.sum() > 20
        red = front.rgb[mask].astype(int)
        assert ((red[:, 0] - red[:, 1]) > 60).mean() > 0.3  # the red shirt
        obs = world.observe(4)  # they walked away to the bathroom, out of the front view
        assert not (obs.views["front"].segmentation == person_id).any()
        assert world.top_down().objects["person"] == (world.state.person.x, world.state.person.y)
        world.reset()
        assert world.observe(1).labels.get(person_id) is not None  # back where they started
    finally:
        world.close()


def test_a_home_without_a_person_draws_none() -> None:
    from homiebot.worlds.home.world import EmbeddedHome

    world = EmbeddedHome(parse_scene(scene_data()), width=64, height=64, depth=False)
    try:
        assert "person" not in world.renderer.instance_ids
        assert all(label.category != "person" for label in world.observe(1).labels.values())
    finally:
        world.close()


def test_a_task_file_scripts_the_person_of_its_scene(tmp_path) -> None:
    body = ("id: t\ninstruction: put the white mug in the kitchen sink\n"
            f"scene_file: {DEMO}\nperson:\n  room: bedroom\n  script:\n    - {{pick: white_mug}}\n")
    (tmp_path / "task.yaml").write_text(body)
    task = load_task(tmp_path / "task.yaml")
    spec = HOME_SCENES.load(task)
    assert spec.person is not None and spec.person.script[0].pick == "white_mug"
    plain = Task(id="t", instruction="x", scene_file=str(DEMO))
    assert HOME_SCENES.key(task) != HOME_SCENES.key(plain)
    assert HOME_SCENES.load(plain).person is None
    (tmp_path / "bad.yaml").write_text(body.replace("white_mug", "white_mugg"))
    with pytest.raises(TaskError, match=r"bad.yaml: invalid task\n(.|\n)*unknown object 'white_mugg'"):
        load_task(tmp_path / "bad.yaml")



def test_the_shipped_example_task_reads_its_scene_relative_to_itself() -> None:
    task = load_task(ROOT / "config" / "tasks" / "bring_mug.yaml")
    spec = HOME_SCENES.load(task)
    assert spec.person is not None and spec.person.script[1].walk == "bathroom"
    assert task.has_person and task.goal is not None and task.goal[0].kind == "person_has"
