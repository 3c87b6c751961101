"""The gripper: the driver's open / close services, a GripperCommand action server for a profile whose gripper
takes commands, and the gripper's state as the driver tells it (Spot's ``manipulation_state``: whether the gripper
holds something) at the state rate.

The action behaves as Fetch's controller (robot_controllers, parallel_gripper.cpp): a goal within 2 mm succeeds with
``reached_goal``; fingers that stop short of it (on something) succeed with ``stalled`` once they have not moved for
2 s, so a grasp answers 2 s after the fingers closed on the thing, in the driver's time (lock-step: a step runs until
the goal ended)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from rclpy.task import Future

from homiebot.robots.manipulator_state import manipulator_state, manipulator_state_type
from homiebot.robots.profile import RobotProfile
from homiebot.ros.nodes.sim_driver.goals import GoalNotes
from homiebot.ros.nodes.sim_driver.numbers import finite

CLOSED, OPEN = 1.0, 0.0  # the home's gripper closure
STALL_S = 2.0  # parallel_gripper.cpp: no finger motion over 5 mm for 2 s ends the goal as stalled


class SimGripper:
    """The home's gripper behind the profile's gripper interfaces (``state_pub``: None without a gripper state)."""

    def __init__(self, node: Any, profile: RobotProfile, robot: Any, lock: threading.Lock, counters: dict[str, int],
                 seconds: Callable[[], float] | None = None, goals: GoalNotes | None = None) -> None:
        self.node, self.profile, self.robot, self._lock, self.counters = node, profile, robot, lock, counters
        self._seconds, self.goals = seconds or (lambda: 0.0), goals or GoalNotes(lock)
        self._running: tuple[float, Future, Any] | None = None  # (ends at, done, handle) of the goal in progress
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

    async def execute(self, handle: Any) -> Any:
        """Close or open the gripper to the goal's gap; ``stalled`` when the fingers stopped on something before it."""
        from control_msgs.action import GripperCommand

        result = GripperCommand.Result()
        position, gap = float(handle.request.command.position), self.profile.gripper_max_gap
        if not finite(position):
            self.goals.refuse(handle)
            return result
        done = Future()
        with self._lock:
            self.counters["gripper_goals"] += 1
            if self._running is not None:  # a new goal preempts the one in progress
                self.end(False)
            self.robot.set_gripper(1.0 - min(max(position / gap, 0.0), 1.0))
            state = self.robot.gripper_state()
            stalled = bool(state.holding)  # the fingers stopped on something before the goal
            self._running = (self._seconds() + (STALL_S if stalled else 0.0), done, handle)
            self.goals.note(handle, ended=False)
        if not await done:
            handle.abort()
            return result
        result.position = float(state.open_fraction * gap)
        result.stalled, result.reached_goal = stalled, not stalled
        result.effort = float(handle.request.command.max_effort) if stalled else 0.0
        handle.succeed()
        return result

    @property
    def running(self) -> bool:
        """Whether a goal is in progress (under the lock)."""
        return self._running is not None

    def advance(self, now: float) -> None:
        """End the goal in progress once its time came (under the lock; ``now``: the driver's clock)."""
        if self._running is not None and now >= self._running[0]:
            self.end(True)

    def end(self, finished: bool) -> None:
        """End the goal in progress (under the lock): ``finished``, or preempted / dropped by a restart."""
        assert self._running is not None
        _, done, handle = self._running
        self._running = None
        self.goals.note(handle, ended=True)
        done.set_result(finished)

    def restart(self) -> None:
        """The home restarted (under the lock): a goal in progress is dropped."""
        if self._running is not None:
            self.end(False)

    def publish(self) -> None:
        """Publish the gripper's state (for a profile that has one)."""
        if self.state_pub is not None:
            gripper = self.robot.gripper_state()
            self.state_pub.publish(manipulator_state(self.profile.robot, gripper.open_fraction, bool(gripper.holding)))
