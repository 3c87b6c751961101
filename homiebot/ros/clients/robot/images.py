"""A driver's sensor_msgs/Image as homiebot's arrays: turned upright by the camera's ``rotation_deg`` (any angle,
about the image centre: ``homiebot.robots.camera_rotation``) into the published frame turned by the nearest
quarter turn, whose corners no sensor pixel reaches are 0; colour as RGB, depth in metres.

Whatever encoding the driver sends is taken, not the one the profile names: spot_ros2 publishes bgr8 with its
default ``rgb_cameras: true`` and mono8 body cameras with false; other drivers rgb8 (``COLOUR``). Rows may be
padded (``step`` over width times pixel size), as ROS allows. Depth is 32FC1 metres or 16UC1 millimetres
(``DEPTH``; 0, NaN or inf: unknown, given as 0)."""

from __future__ import annotations

import numpy as np
from sensor_msgs.msg import Image

from homiebot.core.robot import RobotUnavailable
from homiebot.robots.camera_rotation import to_upright
from homiebot.robots.profile import CameraSpec

# colour encodings taken: channels, and the order of R, G, B among them
COLOUR = {"rgb8": (3, (0, 1, 2)), "bgr8": (3, (2, 1, 0)), "rgba8": (4, (0, 1, 2)), "bgra8": (4, (2, 1, 0)), "mono8": (1, (0, 0, 0))}
DEPTH: dict[str, np.dtype] = {"32FC1": np.dtype(np.float32), "16UC1": np.dtype(np.uint16)}


def _pixels(msg: Image, dtype: np.dtype, channels: int) -> np.ndarray:
    """The image's pixels as (height, width, channels), rows unpadded (``RobotUnavailable`` when the data does not fit)."""
    row = msg.width * channels * dtype.itemsize
    step = msg.step or row
    data = bytes(msg.data)
    if step < row or len(data) < step * (msg.height - 1) + row or msg.height == 0 or msg.width == 0:
        raise RobotUnavailable(f"a {msg.encoding[:20]} image of {msg.width}x{msg.height} (step {msg.step}) with {len(data)} bytes")
    rows = np.frombuffer(data[: step * msg.height].ljust(step * msg.height, b"\0"), dtype=np.uint8).reshape(msg.height, step)[:, :row]
    typed = dtype.newbyteorder(">") if msg.is_bigendian else dtype.newbyteorder("<")
    return np.ascontiguousarray(rows).view(typed).reshape(msg.height, msg.width, channels)


def to_rgb(msg: Image, spec: CameraSpec) -> np.ndarray:
    """The image upright (in ``upright_shape`` of the published one) and as RGB, from any of ``COLOUR`` (mono8
    repeated over three channels, alpha dropped); ``RobotUnavailable`` for another encoding or a short image."""
    if msg.encoding not in COLOUR:
        raise RobotUnavailable(f"an image in {msg.encoding[:20] or 'no encoding'}; the bridge reads {', '.join(COLOUR)}")
    channels, order = COLOUR[msg.encoding]
    a = _pixels(msg, np.dtype(np.uint8), channels)
    if channels == 4:  # the alpha channel dropped before turning
        a = a[:, :, :3]
    a = to_upright(a, spec.rotation_deg)  # bilinear; corners with no data: 0
    if channels == 1:  # repeated after turning: a third of the work
        return np.ascontiguousarray(np.repeat(a, 3, axis=2))
    return np.ascontiguousarray(a[:, :, list(order)])


def to_depth(msg: Image, spec: CameraSpec) -> np.ndarray:
    """Depth in metres, upright like the image (32FC1 metres or 16UC1 millimetres; unknown: 0)."""
    if msg.encoding not in DEPTH:
        raise RobotUnavailable(f"a depth image in {msg.encoding[:20] or 'no encoding'}; the bridge reads {', '.join(DEPTH)}")
    d = _pixels(msg, DEPTH[msg.encoding], 1)[:, :, 0].astype(np.float32)
    if msg.encoding == "16UC1":
        d /= 1000.0
    d[~np.isfinite(d)] = 0.0
    return to_upright(d, spec.rotation_deg, order=0)  # the nearest pixel: depth is never blended across an edge; 0: unknown


__all__ = ["COLOUR", "DEPTH", "to_depth", "to_rgb"]
