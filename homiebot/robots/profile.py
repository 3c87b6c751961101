"""A robot profile (``config/robots/<robot>.yaml``): the driver's topic, service and action names and
types, frames, cameras, limits, and start-up / shut-down procedures.

The ROS 2 bridge (``homiebot.worlds.ros2_robot``) reads a profile to implement the Robot interface
over a driver; the sim driver (``homiebot.worlds.home.sim_driver``) reads the same profile to serve
the embedded home under exactly those names, as Gazebo serves a simulated robot.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from homiebot.robots.kinematics import ArmKinematics
from homiebot.robots.kinematics import Joint as KJoint
from homiebot.yamlio import format_validation_error, read_yaml

ROBOTS_DIR = Path(__file__).resolve().parents[2] / "config" / "robots"


class ProfileError(ValueError):
    """A robot profile that cannot be used; the message names the file and the field."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CameraSpec(_Strict):
    """One driver camera: its topics, encoding and geometry."""

    image: str = Field(description="image topic (sensor_msgs/Image), relative to the namespace")
    info: str | None = Field(None, description="camera_info topic (sensor_msgs/CameraInfo)")
    depth: str | None = Field(None, description="registered depth topic (sensor_msgs/Image, 32FC1 metres or 16UC1 mm)")
    encoding: Literal["rgb8", "bgr8", "mono8"] = "rgb8"
    height: int = Field(480, gt=0)
    width: int = Field(640, gt=0)
    hfov_deg: float = Field(90.0, gt=0, lt=180)
    rotation_deg: Literal[0, 90, 180, 270] = Field(0, description="how the camera is mounted: the image is turned back by this")
    base_from_camera: list[list[float]] | None = Field(None, description="4x4 pose in the base frame (OpenCV axes); "
                                                       "None: from joint states (a hand camera)")

    @model_validator(mode="after")
    def _pose_shape(self) -> CameraSpec:
        pose = self.base_from_camera
        if pose is not None and (len(pose) != 4 or any(len(r) != 4 for r in pose)):
            raise ValueError("base_from_camera must be a 4x4 matrix")
        return self


class Interface(_Strict):
    """A name and its type, e.g. ``{name: cmd_vel, type: geometry_msgs/msg/Twist}``."""

    name: str
    type: str


class LimitsSpec(_Strict):
    """Speed limits, and the arm's workspace box in homiebot's base frame (on the floor under the robot)."""

    max_linear: float = Field(0.5, gt=0)
    max_angular: float = Field(1.0, gt=0)
    max_ee_speed: float = Field(0.2, gt=0)
    workspace_min: tuple[float, float, float] = (0.2, -0.6, 0.0)
    workspace_max: tuple[float, float, float] = (1.1, 0.6, 1.6)


class KinematicJointSpec(_Strict):
    """One joint of an arm's kinematic table, as its URDF gives it."""

    name: str
    type: Literal["revolute", "continuous", "prismatic", "fixed"] = "revolute"
    origin: tuple[float, float, float] = Field(description="translation from the parent joint's frame (metres)")
    rpy: tuple[float, float, float] = (0.0, 0.0, 0.0)
    axis: tuple[float, float, float] = (0.0, 0.0, 1.0)
    limits: tuple[float, float] | None = Field(None, description="lower, upper (rad or m); None: continuous")
    value: float | None = Field(None, description="held at this value, not commanded (e.g. a torso lift)")


class KinematicsSpec(_Strict):
    """An arm's kinematic table from the base frame to the tool point (see homiebot.robots.kinematics):
    the bridge computes the end effector from the measured joints and solves joint goals for it."""

    joints: list[KinematicJointSpec]
    tool: tuple[float, float, float] = Field(description="the tool point (between the fingers) in the last joint's frame")
    rest: list[float] | None = Field(None, description="the posture the IK prefers, one value per commanded joint")
    seeds: list[list[float]] = Field(default_factory=list, description="more postures the IK may start from")
    max_pitch: float = Field(1.3, gt=0, le=1.57, description="how far the approach may tilt down or up (rad)")

    def build(self) -> ArmKinematics:
        """The solver for this table."""
        joints = [KJoint(j.name, j.type, j.origin, j.rpy, j.axis, *(j.limits or (-math.inf, math.inf)), value=j.value)
                  for j in self.joints]
        return ArmKinematics(joints, self.tool, self.rest, self.max_pitch, self.seeds)


class SimSpec(_Strict):
    """How the sim driver serves the embedded home under this profile."""

    views: dict[str, str] = Field(default_factory=dict, description="driver camera -> the home's view it renders "
                                  "(front, left, back, right)")
    camera_rate_hz: float = Field(10.0, gt=0)
    state_rate_hz: float = Field(50.0, gt=0)
    needs_power: bool = Field(False, description="motion is refused until the power-on and stand services ran")


