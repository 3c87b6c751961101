"""Camera messages as the mounted camera gives them: the home renders the upright view (grown to cover the turned
sensor, at the camera's focal length), turned by minus the profile's ``rotation_deg`` into the published
``height`` x ``width`` (``homiebot.robots.camera_rotation``), in the driver's encoding (``upstream.image_encoding``:
an emulated upstream driver's, else the profile's)."""

from __future__ import annotations

import math

import numpy as np
from sensor_msgs.msg import CameraInfo, Image

from homiebot.robots.camera_rotation import to_mounted
from homiebot.robots.profile import CameraSpec
from homiebot.ros.messages.common import stamp_of, to_camera_info, to_image

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


def image_msg(rgb: np.ndarray, spec: CameraSpec, raw: tuple[int, int], stamp: int, frame: str, encoding: str | None = None) -> Image:
    """The upright render as the mounted camera gives it: turned into the published ``raw`` frame (bilinear),
    in ``encoding`` (rgb8, bgr8 or mono8; None: the profile's)."""
    encoding = encoding or spec.encoding
    if encoding == "mono8":  # grey before turning: a third of the work
        data = (rgb.astype(np.float32) @ GREY).round().astype(np.uint8)
        channels = 1
    elif encoding in ("rgb8", "bgr8"):
        data = rgb[:, :, ::-1] if encoding == "bgr8" else rgb
        channels = 3
    else:
        raise ValueError(f"the sim driver publishes rgb8, bgr8 or mono8 images, not {encoding}")
    data = to_mounted(data, spec.rotation_deg, raw)
    msg = Image(height=data.shape[0], width=data.shape[1], encoding=encoding, is_bigendian=0, step=data.shape[1] * channels)
    msg.header.stamp = stamp_of(stamp)
    msg.header.frame_id = frame
    msg.data = data.tobytes()
    return msg


def depth_msg(depth: np.ndarray, encoding: str, stamp: int, frame: str) -> Image:
    """A depth image (metres; 0 or not finite: unknown) as 32FC1 metres or 16UC1 millimetres (0: unknown, beyond
    65.535 m: the largest value)."""
    if encoding == "32FC1":
        return to_image(depth, "depth", stamp, frame)
    if encoding != "16UC1":
        raise ValueError(f"the sim driver publishes depth as 32FC1 or 16UC1, not {encoding}")
    d = np.asarray(depth, dtype=np.float64)
    mm = np.where(np.isfinite(d) & (d > 0), np.clip(np.round(np.nan_to_num(d, posinf=0.0) * 1000.0), 0, 65535), 0).astype(np.uint16)
    msg = Image(height=mm.shape[0], width=mm.shape[1], encoding="16UC1", is_bigendian=0, step=mm.shape[1] * 2)
    msg.header.stamp = stamp_of(stamp)
    msg.header.frame_id = frame
    msg.data = mm.tobytes()
    return msg


def camera_info_msg(raw: tuple[int, int], spec: CameraSpec, stamp: int, frame: str) -> CameraInfo:
    """The intrinsics of the published image (as a driver gives them: of the sensor's frame, before any turning)."""
    h, w = raw
    f = focal(spec, raw)
    return to_camera_info(h, w, (f, f, (w - 1) / 2, (h - 1) / 2), stamp, frame)
