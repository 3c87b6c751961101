"""``JointStates``: the driver's joint_states (with the profile's ``joint_prefix``), the newest and about
2 s of history, for what joints place: the arm's hand, a camera on a chain, the torso lift."""

from __future__ import annotations

import threading
import time
from collections import deque

import numpy as np
from rclpy.node import Node
from sensor_msgs.msg import JointState

from homiebot.core.robot import RobotUnavailable
from homiebot.robots.profile import RobotProfile
from homiebot.ros.clients.robot.lockstep import LockStep
from homiebot.ros.messages.common import ns_of

CLOCKS_AGREE_NS = 1_000_000_000  # a driver's stamps within 1 s of this machine's clock are taken to be on it


class JointStates:
    """Subscribes to the profile's joint_states (when it names them); ``count`` is how many arrived."""

    def __init__(self, node: Node, profile: RobotProfile, lockstep: LockStep) -> None:
        self.profile, self.lockstep = profile, lockstep
        self._lock = threading.Lock()
        self._latest: JointState | None = None
        self._history: deque[JointState] = deque(maxlen=100)  # about 2 s at 50 Hz: an image's own joints
        self.count = 0  # messages received (to wait for one after a motion)
        if profile.joint_states is not None:
            node.create_subscription(JointState, profile.topic(profile.joint_states.name), self._on_joints, 10)

    def _on_joints(self, msg: JointState) -> None:
        with self._lock:
            self._latest = msg
            self._history.append(msg)
            self.count += 1

    @property
    def latest(self) -> JointState | None:
        """The newest joint_states, None before the first."""
        with self._lock:
            return self._latest

    @property
    def topic(self) -> str:
        """The joint_states topic, for messages."""
        p = self.profile
        return p.topic(p.joint_states.name) if p.joint_states is not None else "joint_states"

    def values(self, names: list[str], what: str, at_ns: int | None = None) -> tuple[np.ndarray, float]:
        """The named joints (table names, without the profile's prefix) from the newest joint_states (or
        those stamped nearest ``at_ns``) and their stamp; RobotUnavailable naming the first joint they
        lack (``what`` needs them)."""
        p = self.profile
        with self._lock:
            msg = self._latest
            if at_ns is not None and self._history:
                msg = min(self._history, key=lambda m: abs(ns_of(m.header.stamp) - at_ns))
        topic = self.topic
        if msg is None:
            raise RobotUnavailable(f"{p.robot}: {what} is placed by joints, but nothing arrived on {topic} yet")
        index = {n: i for i, n in enumerate(msg.name)}
        values = []
        for name in names:
            i = index.get(p.joint_name(name))
            if i is None or i >= len(msg.position):
                raise RobotUnavailable(f"{p.robot}: {what} needs the joint '{p.joint_name(name)}', which {topic} lacks "
                                       f"(it has {', '.join(msg.name) or 'none'}); check joint_prefix and the table's names")
            values.append(float(msg.position[i]))
        return np.array(values), msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9

    def stamp(self) -> int | None:
        """The stamp (ns) of the newest joint_states, None before the first."""
        with self._lock:
            return ns_of(self._latest.header.stamp) if self._latest is not None else None

    def wait_fresh(self, count: int, timeout: float = 1.0) -> None:
        """Wait for joint_states that show the state after a motion that has just ended: the second message
        after the ``count``-th, and (in real time, where the driver stamps with this machine's clock, as
        the head's ``look`` assumes of images) one stamped from now on. Counting alone was not enough on a
        loaded machine: messages published before an unstow took effect arrived after its response, and the
        next goal started from the stowed hand."""
        deadline = time.monotonic() + timeout
        now, newest = time.time_ns(), self.stamp()
        # a driver whose stamps are not this machine's clock (lock-step's simulated time, a robot's own): counting only
        since = now if not self.lockstep.active and newest is not None and abs(now - newest) < CLOCKS_AGREE_NS else None
        while time.monotonic() < deadline:
            if self.count > count + 1 and (since is None or (self.stamp() or 0) >= since):
                return
            time.sleep(0.005)


__all__ = ["CLOCKS_AGREE_NS", "JointStates"]
