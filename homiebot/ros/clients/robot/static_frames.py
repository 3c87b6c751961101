"""``StaticFrames``: the robot's fixed frames as its driver publishes them on ``/tf_static``, so that a body camera's
pose comes from the robot itself rather than from the profile.

spot_ros2's image publishers send every image's frame tree on ``/tf_static`` (spot_driver/src/api/
default_image_client.cpp, getImageTransforms: each edge child -> parent of the image's transforms snapshot,
prefixed with the robot's name, the body, odom and vision frames left out); the images carry the sensor's frame
(``<name>/frontleft_fisheye`` ...). That is the robot's own calibration, which no description file holds: the
front pair points down and crosses. Walking the edges from an image's frame up to the driver's base frame (the
odometry's child frame) gives the camera's pose; a camera whose frames never arrived keeps the profile's pose.
"""

from __future__ import annotations

import threading

import numpy as np
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from tf2_msgs.msg import TFMessage

from homiebot.ros.messages.transforms import matrix_of

TF_STATIC = "/tf_static"  # tf2's static broadcaster publishes here, under no namespace
# a late subscriber gets every static broadcaster's last message (tf2_ros' static listener QoS, depth 100)
LISTEN = QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                    durability=DurabilityPolicy.TRANSIENT_LOCAL)
MAX_DEPTH = 32  # edges walked from a frame to the base at most (a cycle is not a pose)


class StaticFrames:
    """The newest static edge of every frame (child -> parent, pose); poses of frames in a parent by walking them."""

    def __init__(self, node: Node | None) -> None:
        """``node``: subscribe to ``/tf_static`` on it (None: edges come only through ``add``)."""
        self._edges: dict[str, tuple[str, np.ndarray]] = {}
        self._lock = threading.Lock()
        self.refused: list[str] = []  # why edges were not taken (the newest few)
        if node is not None:
            node.create_subscription(TFMessage, TF_STATIC, self.add, LISTEN)

    def add(self, msg: TFMessage) -> None:
        """Take the edges of a static transform message (an edge that is no pose is left out, and said why)."""
        for tf in msg.transforms:
            try:
                pose = matrix_of(tf)
            except ValueError as err:
                self.refused = (self.refused + [str(err)])[-5:]
                continue
            with self._lock:
                self._edges[str(tf.child_frame_id).lstrip("/")] = (str(tf.header.frame_id).lstrip("/"), pose)

    def pose(self, parent: str, frame: str) -> np.ndarray | None:
        """``frame``'s pose in ``parent`` from the static edges, or None when they do not lead there."""
        parent, frame = parent.lstrip("/"), frame.lstrip("/")
        pose = np.eye(4)
        with self._lock:
            for _ in range(MAX_DEPTH):
                if frame == parent:
                    return pose
                edge = self._edges.get(frame)
                if edge is None:
                    return None
                frame, step = edge
                pose = step @ pose
        return None


__all__ = ["StaticFrames", "TF_STATIC"]
