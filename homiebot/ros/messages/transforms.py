"""The graph's transforms (REP 105): ``map`` -> ``<ns>/odom`` (fixed: the simulator's poses are its ground truth)
-> ``<ns>/base_link`` (the robot's pose, as on ``odom``) -> ``<ns>/<view>_camera`` (each camera's optical frame,
OpenCV axes, the frame its images carry). ``<ns>`` is the graph's namespace without its leading slash, so two
graphs' frames never meet in one tf tree.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from geometry_msgs.msg import TransformStamped
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from tf2_msgs.msg import TFMessage

from homiebot.core.contracts import Pose2D
from homiebot.ros.messages.common import stamp_of

STATIC = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)  # as tf2's static broadcaster


@dataclass(frozen=True)
class Frames:
    """The frame ids of one graph."""

    prefix: str  # the graph's namespace without its leading slash, e.g. "homiebot"

    @classmethod
    def of(cls, namespace: str) -> Frames:
        return cls(namespace.strip("/"))

    @property
    def map(self) -> str:
        return "map"

    @property
    def odom(self) -> str:
        return f"{self.prefix}/odom"

    @property
    def base(self) -> str:
        return f"{self.prefix}/base_link"

    def camera(self, view: str) -> str:
        return f"{self.prefix}/{view}_camera"


def transform(parent: str, child: str, stamp_ns: int, xyz: tuple[float, float, float], quaternion: tuple[float, float, float, float]) -> TransformStamped:
    """``child``'s pose in ``parent`` (quaternion x, y, z, w)."""
    msg = TransformStamped(child_frame_id=child)
    msg.header.frame_id, msg.header.stamp = parent, stamp_of(stamp_ns)
    t, q = msg.transform.translation, msg.transform.rotation
    t.x, t.y, t.z = (float(v) for v in xyz)
    q.x, q.y, q.z, q.w = (float(v) for v in quaternion)
    return msg


def base_pose(frames: Frames, pose: Pose2D, stamp_ns: int) -> TransformStamped:
    """``odom`` -> ``base_link`` for a planar pose."""
    return transform(frames.odom, frames.base, stamp_ns, (pose.x, pose.y, 0.0), (0.0, 0.0, math.sin(pose.yaw / 2), math.cos(pose.yaw / 2)))


def camera_pose(frames: Frames, view: str, base_from_camera: np.ndarray, stamp_ns: int) -> TransformStamped:
    """``base_link`` -> a camera's optical frame, from its 4x4 pose in the base frame."""
    m = np.asarray(base_from_camera, dtype=float)
    return transform(frames.base, frames.camera(view), stamp_ns, tuple(m[:3, 3]), quaternion_of(m[:3, :3]))


def quaternion_of(r: np.ndarray) -> tuple[float, float, float, float]:
    """The unit quaternion (x, y, z, w) of a rotation matrix (Shepperd's method: the largest of four square roots)."""
    trace = r[0, 0] + r[1, 1] + r[2, 2]
    if trace > 0:
        s = 2.0 * math.sqrt(1.0 + trace)
        q = ((r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s, (r[1, 0] - r[0, 1]) / s, s / 4)
    elif r[0, 0] > r[1, 1] and r[0, 0] > r[2, 2]:
        s = 2.0 * math.sqrt(1.0 + r[0, 0] - r[1, 1] - r[2, 2])
        q = (s / 4, (r[0, 1] + r[1, 0]) / s, (r[0, 2] + r[2, 0]) / s, (r[2, 1] - r[1, 2]) / s)
    elif r[1, 1] > r[2, 2]:
        s = 2.0 * math.sqrt(1.0 + r[1, 1] - r[0, 0] - r[2, 2])
        q = ((r[0, 1] + r[1, 0]) / s, s / 4, (r[1, 2] + r[2, 1]) / s, (r[0, 2] - r[2, 0]) / s)
    else:
        s = 2.0 * math.sqrt(1.0 + r[2, 2] - r[0, 0] - r[1, 1])
        q = ((r[0, 2] + r[2, 0]) / s, (r[1, 2] + r[2, 1]) / s, s / 4, (r[1, 0] - r[0, 1]) / s)
    norm = math.sqrt(sum(v * v for v in q))
    x, y, z, w = (v / norm for v in q)
    return (x, y, z, w) if w >= 0 else (-x, -y, -z, -w)


def normalised(q: object, t: object, what: str) -> tuple[float, float, float, float]:
    """The unit quaternion (x, y, z, w) of a message's rotation ``q``, its translation ``t`` checked too
    (ValueError naming ``what`` when not finite, or for a zero quaternion)."""
    x, y, z, w = (float(getattr(q, k)) for k in "xyzw")
    n = math.sqrt(x * x + y * y + z * z + w * w)
    if not (math.isfinite(n) and n > 1e-9) or not all(math.isfinite(float(getattr(t, k))) for k in "xyz"):
        raise ValueError(f"{what} is not a pose (quaternion or translation not finite, or a zero quaternion)")
    return x / n, y / n, z / n, w / n


def homogeneous(quaternion: tuple[float, float, float, float], xyz: tuple[float, float, float]) -> np.ndarray:
    """The 4x4 pose of a unit quaternion (x, y, z, w) and a translation."""
    x, y, z, w = quaternion
    m = np.eye(4)
    m[:3, :3] = [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                 [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                 [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]
    m[:3, 3] = xyz
    return m


def matrix_of(msg: TransformStamped) -> np.ndarray:
    """The 4x4 pose of a transform's child in its parent (a quaternion of any length is normalised; a zero one
    is refused with ValueError)."""
    t = msg.transform.translation
    q = normalised(msg.transform.rotation, t, f"the transform {msg.header.frame_id} -> {msg.child_frame_id}")
    return homogeneous(q, (float(t.x), float(t.y), float(t.z)))


class TransformPublisher:
    """Publishes a graph's transforms on ``tf`` and ``tf_static`` under its namespace (``map`` -> ``odom`` once,
    latched; ``odom`` -> ``base_link`` and ``base_link`` -> each camera with every observation's stamp)."""

    def __init__(self, node: Node) -> None:
        self.frames = Frames.of(node.get_namespace())
        self.dynamic = node.create_publisher(TFMessage, "tf", 100)
        self.static = node.create_publisher(TFMessage, "tf_static", STATIC)
        self.static.publish(TFMessage(transforms=[transform(self.frames.map, self.frames.odom, time.time_ns(), (0.0, 0.0, 0.0),
                                                            (0.0, 0.0, 0.0, 1.0))]))

    def base(self, pose: Pose2D, stamp_ns: int) -> None:
        self.dynamic.publish(TFMessage(transforms=[base_pose(self.frames, pose, stamp_ns)]))

    def cameras(self, poses: dict[str, np.ndarray], stamp_ns: int) -> None:
        """Each camera's pose in the base frame (4x4, OpenCV axes), at the stamp of the images it took."""
        if poses:
            self.dynamic.publish(TFMessage(transforms=[camera_pose(self.frames, v, m, stamp_ns) for v, m in poses.items()]))
