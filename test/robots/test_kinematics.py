"""The arm kinematics over Fetch's table in config/robots/fetch.yaml: forward kinematics against the
table worked by hand, inverse kinematics round trips to within a millimetre over the reach in front of
the robot, and targets out of reach fail with a clear error."""

from __future__ import annotations

import math

import numpy as np
import pytest

from homiebot.robots.kinematics import ArmKinematics, Joint, Unreachable
from homiebot.robots.profile import ROBOTS_DIR, ProfileError, load_profile

FETCH = load_profile("fetch")
ARM = FETCH.kinematics.build() if FETCH.kinematics is not None else None
TORSO = 0.3  # the profile's torso lift


def test_the_table_is_fetchs_seven_arm_joints_with_the_torso_held() -> None:
    assert ARM is not None
    assert ARM.names == ["shoulder_pan_joint", "shoulder_lift_joint", "upperarm_roll_joint", "elbow_flex_joint",
                         "forearm_roll_joint", "wrist_flex_joint", "wrist_roll_joint"]
    assert [j.value for j in ARM.joints if j.value is not None] == [TORSO]


def test_forward_kinematics_of_the_stretched_arm_adds_up_the_links() -> None:
    assert ARM is not None
    ee = ARM.forward(np.zeros(7))
    reach = -0.086875 + 0.119525 + 0.117 + 0.219 + 0.133 + 0.197 + 0.1245 + 0.1385 + 0.16645
    assert ee.position == pytest.approx([reach, 0.0, 0.37743 + TORSO + 0.34858 + 0.06], abs=1e-9)
    assert (ee.yaw, ee.pitch, ee.roll) == pytest.approx((0.0, 0.0, 0.0), abs=1e-12)
    turned = ARM.forward([math.pi / 2, 0, 0, 0, 0, 0, 0])  # the pan turns the arm to the left
    assert turned.position[:2] == pytest.approx([-0.086875 + 0.119525, reach + 0.086875 - 0.119525], abs=1e-9)
    assert turned.yaw == pytest.approx(math.pi / 2)
    bent = ARM.forward([0, 0, 0, 0, 0, math.pi / 2, 0])  # the wrist flexes the hand straight down
    assert bent.pitch == pytest.approx(math.pi / 2) and bent.position[2] == pytest.approx(0.37743 + TORSO + 0.40858 - 0.30495)


def test_inverse_kinematics_round_trips_within_a_millimetre_over_the_reach_in_front() -> None:
    assert ARM is not None
    grid = [(x, y, z, yaw) for x in (0.5, 0.65, 0.8) for y in (-0.2, 0.0, 0.2) for z in (0.6, 0.8, 1.0) for yaw in (-0.3, 0.3)]
    solved = 0
    for x, y, z, yaw in grid:
        try:
            q = ARM.inverse((x, y, z), yaw)
        except Unreachable:
            continue
        solved += 1
        ee = ARM.forward(q)
        assert float(np.linalg.norm(ee.position - (x, y, z))) < 1e-3
        assert abs(math.remainder(ee.yaw - yaw, 2 * math.pi)) < 1e-2 and abs(ee.roll) < 1e-2  # fingers level
        assert np.all(q >= ARM.lower - 1e-9) and np.all(q <= ARM.upper + 1e-9)
    assert solved >= 0.9 * len(grid), f"only {solved} of {len(grid)} points in front of the robot solved"


def test_a_path_of_small_steps_gives_small_joint_steps_from_the_measured_seed() -> None:
    assert ARM is not None
    q = ARM.inverse(FETCH.arm_ready, 0.0)
    for k in range(1, 11):  # 4 cm steps forward and down, as a policy sends them
        target = np.array(FETCH.arm_ready) + k * np.array([0.03, 0.0, -0.02])
        nxt = ARM.inverse(target, 0.0, seed=q)
        assert float(np.linalg.norm(ARM.forward(nxt).position - target)) < 1e-3
        assert float(np.max(np.abs(np.remainder(nxt - q + math.pi, 2 * math.pi) - math.pi))) < 0.6
        q = nxt


@pytest.mark.parametrize("target", [(2.0, 0.0, 0.9), (0.6, 0.0, 2.4), (0.0, 0.0, 0.9), (-0.8, 0.0, 0.9)])
def test_targets_out_of_reach_fail_with_a_clear_error(target: tuple[float, float, float]) -> None:
    assert ARM is not None
    with pytest.raises(Unreachable, match=r"out of the arm's reach \(closest [0-9.]+ cm away\)"):
        ARM.inverse(target, 0.0)


def test_garbage_goals_and_tables_are_refused() -> None:
    assert ARM is not None
    with pytest.raises(Unreachable, match="non-finite"):
        ARM.inverse((math.nan, 0.0, 0.9), 0.0)
    with pytest.raises(ValueError, match="7 joints"):
        ARM.forward([0.0, 0.0])
    with pytest.raises(ValueError, match="no commanded joint"):
        ArmKinematics([Joint("lift", "prismatic", (0, 0, 0), value=0.1)], (0.1, 0, 0))


