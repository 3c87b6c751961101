"""The gripper: the driver's open / close services, a GripperCommand action server for a profile whose gripper
takes commands (Fetch: reports ``stalled`` when the fingers stop on something), and the gripper's state as the
driver tells it (Spot's ``manipulation_state``: whether the gripper holds something) at the state rate."""

from __future__ import annotations

import threading
from typing import Any

from homiebot.robots.manipulator_state import manipulator_state, manipulator_state_type
from homiebot.robots.profile import RobotProfile
from homiebot.ros.nodes.sim_driver.numbers import finite

CLOSED, OPEN = 1.0, 0.0  # the home's gripper closure


class SimGripper:
    """The home's gripper behind the profile's gripper interfaces (``state_pub``: None without a gripper state)."""

    def __init__(self, node: Any, profile: RobotProfile, robot: Any, lock: threading.Lock, counters: dict[str, int]) -> None:
        self.node, self.profile, self.robot, self._lock, self.counters = node, profile, robot, lock, counters
        self.state_pub = (node.create_publisher(manipulator_state_type(profile.robot), profile.topic(profile.gripper_state.name), 10)
                          if profile.gripper_state is not None else None)

    def open(self) -> tuple[bool, str]:
        """The gripper opened (under the lock)."""
        self.robot.set_gripper(OPEN)
        return True, "gripper open"

    def close(self) -> tuple[bool, str]:
        """The gripper closed (under the lock)."""
        self.robot.set_gripper(CLOSED)
        return True, "gripper closed"

    def serve(self, group: Any) -> Any:
        """The GripperCommand action server, for a profile whose gripper takes commands (else None)."""
        if "command" not in self.profile.gripper:
            return None
        from control_msgs.action import GripperCommand
        from rclpy.action import ActionServer

        return ActionServer(self.node, GripperCommand, self.profile.topic(self.profile.gripper["command"].name), self.execute,
                            callback_group=group)

    def execute(self, handle: Any) -> Any:
        """Close or open the gripper to the goal's gap; ``stalled`` when the fingers stopped on something before it."""
        from control_msgs.action import GripperCommand

        result = GripperCommand.Result()
        position, gap = float(handle.request.command.position), self.profile.gripper_max_gap
        if not finite(position):
            handle.abort()
            return result
        with self._lock:
            self.counters["gripper_goals"] += 1
            self.robot.set_gripper(1.0 - min(max(position / gap, 0.0), 1.0))
            state = self.robot.gripper_state()
        result.position = float(state.open_fraction * gap)
        result.stalled = bool(state.holding)  # the fingers stopped on something before the goal
        result.reached_goal = not result.stalled
        result.effort = float(handle.request.command.max_effort) if result.stalled else 0.0
        handle.succeed()
        return result

    def publish(self) -> None:
        """Publish the gripper's state (for a profile that has one)."""
        if self.state_pub is not None:
            gripper = self.robot.gripper_state()
            self.state_pub.publish(manipulator_state(self.profile.robot, gripper.open_fraction, bool(gripper.holding)))
