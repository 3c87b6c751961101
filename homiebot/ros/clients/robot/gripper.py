"""``Gripper``: the fingers, by open / close Trigger services (Spot) or a GripperCommand action (Fetch).

Whether it holds something is the driver's gripper state where the profile names one (``gripper_state``:
Spot's ``manipulation_state``, bosdyn_api_msgs/msg/ManipulatorState ``is_gripper_holding_item`` and
``gripper_open_percentage``), read from a message that arrived after the last gripper command; else a
GripperCommand result ``stalled`` short of closed (position = the profile's ``gripper_max_gap`` times the
open fraction); else unknown (None).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from rclpy.node import Node

from homiebot.core.robot import BasePose, CommandCounters, GripperState, MotionReport, RobotUnavailable
from homiebot.robots.manipulator_state import gripper_reading, manipulator_state_type
from homiebot.robots.profile import RobotProfile
from homiebot.ros.clients.robot.actions import ActionGoals, control_msgs
from homiebot.ros.clients.robot.lockstep import LockStep
from homiebot.ros.clients.robot.services import TriggerServices

GRIPPER_HOLD = 2.0  # seconds a gripper command stays in force after it was carried out or last repeated (see set)


class Gripper:
    """The gripper's action client (``client``, where the profile names ``gripper.command``), its state
    subscription, and what the last command left it at."""

    def __init__(self, node: Node, profile: RobotProfile, services: TriggerServices, actions: ActionGoals,
                 counters: CommandCounters, lockstep: LockStep, alive: Callable[[], BasePose], call_timeout: float) -> None:
        self.profile, self.services, self.actions = profile, services, actions
        self.counters, self.lockstep, self._alive, self.call_timeout = counters, lockstep, alive, call_timeout
        self._lock = threading.Lock()
        self._open = 1.0
        self._holding: bool | None = None  # what the gripper's action result said (None: it cannot tell)
        self._sent: tuple[float, float] | None = None  # (goal, clock) of the last gripper command that was carried out
        self._reading: tuple[float, bool] | None = None  # the driver's gripper state: (open fraction, holding)
        self.readings = 0  # gripper state messages received
        self._after = -1  # the count when the last gripper command returned (a reading must be newer)
        p = profile
        self.client = None
        if "command" in p.gripper:
            from rclpy.action import ActionClient

            self.client = ActionClient(node, control_msgs(p.robot).GripperCommand, p.topic(p.gripper["command"].name))
        if self.reads_state:
            node.create_subscription(manipulator_state_type(p.robot), p.topic(p.gripper_state.name), self._on_state, 10)  # type: ignore[union-attr]

    @property
    def reads_state(self) -> bool:
        """Whether the driver's own gripper state is read (the profile names one, and the gripper is verified)."""
        p = self.profile
        return p.gripper_state is not None and "gripper" not in p.unverified

    def _on_state(self, msg: Any) -> None:
        reading = gripper_reading(msg)
        with self._lock:
            self._reading = reading
            self.readings += 1

    def state(self) -> GripperState:
        """Opening and whether it holds something (the driver's state: one from after the last command, waited for)."""
        if self.reads_state:
            p = self.profile
            deadline = time.monotonic() + self.call_timeout
            while True:
                with self._lock:
                    reading, count = self._reading, self.readings
                if reading is not None and count > self._after + 1:  # not one already on its way
                    return GripperState(*reading)
                if time.monotonic() > deadline:
                    topic = p.topic(p.gripper_state.name)  # type: ignore[union-attr]
                    raise RobotUnavailable(f"{p.robot}: no gripper state on {topic} after the last gripper command "
                                           f"within {self.call_timeout:.0f} s")
                self._alive()
                time.sleep(0.005)
        return GripperState(self._open, self._holding)

    def set(self, closedness: float) -> MotionReport:
        """The gripper to ``closedness``. A policy repeats its gripper command every period: a command
        equal to the last one, carried out or repeated less than ``GRIPPER_HOLD`` s ago, is in force (the
        driver holds its last goal) and is not sent again."""
        goal = min(max(float(closedness), 0.0), 1.0) if self.client is not None else float(closedness >= 0.5)
        now = self.lockstep.clock()
        if self._sent is not None and self._sent[0] == goal and 0.0 <= now - self._sent[1] < GRIPPER_HOLD:
            self._sent = (goal, now)
            return MotionReport()
        self._sent = None  # until this one is carried out
        if self.client is not None:
            report = self._command(goal)
        else:
            self.services.call("gripper_close" if goal else "gripper_open")
            self._open = 0.0 if goal else 1.0
            with self._lock:
                self._after = self.readings  # the gripper's state is read from a newer message
            report = MotionReport()
        if not report.message:
            self._sent = (goal, now)
        return report

    def forget(self) -> None:
        """Send the next command even if equal to the last (a power cut may drop what the gripper held to)."""
        self._sent = None

    def _command(self, closedness: float) -> MotionReport:
        """A GripperCommand goal; a stall short of closed means the fingers hold something."""
        self._alive()
        p = self.profile
        goal = control_msgs(p.robot).GripperCommand.Goal()
        goal.command.position = float((1.0 - min(max(closedness, 0.0), 1.0)) * p.gripper_max_gap)
        goal.command.max_effort = float(p.gripper_max_effort)
        # timed: a grasp answers once the fingers stalled (Fetch's controller: 2 s without motion); in lock-step the
        # simulation runs until then
        result = self.actions.result(self.client, goal, self.call_timeout, timed=True)
        self.counters.add("gripper_command")
        self._open = float(min(max(result.position / p.gripper_max_gap, 0.0), 1.0))
        self._holding = bool(result.stalled and result.position > 1e-3)
        return MotionReport(message="" if result.reached_goal or result.stalled else "the gripper did not reach its goal")


__all__ = ["GRIPPER_HOLD", "Gripper"]
