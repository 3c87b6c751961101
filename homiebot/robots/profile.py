"""A robot profile (``config/robots/<robot>.yaml``): the driver's topic, service and action names and
types, frames, cameras, limits, and start-up / shut-down procedures.

The ROS 2 bridge (``homiebot.ros.clients.ros2_robot``) reads a profile to implement the Robot interface
over a driver; the sim driver (``homiebot.ros.nodes.sim_driver``) reads the same profile to serve
the embedded home under exactly those names, as Gazebo serves a simulated robot.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from homiebot.core import resources
from homiebot.core.yamlio import format_validation_error, read_yaml
from homiebot.robots.kinematics import ArmKinematics, CameraMount
from homiebot.robots.kinematics import Joint as KJoint
from homiebot.robots.manipulator_state import GRIPPER_STATE_TYPES
from homiebot.robots.spot_status import STATUS_TYPES

ROBOTS_DIR = resources.config_dir() / "robots"


class ProfileError(ValueError):
    """A robot profile that cannot be used; the message names the file and the field."""


def is_operator_estop(service: str) -> bool:
    """A driver's own e-stop service (``estop/gentle``, ``estop/hard``, ``estop/release``, ``estop``): the
    operator's hardware or tablet E-Stop owns it, so homiebot never calls it."""
    return service.strip("/").split("/")[0] == "estop"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Interface(_Strict):
    """A name and its type, e.g. ``{name: cmd_vel, type: geometry_msgs/msg/Twist}``; a service may say how
    long it takes at most (``timeout``, s: Spot's ``power_on`` waits for power, ``arm_unstow`` for the motion)."""

    name: str
    type: str
    timeout: float | None = Field(None, gt=0, le=600, description="seconds a call may take (default: the bridge's call_timeout)")


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


class CameraSpec(_Strict):
    """One driver camera: its topics, encoding and geometry."""

    image: str = Field(description="image topic (sensor_msgs/Image), relative to the namespace")
    info: str | None = Field(None, description="camera_info topic (sensor_msgs/CameraInfo)")
    depth: str | None = Field(None, description="registered depth topic (sensor_msgs/Image, 32FC1 metres or 16UC1 mm)")
    encoding: Literal["rgb8", "bgr8", "mono8"] = Field("rgb8", description="what the driver publishes by default; the "
                                                         "bridge takes any of rgb8, bgr8, mono8, rgba8, bgra8 the driver "
                                                         "sends, and a sim driver emulating an upstream driver (sim.driver) "
                                                         "publishes that driver's")
    height: int = Field(480, gt=0, description="the image as the driver publishes it (the sensor's frame, before turning upright)")
    width: int = Field(640, gt=0, description="the image as the driver publishes it")
    hfov_deg: float = Field(90.0, gt=0, lt=180, description="the field of view across the published image's width: with "
                            "square pixels, the focal length of the upright view too (a pinhole)")
    rotation_deg: float = Field(0.0, gt=-360, lt=360, allow_inf_nan=False, description="how the camera is mounted: the "
                                "angle (degrees, counter-clockwise as displayed positive, as scipy.ndimage.rotate turns) the "
                                "image as the driver publishes it is turned by to be upright (homiebot.robots.camera_rotation)")
    base_from_camera: list[list[float]] | None = Field(None, description="4x4 static pose in the driver's base frame "
                                                       "(OpenCV axes; as tf gives base_frame -> camera), a body camera; "
                                                       "the bridge raises it by base_height into homiebot's base frame")
    chain: Literal["arm"] | list[KinematicJointSpec] | None = Field(
        None, description="a camera moved by joints: 'arm' (the profile's arm table, a hand camera) or its own table of "
        "joints from the base frame (a head camera on pan and tilt joints); its pose is the forward kinematics of the "
        "measured joint_states times end_from_camera")
    end_from_camera: list[list[float]] | None = Field(None, description="4x4 pose of the camera (OpenCV axes) in the "
                                                      "chain's end frame (the arm table's tool frame, or the last joint's)")

    @model_validator(mode="after")
    def _pose_shape(self) -> CameraSpec:
        for field in ("base_from_camera", "end_from_camera"):
            pose = getattr(self, field)
            if pose is not None and (len(pose) != 4 or any(len(r) != 4 for r in pose)):
                raise ValueError(f"{field} must be a 4x4 matrix")
        if self.chain is not None and self.base_from_camera is not None:
            raise ValueError("give a camera base_from_camera (static) or chain (moved by joints), not both")
        if self.chain is not None and self.end_from_camera is None:
            raise ValueError("a camera on a chain needs end_from_camera (where it sits on the chain's end)")
        if isinstance(self.chain, list) and not any(j.type != "fixed" and j.value is None for j in self.chain):
            raise ValueError("a camera's chain needs at least one joint read from joint_states")
        return self


