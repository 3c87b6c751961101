"""The ROS 2 robot bridge: ``Ros2Robot`` drives a robot (Fetch, Spot, the embedded home's sim driver) through its
driver's own topics, actions and services, assembled from one part per subsystem (``bridge`` says which)."""

from homiebot.ros.clients.driver_check import describe_missing_driver, driver_interfaces, missing_driver_interfaces
from homiebot.ros.clients.robot.bridge import Ros2Robot

# the image conversion and the arm's shortfall message, under the names checks of the bridge know them by
from homiebot.ros.clients.robot.images import to_rgb as _to_rgb  # noqa: F401
from homiebot.ros.clients.robot.pose_arm import shortfall as _shortfall  # noqa: F401

__all__ = ["Ros2Robot", "describe_missing_driver", "driver_interfaces", "missing_driver_interfaces"]
