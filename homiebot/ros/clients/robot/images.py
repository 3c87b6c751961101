"""A driver's sensor_msgs/Image as homiebot's arrays: turned upright by the camera's ``rotation_deg`` (any angle,
about the image centre: ``homiebot.robots.camera_rotation``) into the published frame turned by the nearest
quarter turn, whose corners no sensor pixel reaches are 0; colour as RGB, depth in metres."""

from __future__ import annotations

import numpy as np
from sensor_msgs.msg import Image

from homiebot.core.robot import RobotUnavailable
from homiebot.robots.camera_rotation import to_upright
from homiebot.robots.profile import CameraSpec


def to_rgb(msg: Image, spec: CameraSpec) -> np.ndarray:
    """The image upright (in ``upright_shape`` of the published one) and as RGB (mono8 repeated over three
    channels)."""
    channels = 1 if msg.encoding == "mono8" else 3
    data = np.frombuffer(bytes(msg.data), dtype=np.uint8)
    if data.size != msg.height * msg.width * channels:
        raise RobotUnavailable(f"a {msg.encoding} image of {msg.width}x{msg.height} with {data.size} bytes")
    a = to_upright(data.reshape(msg.height, msg.width, channels), spec.rotation_deg)  # bilinear; corners with no data: 0
    if msg.encoding == "bgr8":
        a = a[:, :, ::-1]
    elif channels == 1:  # repeated after turning: a third of the work
        a = np.repeat(a, 3, axis=2)
    return np.ascontiguousarray(a)


def to_depth(msg: Image, spec: CameraSpec) -> np.ndarray:
    """Depth in metres, upright like the image (32FC1 metres or 16UC1 millimetres)."""
    if msg.encoding == "16UC1":
        d = np.frombuffer(bytes(msg.data), dtype=np.uint16).reshape(msg.height, msg.width).astype(np.float32) / 1000.0
    else:
        d = np.frombuffer(bytes(msg.data), dtype=np.float32).reshape(msg.height, msg.width)
    return to_upright(d, spec.rotation_deg, order=0)  # the nearest pixel: depth is never blended across an edge; 0: unknown


__all__ = ["to_depth", "to_rgb"]
