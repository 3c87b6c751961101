"""Stand-ins for what the sim driver's parts are given: a node that records what a part creates on it and the
home's robot as far as the parts reach it, so that each part runs alone, without ROS 2 traffic or MuJoCo."""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Any

import numpy as np


class FakePublisher:
    """Keeps what was published."""

    def __init__(self, msg_type: Any, topic: str, qos: Any) -> None:
        self.msg_type, self.topic, self.qos = msg_type, topic, qos
        self.sent: list[Any] = []

    def publish(self, msg: Any) -> None:
        self.sent.append(msg)


class FakeLogger:
    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []

    def info(self, text: str, **_: Any) -> None:
        self.lines.append(("info", text))

    def warning(self, text: str, **_: Any) -> None:
        self.lines.append(("warning", text))

    def error(self, text: str, **_: Any) -> None:
        self.lines.append(("error", text))


class FakeNode:
    """A node recording its publishers, subscriptions, services and timers by name."""

    def __init__(self) -> None:
        self.publishers: dict[str, FakePublisher] = {}
        self.subscriptions: dict[str, tuple[Any, Any, Any]] = {}
        self.services: dict[str, tuple[Any, Any]] = {}
        self.timers: list[tuple[float, Any]] = []
        self.logger = FakeLogger()

    def create_publisher(self, msg_type: Any, topic: str, qos: Any) -> FakePublisher:
        self.publishers[topic] = FakePublisher(msg_type, topic, qos)
        return self.publishers[topic]

    def create_subscription(self, msg_type: Any, topic: str, callback: Any, qos: Any) -> None:
        self.subscriptions[topic] = (msg_type, callback, qos)

    def create_service(self, srv_type: Any, name: str, callback: Any) -> None:
        self.services[name] = (srv_type, callback)

    def create_timer(self, period: float, callback: Any) -> None:
        self.timers.append((period, callback))

    def get_logger(self) -> FakeLogger:
        return self.logger

    def resolve_topic_name(self, topic: str) -> str:
        """As a node in the root namespace resolves a name."""
        return topic if topic.startswith("/") else f"/{topic}"


class FakeRobot:
    """The home's robot as the parts drive it: records drives, holds a hand pose and a gripper closure."""

    def __init__(self) -> None:
        self.drives: list[tuple[float, float, float]] = []
        self.hand = (np.array([0.5, 0.0, 0.8]), 0.0)
        self.closure = 0.0
        self.holding: str | None = None
        self.stowed = 0

    def drive(self, v: float, w: float, dt: float) -> None:
        self.drives.append((v, w, dt))

    def gripper_pose(self) -> tuple[np.ndarray, float]:
        return self.hand[0].copy(), self.hand[1]

    def move_end_effector(self, step: Any, turn: Any, dt: float) -> Any:
        """Moves the hand the whole step at once (no speed limit)."""
        self.hand = (self.hand[0] + np.asarray(step), self.hand[1] + float(turn[2]))
        return SimpleNamespace(message="")

    def ready(self, pose: Any) -> Any:
        self.hand = (np.asarray(pose, dtype=float), self.hand[1])
        return SimpleNamespace(clipped=False, message="")

    def stow(self) -> None:
        self.stowed += 1

    def set_gripper(self, closure: float) -> None:
        self.closure = closure

    def gripper_state(self) -> Any:
        return SimpleNamespace(open_fraction=1.0 - self.closure, holding=self.holding)


class FakeWorld:
    """The home as the base reads it: its own robot and where it stands."""

    def __init__(self) -> None:
        self.robot = FakeRobot()
        self.state = SimpleNamespace(robot=SimpleNamespace(x=1.0, y=2.0, yaw=0.0))

    def own_robot(self) -> FakeRobot:
        return self.robot


def shared() -> tuple[threading.Lock, dict[str, int]]:
    """A driver's lock and its counters, as the driver starts them."""
    return threading.Lock(), {"cmd_vel": 0, "applied": 0, "timeouts": 0, "arm_goals": 0, "head_goals": 0, "gripper_goals": 0,
                              "services": 0, "expert_acts": 0}


class FakeGoalHandle:
    """An action goal as a server's execute callback gets it; says how it ended."""

    def __init__(self, request: Any, n: int = 1) -> None:
        self.request = request
        self.goal_id = SimpleNamespace(uuid=n.to_bytes(16, "big"))
        self.is_cancel_requested = False
        self.ended: str | None = None
        self.feedback: list[Any] = []

    def succeed(self) -> None:
        self.ended = "succeeded"

    def abort(self) -> None:
        self.ended = "aborted"

    def canceled(self) -> None:
        self.ended = "canceled"

    def publish_feedback(self, feedback: Any) -> None:
        self.feedback.append(feedback)


def start(coroutine: Any) -> Any:
    """Run an async execute callback up to its first wait; StopIteration's value when it ended at once."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    return None


def finish(coroutine: Any) -> Any:
    """Resume an execute callback whose wait is over; its result."""
    with np.errstate(all="ignore"):
        try:
            coroutine.send(None)
        except StopIteration as done:
            return done.value
    raise AssertionError("the goal is still waiting")
