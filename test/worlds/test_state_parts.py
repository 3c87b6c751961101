"""The parts of the home's state model, each on its own over the demo home's facts."""

from __future__ import annotations

import math
import random

from homiebot.worlds.home.approach import Approach, closest_on_rect, spread
from homiebot.worlds.home.facts import ARM_REACH, OPEN_THRESHOLD, PERSON_STOP, RobotPose
from homiebot.worlds.home.hands import Hands
from homiebot.worlds.home.joints import Joints
from homiebot.worlds.home.person import play
from homiebot.worlds.home.person_state import PersonState
from homiebot.worlds.home.placement import Placement
from homiebot.worlds.home.queries import HomeQueries
from homiebot.worlds.home.routes import RobotRoutes
from homiebot.worlds.home.scene import load_scene
from homiebot.worlds.home.state import HomeState

from ..conftest import ROOT


def demo() -> HomeState:
    return HomeState.from_spec(load_scene(ROOT / "config" / "scenes" / "demo.yaml"))


def test_queries_name_and_place_things_without_a_person():
    s = demo()
    q = HomeQueries(s)
    assert "red_apple" in q.names() and "kitchen" in q.names()
    assert q.enclosing_container("red_apple") == "fridge"
    assert q.enclosing_container("green_can") is None  # on an open table
    assert q.objects_at("kitchen_counter") == ["blue_bowl", "yellow_banana"]
    assert q.room_of("white_desk") == "bedroom" and q.robot_room() == "bedroom"
    assert q.lookup("nothing_here") is None and not q.is_person("red_apple")
    assert q.within_reach("white_bed") and not q.within_reach("fridge")


def test_joints_flip_is_open_at_the_threshold_and_slide_drawer_contents():
    s = demo()
    joints = Joints(s)
    joints.set_joint_open("fridge", OPEN_THRESHOLD - 0.01)
    assert not s.is_open["fridge"]
    joints.set_joint_open("fridge", OPEN_THRESHOLD)
    assert s.is_open["fridge"] and joints.open_fraction("fridge") == OPEN_THRESHOLD
    drawer = s.layout.receptacles["drawer"]
    spot = Placement(s).free_local_spot(drawer, s.layout.objects["white_mug"], random.Random(0), tidy=True)
    assert spot is not None
    Placement(s).put_at("white_mug", drawer, spot)
    before = s.object_poses["white_mug"]
    joints.set_joint_open("drawer", 1.0)
    assert joints.slide_offset(drawer) > 0.0
    assert abs(math.dist(before[:2], s.object_poses["white_mug"][:2]) - joints.slide_offset(drawer)) < 1e-9
    assert joints.set_joint_open("drawer", 7.0) is None and joints.open_fraction("drawer") == 1.0  # clamped


def test_approach_spreads_from_the_middle_and_faces_a_receptacle():
    assert spread(0.75) == [0.0, 0.3, -0.3, 0.6, -0.6]
    s = demo()
    table = s.layout.receptacles["brown_table"]
    assert closest_on_rect(table, table.x, table.y) == table.to_world(0.0, 0.0)
    poses = Approach(s).goal_poses("brown_table")
    assert poses
    for p in poses[:5]:
        aim = closest_on_rect(table, p.x, p.y)
        assert abs(math.atan2(aim[1] - p.y, aim[0] - p.x) - p.yaw) < 1e-9
    assert Approach(s).anchor("kitchen") == s.layout.rooms["kitchen"].center


def test_placement_round_trips_a_spot_and_refuses_a_taken_one():
    s = demo()
    place = Placement(s)
    desk = s.layout.receptacles["white_desk"]
    mug = s.layout.objects["white_mug"]
    here = place.local_of(desk, "white_mug")
    assert place.local_spot_if_free(desk, s.layout.objects["red_toy_block"], here) is None  # the mug is there
    spot = place.free_local_spot(desk, s.layout.objects["red_toy_block"], random.Random(1))
    assert spot is not None
    place.put_at("red_toy_block", desk, spot)
    assert math.dist(place.local_of(desk, "red_toy_block"), spot) < 1e-9
    assert s.locations["red_toy_block"].receptacle == "white_desk"
    assert place.floor_clear("white_mug", 6.2, 1.4, mug.radius)  # the block left the floor


def test_hands_refuse_what_is_out_of_reach_and_a_give_without_a_person():
    s = demo()
    hands = Hands(s)
    assert not hands.grasp("red_apple").ok  # in the closed fridge, far away
    assert hands.give("red_book", "alice").reason == "there is nobody called alice here"
    s.robot = RobotPose(3.8, 7.4, math.pi / 2)  # in front of the desk
    assert HomeQueries(s).distance_to("red_book") <= ARM_REACH
    assert hands.grasp("red_book").ok and s.held == "red_book"
    assert hands.drop_held(random.Random(0)) == "red_book" and s.locations["red_book"].relation == "floor"


def test_routes_stop_short_of_the_person_and_play_is_a_no_op_without_one():
    s = demo()
    routes = RobotRoutes(s)
    assert routes.person_discs() == [] and routes.wait_limit(1) is None
    play(s, 30.0)  # nobody to move
    s.robot = RobotPose(2.0, 6.0, 0.0)
    s.person = PersonState("alice", 4.0, 6.0, 0.0)
    step = routes.short_of_person(0.0, 5.0)
    assert abs((4.0 - (2.0 + step)) - PERSON_STOP) < 1e-9
    assert routes.short_of_person(math.pi, 5.0) == 5.0  # moving away
    assert routes.person_discs()[0][:2] == (4.0, 6.0)