def test_a_trajectory_arm_without_a_kinematic_table_is_a_profile_error(tmp_path) -> None:
    text = (FETCH_PATH := load_profile.__globals__["ROBOTS_DIR"] / "fetch.yaml").read_text()
    start, end = text.index("kinematics:"), text.index("arm_ready:")
    (tmp_path / "no_table.yaml").write_text(text[:start] + text[end:])
    with pytest.raises(ProfileError, match="needs a kinematics table"):
        load_profile(tmp_path / "no_table.yaml")
    (tmp_path / "short_rest.yaml").write_text(text.replace("rest: [0.91, 1.31,", "rest: ["))
    with pytest.raises(ProfileError, match="rest has 5 values for 7 joints"):
        load_profile(tmp_path / "short_rest.yaml")
    assert FETCH_PATH.exists()


# ---- cameras on chains: Spot's hand camera on the arm, Fetch's head camera on the torso, pan and tilt ----
SPOT = load_profile("spot")
OPTICAL = np.array([[0, 0, 1], [-1, 0, 0], [0, -1, 0]])  # a camera looking along its link's x axis (OpenCV axes)


def test_spots_hand_camera_is_placed_by_the_arm_table_worked_by_hand() -> None:
    hand = SPOT.camera_mount("hand")
    assert hand is not None and hand.names == ["arm_sh0", "arm_sh1", "arm_el0", "arm_el1", "arm_wr0", "arm_wr1"]
    straight = hand.pose(np.zeros(6))  # the arm stretched forward from the shoulder; body frame 0.5 m above the floor
    assert straight[:3, 3] == pytest.approx([0.292 + 0.3385 + 0.4033 + 0.19557 - 0.04, 0.0, 0.188 + 0.075 + 0.02 + 0.5], abs=1e-9)
    assert straight[:3, :3] == pytest.approx(OPTICAL)
    turned = hand.pose([math.pi / 2, 0, 0, 0, 0, 0])  # the shoulder turns the whole arm to the left
    assert turned[:3, 3] == pytest.approx([0.292, 0.3385 + 0.4033 + 0.19557 - 0.04, 0.783], abs=1e-9)
    assert turned[:3, 2] == pytest.approx([0, 1, 0])  # looking left
    down = hand.pose([0, 0, math.pi / 2, 0, 0, 0])  # the elbow points the forearm and the camera at the floor
    assert down[:3, 3] == pytest.approx([0.292 + 0.3385 + 0.075 + 0.02, 0.0, 0.188 - 0.4033 - 0.19557 + 0.04 + 0.5], abs=1e-9)
    assert down[:3, 2] == pytest.approx([0, 0, -1])


def test_fetchs_head_camera_is_placed_by_the_torso_pan_and_tilt_worked_by_hand() -> None:
    head = load_profile("fetch").camera_mount("head_camera")
    assert head is not None and head.names == ["torso_lift_joint", "head_pan_joint", "head_tilt_joint"]
    z = 0.37743 + 0.3 + 0.603001 + 0.057999  # the tilt axis with the torso lifted 0.3 m
    ahead = head.pose([0.3, 0.0, 0.0])
    assert ahead[:3, 3] == pytest.approx([-0.086875 + 0.053125 + 0.14253 + 0.055, 0.02, z + 0.0225], abs=1e-9)
    assert ahead[:3, :3] == pytest.approx(OPTICAL)
    left = head.pose([0.3, math.pi / 2, 0.0])  # panned to the left
    assert left[:3, 3] == pytest.approx([-0.086875 + 0.053125 - 0.02, 0.14253 + 0.055, z + 0.0225], abs=1e-9)
    assert left[:3, 2] == pytest.approx([0, 1, 0])
    down = head.pose([0.0, 0.0, math.pi / 2])  # torso down, tilted to look at the floor
    assert down[:3, 3] == pytest.approx([-0.086875 + 0.053125 + 0.14253 + 0.0225, 0.02, z - 0.3 - 0.055], abs=1e-9)
    assert down[:3, 2] == pytest.approx([0, 0, -1])


