"""The robot interface: the one seam between skills and whatever moves the robot.

Every skill that acts through low-level models (NoMaD, PixNav, Octo, RT-1-X, the expert sources,
Explore) drives a ``Robot`` and nothing else. The embedded home implements it in-process
(``homiebot.worlds.home.control.HomeControl``); a ROS 2 bridge implements it over a real driver's
topics and services. Frames: the robot base frame has x forward, y left, z up (metres, radians);
odometry is the base pose in the robot's odometry (or map) frame.

Commands are blocking for their ``duration`` (simulated or wall seconds) and report what they did
in a ``MotionReport``; a robot that cannot be reached raises ``RobotUnavailable``.
"""

from __future__ import annotations

import math
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import numpy as np

from homiebot.core.camera_geometry import CameraFrame, CameraInfo, TrainingCamera, match_camera, warn_if_narrow


class RobotUnavailable(RuntimeError):
    """The robot (or its driver) does not answer; the message says which part and why."""


class Stopped(RuntimeError):
    """A command was refused because the e-stop is engaged or the episode was cancelled."""


class Unsupported(RuntimeError):
    """The robot lacks what a command needs (no arm, no head, no depth); the message says what."""


@dataclass(frozen=True)
class BasePose:
    """Odometry: the base pose (x, y metres; yaw radians) and when it was measured."""

    x: float
    y: float
    yaw: float
    stamp: float = 0.0

    def to_base(self, point: tuple[float, float] | np.ndarray) -> np.ndarray:
        """A point of the odometry frame in this pose's base frame."""
        c, s = math.cos(self.yaw), math.sin(self.yaw)
        dx, dy = float(point[0]) - self.x, float(point[1]) - self.y
        return np.array([c * dx + s * dy, -s * dx + c * dy])

    def from_base(self, point: tuple[float, float] | np.ndarray) -> np.ndarray:
        """A point of this pose's base frame in the odometry frame."""
        c, s = math.cos(self.yaw), math.sin(self.yaw)
        return np.array([self.x + c * float(point[0]) - s * float(point[1]), self.y + s * float(point[0]) + c * float(point[1])])


@dataclass(frozen=True)
class ArmState:
    """The end effector in the base frame (``position`` metres, ``yaw`` radians about z; the
    gripper is kept level) and the joint state the driver reports."""

    position: np.ndarray
    yaw: float
    joint_names: tuple[str, ...] = ()
    joint_positions: tuple[float, ...] = ()


@dataclass(frozen=True)
class GripperState:
    """``open_fraction`` 1 = fully open, 0 = closed; ``holding`` is the robot's own belief that the
    fingers closed on something (None when the robot cannot tell)."""

    open_fraction: float
    holding: bool | None = None

    @property
    def closed(self) -> bool:
        return self.open_fraction < 0.5


@dataclass(frozen=True)
class RobotLimits:
    """What the robot (and its profile) allows: base speeds, end-effector speeds, and the arm's
    workspace as an axis-aligned box in the base frame (``workspace_min``/``workspace_max``)."""

    max_linear: float = 0.5  # m/s
    max_angular: float = 1.2  # rad/s
    max_ee_speed: float = 0.3  # m/s
    max_ee_yaw_rate: float = 1.5  # rad/s
    workspace_min: tuple[float, float, float] = (-1.5, -1.5, 0.0)
    workspace_max: tuple[float, float, float] = (1.5, 1.5, 2.0)


@dataclass(frozen=True)
class Capabilities:
    """What the robot has. Skills compare this with what they need at start-up."""

    cameras: tuple[str, ...]
    base: bool = True
    arm: bool = False
    gripper: bool = False
    head: bool = False  # a tilting head (PixNav's look up / look down)
    depth: tuple[str, ...] = ()  # cameras that also give depth
    policy_camera: str | None = None  # the camera low-level policies see unless a skill names another (None: the first)

    @property
    def default_camera(self) -> str | None:
        """The camera a policy sees by default."""
        return self.policy_camera or (self.cameras[0] if self.cameras else None)

    def missing(self, *, arm: bool = False, gripper: bool = False, head: bool = False, camera: str | None = None,
                depth: bool = False) -> str | None:
        """Why a skill needing these parts cannot run on this robot, or None."""
        lacks = [what for what, need, has in (("an arm", arm, self.arm), ("a gripper", gripper, self.gripper),
                                              ("a tilting head", head, self.head)) if need and not has]
        if camera is not None and camera not in self.cameras:
            lacks.append(f"a camera named '{camera}' (it has {', '.join(self.cameras) or 'none'})")
        if depth and camera is not None and camera not in self.depth:
            lacks.append(f"depth on camera '{camera}'")
        return f"the robot lacks {' and '.join(lacks)}" if lacks else None


