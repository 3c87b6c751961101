"""Spot's gripper state as spot_ros2 publishes it, read by the bridge and written by the sim driver.

spot_ros2's state publisher sends ``bosdyn_api_msgs/msg/ManipulatorState`` on ``manipulation_state``
under the driver's namespace (spot_driver/src/robot_state/state_middleware_handle.cpp,
``kManipulatorTopic``), filled from the robot state's manipulator state
(spot_driver/src/conversions/robot_state.cpp, ``getManipulatorState``): ``gripper_open_percentage``
(0 closed .. 100 open) and ``is_gripper_holding_item`` (the robot's own judgement that the closed
gripper holds something), ``stow_state``, ``carry_state``, and optional hand velocities and forces
flagged in ``has_field``. The type is built from ``interfaces/bosdyn_api_msgs`` by
``tools/build_interfaces.py``.
"""

from __future__ import annotations

from typing import Any

from homiebot.robots.built import built_module

MANIPULATOR_STATE = "bosdyn_api_msgs/msg/ManipulatorState"
GRIPPER_STATE_TYPES = (MANIPULATOR_STATE,)  # the gripper-state types the bridge reads


def manipulator_state_type(robot: str) -> Any:
    """The ManipulatorState message class (built by ``make``), or RobotUnavailable saying how to build it."""
    return built_module("bosdyn_api_msgs.msg", robot, f"reads {MANIPULATOR_STATE}").ManipulatorState


def gripper_reading(msg: Any) -> tuple[float, bool]:
    """(open fraction 0..1, whether the robot says the gripper holds something) from a ManipulatorState."""
    fraction = float(msg.gripper_open_percentage) / 100.0
    if fraction != fraction:  # NaN: say closed rather than pass it on
        fraction = 0.0
    return min(max(fraction, 0.0), 1.0), bool(msg.is_gripper_holding_item)


def manipulator_state(robot: str, open_fraction: float, holding: bool, stowed: bool | None = None) -> Any:
    """A ManipulatorState as the driver fills it: the gripper's opening and holding flag, the stow state
    (unknown when ``stowed`` is None), no optional field set (``has_field`` 0)."""
    cls = manipulator_state_type(robot)
    msg = cls(gripper_open_percentage=float(min(max(open_fraction, 0.0), 1.0)) * 100.0, is_gripper_holding_item=bool(holding))
    stow = type(msg.stow_state)
    msg.stow_state.value = (stow.STOWSTATE_UNKNOWN if stowed is None else stow.STOWSTATE_STOWED if stowed
                            else stow.STOWSTATE_DEPLOYED)
    msg.has_field = 0
    return msg


__all__ = ["GRIPPER_STATE_TYPES", "MANIPULATOR_STATE", "gripper_reading", "manipulator_state", "manipulator_state_type"]
