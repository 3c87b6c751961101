"""The contract between learned low-level policies and the robot's low-level control.

A ``Policy`` turns what a camera sees (plus a language instruction or a goal image) into commands of
one of three kinds, the kinds the upstream models emit:

* ``Waypoints``      NoMaD-style: a short trajectory of metric waypoints in the robot frame;
* ``DiscreteMove``   PixNav-style: one discrete action (move forward, turn, look, stop);
* ``EndEffectorDelta`` Octo / RT-1-X-style: a delta of the end effector pose plus a gripper command.

Frames: the robot base frame has x forward, y left, z up (metres, radians). Learned wrappers and
privileged "expert" sources both speak this contract, so the same control path runs either one.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from enum import Enum

import numpy as np


@dataclass(frozen=True)
class Waypoints:
    """Metric waypoints (N, 2) in the robot frame at the time of the observation, nearest first.
    ``yaw`` (N,) optionally gives the heading at each waypoint (radians, robot frame)."""

    points: np.ndarray
    yaw: np.ndarray | None = None


class Move(str, Enum):
    """PixNav's discrete action space."""

    STOP = "stop"
    FORWARD = "forward"
    TURN_LEFT = "turn_left"
    TURN_RIGHT = "turn_right"
    LOOK_UP = "look_up"
    LOOK_DOWN = "look_down"


@dataclass(frozen=True)
class DiscreteMove:
    move: Move


@dataclass(frozen=True)
class EndEffectorDelta:
    """One end-effector step: translation (3,) metres and rotation (3,) roll/pitch/yaw radians, both in
    the robot base frame; ``gripper`` is the target closedness in [0, 1] (1 = closed); ``terminate``
    is the policy's own "episode done" signal."""

    translation: np.ndarray
    rotation: np.ndarray
    gripper: float
    terminate: bool = False


Command = Waypoints | DiscreteMove | EndEffectorDelta


class PolicyError(RuntimeError):
    """A policy that cannot answer right now (e.g. its server process is gone); the message says why,
    in words a planner can act on. ``PolicySkill`` turns it into a failed attempt."""


@dataclass
class PolicyObservation:
    """What a policy sees at one control step. Images are already at the policy's ``image_size``."""

    rgb: np.ndarray  # HxWx3 uint8, the camera the policy is trained on (front head camera, or wrist)
    instruction: str = ""
    depth: np.ndarray | None = None  # HxW float32 metres
    goal_image: np.ndarray | None = None  # HxWx3 uint8 (NoMaD, PixNav)
    goal_mask: np.ndarray | None = None  # HxW bool, the goal pixels (PixNav)
    step: int = 0
    extras: dict = field(default_factory=dict)


class Policy(ABC):
    """A low-level model (learned or expert) that maps observations to commands."""

    family: str = "policy"  # "nomad" | "pixnav" | "octo" | "rt1x" | "expert" ...
    image_size: tuple[int, int] = (256, 256)  # (height, width) the policy expects
    rate_hz: float = 5.0  # control rate it was trained at

    def availability(self) -> str | None:
        """None if the policy can run here, else what is missing and the exact install hint."""
        return None

    def reset(self, instruction: str = "", goal_image: np.ndarray | None = None) -> None:
        """Start a new subtask: clear observation history, set the instruction or goal."""

    @abstractmethod
    def act(self, obs: PolicyObservation) -> list[Command]:
        """Commands to execute from this observation (one, or a chunk executed in order)."""

    def close(self) -> None:
        """Release weights and devices."""
