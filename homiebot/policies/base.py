"""The contract between learned low-level policies and the robot's low-level control.

A ``Policy`` turns what a camera sees (plus a language instruction or a goal image) into commands of
one of three kinds, the kinds the upstream models emit:

* ``Waypoints``      NoMaD-style: a short trajectory of metric waypoints in the robot frame;
* ``DiscreteMove``   PixNav-style: one discrete action (move forward, turn, look, stop);
* ``EndEffectorDelta`` Octo / RT-1-X-style: a delta of the end effector pose plus a gripper command.

(``Velocity``, a base velocity for one control period, is what NoMaD's PD controller makes of its
waypoints.) A policy's ``camera`` is the camera it was trained with (``TrainingCamera``): the skill gives
it that camera's view, rendered in simulation or cropped from a robot's camera.

Frames: the robot base frame has x forward, y left, z up (metres, radians). Learned wrappers and
privileged "expert" sources both speak this contract, so the same control path runs either one:
``apply_command`` maps every command onto the ``homiebot.core.robot.Robot`` interface.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, ClassVar

import numpy as np
from pydantic import BaseModel

from homiebot.core.robot import MotionReport, Robot, Unsupported

if TYPE_CHECKING:
    from homiebot.core.camera_geometry import TrainingCamera
    from homiebot.core.contracts import Subtask
    from homiebot.core.world import World

FORWARD_STEP = 0.25  # m, Habitat/PixNav "move_forward"
TURN_STEP = math.radians(30.0)  # Habitat/PixNav "turn_left" / "turn_right"
TILT_STEP = math.radians(30.0)  # Habitat/PixNav "look_up" / "look_down"


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


@dataclass(frozen=True)
class Velocity:
    """A base velocity held for one control period: ``linear`` m/s forward, ``angular`` rad/s
    counter-clockwise (NoMaD's PD controller output, as upstream publishes it on cmd_vel)."""

    linear: float
    angular: float


Command = Waypoints | DiscreteMove | EndEffectorDelta | Velocity


class PolicyError(RuntimeError):
    """A policy that cannot answer right now (e.g. its server process is gone); the message says why,
    in words a planner can act on. ``PolicySkill`` turns it into a failed attempt."""


@dataclass
class PolicyObservation:
    """What a policy sees at one control step: the view of the policy's training camera at its
    ``frame_size`` (or, for a policy without one, an image at its ``image_size``)."""

    rgb: np.ndarray  # HxWx3 uint8, the policy's training camera view (``Policy.camera``) or ``image_size``
    instruction: str = ""
    depth: np.ndarray | None = None  # HxW float32 metres
    goal_image: np.ndarray | None = None  # HxWx3 uint8 (NoMaD, PixNav)
    goal_mask: np.ndarray | None = None  # HxW bool, the goal pixels (PixNav)
    step: int = 0
    extras: dict = field(default_factory=dict)


class Policy(ABC):
    """A low-level model (learned or expert) that maps observations to commands."""

    family: str = "policy"  # "nomad" | "pixnav" | "octo" | "rt1x" | "expert" ...
    kind: str = "navigation"  # what its commands move: "navigation" (base) or "manipulation" (arm, gripper)
    image_size: tuple[int, int] = (256, 256)  # (height, width) the policy expects
    rate_hz: float = 5.0  # control rate it was trained at
    camera: TrainingCamera | None = None  # the camera it was trained with (None: a square image at image_size)
    #: the parameters model of its ``params:`` (a pydantic model, extra="forbid"); None: derived from the constructor
    Params: ClassVar[type[BaseModel] | None] = None

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


class PrivilegedPolicy(Policy):
    """A policy that reads simulator truth instead of (or besides) its camera: the expert sources.
    ``attach`` binds it to the world's ground truth and the robot before each attempt; on a world
    without ground truth (a real robot) it cannot run."""

    def attach(self, world: World, robot: Robot, subtask: Subtask) -> None:
        """Bind to ``world.ground_truth()``, the robot and the subtask before ``reset``."""
        raise NotImplementedError

    def diagnosis(self) -> str:
        """Why the policy could not plan this attempt (e.g. the target is out of reach), or ""."""
        return ""


def apply_command(robot: Robot, command: Command, duration: float) -> MotionReport:
    """Execute one policy command on a robot for (at most) ``duration`` seconds, one control period.

    Waypoints are tracked by ``Robot.follow_waypoints``; discrete moves use PixNav's step sizes (a
    move or turn takes as long as it takes at the speed limit); an end-effector delta moves the arm
    and then commands the gripper."""
    if isinstance(command, Waypoints):
        yaw = None if command.yaw is None or len(command.yaw) == 0 else float(command.yaw[-1])
        return robot.follow_waypoints(np.asarray(command.points, dtype=float).reshape(-1, 2), yaw, duration)
    if isinstance(command, Velocity):
        return robot.drive(float(command.linear), float(command.angular), duration)
    if isinstance(command, DiscreteMove):
        return _discrete(robot, command.move, duration)
    if isinstance(command, EndEffectorDelta):
        report = robot.move_end_effector(np.asarray(command.translation, dtype=float),
                                         np.asarray(command.rotation, dtype=float), duration)
        report = report.merge(robot.set_gripper(float(command.gripper)))
        report.duration = duration
        return report
    raise TypeError(f"cannot execute {type(command).__name__}; expected Waypoints, DiscreteMove, EndEffectorDelta or Velocity")


def _discrete(robot: Robot, move: Move, duration: float) -> MotionReport:
    lim = robot.limits
    if move is Move.FORWARD:
        return robot.drive(lim.max_linear, 0.0, FORWARD_STEP / lim.max_linear)
    if move in (Move.TURN_LEFT, Move.TURN_RIGHT):
        sign = 1.0 if move is Move.TURN_LEFT else -1.0
        return robot.drive(0.0, sign * lim.max_angular, TURN_STEP / lim.max_angular)
    if move in (Move.LOOK_UP, Move.LOOK_DOWN):
        try:
            report = robot.tilt_head(TILT_STEP if move is Move.LOOK_UP else -TILT_STEP)
        except Unsupported as err:
            report = MotionReport(clipped=True, message=str(err))
        report.duration = duration
        return report
    return robot.hold(duration)  # STOP