class HeadSpec(_Strict):
    """A pan/tilt head turned by a control_msgs PointHead action (Fetch: ``head_controller/point_head``).

    With one camera on the head, the planner's other views come from turning it: for each view in
    ``views`` the bridged world points the head at that point, reads ``camera`` and points it back at
    ``front``."""

    point: Interface = Field(description="the PointHead action (control_msgs/action/PointHead)")
    camera: str = Field(description="the camera on the head")
    frame: str | None = Field(None, description="the frame of the target points (default: base_frame)")
    views: dict[str, tuple[float, float, float]] = Field(default_factory=dict, description="a planner view (left, back, "
                                                         "right) -> the point the head looks at for it (metres)")
    front: tuple[float, float, float] = Field((3.0, 0.0, 1.0), description="where the head looks otherwise")
    pan_joint: str = Field("head_pan_joint", description="the pan joint in joint_states")
    tilt_joint: str = Field("head_tilt_joint", description="the tilt joint in joint_states")
    pointing_frame: str = Field("", description="the goal's pointing_frame (its z axis is aimed at the point; "
                                "empty: the driver's default)")
    min_duration: float = Field(0.2, ge=0, description="the goal's min_duration (s)")
    max_velocity: float = Field(1.57, gt=0, description="the goal's max_velocity (rad/s)")


class TorsoSpec(_Strict):
    """A lift the arm rides on, with a joint-trajectory controller of its own (Fetch: ``torso_lift_joint`` on
    ``torso_controller/follow_joint_trajectory``). The arm's table holds it (``value``); the bridge reads
    where it is from joint_states, and puts it at ``height`` when it brings the robot up."""

    trajectory: Interface = Field(description="its control_msgs/action/FollowJointTrajectory action")
    joint: str = Field(description="its joint: held in the arm's kinematic table, published in joint_states")
    height: float = Field(description="where the bridge puts it at start-up (m, within the joint's limits): the "
                          "manipulation height")
    max_velocity: float = Field(0.1, gt=0, description="m/s (the URDF's velocity limit): a goal takes distance / this")
    tolerance: float = Field(0.005, gt=0, description="a lift within this of height is not commanded; after a goal, "
                             "one more than four times this away is an error (m)")



class EStopRegistrationSpec(_Strict):
    """A driver that answers its services only once the robot has an operator's E-Stop registered
    (spot_ros2). Its node advertises its services at once but serves nothing until then, its
    parameter services included: asking for the node's parameter names (``list_parameters``, no effect on
    the robot) tells whether it serves yet."""

    node: str = Field(description="the driver's node, under the profile's namespace (spot_ros2: spot_ros2)")
    wait: float = Field(10.0, gt=0, le=600, description="seconds the bridge and the driver check wait for it to "
                        "answer before they say that no E-Stop is registered")

    @model_validator(mode="after")
    def _plain_name(self) -> EStopRegistrationSpec:
        if not self.node or not all(c.isalnum() or c == "_" for c in self.node) or self.node[0].isdigit():
            raise ValueError(f"estop_registration.node '{self.node}' must be a plain node name (letters, digits, _)")
        return self


NO_ESTOP = "no E-Stop is registered: register one from the tablet or an E-Stop client before starting"


