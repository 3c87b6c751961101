"""What the emulated upstream driver does by default, taken from its sources rather than from the profile, so
that a profile that disagrees with the driver fails the tests that run the profile against the sim driver.

spot_ros2 (bdaiinstitute/spot_ros2 at bdee4a4), the profile's ``sim.driver: spot_ros2``:

* ``cmd_duration`` (spot_driver/spot_driver/spot_ros2.py, ``declare_parameter("cmd_duration", 0.125)``): each
  cmd_vel is sent to the robot as a velocity command that ends 0.125 s after it; with none after it the
  base stops. ``CMD_DURATION``.
* ``rgb_cameras`` (spot_ros2.py, ``declare_parameter("rgb_cameras", True)``; the image publisher's
  ``kParameterNameHasRGBCameras``): with true every camera is requested as PIXEL_FORMAT_RGB_U8 JPEG
  (spot_driver/src/images/spot_image_publisher.cpp, createImageRequest), with false the body cameras as
  PIXEL_FORMAT_GREYSCALE_U8 JPEG; the hand camera is always RGB. A JPEG of RGB pixels is decoded to **bgr8**,
  a greyscale one to **mono8** (spot_driver/src/conversions/decompress_images.cpp). ``image_encoding``.
* depth (``depth/<camera>/image``, and ``depth_registered/<camera>/image`` through depth_image_proc, which keeps
  the encoding): FORMAT_RAW PIXEL_FORMAT_DEPTH_U16 published as **16UC1**, millimetres (decompress_images.cpp).
  ``DEPTH_ENCODING``.

* frames: odometry is ``<prefix>odom`` to ``<prefix>body`` (spot_driver/src/conversions/robot_state.cpp, getOdom;
  the prefix is the robot's name and a slash, as on its joints: the profile's ``joint_prefix``). ``odometry_frames``.
  Images carry the sensor's frame, ``<prefix>`` + the capture's ``frame_name_image_sensor`` (decompress_images.cpp,
  createImageHeader): ``frontleft_fisheye`` ... ``back_fisheye`` and ``hand_color_image_sensor`` (the names
  spot_driver/src/object_sync/object_synchronizer.cpp lists); depth_image_proc registers depth into that frame.
  The image publisher sends each image's frame tree on ``/tf_static`` (default_image_client.cpp,
  getImageTransforms). ``camera_frame``.

A profile without ``sim.driver`` is served with its own values (its cameras' ``encoding``, its
``cmd_vel_timeout``, depth as 32FC1 metres).
"""

from __future__ import annotations

from typing import Any

from homiebot.robots.profile import CameraSpec, RobotProfile

SPOT_ROS2 = "spot_ros2"
CMD_DURATION = 0.125  # s: spot_ros2.py, declare_parameter("cmd_duration", 0.125)
RGB_CAMERAS = True  # spot_ros2.py, declare_parameter("rgb_cameras", True)
DEPTH_ENCODING = "16UC1"  # decompress_images.cpp: raw depth as TYPE_16UC1 (millimetres)


def emulates_spot_ros2(profile: RobotProfile) -> bool:
    """Whether the sim driver serves this profile as spot_ros2 does (``sim.driver: spot_ros2``)."""
    return profile.sim.driver == SPOT_ROS2


def image_encoding(profile: RobotProfile, spec: CameraSpec, rgb_cameras: bool) -> str:
    """The encoding the driver publishes a camera's images in: spot_ros2's hand camera (on the arm) is always
    colour, its body cameras colour with ``rgb_cameras`` and greyscale without; colour arrives as bgr8 (a decoded
    JPEG). Another driver: the profile's ``encoding``."""
    if not emulates_spot_ros2(profile):
        return spec.encoding
    return "bgr8" if spec.chain == "arm" or rgb_cameras else "mono8"


def depth_encoding(profile: RobotProfile) -> str:
    """The encoding of the driver's depth images: spot_ros2's 16UC1 millimetres, else 32FC1 metres."""
    return DEPTH_ENCODING if emulates_spot_ros2(profile) else "32FC1"


def odometry_frames(profile: RobotProfile) -> tuple[str, str]:
    """The odometry's frame and child frame as the driver stamps them (spot_ros2: prefixed odom and body; another
    driver: the profile's ``odom_frame`` and ``base_frame``)."""
    if emulates_spot_ros2(profile):
        return f"{profile.joint_prefix}odom", f"{profile.joint_prefix}body"
    return profile.odom_frame, profile.base_frame


# the Spot SDK's image sensor frame of each spot_ros2 camera (object_synchronizer.cpp's list of sensor frames)
SPOT_SENSOR_FRAMES = {"frontleft": "frontleft_fisheye", "frontright": "frontright_fisheye", "left": "left_fisheye",
                      "right": "right_fisheye", "back": "back_fisheye", "hand": "hand_color_image_sensor"}


def camera_frame(profile: RobotProfile, camera: str) -> str:
    """The frame id a camera's images carry: spot_ros2's prefixed sensor frame, else the camera's name."""
    if emulates_spot_ros2(profile) and camera in SPOT_SENSOR_FRAMES:
        return f"{profile.joint_prefix}{SPOT_SENSOR_FRAMES[camera]}"
    return camera


def cmd_duration(profile: RobotProfile, value: Any) -> float:
    """How long the driver applies one cmd_vel: the node's ``cmd_duration`` parameter (empty: spot_ros2's default,
    or the profile's ``cmd_vel_timeout`` for another driver)."""
    if isinstance(value, str) and not value.strip():
        return CMD_DURATION if emulates_spot_ros2(profile) else profile.cmd_vel_timeout
    seconds = float(value)
    if not 0 < seconds < 60:
        raise ValueError(f"cmd_duration must be within (0, 60) seconds, not {value}")
    return seconds


def _cmd_duration_check(value: Any) -> str | None:
    """A parameter check: the error text of a wrong ``cmd_duration``, or None."""
    if isinstance(value, str) and not value.strip():
        return None
    try:
        seconds = float(value)
    except ValueError:
        return f"must be seconds or empty, not '{value}'"
    return None if 0 < seconds < 60 else "must be within (0, 60) seconds"


__all__ = ["CMD_DURATION", "DEPTH_ENCODING", "RGB_CAMERAS", "SPOT_ROS2", "SPOT_SENSOR_FRAMES", "camera_frame", "cmd_duration", "depth_encoding",
           "emulates_spot_ros2", "image_encoding", "odometry_frames"]
