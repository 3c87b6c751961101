"""Camera messages as the mounted camera gives them: the home renders the upright view (grown to cover the turned
sensor, at the camera's focal length), turned by minus the profile's ``rotation_deg`` into the published
``height`` x ``width``, in the profile's encoding (``homiebot.robots.camera_rotation``)."""

from __future__ import annotations

import math

import numpy as np
from sensor_msgs.msg import CameraInfo, Image

from homiebot.robots.camera_rotation import to_mounted
from homiebot.robots.profile import CameraSpec
from homiebot.ros.messages.common import stamp_of, to_camera_info

GREY = np.array([0.299, 0.587, 0.114], dtype=np.float32)  # mono8 from RGB (ITU-R BT.601)


def camera_size(text: str) -> tuple[int, int] | None:
    """``"120x160"`` -> (120, 160); empty: each camera's own resolution."""
    if not text:
        return None
    h, _, w = text.partition("x")
    return int(h), int(w)


def focal(spec: CameraSpec, raw: tuple[int, int]) -> float:
    """The focal length (pixels) of a camera publishing ``raw`` (height, width): its field of view spans
    the published width; with square pixels the upright render has the same."""
    return 0.5 * raw[1] / math.tan(math.radians(spec.hfov_deg) / 2)


def render_fovy(spec: CameraSpec, raw: tuple[int, int], upright: tuple[int, int]) -> float:
    """The vertical field of view of the upright render (``upright`` = height, width) at the camera's focal length."""
    return math.degrees(2 * math.atan(0.5 * upright[0] / focal(spec, raw)))


def image_msg(rgb: np.ndarray, spec: CameraSpec, raw: tuple[int, int], stamp: int, frame: str) -> Image:
    """The upright render as the mounted camera gives it: turned into the published ``raw`` frame (bilinear),
    in the profile's encoding."""
    if spec.encoding == "mono8":  # grey before turning: a third of the work
        data = (rgb.astype(np.float32) @ GREY).round().astype(np.uint8)
        channels = 1
    else:
        data = rgb[:, :, ::-1] if spec.encoding == "bgr8" else rgb
        channels = 3
    data = to_mounted(data, spec.rotation_deg, raw)
    msg = Image(height=data.shape[0], width=data.shape[1], encoding=spec.encoding, is_bigendian=0, step=data.shape[1] * channels)
    msg.header.stamp = stamp_of(stamp)
    msg.header.frame_id = frame
    msg.data = data.tobytes()
    return msg


def camera_info_msg(raw: tuple[int, int], spec: CameraSpec, stamp: int, frame: str) -> CameraInfo:
    """The intrinsics of the published image (as a driver gives them: of the sensor's frame, before any turning)."""
    h, w = raw
    f = focal(spec, raw)
    return to_camera_info(h, w, (f, f, (w - 1) / 2, (h - 1) / 2), stamp, frame)
