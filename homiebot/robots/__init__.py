"""Robot profiles: how the Robot interface maps onto a real driver's ROS 2 names and types."""

from homiebot.robots.profile import CameraSpec, RobotProfile, load_profile

__all__ = ["CameraSpec", "RobotProfile", "load_profile"]
