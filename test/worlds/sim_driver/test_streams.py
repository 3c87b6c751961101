"""The driver's streams built alone: camera messages as the mounted camera gives them, joint_states under the
robot's joint names, and the gripper's GripperCommand result."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("control_msgs", reason="ROS 2 is an extra: pip install -e .[ros]")

from control_msgs.action import GripperCommand  # noqa: E402

from homiebot.robots.profile import load_profile  # noqa: E402
from homiebot.ros.nodes.sim_driver import upstream  # noqa: E402
from homiebot.ros.nodes.sim_driver.arm import SimArm  # noqa: E402
from homiebot.ros.nodes.sim_driver.cameras import SimCameras  # noqa: E402
from homiebot.ros.nodes.sim_driver.chains import CameraChains  # noqa: E402
from homiebot.ros.nodes.sim_driver.goals import GoalNotes  # noqa: E402
from homiebot.ros.nodes.sim_driver.gripper import SimGripper  # noqa: E402
from homiebot.ros.nodes.sim_driver.images import camera_info_msg, camera_size, depth_msg, image_msg, render_fovy  # noqa: E402
from homiebot.ros.nodes.sim_driver.joint_states import JointStates  # noqa: E402
from homiebot.ros.nodes.sim_driver.trajectory import TrajectoryArm  # noqa: E402
from test.worlds.sim_driver.fakes import FakeGoalHandle, FakeNode, FakeRobot, shared  # noqa: E402


def test_camera_size_reads_height_by_width_or_nothing() -> None:
    assert camera_size("120x160") == (120, 160) and camera_size("") is None


def test_spot_ros2s_encodings_come_from_rgb_cameras_not_from_the_profile() -> None:
    # spot_ros2 bdee4a4: rgb_cameras defaults to true (spot_ros2.py); RGB JPEGs decode to bgr8, greyscale to mono8
    # (src/conversions/decompress_images.cpp); the hand camera is always RGB (src/images/spot_image_publisher.cpp)
    profile = load_profile("spot")
    body, hand = profile.cameras["frontleft"], profile.cameras["hand"]
    assert upstream.RGB_CAMERAS is True
    assert upstream.image_encoding(profile, body, True) == upstream.image_encoding(profile, hand, True) == "bgr8"
    assert upstream.image_encoding(profile, body, False) == "mono8" and upstream.image_encoding(profile, hand, False) == "bgr8"
    assert upstream.depth_encoding(profile) == "16UC1"
    greyscale_profile = profile.model_copy(update={"cameras": {**profile.cameras, "frontleft": body.model_copy(update={"encoding": "mono8"})}})
    assert upstream.image_encoding(greyscale_profile, greyscale_profile.cameras["frontleft"], True) == "bgr8"  # the driver's, not the profile's
    fetch = load_profile("fetch")
    assert upstream.image_encoding(fetch, fetch.cameras["head_camera"], False) == fetch.cameras["head_camera"].encoding


def test_the_sim_drivers_cameras_take_their_encodings_from_the_rgb_cameras_parameter() -> None:
    profile = load_profile("spot")
    lock, _ = shared()
    default = SimCameras(FakeNode(), profile, None, None, lambda c: "front", lambda: 0, lock, lockstep=False)
    grey = SimCameras(FakeNode(), profile, None, None, lambda c: "front", lambda: 0, lock, lockstep=False, rgb_cameras=False)
    assert set(default.encodings.values()) == {"bgr8"} and default.depth_encoding == "16UC1"
    assert grey.encodings == {**dict.fromkeys(["frontleft", "frontright", "left", "right", "back"], "mono8"), "hand": "bgr8"}


def test_bgr8_is_rgb_reversed_and_depth_in_millimetres() -> None:
    spec = load_profile("spot").cameras["left"]  # upright
    rgb = np.zeros((6, 8, 3), dtype=np.uint8)
    rgb[..., 0] = 250
    msg = image_msg(rgb, spec, (6, 8), 0, "left", "bgr8")
    data = np.frombuffer(bytes(msg.data), np.uint8).reshape(6, 8, 3)
    assert (msg.encoding, msg.step) == ("bgr8", 24) and (data[..., 2] == 250).all() and (data[..., 0] == 0).all()
    depth = np.array([[1.5, 0.0], [np.inf, 70.0]], dtype=np.float32)
    d = depth_msg(depth, "16UC1", 0, "left")
    assert (d.encoding, d.step) == ("16UC1", 4)
    assert np.frombuffer(bytes(d.data), np.uint16).tolist() == [1500, 0, 0, 65535]


def test_a_grey_camera_publishes_one_channel_in_its_published_frame_with_matching_intrinsics() -> None:
    spec = load_profile("spot").cameras["frontleft"]  # turned on the body
    raw = (60, 80)
    rgb = np.full((100, 100, 3), 200, dtype=np.uint8)
    msg = image_msg(rgb, spec, raw, 1_500_000_000, "frontleft", "mono8")
    assert (msg.encoding, msg.height, msg.width, msg.step) == ("mono8", 60, 80, 80) and len(msg.data) == 60 * 80
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec, msg.header.frame_id) == (1, 500_000_000, "frontleft")
    info = camera_info_msg(raw, spec, 0, "frontleft")
    assert (info.height, info.width) == raw and info.k[2] == pytest.approx(39.5) and info.k[5] == pytest.approx(29.5)
    assert render_fovy(spec, raw, raw) < spec.hfov_deg  # fewer rows than columns: a narrower vertical view


def test_fetchs_joint_states_carry_the_torso_the_head_and_the_arm_in_that_order() -> None:
    profile, robot, node = load_profile("fetch"), FakeRobot(), FakeNode()
    lock, counters = shared()
    arm = TrajectoryArm(node, profile, robot, SimArm(node, profile, robot, lock, counters), lambda: 0.0, GoalNotes(lock), counters)
    chains = CameraChains(node, profile, robot, arm.kinematics, lockstep=True)
    joints = JointStates(node, profile, robot, arm, chains)
    joints.publish(0)
    msg = node.publishers["/joint_states"].sent[-1]
    assert msg.name[:3] == ["torso_lift_joint", "head_pan_joint", "head_tilt_joint"] and msg.name[3:] == list(arm.kinematics.names)
    assert msg.position[0] == pytest.approx(0.3) and len(msg.position) == len(msg.name)


def _run_until_waiting(coroutine) -> None:
    """Run an execute callback until it waits for the driver's clock."""
    try:
        coroutine.send(None)
    except StopIteration:
        raise AssertionError("the goal ended without waiting for the driver's clock") from None


