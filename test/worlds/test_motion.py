"""In-between states for videos: the person walks along their path over a round's frames."""

from __future__ import annotations

import copy
import math

import pytest

from homiebot.worlds.home.motion import in_between
from homiebot.worlds.home.scene import parse_scene
from homiebot.worlds.home.state import HomeState

from .test_person import scene_data

FPS = 10.0
SPEED = 1.0  # the person's walking speed, m/s
SCRIPT = [{"pick": "green_can"}, {"walk": "bathroom"}]  # picks the can off the brown table, carries it away


def _round_one() -> tuple[HomeState, dict, dict]:
    """A home at the start of round 1 (``before``) and of round 2 (``after``), the person walking in between."""
    s = HomeState.from_spec(parse_scene(scene_data({"position": [6.5, 2.0], "speed": SPEED, "script": SCRIPT})))
    s.advance_people(s.round_time(1))
    before = copy.deepcopy(s.dynamic())
    s.advance_people(s.round_time(2))
    return s, before, copy.deepcopy(s.dynamic())


def _people(state: HomeState, before: dict, after: dict, max_frames: int = 200) -> list[tuple[float, float, bool, str | None]]:
    return [(w.person.x, w.person.y, w.person.moving, w.person.held) for w in in_between(state, before, after, FPS, max_frames)]


def test_the_person_walks_over_the_frames_and_ends_where_the_round_ends() -> None:
    s, before, after = _round_one()
    frames = _people(s, before, after)
    walked = math.dist(before["person"]["pose"][:2], after["person"]["pose"][:2])
    assert walked > 2.0 and len(frames) >= walked / SPEED * FPS  # the robot stands still: frames for the walk
    xy = [tuple(before["person"]["pose"][:2])] + [(x, y) for x, y, _, _ in frames]
    steps = [math.dist(a, b) for a, b in zip(xy, xy[1:])]
    assert max(steps) <= SPEED / FPS + 1e-6  # no jump: at most a tenth of a second's walk per frame
    assert frames[-1][:2] == tuple(after["person"]["pose"][:2])  # the round's end, as today
    assert any(moving for _, _, moving, _ in frames) and all(held == "green_can" for *_, held in frames[25:])
    assert s.dynamic() == after  # drawing changed nothing


def test_the_person_walks_while_the_robot_drives() -> None:
    s, before, after = _round_one()
    s.robot.x, s.robot.y = 2.5, 2.0  # the robot drove across the kitchen meanwhile
    after = copy.deepcopy(s.dynamic())
    states = [(w.robot.x, w.robot.y, w.person.x, w.person.y) for w in in_between(s, before, after, FPS, 200)]
    robot = [(x, y) for x, y, _, _ in states]
    person = [tuple(before["person"]["pose"][:2])] + [(px, py) for _, _, px, py in states]
    assert robot[-1] == (2.5, 2.0) and person[-1] == tuple(after["person"]["pose"][:2])
    assert max(math.dist(a, b) for a, b in zip(person, person[1:])) <= SPEED / FPS + 1e-6


def test_fewer_frames_than_the_walk_still_end_where_the_round_ends() -> None:
    s, before, after = _round_one()
    frames = _people(s, before, after, max_frames=12)
    assert len(frames) == 12 and frames[-1][:2] == tuple(after["person"]["pose"][:2])
    xs = [x for x, _, _, _ in frames]
    assert len(set(xs)) > 6  # spread along the walk, not a jump at the end


def test_a_person_standing_still_adds_no_frames() -> None:
    s = HomeState.from_spec(parse_scene(scene_data({"position": [6.5, 2.0]})))
    s.advance_people(s.round_time(1))
    before = copy.deepcopy(s.dynamic())
    s.advance_people(s.round_time(2))
    assert list(in_between(s, before, copy.deepcopy(s.dynamic()), FPS, 200)) == []


@pytest.mark.parametrize("fps", [2.0, 10.0])
def test_the_person_steps_are_bounded_at_any_frame_rate(fps: float) -> None:
    s, before, after = _round_one()
    xy = [tuple(before["person"]["pose"][:2])] + [(w.person.x, w.person.y) for w in in_between(s, before, after, fps, 400)]
    assert max(math.dist(a, b) for a, b in zip(xy, xy[1:])) <= SPEED / fps + 1e-6
