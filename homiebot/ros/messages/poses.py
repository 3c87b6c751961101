"""Poses on the wire as geometry_msgs/Pose: the robot's planar pose (x, y on the floor, a turn about z) and a
camera's 4x4 pose, both ways. A pose that is not finite, or whose quaternion is zero, is refused with ValueError."""

from __future__ import annotations

import math

import numpy as np
from geometry_msgs.msg import Pose

from homiebot.ros.messages.transforms import homogeneous, normalised, quaternion_of


def planar_pose_msg(x: float, y: float, yaw: float) -> Pose:
    """A pose on the floor: at (x, y, 0), turned by ``yaw`` about z."""
    msg = Pose()
    msg.position.x, msg.position.y = float(x), float(y)
    msg.orientation.z, msg.orientation.w = math.sin(yaw / 2), math.cos(yaw / 2)
    return msg


def _quaternion(msg: Pose) -> tuple[float, float, float, float]:
    return normalised(msg.orientation, msg.position, "a Pose")


def planar_of(msg: Pose) -> tuple[float, float, float]:
    """x, y and the heading (the turn about z) of a pose."""
    x, y, z, w = _quaternion(msg)
    return float(msg.position.x), float(msg.position.y), math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))


def matrix_pose_msg(matrix: np.ndarray) -> Pose:
    """A 4x4 pose (rotation and translation) as a Pose."""
    m = np.asarray(matrix, dtype=float).reshape(4, 4)
    msg = Pose()
    msg.position.x, msg.position.y, msg.position.z = (float(v) for v in m[:3, 3])
    q = msg.orientation
    q.x, q.y, q.z, q.w = quaternion_of(m[:3, :3])
    return msg


def matrix_of_pose(msg: Pose) -> np.ndarray:
    """A Pose as a 4x4 matrix."""
    p = msg.position
    return homogeneous(_quaternion(msg), (float(p.x), float(p.y), float(p.z)))


__all__ = ["matrix_of_pose", "matrix_pose_msg", "planar_of", "planar_pose_msg"]
