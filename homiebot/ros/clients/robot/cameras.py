"""``Cameras``: the profile's camera streams (image, camera_info, registered depth) and frames read from them.

Images are turned upright (``homiebot.ros.clients.robot.images``), converted to RGB from whatever encoding the
driver sends (spot_ros2: bgr8 by default, mono8 body cameras with ``rgb_cameras: false``) and resized to what the caller asks for (depth and segmentation by the
nearest pixel, never blended). The driver's camera_info (of the published image) is turned with them:
the principal point turns, the focal length stays (square pixels), and both are scaled with the resize.
A body camera's pose is the robot's own: where the driver's ``/tf_static`` leads from its images' frame to the
driver's base frame (the odometry's child frame; ``static_frames``), else the profile's static pose (that of the
upright view, in the driver's base frame); either is raised by ``base_height`` into homiebot's, on the floor. A
camera on a chain (Spot's
hand camera on the arm, Fetch's head camera on the torso lift, pan and tilt) is placed by the forward
kinematics of the newest ``joint_states`` over its table, and its ``CameraInfo.pose_stamp`` is those
joint states' stamp (for a frame read, the joint states nearest the image's stamp); joint states lacking
one of its joints raise ``RobotUnavailable`` naming it. A camera with neither reports an identity pose.
In real time, once the base has stopped, a frame is read as taken since (waited for up to ``SETTLE_WAIT``):
an observation after a skill never shows the robot still moving.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from PIL import Image as PILImage
from rclpy.node import Node
from sensor_msgs.msg import CameraInfo as CameraInfoMsg
from sensor_msgs.msg import Image

from homiebot.core.robot import BasePose, CameraFrame, CameraInfo, RobotUnavailable, Unsupported
from homiebot.robots.camera_rotation import sensor_from_upright, upright_intrinsics, upright_shape
from homiebot.robots.profile import CameraSpec, RobotProfile
from homiebot.ros.clients.robot.images import to_depth, to_rgb
from homiebot.ros.clients.robot.joints import JointStates
from homiebot.ros.clients.robot.lockstep import LockStep
from homiebot.ros.clients.robot.static_frames import StaticFrames
from homiebot.ros.messages.common import ns_of

SETTLE_WAIT = 1.5  # s a read waits for a frame taken since the base stopped (a body camera streams at 2 Hz in simulation)

def static_pose(spec: CameraSpec, base_height: float) -> np.ndarray:
    """A fixed camera's pose in homiebot's base frame (on the floor): ``base_from_camera`` is given in the driver's
    base frame (Spot's body, as tf reports body -> camera), which stands ``base_height`` above the floor."""
    if spec.base_from_camera is None:
        return np.eye(4)
    pose = np.array(spec.base_from_camera, dtype=float)
    pose[2, 3] += base_height
    return pose


class Cameras:
    """Keeps the newest message of each camera stream the profile names. ``aliases``: other names the
    cameras answer to (view name -> camera)."""

    def __init__(self, node: Node, profile: RobotProfile, aliases: dict[str, str], joints: JointStates, lockstep: LockStep,
                 alive: Callable[[], BasePose], call_timeout: float, base_frame: Callable[[], str] = lambda: "") -> None:
        """``base_frame``: the driver's base frame as its odometry names it; a fixed camera whose image frame the
        driver's ``/tf_static`` connects to it takes its pose from there (``StaticFrames``), else the profile's."""
        self.profile, self.aliases, self.joints, self.lockstep = profile, aliases, joints, lockstep
        self._alive, self.call_timeout, self._base_frame = alive, call_timeout, base_frame
        self.static_frames = StaticFrames(node)
        self._lock = threading.Lock()
        self._images: dict[str, Image] = {}
        self._depths: dict[str, Image] = {}
        self._infos: dict[str, CameraInfoMsg] = {}
        self._image_ns: dict[str, int] = {}  # the newest image's stamp per camera (a turned head waits for a newer one)
        self.settled_ns = -1  # real time: frames are read as taken at or after this stamp (the base stopped then)
        p = profile
        self.mounts = {cam: m for cam in p.cameras if (m := p.camera_mount(cam)) is not None}  # cameras moved by joints
        for cam, spec in p.cameras.items():
            node.create_subscription(Image, p.topic(spec.image), self._keeper(self._images, cam), 2)
            if spec.info:
                node.create_subscription(CameraInfoMsg, p.topic(spec.info), self._keeper(self._infos, cam), 2)
            if spec.depth:
                node.create_subscription(Image, p.topic(spec.depth), self._keeper(self._depths, cam), 2)

    def _keeper(self, store: dict[str, Any], camera: str) -> Callable[[Any], None]:
        """A callback that keeps the newest message of a camera's stream in ``store``."""

        def keep(msg: Any) -> None:
            with self._lock:
                store[camera] = msg
                if store is self._images:
                    self._image_ns[camera] = ns_of(msg.header.stamp)

        return keep

    def missing_images(self) -> list[str]:
        """The image topics nothing arrived on yet."""
        p = self.profile
        images = {p.topic(spec.image): cam for cam, spec in p.cameras.items()}
        return [topic for topic, cam in images.items() if cam not in self._images]

    def missing_cameras(self) -> list[str]:
        """The cameras no image arrived from yet."""
        return [cam for cam in self.profile.cameras if cam not in self._images]

    def image_ns(self, camera: str) -> int:
        """The stamp (ns) of a camera's newest image; -1 before the first."""
        return self._image_ns.get(camera, -1)

    def wait_for_mounts(self, deadline: float) -> None:
        """Wait until ``deadline`` for joint states carrying the joints of every camera placed by joints."""
        for cam, mount in self.mounts.items():
            while True:
                try:
                    self.joints.values(mount.names, f"camera '{cam}'")
                    break
                except RobotUnavailable:
                    if time.monotonic() > deadline:
                        raise
                time.sleep(0.05)

    def spec(self, camera: str) -> CameraSpec:
        """The profile's spec of a camera (or of the camera an alias names)."""
        camera = self.aliases.get(camera, camera)
        if camera not in self.profile.cameras:
            raise ValueError(f"unknown camera '{camera}'; {self.profile.robot} has {sorted(self.profile.cameras)}")
        return self.profile.cameras[camera]

    def info(self, camera: str, size: tuple[int, int] | None = None, at_ns: int | None = None) -> CameraInfo:
        """A camera's geometry upright at ``size``; a camera on a chain placed by the joint states nearest
        ``at_ns`` (an image's stamp), else by the newest."""
        spec = self.spec(camera)
        camera = self.aliases.get(camera, camera)
        with self._lock:
            msg = self._infos.get(camera)
        if msg is not None and msg.k[0] > 0 and msg.height > 0 and msg.width > 0:  # the driver's, of the image as published
            raw = (int(msg.height), int(msg.width))
            k = (msg.k[0], msg.k[4], msg.k[2], msg.k[5])
        else:  # no camera_info: a pinhole from the profile's field of view
            raw = (spec.height, spec.width)
            f = 0.5 * spec.width / math.tan(math.radians(spec.hfov_deg) / 2)
            k = (f, f, (spec.width - 1) / 2, (spec.height - 1) / 2)
        fx, fy, cx, cy = upright_intrinsics(*k, raw, spec.rotation_deg)  # turned upright like the image
        h, w = upright_shape(raw, spec.rotation_deg)
        if size is not None:
            sy, sx = size[0] / h, size[1] / w
            fx, fy, cx, cy, h, w = fx * sx, fy * sy, cx * sx, cy * sy, size[0], size[1]
        stamp = None
        if camera in self.mounts:  # moved by joints: where the newest joint states put it
            mount = self.mounts[camera]
            q, stamp = self.joints.values(mount.names, f"camera '{camera}'", at_ns)
            pose = mount.pose(q)
        else:
            pose = self.fixed_pose(camera, spec)
        return CameraInfo(camera, int(h), int(w), (fx, fy, cx, cy), pose, "rgb8", spec.depth is not None, stamp)

    def fixed_pose(self, camera: str, spec: CameraSpec) -> np.ndarray:
        """A fixed camera's pose in homiebot's base frame: from the driver's static frames when they lead from its
        images' frame to the driver's base frame (the robot's own calibration), else the profile's."""
        found = self._driver_pose(camera)
        if found is None:
            return static_pose(spec, self.profile.base_height)
        pose = found @ sensor_from_upright(spec.rotation_deg)  # the images are turned upright: so is their camera
        pose[2, 3] += self.profile.base_height
        return pose

    def pose_source(self, camera: str) -> str:
        """Where a fixed camera's pose comes from: "tf_static" or "profile" (what ``fixed_pose`` would use now)."""
        return "profile" if self._driver_pose(camera) is None else "tf_static"

    def _driver_pose(self, camera: str) -> np.ndarray | None:
        """The sensor frame of a camera's newest image in the driver's base frame, by the static frames; None when
        they do not lead there (or no image or odometry came yet)."""
        with self._lock:
            msg = self._images.get(camera)
        base, frame = self._base_frame(), str(msg.header.frame_id) if msg is not None else ""
        return self.static_frames.pose(base, frame) if base and frame and frame != base else None

    def settle(self, ns: int) -> None:
        """The base stopped at ``ns`` (wall clock): a frame read from now on is one taken since, waited for up to
        ``SETTLE_WAIT`` s (a camera streaming slowly, such as a simulator's body cameras, may still hold one
        taken while the robot moved)."""
        self.settled_ns = max(self.settled_ns, int(ns))

    def frames(self, camera: str) -> tuple[Image | None, Image | None]:
        """The newest image and depth of a camera; in lock-step, of the last step's instant (waited for); in real
        time, one taken since the base last stopped when one comes within SETTLE_WAIT s, else the newest (a
        camera that lags, or a driver clock that runs behind, costs that wait, never the frame)."""
        started = time.monotonic()
        while True:
            with self._lock:
                msg, dmsg = self._images.get(camera), self._depths.get(camera)
            if msg is None:
                return msg, dmsg
            stamp = ns_of(msg.header.stamp)
            if not self.lockstep.active:
                if stamp >= self.settled_ns or time.monotonic() - started > SETTLE_WAIT:
                    return msg, dmsg
            elif self.lockstep.sim_ns < 0 or stamp >= self.lockstep.sim_ns:
                self.lockstep.reading(camera)
                return msg, dmsg
            elif self.lockstep.ask(camera):  # not rendered at this instant's step: the driver renders it now
                self.lockstep.reading(camera)
                continue
            elif time.monotonic() - started > self.call_timeout:
                raise RobotUnavailable(f"{self.profile.robot}: no image of the simulated instant {self.lockstep.sim_ns} ns "
                                       f"from camera '{camera}'")
            time.sleep(0.005)

    def read(self, camera: str, size: tuple[int, int] | None = None, depth: bool = False) -> CameraFrame:
        """The newest frame of a camera at ``size`` (height, width), with depth when asked."""
        spec = self.spec(camera)
        camera = self.aliases.get(camera, camera)
        self._alive()
        msg, dmsg = self.frames(camera)
        if msg is None:
            raise RobotUnavailable(f"{self.profile.robot}: no image on {self.profile.topic(spec.image)} yet")
        rgb = to_rgb(msg, spec)
        target = size or rgb.shape[:2]
        if rgb.shape[:2] != tuple(target):
            rgb = np.asarray(PILImage.fromarray(rgb).resize((target[1], target[0]), PILImage.Resampling.BILINEAR))
        d = None
        if depth:
            if dmsg is None:
                raise Unsupported(f"{self.profile.robot}: no depth for camera '{camera}'")
            d = to_depth(dmsg, spec)
            if d.shape != tuple(target):
                d = np.asarray(PILImage.fromarray(d).resize((target[1], target[0]), PILImage.Resampling.NEAREST))
        stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        info = self.info(camera, (int(target[0]), int(target[1])), ns_of(msg.header.stamp))
        return CameraFrame(rgb, info, stamp, d)


__all__ = ["SETTLE_WAIT", "Cameras"]