def test_camera_chains_that_cannot_be_used_are_profile_errors(tmp_path) -> None:
    text = (load_profile.__globals__["ROBOTS_DIR"] / "spot.yaml").read_text()
    cases = {"chain: arm, end_from_camera: [[0, 0, 1, -0.04], [-1, 0, 0, 0.0], [0, -1, 0, 0.02], [0, 0, 0, 1]]":
             ("chain: arm", "needs end_from_camera"),
             "chain: arm, end_from_camera": ("chain: arm, base_from_camera: [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], "
                                             "end_from_camera", "not both"),
             "  tool: [0.19557, 0, 0]": ("  tool: [0.19557, 0, 0]\n", None)}
    for i, (old, (new, match)) in enumerate(cases.items()):
        if match is None:  # no arm table: the hand camera cannot ride on it
            start, end = text.index("kinematics:"), text.index("arm_ready:")
            body = text[:start] + text[end:]
            match = "rides on the arm .* no kinematics table"
        else:
            body = text.replace(old, new)
        (tmp_path / f"{i}.yaml").write_text(body)
        with pytest.raises(ProfileError, match=match):
            load_profile(tmp_path / f"{i}.yaml")


def test_a_head_that_cannot_give_its_views_is_a_profile_error(tmp_path) -> None:
    text = (load_profile.__globals__["ROBOTS_DIR"] / "fetch.yaml").read_text()
    fetch = load_profile("fetch")
    assert fetch.head is not None and set(fetch.head.views) == {"left", "right"} and "head" not in fetch.unverified
    cases = [("  camera: head_camera\n  views:", "  camera: eye\n  views:", "head.camera 'eye' is not declared"),
             ("views: {left: [0.0, 3.0, 1.0],", "views: {front: [3.0, 0.0, 1.0], left: [0.0, 3.0, 1.0],", "not \\['front'\\]"),
             ("views: {front: head_camera}", "views: {front: head_camera, left: head_camera}", "come from cameras already")]
    for i, (old, new, match) in enumerate(cases):
        assert old in text
        (tmp_path / f"{i}.yaml").write_text(text.replace(old, new))
        with pytest.raises(ProfileError, match=match):
            load_profile(tmp_path / f"{i}.yaml")


def test_a_held_joint_is_held_where_it_was_measured() -> None:
    arm = FETCH.kinematics.build()  # a table of its own: hold() changes it
    up = arm.forward(np.zeros(7)).position
    arm.hold("torso_lift_joint", 0.1)
    assert arm.held == {"torso_lift_joint": 0.1}
    assert arm.forward(np.zeros(7)).position == pytest.approx(up - [0.0, 0.0, TORSO - 0.1], abs=1e-9)
    with pytest.raises(ValueError, match=r"joint shoulder_pan_joint is not held in this table \(held: \['torso_lift_joint'\]\)"):
        arm.hold("shoulder_pan_joint", 0.2)
    with pytest.raises(ValueError, match="a held value must be finite"):
        arm.hold("torso_lift_joint", math.nan)


def test_fetchs_torso_is_commanded_on_its_own_controller_within_its_limits(tmp_path) -> None:
    assert FETCH.torso is not None
    assert (FETCH.torso.trajectory.name, FETCH.torso.joint, FETCH.torso.height) == ("torso_controller/follow_joint_trajectory",
                                                                                    "torso_lift_joint", 0.3)
    text = (ROBOTS_DIR / "fetch.yaml").read_text()
    (tmp_path / "high.yaml").write_text(text.replace("height: 0.3 ", "height: 0.5 "))
    with pytest.raises(ProfileError, match=r"torso.height 0.5 is outside torso_lift_joint's limits \[0.0, 0.38615\]"):
        load_profile(tmp_path / "high.yaml")
    (tmp_path / "joint.yaml").write_text(text.replace("joint: torso_lift_joint", "joint: shoulder_pan_joint"))
    with pytest.raises(ProfileError, match="torso.joint 'shoulder_pan_joint' must be a prismatic joint with limits held"):
        load_profile(tmp_path / "joint.yaml")


def test_tracking_a_moving_hand_from_the_last_posture_stays_exact_and_far_jumps_solve_in_full() -> None:
    """track: the sim driver's joint_states follow the home's hand with a few exact steps from the last posture
    (milliseconds), as exact as a whole solve (the bridge's closed loop reads the hand from them); a jump too far
    for tracking falls back to the whole solve from every start, which still finds an exact posture."""
    table = SPOT.kinematics.build()
    here = np.array(SPOT.arm_ready, dtype=float) - [0.0, 0.0, SPOT.base_height]
    q = table.inverse(here, 0.0)
    for i in range(40):  # a door's arc: 1 cm and 1 degree a step
        here = here + [0.002, 0.009, -0.001]
        yaw = math.radians(i)
        q = table.inverse(here, yaw, seed=q, spread=False, near=0.01, track=True)
        tool = table.forward(q)
        assert np.linalg.norm(tool.position - here) <= 5e-4 and abs(math.remainder(tool.yaw - yaw, 2 * math.pi)) <= 1e-2
    far = np.array(SPOT.arm_ready, dtype=float) - [0.0, 0.0, SPOT.base_height] + [0.1, -0.2, 0.1]
    q = table.inverse(far, 0.0, seed=q, spread=False, near=0.01, track=True)
    assert np.linalg.norm(table.forward(q).position - far) < 0.01
