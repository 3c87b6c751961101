"""The kinematic home: occupancy, paths, reach, containers and drawers."""

from __future__ import annotations

import math
import random

from homiebot.worlds.home.navigation import Pose2D
from homiebot.worlds.home.scene import load_scene
from homiebot.worlds.home.state import ARM_REACH, HomeState

from ..conftest import ROOT


def demo_state() -> HomeState:
    return HomeState.from_spec(load_scene(ROOT / "config" / "scenes" / "demo.yaml"))


def test_occupancy_marks_walls_and_furniture_and_leaves_doorways_open():
    s = demo_state()
    nav = s.nav
    assert nav.occupancy[nav.cell(0.45, 1.2)]          # inside the fridge
    assert nav.occupancy[nav.cell(5.0, 0.5)]           # the kitchen / living-room wall
    assert not nav.occupancy[nav.cell(5.0, 2.25)]      # ... and its doorway
    assert nav.is_free(5.0, 2.25)                       # the base fits through
    assert not nav.is_free(1.05, 1.2)                   # too close to the fridge for the base


def test_path_goes_through_the_doorway_and_is_collision_free():
    s = demo_state()
    path = s.nav.plan(Pose2D(2.5, 6.2, 0.0), s._goal_poses("blue_sofa"))
    assert path is not None
    for a, b in zip(path.poses, path.poses[1:]):
        for t in (0.0, 0.5, 1.0):
            assert s.nav.is_free(a.x + t * (b.x - a.x), a.y + t * (b.y - a.y))
    straight = math.dist((2.5, 6.2), (path.poses[-1].x, path.poses[-1].y))
    assert path.length >= straight


def test_go_to_stops_within_reach_and_facing_the_target():
    s = demo_state()
    for target in ("fridge", "green_can", "drawer", "white_mug", "red_toy_block"):
        assert s.navigate(target).ok, target
        assert 0.1 <= s.distance_to(target) <= ARM_REACH, target
    assert s.navigate("bathroom").ok and s.robot_room() == "bathroom"
    assert s.path_length > 10


def test_open_drawer_blocks_floor_in_front_and_its_contents_slide_with_it():
    s = demo_state()
    s.navigate("drawer")
    before = s.nav.occupancy.sum()
    assert s.articulate("drawer", True).ok
    assert s.nav.occupancy.sum() > before
    s.navigate("white_mug")
    assert s.grasp("white_mug").ok and s.held == "white_mug"
    s.navigate("drawer")
    assert s.place("white_mug", "drawer", random.Random(0)).ok and s.location("white_mug").receptacle == "drawer"
    x_open = s.object_poses["white_mug"][0]
    assert s.articulate("drawer", False).ok
    assert math.isclose(s.object_poses["white_mug"][0], x_open - 0.35, abs_tol=1e-6)
    assert s.enclosing_container("white_mug") == "drawer"


def test_place_respects_capacity_and_reach():
    s = demo_state()
    rng = random.Random(1)
    s.navigate("red_toy_block")
    assert s.grasp("red_toy_block").ok
    assert not s.place("red_toy_block", "blue_sofa", rng).ok  # out of reach from here
    s.navigate("blue_sofa")
    assert s.place("red_toy_block", "blue_sofa", rng).ok
    assert s.objects_at("blue_sofa") == ["red_toy_block"]
    z = s.object_poses["red_toy_block"][2]
    assert math.isclose(z, 0.45 + 0.03, abs_tol=1e-6)  # resting on the seat


def test_dropped_object_lands_on_free_floor_near_the_robot():
    s = demo_state()
    s.navigate("green_can")
    s.grasp("green_can")
    assert s.drop_held(random.Random(2)) == "green_can"
    loc = s.location("green_can")
    x, y, z, _ = s.object_poses["green_can"]
    assert loc.relation == "floor" and s.held is None and z < 0.1
    assert s.nav.is_floor_free(x, y, 0.03)
    assert math.dist((x, y), (s.robot.x, s.robot.y)) < 1.0
