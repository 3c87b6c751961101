"""``Cameras`` and the image conversion alone: frames upright, RGB, resized; geometry from camera_info or the profile."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from sensor_msgs.msg import CameraInfo as CameraInfoMsg  # noqa: E402
from sensor_msgs.msg import Image  # noqa: E402

from homiebot.core.robot import RobotUnavailable, Unsupported  # noqa: E402
from homiebot.robots.profile import load_profile  # noqa: E402
from homiebot.ros.clients.robot.cameras import Cameras  # noqa: E402
from homiebot.ros.clients.robot.images import to_depth, to_rgb  # noqa: E402
from homiebot.ros.clients.robot.joints import JointStates  # noqa: E402
from homiebot.ros.clients.robot.lockstep import LockStep  # noqa: E402
from test.ros.robot.fakes import FakeNode, alive, stamp  # noqa: E402

PROFILE = load_profile("spot")


def image(array: np.ndarray, encoding: str, ns: int = 1) -> Image:
    msg = Image(height=array.shape[0], width=array.shape[1], encoding=encoding, data=array.tobytes())
    msg.header.stamp = stamp(ns)
    return msg


def cameras(node: FakeNode, lockstep: LockStep | None = None, aliases: dict | None = None) -> Cameras:
    lockstep = lockstep or LockStep(None)
    return Cameras(node, PROFILE, aliases or {}, JointStates(node, PROFILE, lockstep), lockstep, alive, 0.05)


def test_mono_is_repeated_bgr_swapped_and_a_short_image_refused():
    spec = PROFILE.cameras["left"]  # upright already
    mono = np.arange(6, dtype=np.uint8).reshape(2, 3)
    assert np.array_equal(to_rgb(image(mono, "mono8"), spec), np.repeat(mono[:, :, None], 3, axis=2))
    bgr = np.zeros((2, 3, 3), np.uint8)
    bgr[..., 0] = 9
    assert (to_rgb(image(bgr, "bgr8"), spec)[..., 2] == 9).all()
    short = Image(height=2, width=3, encoding="rgb8", data=b"\x00" * 5)
    with pytest.raises(RobotUnavailable, match="with 5 bytes"):
        to_rgb(short, spec)


def test_any_encoding_the_driver_sends_is_rgb_whatever_the_profile_says():
    # spot_ros2's default rgb_cameras: true sends bgr8 from every camera; rgb_cameras: false mono8 body cameras
    spec = PROFILE.cameras["left"]  # upright
    rgb = np.random.default_rng(0).integers(0, 255, (4, 5, 3), dtype=np.uint8)
    for encoding, array in (("rgb8", rgb), ("bgr8", rgb[:, :, ::-1]), ("rgba8", np.dstack([rgb, np.full((4, 5), 9, np.uint8)])),
                            ("bgra8", np.dstack([rgb[:, :, ::-1], np.zeros((4, 5), np.uint8)]))):
        assert np.array_equal(to_rgb(image(np.ascontiguousarray(array), encoding), spec), rgb), encoding
    padded = Image(height=4, width=5, encoding="bgr8", step=16, data=b"".join(rgb[r, :, ::-1].tobytes() + b"\x07" for r in range(4)))
    assert np.array_equal(to_rgb(padded, spec), rgb)
    with pytest.raises(RobotUnavailable, match="yuv422.*reads rgb8, bgr8"):
        to_rgb(Image(height=1, width=1, encoding="yuv422", data=b"\x00\x00"), spec)


def test_a_turned_bgr8_camera_and_a_mono8_one_give_the_same_upright_picture():
    spec = PROFILE.cameras["right"]  # turned by 180 degrees as mounted
    rgb = np.zeros((4, 6, 3), np.uint8)
    rgb[0, 0] = (200, 100, 50)  # the published frame's top-left: upright, the bottom-right
    from_bgr = to_rgb(image(np.ascontiguousarray(rgb[:, :, ::-1]), "bgr8"), spec)
    assert tuple(from_bgr[-1, -1]) == (200, 100, 50) and from_bgr[:-1].sum() == 0
    from_mono = to_rgb(image(rgb[:, :, 0].copy(), "mono8"), spec)
    assert tuple(from_mono[-1, -1]) == (200, 200, 200)


def test_depth_in_millimetres_is_metres():
    d = to_depth(image(np.full((2, 2), 1500, np.uint16), "16UC1"), PROFILE.cameras["left"])
    assert d.dtype == np.float32 and np.allclose(d, 1.5)


def test_every_stream_of_every_camera_is_subscribed():
    node = FakeNode()
    part = cameras(node)
    for spec in PROFILE.cameras.values():
        assert node.subscriptions[PROFILE.topic(spec.image)][2] == 2
        assert PROFILE.topic(spec.info) in node.subscriptions and PROFILE.topic(spec.depth) in node.subscriptions
    assert len(part.missing_images()) == len(PROFILE.cameras)


def test_a_frame_is_resized_with_its_geometry():
    node = FakeNode()
    part = cameras(node, aliases={"side": "left"})
    spec = PROFILE.cameras["left"]
    with pytest.raises(RobotUnavailable, match="no image on"):
        part.read("left")
    node.deliver(PROFILE.topic(spec.image), image(np.full((48, 64, 3), 7, np.uint8), "rgb8", ns=3_000_000_000))
    info = CameraInfoMsg(height=48, width=64, k=[50.0, 0, 31.5, 0, 50.0, 23.5, 0, 0, 1])
    node.deliver(PROFILE.topic(spec.info), info)
    frame = part.read("side", (24, 32))
    assert frame.image.shape == (24, 32, 3) and (frame.image == 7).all() and frame.stamp == 3.0
    assert frame.info.name == "left" and frame.info.intrinsics == pytest.approx((25.0, 25.0, 15.75, 11.75))
    assert part.image_ns("left") == 3_000_000_000 and "side" not in part.missing_images()
    with pytest.raises(Unsupported, match="no depth"):
        part.read("left", depth=True)
    with pytest.raises(ValueError, match="unknown camera 'nose'"):
        part.spec("nose")


def test_without_camera_info_a_pinhole_from_the_profiles_field_of_view():
    spec = PROFILE.cameras["left"]
    info = cameras(FakeNode()).info("left")
    assert (info.height, info.width) == (spec.height, spec.width) and info.intrinsics[2] == (spec.width - 1) / 2


def test_a_body_cameras_pose_is_raised_from_the_body_frame_to_homiebots_floor_frame():
    """base_from_camera is in the driver's base frame (Spot's body, as tf gives it); homiebot's base frame is on
    the floor under it, base_height lower (as the hand camera's mount already counts)."""
    part = cameras(FakeNode())
    for name in ("frontleft", "left", "back"):
        given = np.array(PROFILE.cameras[name].base_from_camera)
        pose = part.info(name).base_from_camera
        assert pose[2, 3] == pytest.approx(given[2, 3] + PROFILE.base_height) and pose[2, 3] > 0.45
        assert np.array_equal(pose[:3, :3], given[:3, :3]) and np.array_equal(pose[:2, 3], given[:2, 3])


def test_lock_step_waits_for_an_image_of_the_instant():
    node = FakeNode()
    clock = LockStep(lambda *_: (0, {}))
    clock.expect_instant(2_000)
    part = cameras(node, clock)
    node.deliver(PROFILE.topic(PROFILE.cameras["left"].image), image(np.zeros((2, 2, 3), np.uint8), "rgb8", ns=1_000))
    with pytest.raises(RobotUnavailable, match="no image of the simulated instant 2000 ns"):
        part.frames("left")


def test_in_lock_step_a_camera_the_step_did_not_render_is_asked_for_and_read_at_the_instant():
    node = FakeNode()
    topic = PROFILE.topic(PROFILE.cameras["left"].image)

    def render(cameras):  # the driver renders it at the present instant: it arrives
        node.deliver(topic, image(np.zeros((2, 2, 3), np.uint8), "rgb8", ns=2_000))
        return 2_000

    clock = LockStep(lambda *_: (2_000, {}), render=render)
    clock.sync()
    part = cameras(node, clock)
    node.deliver(topic, image(np.zeros((2, 2, 3), np.uint8), "rgb8", ns=1_000))  # of the instant before
    assert part.frames("left")[0].header.stamp == stamp(2_000)
    assert clock._read == {"left"} and clock._asked == {"left"}


def test_after_the_base_stopped_a_frame_taken_since_is_waited_for_else_the_newest(monkeypatch):
    """Real time: a body camera streaming slowly may still hold a frame taken while the robot moved; once the base
    stopped (``Base.stop`` says when), a read waits for one taken since, up to SETTLE_WAIT s, then takes the newest."""
    from homiebot.core.robot import CommandCounters
    from homiebot.ros.clients.robot import cameras as module
    from homiebot.ros.clients.robot.base import Base

    node = FakeNode()
    cams = cameras(node)
    base = Base(node, PROFILE, CommandCounters(), LockStep(None), alive, stopped=cams.settle)
    topic = PROFILE.topic(PROFILE.cameras["left"].image)
    node.deliver(topic, image(np.zeros((2, 3, 3), np.uint8), "rgb8", ns=1_000))
    assert cams.frames("left")[0].header.stamp == stamp(1_000)  # nothing stopped yet: the newest at once
    node.now_ns = 5_000
    base.stop()
    assert cams.settled_ns == 5_000
    clock = [0.0]
    monkeypatch.setattr(module.time, "monotonic", lambda: clock[0])
    waited: list[float] = []

    def sleep(seconds: float) -> None:  # the next frame, taken after the stop, arrives while the read waits
        waited.append(seconds)
        clock[0] += seconds
        if len(waited) == 3:
            node.deliver(topic, image(np.zeros((2, 3, 3), np.uint8), "rgb8", ns=6_000))

    monkeypatch.setattr(module.time, "sleep", sleep)
    assert cams.frames("left")[0].header.stamp == stamp(6_000) and len(waited) == 3
    node.now_ns = 9_000
    base.stop()  # stopped again; no frame since comes: after SETTLE_WAIT the newest, no error
    waited.clear()
    assert cams.frames("left")[0].header.stamp == stamp(6_000)
    assert module.SETTLE_WAIT <= sum(waited) <= module.SETTLE_WAIT + 0.01


def _edge(parent: str, child: str, xyz, quaternion) -> object:
    from geometry_msgs.msg import TransformStamped

    tf = TransformStamped()
    tf.header.frame_id, tf.child_frame_id = parent, child
    tf.transform.translation.x, tf.transform.translation.y, tf.transform.translation.z = xyz
    q = tf.transform.rotation
    q.x, q.y, q.z, q.w = quaternion
    return tf


def test_a_body_cameras_pose_comes_from_the_drivers_static_frames_when_they_reach_its_base():
    """spot_ros2's image publisher sends each image's frame tree on /tf_static (child -> parent edges, the body left
    out as a child) and stamps the image with the sensor's frame: the camera's pose is those edges walked up to the
    odometry's child frame, turned upright, raised by base_height; until they arrive, the profile's."""
    from tf2_msgs.msg import TFMessage

    from homiebot.robots.camera_rotation import sensor_from_upright

    node, base = FakeNode(), ["spot/body"]
    part = Cameras(node, PROFILE, {}, JointStates(node, PROFILE, LockStep(None)), LockStep(None), alive, 0.05, lambda: base[0])
    msg = image(np.zeros((4, 4, 3), np.uint8), "bgr8")
    msg.header.frame_id = "spot/frontleft_fisheye"
    node.deliver(PROFILE.topic(PROFILE.cameras["frontleft"].image), msg)
    profile_pose = part.info("frontleft").base_from_camera
    assert part.pose_source("frontleft") == "profile"
    pitched = (0.0, np.sin(np.radians(20) / 2), 0.0, np.cos(np.radians(20) / 2))  # 20 degrees about y
    node.deliver("/tf_static", TFMessage(transforms=[_edge("spot/body", "spot/head", (0.4, 0.0, 0.05), (0, 0, 0, 1)),
                                                     _edge("spot/head", "spot/frontleft", (0.02, 0.03, 0.0), pitched),
                                                     _edge("spot/frontleft", "spot/frontleft_fisheye", (0, 0, 0), (-0.5, 0.5, -0.5, 0.5)),
                                                     _edge("spot/body", "spot/broken", (0, 0, 0), (0, 0, 0, 0))]))
    head = np.eye(4)
    head[:3, 3] = (0.4, 0.0, 0.05)
    cam = np.eye(4)
    c, si = np.cos(np.radians(20)), np.sin(np.radians(20))
    cam[:3, :3], cam[:3, 3] = [[c, 0, si], [0, 1, 0], [-si, 0, c]], (0.02, 0.03, 0.0)
    optical = np.eye(4)
    optical[:3, :3] = [[0, 0, 1], [-1, 0, 0], [0, -1, 0]]  # x forward -> OpenCV axes
    expected = head @ cam @ optical @ sensor_from_upright(PROFILE.cameras["frontleft"].rotation_deg)
    expected[2, 3] += PROFILE.base_height
    pose = part.info("frontleft").base_from_camera
    assert part.pose_source("frontleft") == "tf_static"
    assert np.allclose(pose, expected, atol=1e-9) and not np.allclose(pose, profile_pose, atol=1e-3)
    assert part.static_frames.refused and "spot/broken" in part.static_frames.refused[0]
    base[0] = "spot/odom"  # frames that do not reach the base: the profile's
    assert np.allclose(part.info("frontleft").base_from_camera, profile_pose)
