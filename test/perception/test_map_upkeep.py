"""Misses, relations, the robot's own actions, the map in words and lifting views, each part alone."""

from __future__ import annotations

import math

import numpy as np
import pytest

from homiebot.core.contracts import PERSON_KIND, Observation, Pose2D, ViewImage
from homiebot.core.rooms import RoomPrior
from homiebot.perception.detection import Detection
from homiebot.perception.instance_fusion import InstanceFusion
from homiebot.perception.map_instance import MapError
from homiebot.perception.map_relations import SupportRelations
from homiebot.perception.map_settings import MapSettings
from homiebot.perception.map_text import MapText
from homiebot.perception.miss_check import MissCheck
from homiebot.perception.projection import CameraRig
from homiebot.perception.robot_bookkeeping import RobotBookkeeping
from homiebot.perception.sighting_lift import ViewLifter

from .map_samples import place, store

INTRINSICS = (64.0, 64.0, 63.5, 63.5)
ROOMS = [RoomPrior("kitchen", 0.0, 0.0, 4.0, 4.0), RoomPrior("bedroom", 4.0, 0.0, 8.0, 4.0)]


def looking_along_x(x: float, y: float, z: float) -> np.ndarray:
    """World-from-camera (x right, y down, z forward) of a level camera at (x, y, z) looking along +x."""
    pose = np.eye(4)
    pose[:3, :3] = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])
    pose[:3, 3] = (x, y, z)
    return pose


def observation(depth: float, size: int = 128) -> Observation:
    """The front view sees ``depth`` everywhere; the other views have no depth (nothing to place)."""
    d = np.full((size, size), depth, dtype=np.float32)
    rgb = np.full((*d.shape, 3), 250, np.uint8)
    views = {"front": ViewImage(rgb=rgb, depth=d), **{v: ViewImage(rgb=rgb) for v in ("left", "back", "right")}}
    return Observation(round=0, views=views, pose=Pose2D(x=0.0, y=2.0, yaw=0.0))


RIG = CameraRig(INTRINSICS, {"front": looking_along_x(0.0, 2.0, 0.8)})


def test_should_see_what_is_in_view_and_not_hidden() -> None:
    s = store()
    table = place(s, "table", (1.6, 1.6, 0.0), (2.4, 2.4, 0.8))
    check = MissCheck(s, s.settings)
    assert check.should_see(table, observation(5.0), RIG)  # the camera sees past where it stood
    assert not check.should_see(table, observation(0.5), RIG)  # something nearer hides it
    s.settings.max_range = 1.0
    assert not check.should_see(table, observation(5.0), RIG)  # too far to count as a miss


def test_misses_drop_false_positives_and_make_beliefs_stale(monkeypatch) -> None:
    s = store(stale_after=2)
    glimpse = place(s, "mug", (1.0, 1.0, 0.8), (1.1, 1.1, 0.9), times_seen=1)
    mug = place(s, "cup", (2.0, 1.0, 0.8), (2.1, 1.1, 0.9), last_seen=1)
    twin = place(s, "cup", (3.0, 1.0, 0.8), (3.1, 1.1, 0.9), first_seen=4)
    check = MissCheck(s, s.settings)
    monkeypatch.setattr(check, "should_see", lambda inst, obs, rig: inst is not twin)
    obs = observation(5.0)
    assert check.check(obs, RIG, set()) == ([glimpse.id, mug.id], [], [])
    assert check.check(obs, RIG, set()) == ([glimpse.id, mug.id], [mug.id], [glimpse.id, mug.id])
    assert [i.id for i in s] == [twin.id] and mug.stale and mug.confidence == 0.0


def test_relations_pick_the_smallest_support_and_the_room() -> None:
    s = store()
    table = place(s, "table", (1.0, 1.0, 0.0), (2.0, 2.0, 0.7))
    fridge = place(s, "fridge", (5.0, 1.0, 0.0), (5.8, 1.8, 1.8))
    tray = place(s, "shelf", (1.4, 1.4, 0.0), (1.7, 1.7, 0.7))
    cup = place(s, "cup", (1.5, 1.5, 0.7), (1.6, 1.6, 0.8))
    milk = place(s, "bottle", (5.3, 1.3, 0.4), (5.4, 1.4, 0.6))
    ball = place(s, "toy_block", (3.0, 3.0, 0.0), (3.1, 3.1, 0.1))
    book = place(s, "book", (3.0, 1.0, 1.0), (3.1, 1.1, 1.1))
    SupportRelations(s, ROOMS).refresh()
    assert (cup.relation, cup.support, cup.room) == ("on", tray.id, "kitchen")
    assert (milk.relation, milk.support, milk.room) == ("in", fridge.id, "bedroom")
    assert (ball.relation, ball.support) == ("floor", None) and (book.relation, book.support) == (None, None)
    assert table.room == "kitchen"
    cup.held = True
    SupportRelations(s, ROOMS).refresh()
    assert (cup.relation, cup.support) == ("held", None)


