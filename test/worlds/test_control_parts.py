"""The parts of the home robot's control, each on its own over the demo home's state."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from homiebot.worlds.home.arm_motion import ArmMotion
from homiebot.worlds.home.base_drive import BaseDrive
from homiebot.worlds.home.gripper import Gripper, describe_offset
from homiebot.worlds.home.hand_frames import Coupling, handle_in_robot, robot_to_world, world_to_robot
from homiebot.worlds.home.head_cameras import HeadCameras
from homiebot.worlds.home.person_state import PersonState
from homiebot.worlds.home.robot import ArmPose
from homiebot.worlds.home.scene import load_scene
from homiebot.worlds.home.state import HomeState, RobotPose

from ..conftest import ROOT


def demo() -> HomeState:
    return HomeState.from_spec(load_scene(ROOT / "config" / "scenes" / "demo.yaml"))


def test_frames_round_trip_and_a_closed_door_handle_is_in_front_of_its_panel():
    s = demo()
    s.robot = RobotPose(1.0, 2.0, 0.7)
    p = np.array([0.4, -0.2, 0.8])
    assert np.allclose(world_to_robot(s, robot_to_world(s, p)), p)
    fridge = s.layout.receptacles["fridge"]
    s.robot = RobotPose(fridge.x + 1.2, fridge.y, math.pi)  # facing the fridge's front
    h = handle_in_robot(s, fridge, 0.0)
    assert 0.0 < h[0] < 1.2 and h[2] > 0.0


def test_describe_offset_says_where_a_point_is():
    assert describe_offset(0.0, 0.0, 0.0) == "right between"
    assert describe_offset(-0.05, 0.12, -0.03) == "12 cm left of and 5 cm short of and 3 cm below"


def test_gripper_closing_on_nothing_says_what_was_nearest_and_opening_lets_go_of_a_handle():
    s = demo()
    grip = Gripper(lambda: s)
    report = grip.command(1.0)
    assert report.message.startswith("the gripper closed on nothing: the ") and not grip.holding()
    assert s.arm.gripper == 1.0
    grip.coupling = Coupling("fridge", "hinge")
    assert grip.holding()
    assert grip.command(0.0).released == "fridge/handle" and grip.coupling is None


def test_base_drive_treats_off_the_map_as_wall_and_stops_at_the_person():
    s = demo()
    base = BaseDrive(lambda: s)
    assert base.contacts(-100.0, -100.0) == frozenset({(-1, -1)})
    assert not base.into_person(0.0, 0.0, 0.1, 0.0)  # nobody there
    s.person = PersonState("alice", s.robot.x, s.robot.y - 0.6, 0.0)
    assert base.into_person(s.robot.x, s.robot.y - 0.05, s.robot.x, s.robot.y - 0.1)
    report = base.drive(0.5, 0.0, 1.0)  # straight at them (the robot faces -y)
    assert report.collision and report.distance < 0.5


def test_arm_motion_leaves_the_arm_where_it_cannot_reach_and_stows_back_to_carry():
    s = demo()
    grip = Gripper(lambda: s)
    arm = ArmMotion(lambda: s, grip)
    before = s.arm
    assert arm.ready((5.0, 0.0, 0.5), 5) is None and s.arm == before
    assert arm.ready((0.5, 0.0, 0.7), 5) is not None and s.arm != ArmPose.carry()
    grip.coupling = Coupling("fridge", "hinge")
    report = arm.stow(5)
    assert report.released == "fridge/handle" and s.arm == ArmPose.carry()


def test_head_cameras_refuse_unknown_views_before_rendering():
    cams = HeadCameras(SimpleNamespace(state=demo(), renderer=None))
    with pytest.raises(ValueError, match="unknown views"):
        cams.render((32, 32), ("nowhere",))
