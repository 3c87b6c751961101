"""Stand-ins for an rclpy node and the bridge's neighbours, so that each part of ``homiebot.ros.clients.robot`` runs
alone: subscriptions are kept by topic (a test calls them with messages), publishers keep what they sent."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from builtin_interfaces.msg import Time

from homiebot.core.robot import BasePose


@dataclass
class FakePublisher:
    """Keeps what is published; ``subscribers`` is what ``get_subscription_count`` says."""

    msg_type: Any
    topic: str
    qos: int
    sent: list[Any] = field(default_factory=list)
    subscribers: int = 1

    def publish(self, msg: Any) -> None:
        self.sent.append(msg)

    def get_subscription_count(self) -> int:
        return self.subscribers


class FakeLogger:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def warning(self, text: str) -> None:
        self.lines.append(text)

    error = warning


class FakeNode:
    """The parts of rclpy's Node the bridge's parts use."""

    def __init__(self) -> None:
        self.subscriptions: dict[str, tuple[Any, Any, int]] = {}  # topic -> (type, callback, qos depth)
        self.publishers: dict[str, FakePublisher] = {}
        self.clients: dict[str, Any] = {}
        self.publisher_gids: list[bytes] = []  # what get_publishers_info_by_topic reports
        self.logger = FakeLogger()
        self.executor = None
        self.now_ns = 0  # what get_clock().now() says

    def create_subscription(self, msg_type: Any, topic: str, callback: Any, qos: int) -> object:
        self.subscriptions[topic] = (msg_type, callback, qos)
        return object()

    def create_publisher(self, msg_type: Any, topic: str, qos: int) -> FakePublisher:
        self.publishers[topic] = FakePublisher(msg_type, topic, qos)
        return self.publishers[topic]

    def create_client(self, srv_type: Any, name: str) -> Any:
        self.clients[name] = (srv_type, name)
        return self.clients[name]

    def get_publishers_info_by_topic(self, topic: str) -> list[Any]:
        return [type("Info", (), {"endpoint_gid": gid})() for gid in self.publisher_gids]

    def get_logger(self) -> FakeLogger:
        return self.logger

    def get_clock(self) -> Any:
        """A clock whose ``now()`` is ``self.now_ns``."""
        node = self
        return type("Clock", (), {"now": lambda _: type("Time", (), {"nanoseconds": node.now_ns})()})()

    def deliver(self, topic: str, msg: Any) -> None:
        """A message arriving on ``topic``."""
        self.subscriptions[topic][1](msg)


class FakeServices:
    """TriggerServices that answer every call and note it."""

    def __init__(self, roles: tuple[str, ...] = ()) -> None:
        self.roles, self.called = set(roles), []

    def __contains__(self, role: str) -> bool:
        return role in self.roles

    def call(self, role: str) -> str:
        self.called.append(role)
        return ""


def alive() -> BasePose:
    """A driver that is always there, at the origin."""
    return BasePose(0.0, 0.0, 0.0)


def stamp(ns: int) -> Time:
    return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)
