"""The embedded home's robot: ``HomeControl`` implements ``homiebot.core.robot.Robot`` in-process.

Commands move ``HomeState`` on a simulated clock (every command says how long it takes):

* base: a velocity ``(v, omega)`` held for one control period, integrated in small sub-steps; the
  round footprint (``ROBOT_RADIUS``) is checked against the occupancy grid and motion stops at the
  first new contact (a collision is reported); waypoint following (turn in place when the heading
  error is large, else pure pursuit with speed limits); discrete moves with the Habitat / PixNav
  action sizes: forward 0.25 m, turn 30 degrees, look up / down 30 degrees (Habitat's ObjectNav
  task defaults, which PixNav was trained with), the head tilt limited to +-30 degrees around the
  mount pitch;
* arm: end-effector deltas through the closed-form IK of ``robot.arm_ik`` (position and yaw; roll and
  pitch are not actuated: the gripper stays level); a target that is out of reach or inside
  furniture is cut back along the motion to the last feasible point and reported;
* gripper: closing attaches an object only if it lies between the fingers and is narrower than the
  opening; opening releases it and it falls onto the surface below (a receptacle or the floor);
  closing on a door handle or drawer knob couples the joint to the gripper, so moving the gripper
  along the door arc or the drawer axis changes the continuous opening fraction;
* cameras: the head cameras rendered at any resolution a policy asks for (one cached renderer per size);
* navigation: ``navigate_to`` plans over the true occupancy grid and moves kinematically (the robot's
  own navigation stack, as a real driver would have one);
* the person: their body stops the base as furniture does, and ``navigate_to`` plans around them.

The discrete PixNav moves and the policy commands are mapped onto these calls by
``homiebot.policies.base.apply_command``, the same code that drives a real robot.

``HomeControl`` keeps the clock and the command counters and assembles one part per subsystem:
``base_drive.BaseDrive``, ``arm_motion.ArmMotion``, ``gripper.Gripper`` and ``head_cameras.HeadCameras``.

Not modelled: contact forces, collisions of the arm or of a swinging door with the robot's own body
(the kinematic privileged skills ignore them too), objects stacking on other objects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from homiebot.core.robot import (
    ArmState,
    BasePose,
    CameraFrame,
    CameraInfo,
    Capabilities,
    CommandCounters,
    GripperState,
    MotionReport,
    Robot,
    RobotLimits,
)
from homiebot.worlds.home.arm_motion import ArmMotion
from homiebot.worlds.home.base_drive import BaseDrive
from homiebot.worlds.home.catalog import VIEWS
from homiebot.worlds.home.gripper import GRASP_CLOSEDNESS, Gripper  # noqa: F401 - GRASP_CLOSEDNESS re-exported
from homiebot.worlds.home.hand_frames import gripper_pose, handle_in_robot, robot_to_world, world_to_robot
from homiebot.worlds.home.head_cameras import HeadCameras, HomeWorld
from homiebot.worlds.home.layout import Receptacle
from homiebot.worlds.home.robot import ARM_JOINTS, FOREARM, HAND, HEAD_TILT_RANGE, LIFT_RANGE, SHOULDER_XY, UPPER_ARM
from homiebot.worlds.home.state import HomeState

if TYPE_CHECKING:
    from homiebot.core.camera_geometry import TrainingCamera
    from homiebot.worlds.home.render import HomeRenderer, RenderedView

StepReport = MotionReport  # the name this module used before the robot interface existed


class HomeControl(Robot):
    """The robot of an ``EmbeddedHome`` behind the ``Robot`` interface.

    ``rate_hz`` sets the default command duration (``1 / rate_hz`` simulated seconds) for calls that
    give none. ``max_linear`` (m/s), ``max_angular`` (rad/s), ``max_ee_speed`` (m/s) and
    ``max_ee_yaw_rate`` (rad/s) bound what a command can achieve.
    """

    name = "embedded_home"

    def __init__(self, world: HomeWorld, rate_hz: float = 5.0, max_linear: float = 0.5, max_angular: float = 1.2,
                 max_ee_speed: float = 0.3, max_ee_yaw_rate: float = 1.5) -> None:
        if rate_hz <= 0:
            raise ValueError(f"rate_hz must be positive, got {rate_hz}")
        self.world = world
        self.rate_hz = float(rate_hz)
        self.max_linear, self.max_angular = float(max_linear), float(max_angular)
        self.max_ee_speed, self.max_ee_yaw_rate = float(max_ee_speed), float(max_ee_yaw_rate)
        self.sim_time = 0.0  # simulated seconds of commands since the world was built
        self.counters = CommandCounters()
        self.base_drive = BaseDrive(self._current_state)
        self.grip = Gripper(self._current_state)
        self.arm_motion = ArmMotion(self._current_state, self.grip)
        self.head_cameras = HeadCameras(world)

    def _current_state(self) -> HomeState:
        return self.world.state

    @property
    def state(self) -> HomeState:
        """The world's current state (the world may replace it on reset: always read it through)."""
        return self.world.state

    @property
    def dt(self) -> float:
        """The default command duration, one control period (seconds)."""
        return 1.0 / self.rate_hz

    # ---- Robot: description and sensing ---------------------------------------------------------
    @property
    def capabilities(self) -> Capabilities:
        """Four head cameras with depth, a base, an arm with a gripper, a tilting head."""
        return Capabilities(cameras=tuple(VIEWS), base=True, arm=True, gripper=True, head=True, depth=tuple(VIEWS),
                            policy_camera="front")

    @property
    def limits(self) -> RobotLimits:
        """The speed limits and the arm's workspace box (robot frame)."""
        reach = UPPER_ARM + FOREARM + HAND
        return RobotLimits(self.max_linear, self.max_angular, self.max_ee_speed, self.max_ee_yaw_rate,
                           workspace_min=(SHOULDER_XY[0] - reach, SHOULDER_XY[1] - reach, LIFT_RANGE[0]),
                           workspace_max=(SHOULDER_XY[0] + reach, SHOULDER_XY[1] + reach, LIFT_RANGE[1]))

    def camera_info(self, camera: str, size: tuple[int, int] | None = None) -> CameraInfo:
        """Intrinsics and base-frame pose of a head camera at ``size`` (default: the native size)."""
        return self.head_cameras.camera_info(camera, size)

    def _camera_info(self, camera: str, r: HomeRenderer) -> CameraInfo:
        return self.head_cameras.camera_info_of(camera, r)

    def read_camera(self, camera: str, size: tuple[int, int] | None = None, depth: bool = False) -> CameraFrame:
        """A head camera's frame at ``size`` (default: the native size), stamped with the simulated clock."""
        return self.head_cameras.read(camera, self.sim_time, size, depth)

    def read_policy_camera(self, camera: str, spec: TrainingCamera, depth: bool = False, model: str = "the model") -> CameraFrame:
        """The model's training camera rendered directly: its field of view and aspect at ``spec.frame_size``
        (the head camera's pose; nothing is cropped, so no resolution is lost)."""
        return self.head_cameras.read_policy(camera, spec, self.sim_time, depth)

    def odometry(self) -> BasePose:
        """The base's true pose, stamped with the simulated clock."""
        r = self.state.robot
        return BasePose(r.x, r.y, r.yaw, self.sim_time)

    def arm_state(self) -> ArmState:
        """The gripper's pose and the arm's joint positions."""
        pos, yaw = self.gripper_pose()
        arm = self.state.arm
        return ArmState(pos, yaw, (*ARM_JOINTS, "fingers"), tuple(arm.as_list()))

    def gripper_state(self) -> GripperState:
        """How far open the fingers are and whether they hold something (an object or a handle)."""
        return GripperState(1.0 - self.state.arm.gripper, self.grip.holding())

    def stop(self) -> None:
        """Stop (kinematic: nothing moves between commands)."""
        self.counters.add("stop")

    def hold(self, duration: float) -> StepReport:
        """Let ``duration`` simulated seconds pass without moving."""
        self.counters.add("hold")
        self.sim_time += duration
        return StepReport(duration=duration)

    # ---- base and head ------------------------------------------------------------------------
    def drive(self, v: float, omega: float, duration: float | None = None) -> StepReport:
        """Hold a body velocity (m/s forward, rad/s counter-clockwise) for ``duration`` seconds
        (default one period), clipped to the speed limits; stops at the first new contact."""
        duration = self.dt if duration is None else float(duration)
        v = float(np.clip(v, -self.max_linear, self.max_linear))
        omega = float(np.clip(omega, -self.max_angular, self.max_angular))
        report = self.base_drive.drive(v, omega, duration)
        self.counters.add("drive")
        self.sim_time += duration
        return report

    def tilt_head(self, delta: float) -> StepReport:
        """Tilt the head by ``delta`` radians, within its range around the mount pitch."""
        st = self.state
        want = st.head_tilt + delta
        got = min(max(want, HEAD_TILT_RANGE[0]), HEAD_TILT_RANGE[1])
        st.head_tilt = got
        clipped = abs(got - want) > 1e-9
        self.counters.add("tilt_head")
        return StepReport(clipped=clipped, message="the head is already at its tilt limit" if clipped else "")

    def navigate_to(self, x: float, y: float, yaw: float | None = None, tolerance: float = 0.0) -> StepReport:
        """Plan over the true occupancy grid and move along the path kinematically (no simulated time
        passes, as with the privileged navigation). Collision-free by construction."""
        self.counters.add("navigate_to")
        return self.base_drive.navigate_to(x, y, yaw, tolerance)

    # ---- arm ------------------------------------------------------------------------------------
    def gripper_pose(self) -> tuple[np.ndarray, float]:
        """Gripper centre (robot frame, metres) and yaw (radians, robot frame)."""
        return gripper_pose(self.state)

    def robot_to_world(self, p: np.ndarray | tuple[float, float, float]) -> np.ndarray:
        """A robot-frame point in the world frame."""
        return robot_to_world(self.state, p)

    def world_to_robot(self, p: np.ndarray | tuple[float, float, float]) -> np.ndarray:
        """A world-frame point in the robot frame."""
        return world_to_robot(self.state, p)

    def move_end_effector(self, translation: np.ndarray | list[float], rotation: np.ndarray | list[float] | None = None,
                          duration: float | None = None) -> StepReport:
        """Move the gripper by a robot-frame delta (translation metres; rotation roll/pitch/yaw radians,
        only yaw is actuated) within ``duration`` (default one period); a target out of reach or
        inside furniture is cut back to the last feasible point along the motion."""
        duration = self.dt if duration is None else float(duration)
        t = np.asarray(translation, dtype=float).reshape(3)
        rot = np.zeros(3) if rotation is None else np.asarray(rotation, dtype=float).reshape(3)
        report = StepReport(duration=duration)
        limit = self.max_ee_speed * duration
        norm = float(np.linalg.norm(t))
        if norm > limit:
            t = t * (limit / norm)
            report.clipped, report.message = True, f"the step was limited to {limit * 100:.0f} cm per period"
        dyaw = float(np.clip(rot[2], -self.max_ee_yaw_rate * duration, self.max_ee_yaw_rate * duration))
        if norm > 1e-9 or abs(dyaw) > 1e-9:
            report = report.merge(self.arm_motion.move(t, dyaw))
            report.duration = duration
        self.counters.add("move_end_effector")
        self.sim_time += duration
        return report

    def move_ee(self, translation: np.ndarray | list[float], rotation: np.ndarray | list[float] | None = None,
                gripper: float | None = None) -> StepReport:
        """One end-effector step of one period followed by a gripper command (a convenience for tests
        and scripts; skills go through ``homiebot.policies.base.apply_command``)."""
        report = self.move_end_effector(translation, rotation)
        if gripper is not None:
            report = report.merge(self.set_gripper(float(gripper)))
            report.duration = self.dt
        return report

    def _handle_robot(self, rec: Receptacle, fraction: float) -> np.ndarray:
        return handle_in_robot(self.state, rec, fraction)

    def handle_position(self, receptacle: str) -> np.ndarray:
        """Robot-frame centre of a door handle or drawer knob at the current opening."""
        rec = self.state.layout.receptacles[receptacle]
        return handle_in_robot(self.state, rec, self.state.open_fraction(receptacle))

    def stow(self, steps: int = 5) -> StepReport:
        """Bring the arm back to the carry pose (joint-space motion, what it holds comes along).
        A door or drawer handle is let go first."""
        report = self.arm_motion.stow(steps)
        report.duration = steps * self.dt
        self.sim_time += report.duration
        self.counters.add("stow_arm")
        return report

    def stow_arm(self) -> StepReport:
        """Bring the arm back to the carry pose."""
        return self.stow()

    def ready(self, position: tuple[float, float, float], steps: int = 5) -> StepReport:
        """Bring the gripper to ``position`` (robot frame) by a joint-space motion, as a driver's unstow
        does (no collision check; what it holds comes along). Out of the arm's reach: nothing moves."""
        report = self.arm_motion.ready(position, steps)
        if report is None:
            return StepReport(clipped=True, message=f"{tuple(position)} is out of the arm's reach")
        report.duration = steps * self.dt
        self.sim_time += report.duration
        self.counters.add("ready_arm")
        return report

    # ---- gripper ---------------------------------------------------------------------------------
    def set_gripper(self, closedness: float) -> StepReport:
        """Command the fingers; closing grasps what lies between them, opening releases it."""
        self.counters.add("set_gripper")
        return self.grip.command(closedness)

    def release_all(self) -> StepReport:
        """Open the gripper fully (drops what it holds, lets go of handles)."""
        return self.set_gripper(0.0)

    def reset(self) -> None:
        """Forget couplings (called when the world is reset: a new episode starts with open hands)."""
        self.grip.coupling = None

    # ---- cameras ---------------------------------------------------------------------------------
    def renderer(self, size: tuple[int, int], fovy: float = 90.0) -> HomeRenderer:
        """A renderer (cached) with ``size`` = (height, width), depth and segmentation enabled."""
        return self.head_cameras.renderer(size, fovy)

    def render(self, size: tuple[int, int], views: tuple[str, ...] = ("front",), robot_pose: tuple[float, float, float] | None = None,
               fovy: float = 90.0, segmentation: bool = True) -> dict[str, RenderedView]:
        """Render head camera views at ``size`` (height, width); ``robot_pose`` renders as if the
        base stood there (e.g. a goal view) without changing the state; ``segmentation=False`` skips
        the instance-id pass (half the cost)."""
        return self.head_cameras.render(size, views, robot_pose, fovy, segmentation)

    def close(self) -> None:
        """Close the cached renderers."""
        self.head_cameras.close()
