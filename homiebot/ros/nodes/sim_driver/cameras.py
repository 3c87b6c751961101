"""The camera streams at ``sim.camera_rate_hz`` (in real time the cameras other than the policy camera at
``sim.view_rate_hz`` where the profile sets one): each camera's image, camera_info and registered depth, in the
emulated driver's encodings (``upstream``: spot_ros2's bgr8, or mono8 body cameras with ``rgb_cameras`` false,
depth as 16UC1 millimetres), and beside each camera of the planner's views its instance segmentation
(``/homiebot/sim/<camera>/segmentation``, simulator only, as a segmentation camera would). In lock-step nothing moves between steps, so the instant's
messages are sent again rather than rendered again."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from sensor_msgs.msg import CameraInfo, Image

from homiebot.robots.camera_rotation import render_shape, to_mounted
from homiebot.robots.profile import CameraSpec, RobotProfile
from homiebot.robots.sim import segmentation_topic
from homiebot.ros.messages.common import to_image
from homiebot.ros.nodes.sim_driver.images import camera_info_msg, depth_msg, image_msg, render_fovy
from homiebot.ros.nodes.sim_driver.upstream import RGB_CAMERAS, camera_frame, depth_encoding, image_encoding


class SimCameras:
    """The publishers of the cameras the home renders (``pubs``: image, info, depth by camera; ``seg_pubs``) and the
    messages of the last instant. ``size``: every camera's (height, width), or None for each camera's own;
    ``view_of``: the home's view a camera renders now; ``stamp_ns``: the driver's stamps."""

    def __init__(self, node: Any, profile: RobotProfile, robot: Any, size: tuple[int, int] | None, view_of: Callable[[str], str],
                 stamp_ns: Callable[[], int], lock: threading.Lock, lockstep: bool, rgb_cameras: bool = RGB_CAMERAS) -> None:
        self.node, self.profile, self.robot, self.size = node, profile, robot, size
        # the encodings the emulated driver publishes (``upstream``: spot_ros2's rgb_cameras), else the profile's
        self.encodings = {name: image_encoding(profile, spec, rgb_cameras) for name, spec in profile.cameras.items()}
        self.depth_encoding = depth_encoding(profile)
        self.frames = {name: camera_frame(profile, name) for name in profile.cameras}  # the frame ids its images carry
        self.view_of, self._stamp_ns, self._lock, self.lockstep = view_of, stamp_ns, lock, lockstep
        self.pubs = {name: self._publishers(spec) for name, spec in profile.cameras.items() if name in profile.sim.views}
        # a segmentation camera beside each camera of the planner's views (simulator only, for oracle perception)
        self.seg_pubs = {name: node.create_publisher(Image, segmentation_topic(name), 5) for name in self.pubs if name in profile.views.values()}
        self._sent: list[tuple[Any, Any]] = []  # lock-step: the messages of the instant (publisher, message)
        # real time: every camera but the policy camera rendered at the profile's view rate, when it has one
        view_rate = profile.sim.view_rate_hz
        self.period = {name: 1.0 / (profile.sim.camera_rate_hz if view_rate is None or name == profile.policy_camera else view_rate)
                       for name in self.pubs}
        self._due = dict.fromkeys(self.pubs, 0.0)  # monotonic time each camera is next rendered at

    def _publishers(self, spec: CameraSpec) -> tuple[Any, Any, Any]:
        """A camera's image, camera_info and depth publishers (None where the profile has none)."""
        p = self.profile
        image = self.node.create_publisher(Image, p.topic(spec.image), 5)
        info = self.node.create_publisher(CameraInfo, p.topic(spec.info), 5) if spec.info else None
        depth = self.node.create_publisher(Image, p.topic(spec.depth), 5) if spec.depth else None
        return image, info, depth

    def start(self) -> None:
        """Stream at the profile's camera rate."""
        self.node.create_timer(1.0 / self.profile.sim.camera_rate_hz, self.on_timer)

    def on_timer(self) -> None:
        """The camera streams: in real time each camera rendered when its period has passed (the policy camera at
        every tick, the others at the view rate); in lock-step nothing moves between steps, so the instant's
        messages are sent again (for late subscribers) without rendering again."""
        if not self.lockstep:
            now = time.monotonic()
            due = [name for name in self.pubs if now >= self._due[name] - 1e-3]
            for name in due:  # on schedule; after a tick later than a whole period, one period from now (not made up for)
                following = self._due[name] + self.period[name]
                self._due[name] = following if following > now else now + self.period[name]
            self.render(due)
            return
        if not self._sent:  # (none yet: at start-up and after a restart)
            self.render()
            return
        for pub, msg in self._sent:
            pub.publish(msg)

    def render(self, cameras: list[str] | None = None, more: bool = False) -> None:
        """Render and publish each camera (``cameras``: those only) in turn, stamped when it is rendered (as a camera
        stamps at capture). In lock-step the instant's messages are kept for late subscribers: those of a new
        instant replace them, ``more`` (cameras asked for at the same instant) adds to them."""
        unknown = [name for name in cameras or () if name not in self.pubs]
        if unknown:
            raise LookupError(f"no camera {unknown[0]!r} in simulation; the driver's cameras: {sorted(self.pubs)}")
        sent: list[tuple[Any, Any]] = []
        for name in self.pubs if cameras is None else cameras:
            spec = self.profile.cameras[name]
            raw = self.size or (spec.height, spec.width)  # the image as the driver publishes it
            upright = render_shape(raw, spec.rotation_deg)
            with self._lock:
                view = self.robot.render(upright, (self.view_of(name),), fovy=render_fovy(spec, raw, upright),
                                         segmentation=name in self.seg_pubs)
            frame = next(iter(view.values()))
            stamp = self._stamp_ns()
            image_pub, info_pub, depth_pub = self.pubs[name]
            frame_id = self.frames[name]
            messages = [(image_pub, image_msg(frame.rgb, spec, raw, stamp, frame_id, self.encodings[name]))]
            if info_pub is not None:
                messages.append((info_pub, camera_info_msg(raw, spec, stamp, frame_id)))
            if depth_pub is not None and frame.depth is not None:  # by the nearest pixel: depth is never blended
                depth = to_mounted(frame.depth, spec.rotation_deg, raw, order=0)
                messages.append((depth_pub, depth_msg(depth, self.depth_encoding, stamp, frame_id)))
            if name in self.seg_pubs and frame.segmentation is not None:
                ids = to_mounted(frame.segmentation, spec.rotation_deg, raw, order=0)
                messages.append((self.seg_pubs[name], to_image(ids, "segmentation", stamp, frame_id)))
            for pub, msg in messages:
                pub.publish(msg)
            sent += messages
        if more:
            again = {id(pub) for pub, _ in sent}
            sent = [(pub, msg) for pub, msg in self._sent if id(pub) not in again] + sent
        self._sent = sent

    def forget(self) -> None:
        """The home restarted: the next tick renders the new instant (every camera)."""
        self._sent = []
        self._due = dict.fromkeys(self.pubs, 0.0)