class RobotProfile(_Strict):
    """Everything the bridge needs to know about one robot driver (see the module doc)."""

    robot: str
    namespace: str = ""
    base_frame: str = "base_link"
    base_height: float = Field(0.0, ge=0, description="height of the driver's base frame above the floor. homiebot's base "
                               "frame is on the floor under the robot: arm goals are sent shifted down by this")
    odom_frame: str = "odom"
    cmd_vel: Interface
    odometry: Interface
    joint_states: Interface | None = None
    cmd_vel_timeout: float = Field(0.5, gt=0, description="the driver stops the base after this long without cmd_vel")
    cameras: dict[str, CameraSpec]
    views: dict[str, str] = Field(description="the planner's front/left/back/right views -> driver cameras")
    policy_camera: str = Field(description="the camera low-level policies see")
    arm: dict[str, Interface] = Field(default_factory=dict, description="e.g. pose (PoseStamped end-effector goals)")
    arm_ready: tuple[float, float, float] = Field((0.6, 0.0, 0.4), description="where the arm_unstow service puts the "
                                                  "hand (base frame, metres): end-effector goals are integrated from there. "
                                                  "A trajectory arm carries there: stow_arm brings the hand to this pose")
    kinematics: KinematicsSpec | None = Field(None, description="the arm's kinematic table (needed by a trajectory arm)")
    gripper: dict[str, Interface] = Field(default_factory=dict, description="e.g. open, close (Trigger services), "
                                          "command (a control_msgs GripperCommand action)")
    gripper_max_gap: float = Field(0.1, gt=0, description="the gap between the fingers when open (m): a GripperCommand "
                                   "position is this times the open fraction")
    gripper_max_effort: float = Field(60.0, gt=0, description="max_effort of a GripperCommand goal (N)")
    services: dict[str, Interface] = Field(default_factory=dict, description="other services by role (power_on, stand, stop...)")
    startup: list[str] = Field(default_factory=list, description="services called, in order, before the first command")
    shutdown: list[str] = Field(default_factory=list, description="services called, in order, when the bridge closes")
    estop: list[str] = Field(default_factory=list, description="services called when homiebot's e-stop engages")
    estop_release: list[str] = Field(default_factory=list, description="services called on release, before motion resumes")
    limits: LimitsSpec = LimitsSpec()
    unverified: list[str] = Field(default_factory=list, description="parts whose wire types could not be checked here")
    sim: SimSpec = SimSpec()

    @model_validator(mode="after")
    def _names_exist(self) -> RobotProfile:
        missing = [c for c in [*self.views.values(), self.policy_camera] if c not in self.cameras]
        if missing:
            raise ValueError(f"cameras {sorted(set(missing))} are used but not declared; declared: {sorted(self.cameras)}")
        bad_views = set(self.views) - {"front", "left", "back", "right"}
        if bad_views:
            raise ValueError(f"views are front, left, back and right, not {sorted(bad_views)}")
        known = set(self.services)
        for group in ("startup", "shutdown", "estop", "estop_release"):
            unknown = [s for s in getattr(self, group) if s not in known]
            if unknown:
                raise ValueError(f"{group} names services {unknown} that are not in services ({sorted(known)})")
        if "trajectory" in self.arm:
            if self.kinematics is None:
                raise ValueError("arm.trajectory (a FollowJointTrajectory action) needs a kinematics table")
            try:
                self.kinematics.build()
            except ValueError as err:
                raise ValueError(f"kinematics: {err}") from None
        return self

    def topic(self, name: str) -> str:
        """A driver name with the profile's namespace (absolute names stay as they are)."""
        if name.startswith("/") or not self.namespace:
            return name if name.startswith("/") else f"/{name}"
        return f"/{self.namespace.strip('/')}/{name}"


def load_profile(name_or_path: str | Path) -> RobotProfile:
    """A profile by name (``spot``, ``fetch``: ``config/robots/<name>.yaml``) or from a YAML file."""
    path = Path(name_or_path)
    if not path.suffix:
        path = ROBOTS_DIR / f"{name_or_path}.yaml"
    data: Any = read_yaml(path, "robot profile", ProfileError)
    if not isinstance(data, dict):
        raise ProfileError(f"{path}: a robot profile must be a mapping (robot, cmd_vel, odometry, cameras, views, ...)")
    try:
        return RobotProfile.model_validate(data)
    except ValidationError as err:
        raise ProfileError(f"{path}: invalid robot profile\n{format_validation_error(err)}") from None


__all__ = ["CameraSpec", "Interface", "KinematicJointSpec", "KinematicsSpec", "ProfileError", "RobotProfile", "load_profile"]