def _finish(coroutine):
    """Let an execute callback that was told its goal ended run to its end; its result."""
    try:
        coroutine.send(None)
    except StopIteration as stop:
        return stop.value
    raise AssertionError("the goal is still waiting")


def test_a_gripper_command_that_stops_on_something_reports_stalled_after_two_seconds() -> None:
    """As Fetch's controller (parallel_gripper.cpp): fingers that stop on something end the goal as stalled once
    they have not moved for 2 s, not at once."""
    profile, robot, node = load_profile("fetch"), FakeRobot(), FakeNode()
    lock, counters = shared()
    clock = [100.0]
    gripper = SimGripper(node, profile, robot, lock, counters, lambda: clock[0])
    goal = GripperCommand.Goal()
    goal.command.position, goal.command.max_effort = 0.0, 60.0
    robot.holding = "green_can"
    handle = FakeGoalHandle(goal)
    run = gripper.execute(handle)
    _run_until_waiting(run)
    assert robot.closure == 1.0 and gripper.running and handle.ended is None
    gripper.advance(101.9)
    assert gripper.running  # 1.9 s without finger motion: not stalled yet
    gripper.advance(102.0)
    result = _finish(run)
    assert result.stalled and not result.reached_goal and result.effort == 60.0 and result.position == 0.0
    assert handle.ended == "succeeded" and counters["gripper_goals"] == 1


def test_a_gripper_command_that_reaches_its_gap_ends_at_the_next_tick() -> None:
    profile, robot, node = load_profile("fetch"), FakeRobot(), FakeNode()
    lock, counters = shared()
    gripper = SimGripper(node, profile, robot, lock, counters, lambda: 5.0)
    goal = GripperCommand.Goal()
    goal.command.position = profile.gripper_max_gap
    run = gripper.execute(handle := FakeGoalHandle(goal))
    _run_until_waiting(run)
    gripper.advance(5.0)
    result = _finish(run)
    assert result.reached_goal and not result.stalled and handle.ended == "succeeded" and robot.closure == 0.0


def test_a_new_gripper_goal_preempts_the_one_waiting_for_its_stall() -> None:
    profile, robot, node = load_profile("fetch"), FakeRobot(), FakeNode()
    lock, counters = shared()
    gripper = SimGripper(node, profile, robot, lock, counters, lambda: 0.0)
    goal = GripperCommand.Goal()
    robot.holding = "green_can"
    first = gripper.execute(first_handle := FakeGoalHandle(goal, 1))
    _run_until_waiting(first)
    goal.command.position = profile.gripper_max_gap
    robot.holding = None
    second = gripper.execute(FakeGoalHandle(goal, 2))
    _run_until_waiting(second)
    _finish(first)
    assert first_handle.ended == "aborted" and gripper.running