@dataclass
class MotionReport:
    """What one command did. ``message`` says why something did not happen as asked."""

    collision: bool = False
    clipped: bool = False
    attached: str | None = None  # what the gripper closed on, when the robot can tell
    released: str | None = None
    distance: float = 0.0  # base travel, metres
    duration: float = 0.0  # seconds the command took
    message: str = ""

    def merge(self, other: MotionReport) -> MotionReport:
        """Both reports as one: flags or-ed, travel and time added, messages joined."""
        msgs = [m for m in (self.message, other.message) if m]
        return MotionReport(self.collision or other.collision, self.clipped or other.clipped,
                            other.attached or self.attached, other.released or self.released,
                            self.distance + other.distance, self.duration + other.duration, "; ".join(msgs))


@dataclass
class CommandCounters:
    """How many commands of each kind the robot has accepted (for benchmarks and checks)."""

    counts: dict[str, int] = field(default_factory=dict)

    def add(self, kind: str) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1


class Robot(ABC):
    """A mobile manipulator as low-level models see it: cameras, a base, optionally an arm and gripper.

    Implementations: the embedded home in-process, the ROS 2 bridge over a driver. Every method may
    raise ``RobotUnavailable`` when the robot cannot be reached, and ``Unsupported`` when it lacks
    the part a command needs.
    """

    name: str = "robot"

    # ---- description ----------------------------------------------------------------------------
    @property
    @abstractmethod
    def capabilities(self) -> Capabilities:
        """The parts this robot has."""

    @property
    @abstractmethod
    def limits(self) -> RobotLimits:
        """Speed and workspace limits every command is kept within."""

    # ---- sensing ---------------------------------------------------------------------------------
    @abstractmethod
    def camera_info(self, camera: str, size: tuple[int, int] | None = None) -> CameraInfo:
        """Geometry of a camera at ``size`` (height, width; default its native resolution)."""

    @abstractmethod
    def read_camera(self, camera: str, size: tuple[int, int] | None = None, depth: bool = False) -> CameraFrame:
        """The newest image of a camera, at ``size`` (height, width) when given; with ``depth`` the
        registered depth image too (``Unsupported`` if the camera has none)."""

    def read_policy_camera(self, camera: str, spec: TrainingCamera, depth: bool = False, model: str = "the model") -> CameraFrame:
        """A camera's newest frame as a model's training camera (``spec``) would have taken it: the native
        image cropped to the training field of view and aspect around the principal point and resized
        to ``spec.frame_size`` (``homiebot.core.camera_geometry.match_camera``); a camera narrower than the
        training one is logged once. A simulator may override this to render the training camera."""

        frame = self.read_camera(camera, None, depth)
        warn_if_narrow(frame.info, spec, model)
        return match_camera(frame, spec)

    @abstractmethod
    def odometry(self) -> BasePose:
        """The newest base pose."""

    def arm_state(self) -> ArmState:
        """End-effector pose in the base frame and joint state (``Unsupported`` without an arm)."""
        raise Unsupported(f"{self.name} has no arm")

    def gripper_state(self) -> GripperState:
        """Opening and whether the gripper holds something (``Unsupported`` without a gripper)."""
        raise Unsupported(f"{self.name} has no gripper")

    # ---- acting ----------------------------------------------------------------------------------
    @abstractmethod
    def drive(self, linear: float, angular: float, duration: float) -> MotionReport:
        """Hold a base velocity (m/s forward, rad/s counter-clockwise) for ``duration`` seconds,
        clipped to the limits; stops early on a collision and says so."""

    def follow_waypoints(self, points: np.ndarray, yaw: float | None, duration: float) -> MotionReport:
        """Track base-frame waypoints (N, 2), nearest first, for ``duration`` seconds: turn in place
        while the heading error exceeds 30 degrees, else pure pursuit within the speed limits; at the
        last point turn to ``yaw`` (radians, relative to the heading when called). Built on ``drive``
        and ``odometry``, so every robot has it; a driver with its own tracker may override it."""
        start = self.odometry()
        targets = [start.from_base(p) for p in np.asarray(points, dtype=float).reshape(-1, 2)]
        final_yaw = None if yaw is None else start.yaw + yaw
        lim = self.limits
        tick = min(duration, 0.1)
        report = MotionReport()
        elapsed = 0.0
        while elapsed < duration - 1e-9:
            h = min(tick, duration - elapsed)
            elapsed += h
            here = self.odometry()
            remaining = [p for p in targets if math.dist(p, (here.x, here.y)) > 0.05]
            if targets and remaining:
                aim = next((p for p in remaining if math.dist(p, (here.x, here.y)) >= 0.3), remaining[-1])
                dist = math.dist(aim, (here.x, here.y))
                err = wrap_angle(math.atan2(aim[1] - here.y, aim[0] - here.x) - here.yaw)
                if abs(err) > math.radians(30):
                    v, w = 0.0, math.copysign(min(lim.max_angular, abs(err) / h), err)
                else:
                    v = min(lim.max_linear, dist / h)
                    w = float(np.clip(2.0 * err, -lim.max_angular, lim.max_angular))
            elif final_yaw is not None and abs(wrap_angle(final_yaw - here.yaw)) > 1e-3:
                err = wrap_angle(final_yaw - here.yaw)
                v, w = 0.0, math.copysign(min(lim.max_angular, abs(err) / h), err)
            else:
                report = report.merge(self.hold(h))
                continue
            step = self.drive(v, w, h)
            report = report.merge(step)
            if step.collision:
                report.duration += duration - elapsed
                break
        return report

    def navigate_to(self, x: float, y: float, yaw: float | None = None, tolerance: float = 0.0) -> MotionReport:
        """Go to a pose of the odometry frame with the robot's own navigation (a waypoint command:
        the driver plans and avoids obstacles). ``yaw`` None: arrive facing (x, y); ``tolerance``
        metres: stop at the free spot nearest to (x, y) within it when (x, y) itself is blocked.
        The report's message says why when no path exists. ``Unsupported`` where the robot has none."""
        raise Unsupported(f"{self.name} has no navigation of its own; drive it with velocities or waypoints")

    def hold(self, duration: float) -> MotionReport:
        """Stand still for ``duration`` seconds (the base is commanded to zero velocity)."""
        return self.drive(0.0, 0.0, duration)

    def tilt_head(self, delta: float) -> MotionReport:
        """Tilt the head (and its cameras) by ``delta`` radians, positive up, within its range."""
        raise Unsupported(f"{self.name} has no tilting head")

    def move_end_effector(self, translation: np.ndarray, rotation: np.ndarray, duration: float) -> MotionReport:
        """Move the end effector by a base-frame delta (translation metres, rotation roll/pitch/yaw
        radians) within ``duration`` seconds, clipped to the speed and workspace limits."""
        raise Unsupported(f"{self.name} has no arm")

    def set_gripper(self, closedness: float) -> MotionReport:
        """Command the fingers: 0 fully open .. 1 fully closed."""
        raise Unsupported(f"{self.name} has no gripper")

    def stow_arm(self) -> MotionReport:
        """Bring the arm to its carry pose, keeping what the gripper holds."""
        raise Unsupported(f"{self.name} has no arm")

    def unwrapped(self) -> Robot:
        """The robot under any wrappers (the safety layer): for privileged checks that read a
        simulator's own robot. Commands must go to the wrapper, never to this."""
        return self

    @abstractmethod
    def stop(self) -> None:
        """Stop all motion now (base to zero velocity, arm holds its pose)."""

    def clock(self) -> float:
        """Seconds on the robot's clock, for timing its commands (the safety watchdog): the monotonic
        clock by default; a simulation stepped in lock-step counts simulated time."""
        return time.monotonic()

    def emergency_stop(self) -> None:
        """What the robot does when homiebot's e-stop engages: ``stop()``, and whatever its driver offers
        beyond (Spot's profile: its ``stop`` service; never the driver's own e-stop, which is the operator's)."""
        self.stop()

    def emergency_release(self) -> None:
        """Make the robot ready to move again after an e-stop (the profile's ``estop_release`` services)."""

    def close(self) -> None:
        """Release connections, renderers and other resources."""


def wrap_angle(a: float) -> float:
    """An angle in [-pi, pi)."""
    return (a + math.pi) % (2 * math.pi) - math.pi


__all__ = ["ArmState", "BasePose", "CameraFrame", "CameraInfo", "Capabilities", "CommandCounters", "GripperState",
           "MotionReport", "Robot", "RobotLimits", "RobotUnavailable", "Stopped", "Unsupported", "wrap_angle"]