def test_the_robots_pick_put_and_open_reach_the_map() -> None:
    s = store()
    keeping = RobotBookkeeping(s, InstanceFusion(s))
    table = place(s, "table", (1.0, 1.0, 0.0), (2.0, 2.0, 0.7))
    cup = place(s, "cup", (3.0, 3.0, 0.0), (3.1, 3.1, 0.1), stale=True)
    with pytest.raises(MapError, match="not an object the robot can hold"):
        keeping.mark_held(table.id, None)
    keeping.mark_held(cup.id, (2.5, 2.5, 0.0))
    assert cup.held and not cup.stale and cup.relation == "held" and np.allclose(cup.position, (2.5, 2.5, 0.05))
    keeping.mark_placed(cup.id, table.id, (2.5, 2.5, 0.0))
    assert not cup.held and cup.placed_on == table.id and (cup.relation, cup.support) == ("on", table.id)
    assert np.allclose(cup.position, (1.5, 1.5, 0.75)) and np.allclose(cup.lo, (1.45, 1.45, 0.7))
    keeping.mark_placed(cup.id, None, (0.5, 0.5, 0.0))
    assert cup.relation == "floor" and np.allclose(cup.position, (0.5, 0.5, 0.05))
    with pytest.raises(MapError, match="has no door or drawer"):
        keeping.set_open(table.id, True)
    fridge = place(s, "fridge", (5.0, 1.0, 0.0), (5.8, 1.8, 1.8))
    keeping.set_open(fridge.id, True)
    assert fridge.is_open is True


def test_the_map_in_words() -> None:
    s = store()
    text = MapText(s, ROOMS)
    assert text.describe() == "Nothing seen yet."
    fridge = place(s, "fridge", (5.0, 1.0, 0.0), (5.8, 1.8, 1.8), colour="white", is_open=False, room="bedroom")
    milk = place(s, "bottle", (5.3, 1.3, 0.4), (5.4, 1.4, 0.6), colour="red", relation="in", support=fridge.id, room="bedroom")
    ball = place(s, "toy_block", (3.0, 3.0, 0.0), (3.1, 3.1, 0.1), relation="floor", room="kitchen", stale=True, last_seen=4)
    assert text.where(milk) == f"in the white fridge {fridge.id} (bedroom)"
    assert text.description(fridge) == f"white fridge {fridge.id}, closed (bedroom)"
    assert text.description(ball) == f"toy block {ball.id} on the floor (kitchen) (last seen in round 4, not there any more)"
    assert text.describe().splitlines() == [f"kitchen: toy block {ball.id} on the floor (last seen in round 4, not there any more)",
                                            f"bedroom: white fridge {fridge.id} (closed): red bottle {milk.id} in it"]
    milk.held = True
    assert text.where(milk) == "in the robot's gripper" and text.describe().endswith(f"holding: red bottle {milk.id}")


def test_a_detection_is_lifted_to_world_points() -> None:
    lifter = ViewLifter(MapSettings(max_points=50))
    depth = np.full((128, 128), 2.0)
    depth[60:70, 60:62] = 6.0  # background inside the box
    det = Detection("mug", 0.8, (56, 56, 71, 71), attributes={"open": 1})
    s = lifter.lift(det, "front", np.full((128, 128, 3), 250, np.uint8), depth, INTRINSICS, looking_along_x(0.0, 2.0, 0.8))
    assert s is not None and len(s.points) <= 50 and s.is_open is True and s.colour == "white"
    assert np.allclose(s.points[:, 0], 2.0) and math.isclose(float(s.centre[1]), 2.0, abs_tol=0.1)
    assert lifter.lift(det, "front", np.zeros((128, 128, 3), np.uint8), np.zeros((128, 128)), INTRINSICS, np.eye(4)) is None
    with pytest.raises(MapError, match="mask has shape"):
        lifter.lift(Detection("mug", 0.8, (0, 0, 1, 1), mask=np.ones((4, 4), bool)), "front", np.zeros((8, 8, 3), np.uint8),
                    np.ones((8, 8)), INTRINSICS, np.eye(4))


def test_views_are_lifted_without_people() -> None:
    lifter = ViewLifter(MapSettings())
    dets = {"front": [Detection("mug", 0.8, (56, 56, 71, 71)), Detection(PERSON_KIND, 0.9, (10, 10, 100, 40))]}
    lifted = lifter.lift_views(observation(2.0), dets, RIG)
    assert [s.label for s in lifted.sightings] == ["mug"]
    assert len(lifted.depth_points) == 1 and lifted.depth_points[0].shape == lifted.cameras[0].shape == (32 * 32, 3)
    with pytest.raises(MapError, match="no camera pose for view 'front'"):
        lifter.lift_views(observation(2.0), dets, CameraRig(INTRINSICS, {}))
