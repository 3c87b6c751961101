"""HomeControl (the home's Robot): base motion and collisions, discrete moves, arm IK, grasping, release, doors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from homiebot.core.robot import Robot
from homiebot.policies.base import FORWARD_STEP, TURN_STEP, DiscreteMove, Move, apply_command
from homiebot.worlds.home.control import HomeControl
from homiebot.worlds.home.robot import ArmPose, arm_fk, arm_ik
from homiebot.worlds.home.scene import load_scene
from homiebot.worlds.home.state import RobotPose
from homiebot.worlds.home.world import EmbeddedHome
from test.conftest import ROOT

FRIDGE_POSE = (1.35, 1.2, math.pi)  # the Go to pose in front of the demo fridge
TABLE_POSE = (6.35, 2.7, 0.0)  # in front of the brown table


@pytest.fixture(scope="module")
def world():
    w = EmbeddedHome(load_scene(ROOT / "config" / "scenes" / "demo.yaml"), width=32, height=32, depth=False, segmentation=False)
    yield w
    w.close()


@pytest.fixture
def control(world):
    world.reset()
    ctl = HomeControl(world, rate_hz=5.0)
    yield ctl
    ctl.close()


def place_robot(control: HomeControl, pose: tuple[float, float, float]) -> None:
    control.state.robot = RobotPose(*pose)


def test_drive_stops_at_a_wall_and_reports_the_collision(control: HomeControl) -> None:
    place_robot(control, (2.5, 6.2, math.pi / 2))  # bedroom, facing the north wall at y = 8.5
    reports = [control.drive(0.5, 0.0) for _ in range(40)]
    assert any(r.collision for r in reports)
    assert control.state.robot.y < 8.5 - 0.3 + 0.05  # the footprint never went through the wall
    assert control.state.path_length == pytest.approx(sum(r.distance for r in reports))
    back = control.drive(-0.5, 0.0)  # backing away from the contact is allowed
    assert not back.collision and back.distance > 0


def test_waypoints_reach_a_point(control: HomeControl) -> None:
    place_robot(control, (2.5, 6.2, 0.0))
    goal = np.array([2.5 + 0.6, 6.2 + 0.8])
    for _ in range(30):
        r = control.state.robot
        c, s = math.cos(r.yaw), math.sin(r.yaw)
        d = goal - (r.x, r.y)
        local = np.array([[c * d[0] + s * d[1], -s * d[0] + c * d[1]]])
        control.follow_waypoints(local, None, control.dt)
    assert math.dist((control.state.robot.x, control.state.robot.y), goal) < 0.06


def test_discrete_moves_use_pixnav_step_sizes(control: HomeControl) -> None:
    def move(m: Move):
        return apply_command(control, DiscreteMove(m), control.dt)

    place_robot(control, (2.5, 6.2, 0.0))
    move(Move.FORWARD)
    assert control.state.robot.x == pytest.approx(2.5 + FORWARD_STEP, abs=1e-6)
    move(Move.TURN_LEFT)
    assert control.state.robot.yaw == pytest.approx(TURN_STEP, abs=1e-6)
    move(Move.TURN_RIGHT)
    assert control.state.robot.yaw == pytest.approx(0.0, abs=1e-6)
    assert not move(Move.LOOK_DOWN).clipped
    assert control.state.head_tilt == pytest.approx(-math.radians(30))
    assert move(Move.LOOK_DOWN).clipped  # limit reached
    cam_down = control.render((16, 16))  # renders with the tilted head
    assert cam_down["front"].rgb.shape == (16, 16, 3)
    assert control.counters.counts["drive"] >= 3 and control.counters.counts["tilt_head"] == 2


def test_the_home_robot_describes_itself_through_the_robot_interface(control: HomeControl) -> None:
    assert isinstance(control, Robot)
    caps = control.capabilities
    assert caps.cameras == ("front", "left", "back", "right") and caps.arm and caps.gripper and caps.head
    assert caps.missing(arm=True, camera="hand") == "the robot lacks a camera named 'hand' (it has front, left, back, right)"
    place_robot(control, (2.5, 6.2, 0.3))
    odom = control.odometry()
    assert (odom.x, odom.y, odom.yaw) == (2.5, 6.2, 0.3)
    frame = control.read_camera("front", (24, 32), depth=True)
    assert frame.image.shape == (24, 32, 3) and frame.depth is not None and frame.depth.shape == (24, 32)
    info = frame.info
    assert (info.height, info.width) == (24, 32) and info.vertical_fov_deg == pytest.approx(90.0)
    # the front camera looks along the base's x axis (OpenCV z forward), from the head, whatever the base pose
    assert info.base_from_camera[:3, 2] @ np.array([1.0, 0.0, 0.0]) > 0.9
    assert info.base_from_camera[2, 3] > 1.0
    grip = control.gripper_state()
    assert grip.holding is False and not grip.closed
    arm = control.arm_state()
    assert arm.position.shape == (3,) and len(arm.joint_names) == len(arm.joint_positions)
    with pytest.raises(ValueError, match="unknown camera"):
        control.camera_info("hand")


def test_ik_round_trip_and_unreachable_target_reported(control: HomeControl) -> None:
    for target, yaw in (((0.7, -0.1, 0.8), 0.0), ((0.5, 0.3, 1.2), 0.5), ((0.9, -0.4, 0.3), -0.4)):
        pose = arm_ik(target, yaw)
        assert pose is not None
        fk = arm_fk(pose)
        assert fk.gripper == pytest.approx(target, abs=1e-9) and fk.yaw == pytest.approx(yaw, abs=1e-9)
    assert arm_fk(ArmPose.carry()).gripper == pytest.approx((0.45, -0.15, 0.95))
    assert arm_ik((2.0, 0.0, 0.9), 0.0) is None
    place_robot(control, (2.5, 6.2, 0.0))
    control.max_ee_speed = 10.0  # one big step
    report = control.move_ee([1.5, 0.0, 0.0], [0, 0, 0])
    assert report.clipped and "out of the arm's reach" in report.message
    pos, _ = control.gripper_pose()
    assert 0.45 < pos[0] < 1.3  # moved as far as it could


def _gripper_to(control: HomeControl, target_robot: np.ndarray, yaw: float = 0.0) -> None:
    control.state.arm = arm_ik(tuple(target_robot), yaw, 0.0)
    assert control.state.arm is not None


def test_grasp_only_when_closed_around_the_object(control: HomeControl) -> None:
    place_robot(control, TABLE_POSE)
    st = control.state
    can = control.world_to_robot(st.object_poses["green_can"][:3])
    _gripper_to(control, can + np.array([0.0, 0.10, 0.0]), 0.0)  # 10 cm to the left of the can
    report = control.set_gripper(1.0)
    assert st.held is None and report.attached is None
    assert "closed on nothing" in report.message and "green_can" in report.message and "10 cm right of" in report.message
    _gripper_to(control, can, 0.0)
    report = control.set_gripper(1.0)
    assert report.attached == "green_can" and st.held == "green_can"
    assert st.locations["green_can"].relation == "held"
    control.move_ee([0.0, 0.0, 0.05])
    assert st.object_poses["green_can"][2] == pytest.approx(0.75 + 0.06 + 0.05, abs=1e-6)


def test_release_falls_onto_the_surface_below(control: HomeControl) -> None:
    place_robot(control, TABLE_POSE)
    st = control.state
    can = control.world_to_robot(st.object_poses["green_can"][:3])
    _gripper_to(control, can, 0.0)
    control.set_gripper(1.0)
    control.move_ee([0.0, 0.0, 0.05])
    control.move_ee([-0.05, 0.05, 0.0])
    x, y, _, _ = st.object_poses["green_can"]
    report = control.set_gripper(0.0)
    assert report.released == "green_can" and st.held is None
    assert st.locations["green_can"].receptacle == "brown_table"
    assert st.object_poses["green_can"][:3] == pytest.approx((x, y, 0.75 + 0.06))
    # held beyond the table's edge, it falls to the floor
    _gripper_to(control, control.world_to_robot(st.object_poses["green_can"][:3]), 0.0)
    control.set_gripper(1.0)
    control.max_ee_speed = 10.0
    control.move_ee([-0.45, -0.3, 0.1])
    control.set_gripper(0.0)
    assert st.locations["green_can"].relation == "floor"
    assert st.object_poses["green_can"][2] == pytest.approx(0.06)


def test_gripper_cannot_pass_through_a_table_top(control: HomeControl) -> None:
    place_robot(control, TABLE_POSE)
    _gripper_to(control, np.array([0.6, 0.0, 0.85]))
    control.max_ee_speed = 10.0
    report = control.move_ee([0.0, 0.0, -0.15])
    assert report.clipped and "brown_table" in report.message
    assert control.gripper_pose()[0][2] >= 0.75 + 0.012 - 0.002  # stopped at the top (1 mm tolerance)


def test_a_hand_already_inside_furniture_may_rise_out_of_it_but_not_go_deeper(control: HomeControl) -> None:
    """The base or a joint-space motion (which checks nothing) can leave the hand inside furniture;
    from there it may move up and out, not further in."""
    place_robot(control, TABLE_POSE)
    _gripper_to(control, np.array([0.6, 0.0, 0.65]))  # under the brown table's top (0.75 m)
    control.max_ee_speed = 10.0
    assert "brown_table" in control.move_ee([0.0, 0.0, -0.05]).message  # deeper: refused
    assert control.gripper_pose()[0][2] == pytest.approx(0.65, abs=1e-6)
    assert not control.move_ee([0.0, 0.0, 0.04]).clipped  # up, still inside
    assert not control.move_ee([0.02, 0.0, 0.16]).clipped  # and out
    assert control.gripper_pose()[0][2] == pytest.approx(0.85, abs=1e-6)
    report = control.move_ee([0.0, 0.0, -0.15])  # out of it, the table top stops the hand again
    assert report.clipped and "brown_table" in report.message


def test_door_opens_through_the_arm(control: HomeControl) -> None:
    place_robot(control, FRIDGE_POSE)
    st = control.state
    assert st.open_fraction("fridge") == 0.0 and not st.is_open["fridge"]
    handle = control.handle_position("fridge")
    _gripper_to(control, handle, 0.0)
    assert control.set_gripper(1.0).attached == "fridge/handle"
    for _ in range(40):  # pull along the arc: tangent of the handle circle, in the robot frame
        h = control.handle_position("fridge")
        rec = st.layout.receptacles["fridge"]
        f = st.open_fraction("fridge")
        ahead = control._handle_robot(rec, min(1.0, f + 0.05))
        control.move_ee(ahead - h, [0, 0, 0.1])
        if f >= 0.99:
            break
    assert st.open_fraction("fridge") > 0.9 and st.is_open["fridge"]
    assert st.nav is not None and st.nav._open["fridge"]  # occupancy follows
    assert control.set_gripper(0.0).released == "fridge/handle"
    control.move_ee([0.05, 0.0, 0.0])
    assert st.open_fraction("fridge") > 0.9  # released: the door stays


def test_drawer_contents_slide_with_the_drawer(control: HomeControl) -> None:
    st = control.state
    st.set_joint_open("drawer", 0.5)
    assert st.is_open["drawer"]
    st.set_joint_open("drawer", 0.2)
    assert not st.is_open["drawer"]
    data = st.dynamic()
    assert data["joint_open"]["drawer"] == pytest.approx(0.2) and len(data["arm"]) == 5
