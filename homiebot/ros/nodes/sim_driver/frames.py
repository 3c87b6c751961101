"""The fixed cameras' frames on ``/tf_static``, as a driver sends them (spot_ros2's image publisher: each image's
frame tree; a robot_state_publisher for others): the driver's base frame (its odometry's child frame) to each
camera's image frame, from the profile's ``base_from_camera`` (the upright view's pose) turned back into the
sensor's frame. The bridge reads them as the robot's own calibration (``homiebot.ros.clients.robot.static_frames``)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from tf2_msgs.msg import TFMessage

from homiebot.robots.camera_rotation import sensor_from_upright
from homiebot.robots.profile import RobotProfile
from homiebot.ros.messages.transforms import STATIC, quaternion_of, transform
from homiebot.ros.nodes.sim_driver.upstream import camera_frame, odometry_frames


def camera_transforms(profile: RobotProfile, stamp_ns: int) -> list[Any]:
    """base frame -> sensor frame of every fixed camera of the profile (those with ``base_from_camera``)."""
    base = odometry_frames(profile)[1]
    out = []
    for name, spec in profile.cameras.items():
        if spec.base_from_camera is None:
            continue
        pose = np.array(spec.base_from_camera, dtype=float) @ np.linalg.inv(sensor_from_upright(spec.rotation_deg))
        out.append(transform(base, camera_frame(profile, name), stamp_ns, tuple(pose[:3, 3]), quaternion_of(pose[:3, :3])))
    return out


def publish_camera_frames(node: Any, profile: RobotProfile) -> Any:
    """Send the fixed cameras' transforms once on ``/tf_static`` (latched); the publisher (None without any)."""
    transforms = camera_transforms(profile, time.time_ns())
    if not transforms:
        return None
    publisher = node.create_publisher(TFMessage, "/tf_static", STATIC)
    publisher.publish(TFMessage(transforms=transforms))
    return publisher


__all__ = ["camera_transforms", "publish_camera_frames"]
