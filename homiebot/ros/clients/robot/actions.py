"""``ActionGoals``: goals to the driver's action servers (control_msgs: FollowJointTrajectory, GripperCommand,
PointHead), sent from the thread that spins the node and awaited while the driver stays alive."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from rclpy.executors import Executor
from rclpy.node import Node

from homiebot.core.robot import BasePose, RobotUnavailable
from homiebot.robots.built import built_module
from homiebot.ros.clients.robot.lockstep import LockStep


def control_msgs(robot: str) -> Any:
    """control_msgs.action (built by ``make``), or why it is missing."""
    return built_module("control_msgs.action", robot, "uses control_msgs actions")


def trajectory_goal(robot: str, names: list[str], positions: list[float], seconds: float) -> Any:
    """A FollowJointTrajectory goal of one point: ``positions`` of ``names`` after ``seconds``."""
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectoryPoint

    goal = control_msgs(robot).FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = list(names)
    point = JointTrajectoryPoint(positions=[float(v) for v in positions],
                                 time_from_start=Duration(sec=int(seconds), nanosec=int((seconds % 1) * 1e9)))
    goal.trajectory.points = [point]
    return goal


class ActionGoals:
    """Sends action goals and waits for them; every wait checks ``alive`` (a dead driver ends it with
    ``RobotUnavailable``). ``executor``: the bridge's own, when it spins its node itself."""

    def __init__(self, node: Node, executor: Executor | None, robot: str, call_timeout: float, lockstep: LockStep,
                 alive: Callable[[], BasePose]) -> None:
        self.node, self.executor, self.robot = node, executor, robot
        self.call_timeout, self.lockstep, self._alive = call_timeout, lockstep, alive

    def result(self, client: Any, goal: Any, timeout: float, timed: bool = False) -> Any:
        """Send an action goal and wait for its result; RobotUnavailable when refused or silent."""
        return self.response(client, goal, timeout, timed).result

    def response(self, client: Any, goal: Any, timeout: float, timed: bool = False) -> Any:
        """Send an action goal and wait ``timeout`` s for the end of it: the response (``status`` and ``result``).
        ``timed``: the goal takes time (a trajectory, a head turn); in lock-step the simulation runs
        (up to ``timeout`` simulated seconds) until the driver ended it, then the result is awaited."""
        name = client._action_name
        if not client.server_is_ready() and not client.wait_for_server(timeout_sec=self.call_timeout):
            raise RobotUnavailable(f"{self.robot}: the action server {name} is not available")
        sent = self._in_spin(client.send_goal_async, goal)
        handle = self.wait(sent, self.call_timeout, f"{name} did not accept a goal")
        if not handle.accepted:
            raise RobotUnavailable(f"{self.robot}: {name} rejected the goal")
        result = self._in_spin(handle.get_result_async)
        if self.lockstep.active and timed:
            self.lockstep.pause(min(timeout, 60.0), until=bytes(handle.goal_id.uuid).hex())
            timeout = self.call_timeout  # simulated time is up: the result is on its way
        return self.wait(result, timeout, f"{name} did not finish")

    def _in_spin(self, request: Callable[..., Any], *args: Any) -> Any:
        """``request(*args)`` (an action client's send) run in the thread that spins the node: rclpy's
        ActionClient notes a request only after sending it, so a reply the spinning thread takes in
        between is dropped as unexpected and the wait never ends."""
        executor = self.executor or self.node.executor
        if executor is None:
            return request(*args)
        task = executor.create_task(request, *args)
        return self.wait(task, self.call_timeout, f"the node's executor did not run {getattr(request, '__name__', 'a request')}")

    def wait(self, future: Any, timeout: float, what: str) -> Any:
        """``future``'s result once done; RobotUnavailable when the driver dies or ``timeout`` s pass first."""
        deadline = time.monotonic() + timeout
        while not future.done():
            self._alive()
            if time.monotonic() > deadline:
                raise RobotUnavailable(f"{self.robot}: {what} within {timeout:.0f} s")
            time.sleep(0.005)
        return future.result()


__all__ = ["ActionGoals", "control_msgs", "trajectory_goal"]