class SimSpec(_Strict):
    """How the sim driver serves the embedded home under this profile."""

    views: dict[str, str] = Field(default_factory=dict, description="driver camera -> the home's view it renders "
                                  "(front, left, back, right)")
    camera_rate_hz: float = Field(10.0, gt=0, description="how often the cameras are rendered and published, in real time")
    view_rate_hz: float | None = Field(None, gt=0, description="in real time, every camera but the policy camera at this rate "
                                       "instead (the planner reads them once a round: rendering them less leaves the CPU "
                                       "to the control loop); null: camera_rate_hz")
    state_rate_hz: float = Field(50.0, gt=0)
    needs_power: bool = Field(False, description="motion is refused until the power-on and stand services ran")
    power_on_seconds: float = Field(0.0, ge=0.0, le=60.0, description="how long the power-on service takes to answer "
                                    "(a real robot waits for motor power)")
    driver: Literal["spot_ros2"] | None = Field(None, description="the upstream driver the sim driver emulates: its "
                                                 "image encodings, depth encoding and cmd_vel duration come from that "
                                                 "driver's defaults (homiebot.ros.nodes.sim_driver.upstream), not from "
                                                 "this profile; null: the profile's own")
    estop_registered_after: float | None = Field(0.0, ge=0.0, le=3600.0, description="with estop_registration: seconds "
                                                 "after start-up when the simulated operator registers an E-Stop (the "
                                                 "driver's services answer from then on); null: never")


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
    joint_prefix: str = Field("", description="what the driver puts before every joint name in joint_states (spot_ros2: "
                              "the robot's name and a slash, e.g. spot/); kinematic tables name joints without it")
    cmd_vel_timeout: float = Field(0.5, gt=0, description="the driver stops the base after this long without cmd_vel")
    cameras: dict[str, CameraSpec]
    views: dict[str, str] = Field(description="the planner's front/left/back/right views -> driver cameras")
    policy_camera: str = Field(description="the camera low-level policies see")
    arm: dict[str, Interface] = Field(default_factory=dict, description="e.g. pose (PoseStamped end-effector goals)")
    arm_ready: tuple[float, float, float] = Field((0.6, 0.0, 0.4), description="where the arm_unstow service puts the "
                                                  "hand (base frame, metres): end-effector goals are integrated from there. "
                                                  "A trajectory arm carries there: stow_arm brings the hand to this pose")
    kinematics: KinematicsSpec | None = Field(None, description="the arm's kinematic table (needed by a trajectory arm "
                                              "and by a camera on chain: arm)")
    head: HeadSpec | None = Field(None, description="a head turned by a PointHead action, and the views it gives")
    torso: TorsoSpec | None = Field(None, description="a lift the arm rides on, commanded to its manipulation height at "
                                    "start-up and read from joint_states")
    gripper: dict[str, Interface] = Field(default_factory=dict, description="e.g. open, close (Trigger services), "
                                          "command (a control_msgs GripperCommand action)")
    gripper_max_gap: float = Field(0.1, gt=0, description="the gap between the fingers when open (m): a GripperCommand "
                                   "position is this times the open fraction")
    gripper_joint: tuple[str, float, float] | None = Field(None, description="the fingers' joint in joint_states: name, "
                                                         "position open, position closed (the sim driver publishes it)")
    gripper_max_effort: float = Field(60.0, gt=0, description="max_effort of a GripperCommand goal (N)")
    gripper_state: Interface | None = Field(None, description="the driver's gripper state topic: whether the gripper "
                                            "holds something, as the robot tells (Spot: manipulation_state, "
                                            "bosdyn_api_msgs/msg/ManipulatorState)")
    status: dict[Literal["estop", "power", "faults"], Interface] = Field(default_factory=dict, description="the driver's "
                                                                       "status topics by role (spot_ros2: status/estop, "
                                                                       "status/power_states, status/behavior_faults, spot_msgs): "
                                                                       "the bridge says which stopped the robot")
    services: dict[str, Interface] = Field(default_factory=dict, description="other services by role (power_on, stand, stop...)")
    startup: list[str] = Field(default_factory=list, description="services called, in order, before the first command")
    shutdown: list[str] = Field(default_factory=list, description="services called, in order, when the bridge closes")
    estop: list[str] = Field(default_factory=list, description="services called when homiebot's e-stop engages (never the "
                             "driver's own e-stop services: they belong to the operator)")
    estop_release: list[str] = Field(default_factory=list, description="services called on release, before motion resumes")
    estop_registration: EStopRegistrationSpec | None = Field(None, description="the driver serves only once an "
                                                             "operator's E-Stop is registered (spot_ros2)")
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
            operators = [s for s in getattr(self, group) if is_operator_estop(self.services[s].name)]
            if operators:
                raise ValueError(f"{group} calls the driver's e-stop services {operators}: homiebot never does, they "
                                 "belong to the operator's E-Stop (calling them can take E-Stop authority from the "
                                 "operator); use a stop service (Spot: stop)")
        for role, iface in self.status.items():
            if iface.type != STATUS_TYPES[role]:
                raise ValueError(f"status.{role}: the bridge reads {STATUS_TYPES[role]}, not '{iface.type}'")
        if self.gripper_state is not None:
            if self.gripper_state.type not in GRIPPER_STATE_TYPES:
                raise ValueError(f"gripper_state: the bridge reads {', '.join(GRIPPER_STATE_TYPES)}, not "
                                 f"'{self.gripper_state.type}'")
            if not self.gripper:
                raise ValueError("gripper_state needs a gripper (its open / close services or command action)")
        if "trajectory" in self.arm:
            if self.kinematics is None:
                raise ValueError("arm.trajectory (a FollowJointTrajectory action) needs a kinematics table")
            try:
                self.kinematics.build()
            except ValueError as err:
                raise ValueError(f"kinematics: {err}") from None
        self._check_cameras()
        self._check_torso()
        return self

    def _check_torso(self) -> None:
        torso = self.torso
        if torso is None:
            return
        if torso.trajectory.type != "control_msgs/action/FollowJointTrajectory":
            raise ValueError(f"torso.trajectory is a control_msgs/action/FollowJointTrajectory, not '{torso.trajectory.type}'")
        if self.joint_states is None:
            raise ValueError("torso: the bridge reads the lift from joint_states, but the profile names no joint_states topic")
        joint = next((j for j in self.kinematics.joints if j.name == torso.joint), None) if self.kinematics else None
        if joint is None or joint.value is None or joint.type != "prismatic" or joint.limits is None:
            raise ValueError(f"torso.joint '{torso.joint}' must be a prismatic joint with limits held (value) in the "
                             "kinematics table")
        low, high = joint.limits
        if not low <= torso.height <= high:
            raise ValueError(f"torso.height {torso.height} is outside {torso.joint}'s limits [{low}, {high}]")

    def _check_cameras(self) -> None:
        for name, spec in self.cameras.items():
            if spec.chain == "arm" and self.kinematics is None:
                raise ValueError(f"camera '{name}' rides on the arm (chain: arm) but the profile has no kinematics table")
            if spec.chain is not None and self.joint_states is None:
                raise ValueError(f"camera '{name}' is placed by joints (chain) but the profile names no joint_states topic")
        if self.head is not None:
            if self.head.camera not in self.cameras:
                raise ValueError(f"head.camera '{self.head.camera}' is not declared; declared: {sorted(self.cameras)}")
            bad = set(self.head.views) - {"left", "back", "right"}
            if bad:
                raise ValueError(f"head.views are left, back and right, not {sorted(bad)}")
            taken = set(self.head.views) & set(self.views)
            if taken:
                raise ValueError(f"views {sorted(taken)} come from cameras already; head.views gives the others")

    def camera_mount(self, camera: str) -> CameraMount | None:
        """The chain placing a camera (see ``CameraSpec.chain``); None for a static camera."""
        spec = self.cameras[camera]
        if spec.chain is None or spec.end_from_camera is None:
            return None
        if spec.chain == "arm":
            assert self.kinematics is not None
            chain = self.kinematics.build()
        else:
            chain = KinematicsSpec(joints=spec.chain, tool=(0.0, 0.0, 0.0)).build()
        return CameraMount(chain, spec.end_from_camera, self.base_height)

    def driver_node(self) -> str | None:
        """The full name of the driver's node that serves only once an E-Stop is registered (e.g.
        ``/spot/spot_ros2``); None when the driver does not wait for one."""
        if self.estop_registration is None:
            return None
        return self.topic(self.estop_registration.node)

    def joint_name(self, name: str) -> str:
        """A kinematic table's joint name as the driver publishes it (with ``joint_prefix``)."""
        return f"{self.joint_prefix}{name}"

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


__all__ = ["NO_ESTOP", "CameraSpec", "EStopRegistrationSpec", "HeadSpec", "Interface", "KinematicJointSpec", "KinematicsSpec", "ProfileError", "RobotProfile", "load_profile"]