def test_in_real_time_the_policy_camera_renders_every_tick_and_the_others_at_the_view_rate(monkeypatch) -> None:
    """Spot's sim renders six cameras; the skills read the hand camera each step, the planner the body cameras once a
    round: with view_rate_hz 2 and camera_rate_hz 10 a second of ticks renders the hand 10 times and each body camera
    twice (60 renders before: the CPU the control loop lacked on a loaded machine). Lock-step renders them all."""
    from homiebot.ros.nodes.sim_driver import cameras as module

    profile = load_profile("spot")
    assert profile.sim.view_rate_hz == 2 and profile.sim.camera_rate_hz == 10 and profile.policy_camera == "hand"
    lock, _ = shared()
    cams = SimCameras(FakeNode(), profile, None, None, lambda c: "front", lambda: 0, lock, lockstep=False)
    rendered: list[str] = []
    monkeypatch.setattr(cams, "render", lambda cameras=None: rendered.extend(cameras if cameras is not None else cams.pubs))
    now = [100.0]
    monkeypatch.setattr(module.time, "monotonic", lambda: now[0])
    for tick in range(10):  # one second at 10 Hz, a tick a little late now and then
        now[0] = 100.0 + tick * 0.1 + (0.004 if tick % 3 else 0.0)
        cams.on_timer()
    counts = {name: rendered.count(name) for name in cams.pubs}
    assert counts == {"hand": 10, **dict.fromkeys(["frontleft", "frontright", "left", "right", "back"], 2)}, counts
    cams.forget()  # a restarted home: every camera at the next tick
    rendered.clear()
    now[0] += 0.1
    cams.on_timer()
    assert sorted(rendered) == sorted(cams.pubs)
    everything = SimCameras(FakeNode(), profile.model_copy(update={"sim": profile.sim.model_copy(update={"view_rate_hz": None})}),
                            None, None, lambda c: "front", lambda: 0, lock, lockstep=False)
    assert set(everything.period.values()) == {0.1}


def test_spot_images_carry_spot_ros2s_sensor_frames_and_tf_static_places_them_on_the_body() -> None:
    """spot_ros2 stamps images with the prefixed sensor frame and sends their frames on /tf_static; the bridge turns
    a sensor frame's pose upright again and gets the profile's body-camera pose back."""
    from homiebot.robots.camera_rotation import sensor_from_upright
    from homiebot.ros.messages.transforms import matrix_of
    from homiebot.ros.nodes.sim_driver.frames import camera_transforms
    from homiebot.ros.nodes.sim_driver.upstream import camera_frame

    spot, fetch = load_profile("spot"), load_profile("fetch")
    assert [camera_frame(spot, c) for c in ("frontleft", "back", "hand")] == [
        "spot/frontleft_fisheye", "spot/back_fisheye", "spot/hand_color_image_sensor"]
    assert camera_frame(fetch, "head") == "head"
    transforms = {tf.child_frame_id: tf for tf in camera_transforms(spot, 0)}
    assert set(transforms) == {f"spot/{c}_fisheye" for c in ("frontleft", "frontright", "left", "right", "back")}
    for camera in ("frontleft", "frontright", "right", "left"):
        tf = transforms[camera_frame(spot, camera)]
        spec = spot.cameras[camera]
        assert tf.header.frame_id == "spot/body"
        upright = matrix_of(tf) @ sensor_from_upright(spec.rotation_deg)
        assert np.allclose(upright, np.array(spec.base_from_camera), atol=1e-9), camera
    assert camera_transforms(fetch, 0) == []  # Fetch's camera rides on the head


def test_in_lock_step_cameras_asked_for_at_an_instant_join_its_messages_and_an_unknown_one_is_named() -> None:
    from types import SimpleNamespace

    profile = load_profile("spot")
    lock, _ = shared()

    class Renders:
        """The home's robot rendering one view: a flat picture, no depth or segmentation."""

        def render(self, shape, views, fovy, segmentation):
            return {views[0]: SimpleNamespace(rgb=np.zeros((*shape, 3), np.uint8), depth=None, segmentation=None)}

    node = FakeNode()
    cams = SimCameras(node, profile, Renders(), (12, 16), lambda c: "front", lambda: 7, lock, lockstep=True)
    cams.render(["hand"])
    cams.render(["left", "hand"], more=True)
    camera_of = {frame: name for name, frame in cams.frames.items()}  # spot_ros2's sensor frames
    images = [msg for pub, msg in cams._sent if pub is cams.pubs[camera_of[msg.header.frame_id]][0]]
    assert sorted(camera_of[m.header.frame_id] for m in images) == ["hand", "left"]  # the hand once: rendered again, kept once
    cams.render(["back"])  # a new instant: its messages replace the last one's
    assert {camera_of[msg.header.frame_id] for _, msg in cams._sent} == {"back"}
    with pytest.raises(LookupError, match="no camera 'nose' in simulation"):
        cams.render(["nose"])
