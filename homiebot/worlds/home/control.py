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

Not modelled: contact forces, collisions of the arm or of a swinging door with the robot's own body
(the kinematic privileged skills ignore them too), objects stacking on other objects.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
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
    wrap_angle,
)
from homiebot.worlds.home.catalog import DRAWER_TRAVEL, ROBOT_RADIUS, VIEWS
from homiebot.worlds.home.layout import Receptacle
from homiebot.worlds.home.mjcf import PANEL, door_handle_local, door_hinge_local, drawer_handle_local
from homiebot.worlds.home.navigation import Pose2D
from homiebot.worlds.home.person import PERSON_RADIUS
from homiebot.worlds.home.robot import (
    ARM_JOINTS,
    FINGER_HEIGHT,
    FINGER_LENGTH,
    FOREARM,
    HAND,
    HEAD_TILT_RANGE,
    LIFT_RANGE,
    MAX_OPENING,
    SHOULDER_XY,
    UPPER_ARM,
    ArmPose,
    arm_fk,
    arm_ik,
    finger_offset,
)
from homiebot.worlds.home.state import HomeState, ObjectLocation, RobotPose

if TYPE_CHECKING:
    from homiebot.core.camera_geometry import TrainingCamera
    from homiebot.worlds.home.render import HomeRenderer, RenderedView
    from homiebot.worlds.home.world import EmbeddedHome

GRASP_CLOSEDNESS = 0.5  # a gripper command at or above this closes the fingers on what is between them
_HANDLE_TURNS = (0.0, 0.3, -0.3, 0.6, -0.6, 0.9, -0.9, 1.2, -1.2)
_SUB_LINEAR = 0.02  # m per integration sub-step of the base
_SUB_ANGULAR = math.radians(3.0)


StepReport = MotionReport  # the name this module used before the robot interface existed


@dataclass
class _Coupling:
    """A door or drawer joint held by the gripper."""

    receptacle: str
    kind: str  # "hinge" | "slide"


class HomeControl(Robot):
    """The robot of an ``EmbeddedHome`` behind the ``Robot`` interface.

    ``rate_hz`` sets the default command duration (``1 / rate_hz`` simulated seconds) for calls that
    give none. ``max_linear`` (m/s), ``max_angular`` (rad/s), ``max_ee_speed`` (m/s) and
    ``max_ee_yaw_rate`` (rad/s) bound what a command can achieve.
    """

    name = "embedded_home"

    def __init__(self, world: EmbeddedHome, rate_hz: float = 5.0, max_linear: float = 0.5, max_angular: float = 1.2,
                 max_ee_speed: float = 0.3, max_ee_yaw_rate: float = 1.5) -> None:
        if rate_hz <= 0:
            raise ValueError(f"rate_hz must be positive, got {rate_hz}")
        self.world = world
        self.rate_hz = float(rate_hz)
        self.max_linear, self.max_angular = float(max_linear), float(max_angular)
        self.max_ee_speed, self.max_ee_yaw_rate = float(max_ee_speed), float(max_ee_yaw_rate)
        self.sim_time = 0.0  # simulated seconds of commands since the world was built
        self.counters = CommandCounters()
        self._renderers: dict[tuple[int, int, float], HomeRenderer] = {}
        self._coupling: _Coupling | None = None

    @property
    def state(self) -> HomeState:
        return self.world.state  # the world may replace its state on reset: always read it through

    @property
    def dt(self) -> float:
        return 1.0 / self.rate_hz

    # ---- Robot: description and sensing ---------------------------------------------------------
    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(cameras=tuple(VIEWS), base=True, arm=True, gripper=True, head=True, depth=tuple(VIEWS),
                            policy_camera="front")

    @property
    def limits(self) -> RobotLimits:
        reach = UPPER_ARM + FOREARM + HAND
        return RobotLimits(self.max_linear, self.max_angular, self.max_ee_speed, self.max_ee_yaw_rate,
                           workspace_min=(SHOULDER_XY[0] - reach, SHOULDER_XY[1] - reach, LIFT_RANGE[0]),
                           workspace_max=(SHOULDER_XY[0] + reach, SHOULDER_XY[1] + reach, LIFT_RANGE[1]))

    def camera_info(self, camera: str, size: tuple[int, int] | None = None) -> CameraInfo:
        size = size or self._native_size()
        native = self.world.renderer
        # the world's own renderer at its size (its field of view may be configured), else one of ours
        r = native if (native.height, native.width) == tuple(size) else self.renderer(size, native.fovy)
        return self._camera_info(camera, r)

    def _camera_info(self, camera: str, r: HomeRenderer) -> CameraInfo:
        size = (r.height, r.width)
        r.sync(self.state)
        base = self.state.robot
        c, s = math.cos(base.yaw), math.sin(base.yaw)
        world_from_base = np.array([[c, -s, 0, base.x], [s, c, 0, base.y], [0, 0, 1, 0], [0, 0, 0, 1.0]])
        if camera not in VIEWS:
            raise ValueError(f"unknown camera '{camera}'; the embedded home's robot has {list(VIEWS)}")
        return CameraInfo(camera, int(size[0]), int(size[1]), r.camera_intrinsics(),
                          np.linalg.inv(world_from_base) @ r.camera_pose(camera), "rgb8", True)

    def read_camera(self, camera: str, size: tuple[int, int] | None = None, depth: bool = False) -> CameraFrame:
        size = size or self._native_size()
        view = self.render(size, (camera,), fovy=self.world.renderer.fovy)[camera]
        return CameraFrame(view.rgb, self.camera_info(camera, size), self.sim_time, view.depth if depth else None)

    def read_policy_camera(self, camera: str, spec: TrainingCamera, depth: bool = False, model: str = "the model") -> CameraFrame:
        """The model's training camera rendered directly: its field of view and aspect at ``spec.frame_size``
        (the head camera's pose; nothing is cropped, so no resolution is lost)."""
        size = spec.frame_size
        fovy = round(spec.vfov_deg, 6)  # one cached renderer per spec
        view = self.render(size, (camera,), fovy=fovy, segmentation=False)[camera]  # a policy sees no labels
        return CameraFrame(view.rgb, self._camera_info(camera, self.renderer(size, fovy)), self.sim_time,
                           view.depth if depth else None)

    def _native_size(self) -> tuple[int, int]:
        return (self.world.renderer.height, self.world.renderer.width)

    def odometry(self) -> BasePose:
        r = self.state.robot
        return BasePose(r.x, r.y, r.yaw, self.sim_time)

    def arm_state(self) -> ArmState:
        pos, yaw = self.gripper_pose()
        arm = self.state.arm
        return ArmState(pos, yaw, (*ARM_JOINTS, "fingers"), tuple(arm.as_list()))

    def gripper_state(self) -> GripperState:
        holding = self.state.held is not None or self._coupling is not None
        return GripperState(1.0 - self.state.arm.gripper, holding)

    def stop(self) -> None:
        self.counters.add("stop")  # kinematic: nothing moves between commands

    def hold(self, duration: float) -> StepReport:
        self.counters.add("hold")
        self.sim_time += duration
        return StepReport(duration=duration)

    # ---- base ---------------------------------------------------------------------------------
    def _contacts(self, x: float, y: float) -> frozenset[tuple[int, int]]:
        """Occupied grid cells whose centres lie under the round footprint at (x, y)."""
        nav = self.state.nav
        assert nav is not None
        res = nav.resolution
        i0 = int((x - ROBOT_RADIUS - nav.origin[0]) / res) - 1
        j0 = int((y - ROBOT_RADIUS - nav.origin[1]) / res) - 1
        n = int(2 * ROBOT_RADIUS / res) + 3
        i1, j1 = max(i0, 0), max(j0, 0)
        i2, j2 = min(i0 + n, nav.shape[0]), min(j0 + n, nav.shape[1])
        if i2 <= i1 or j2 <= j1:
            return frozenset({(-1, -1)})  # outside the map: everything is wall
        occ = nav.occupancy[i1:i2, j1:j2]
        cx = nav.origin[0] + (np.arange(i1, i2) + 0.5) * res
        cy = nav.origin[1] + (np.arange(j1, j2) + 0.5) * res
        near = (cx[:, None] - x) ** 2 + (cy[None, :] - y) ** 2 <= ROBOT_RADIUS**2
        hits = np.argwhere(occ & near)
        return frozenset((int(a) + i1, int(b) + j1) for a, b in hits)

    def _into_person(self, x: float, y: float, nx: float, ny: float) -> bool:
        """True when moving the base centre from (x, y) to (nx, ny) presses it further into the person's body."""
        p = self.state.person
        if p is None:
            return False
        touch = ROBOT_RADIUS + PERSON_RADIUS
        after = math.hypot(nx - p.x, ny - p.y)
        return after < touch and after < math.hypot(x - p.x, y - p.y)

    def drive(self, v: float, omega: float, duration: float | None = None) -> StepReport:
        """Hold a body velocity (m/s forward, rad/s counter-clockwise) for ``duration`` seconds
        (default one period), clipped to the speed limits; stops at the first new contact."""
        duration = self.dt if duration is None else float(duration)
        v = float(np.clip(v, -self.max_linear, self.max_linear))
        omega = float(np.clip(omega, -self.max_angular, self.max_angular))
        n = max(1, int(math.ceil(max(abs(v) * duration / _SUB_LINEAR, abs(omega) * duration / _SUB_ANGULAR))))
        h = duration / n
        st = self.state
        start_contacts = self._contacts(st.robot.x, st.robot.y)
        report = StepReport(duration=duration)
        for _ in range(n):
            x, y, yaw = st.robot.x, st.robot.y, st.robot.yaw
            mid = yaw + 0.5 * omega * h
            nx, ny = x + v * h * math.cos(mid), y + v * h * math.sin(mid)
            if v != 0.0 and (not self._contacts(nx, ny) <= start_contacts or self._into_person(x, y, nx, ny)):
                report.collision = True
                report.message = "the base bumped into an obstacle and stopped"
                break
            st.robot.x, st.robot.y, st.robot.yaw = nx, ny, math.atan2(math.sin(yaw + omega * h), math.cos(yaw + omega * h))
            report.distance += abs(v) * h
        st.path_length += report.distance
        st._carry_held()
        self.counters.add("drive")
        self.sim_time += duration
        return report

    def tilt_head(self, delta: float) -> StepReport:
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
        st = self.state
        assert st.nav is not None
        r = st.robot
        if yaw is None and tolerance <= 0.0:
            yaw = math.atan2(y - r.y, x - r.x)  # the heading of travel
        goals = [Pose2D(x, y, math.atan2(y - r.y, x - r.x) if yaw is None else yaw)]
        if tolerance > 0.0:
            goals = st.nav.free_poses_near(x, y, tolerance, yaw)
        path = st.robot_plan(goals)  # around the person too
        self.counters.add("navigate_to")
        if path is None:
            return StepReport(message=f"no collision-free path to ({x:.2f}, {y:.2f})")
        end = path.poses[-1]
        st.robot = RobotPose(end.x, end.y, end.yaw)
        st.path_length += path.length
        st._carry_held()
        return StepReport(distance=path.length)

    # ---- arm ------------------------------------------------------------------------------------
    def gripper_pose(self) -> tuple[np.ndarray, float]:
        """Gripper centre (robot frame, metres) and yaw (radians, robot frame)."""
        fk = arm_fk(self.state.arm)
        return np.array(fk.gripper), fk.yaw

    def robot_to_world(self, p: np.ndarray | tuple[float, float, float]) -> np.ndarray:
        r = self.state.robot
        c, s = math.cos(r.yaw), math.sin(r.yaw)
        return np.array([r.x + c * p[0] - s * p[1], r.y + s * p[0] + c * p[1], p[2]])

    def world_to_robot(self, p: np.ndarray | tuple[float, float, float]) -> np.ndarray:
        r = self.state.robot
        c, s = math.cos(r.yaw), math.sin(r.yaw)
        dx, dy = p[0] - r.x, p[1] - r.y
        return np.array([c * dx + s * dy, -s * dx + c * dy, p[2]])

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
            moved = self._move_coupled(t, dyaw) if self._coupling else self._move_free(t, dyaw)
            report = report.merge(moved)
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

    def _feasible(self, pos: np.ndarray, yaw: float, rising_out: bool = False) -> tuple[ArmPose | None, str]:
        pose = arm_ik(tuple(pos), yaw, self.state.arm.gripper)
        if pose is None:
            return None, "the target is out of the arm's reach"
        blocker = "" if rising_out else self._blocked(self.robot_to_world(pos))
        if blocker:
            return None, blocker
        return pose, ""

    def _move_free(self, t: np.ndarray, dyaw: float) -> StepReport:
        pos, yaw = self.gripper_pose()
        target, target_yaw = pos + t, yaw + dyaw
        pose, why = self._feasible(target, target_yaw)
        # a hand already in furniture (the base drove it there, or a joint-space motion, which checks
        # nothing) may rise out of it; otherwise it would be stuck for good
        rising_out = pose is None and t[2] >= 0.0 and bool(self._blocked(self.robot_to_world(pos)))
        if rising_out:
            pose, why = self._feasible(target, target_yaw, rising_out)
        report = StepReport()
        if pose is None:
            lo, hi = 0.0, 1.0  # bisect along the motion for the farthest feasible point
            best = None
            for _ in range(12):
                mid = (lo + hi) / 2
                cand, _ = self._feasible(pos + mid * t, yaw + mid * dyaw, rising_out)
                if cand is not None:
                    lo, best = mid, cand
                else:
                    hi = mid
            report.clipped = True
            report.message = f"{why}: moved {lo * 100:.0f}% of the step" if best else f"{why}: the arm did not move"
            pose = best
        if pose is not None:
            self.state.arm = pose
            self.state._carry_held()
        return report

    def _move_coupled(self, t: np.ndarray, dyaw: float) -> StepReport:
        """Drag a held door handle along its arc or a drawer knob along its axis."""
        assert self._coupling is not None
        st = self.state
        rec = st.layout.receptacles[self._coupling.receptacle]
        pos, yaw = self.gripper_pose()
        wanted = self.robot_to_world(pos + t)
        lx, ly = rec.to_local(wanted[0], wanted[1])
        current = st.open_fraction(rec.name)
        if self._coupling.kind == "hinge":
            ax, ay = door_hinge_local(rec)
            hx0, hy0, _ = door_handle_local(rec, 0.0)
            base = math.atan2(hy0 - ay, hx0 - ax)
            target = min(max(wrap_angle(math.atan2(ly - ay, lx - ax) - base) / (math.pi / 2), 0.0), 1.0)
        else:
            hx_now = drawer_handle_local(rec, current * DRAWER_TRAVEL)[0]
            target = min(max(current + (lx - hx_now) / DRAWER_TRAVEL, 0.0), 1.0)
        report = StepReport()
        best = None
        for k in range(13):  # the full step first, then shorter ones
            frac = current + (target - current) * (1.0 - k / 12)
            handle = self._handle_robot(rec, frac)
            for turn in _HANDLE_TURNS:  # the gripper may turn about the handle bar to stay within its joint limits
                pose = arm_ik(tuple(handle), yaw + dyaw + turn, st.arm.gripper)
                if pose is not None:
                    best = (frac, pose)
                    break
            if best is not None:
                break
        if best is None:
            report.clipped, report.message = True, f"the arm cannot follow the {rec.name}'s handle any further"
            return report
        if abs(best[0] - target) > 1e-6:
            report.clipped, report.message = True, f"the arm cannot follow the {rec.name}'s handle any further"
        st.arm = best[1]
        st.set_joint_open(rec.name, best[0])
        return report

    def _handle_robot(self, rec: Receptacle, fraction: float) -> np.ndarray:
        if rec.type.articulation == "hinge":
            lx, ly, z = door_handle_local(rec, fraction * math.pi / 2)
        else:
            lx, ly, z = drawer_handle_local(rec, fraction * DRAWER_TRAVEL)
        return self.world_to_robot((*rec.to_world(lx, ly), z))

    def handle_position(self, receptacle: str) -> np.ndarray:
        """Robot-frame centre of a door handle or drawer knob at the current opening."""
        rec = self.state.layout.receptacles[receptacle]
        return self._handle_robot(rec, self.state.open_fraction(receptacle))

    def _blocked(self, g: np.ndarray) -> str:
        """Why the gripper (and what it holds) cannot be at world point ``g``; "" if it can."""
        st = self.state
        bottom, top = g[2] - FINGER_HEIGHT / 2, g[2] + FINGER_HEIGHT / 2
        if st.held is not None:
            h = st.layout.objects[st.held].cls.size[2]
            bottom = min(bottom, g[2] + st.held_dz - h / 2)
            top = max(top, g[2] + st.held_dz + h / 2)
        if bottom < 0.0:
            return "the gripper would go through the floor"
        for rec in st.layout.receptacles.values():
            lx, ly = rec.to_local(g[0], g[1])
            hx, hy, height = rec.half
            slide = st._slide_offset(rec)
            inside_body = abs(lx) <= hx and abs(ly) <= hy
            inside_drawer = rec.type.articulation == "slide" and -hx + slide <= lx <= hx + slide and abs(ly) <= hy
            if not (inside_body or inside_drawer):
                continue
            rest = rec.rest_height()
            if rec.type.articulated and not st.is_open.get(rec.name, False) and inside_body and bottom < height:
                return f"the {rec.name} is closed"
            if bottom < rest - 1e-3:
                return f"the gripper would go into the {rec.name}"
            if rec.type.clearance is not None and inside_body and top > rest + rec.type.clearance + PANEL:
                return f"the gripper would hit the top of the {rec.name}"
        return ""

    # ---- gripper ---------------------------------------------------------------------------------
    def set_gripper(self, closedness: float) -> StepReport:
        """Command the fingers; closing grasps what lies between them, opening releases it."""
        self.counters.add("set_gripper")
        st = self.state
        closedness = min(max(closedness, 0.0), 1.0)
        report = StepReport()
        holding = st.held is not None or self._coupling is not None
        if closedness >= GRASP_CLOSEDNESS and not holding:
            return self._close(closedness)
        if holding and closedness < GRASP_CLOSEDNESS:
            return self._open(closedness)
        if not holding:
            st.arm = st.arm.with_gripper(closedness)
        return report

    def _in_gripper(self, p: np.ndarray | tuple[float, float, float]) -> tuple[float, float, float]:
        """World point -> gripper frame (along the fingers, left, up)."""
        pos, yaw = self.gripper_pose()
        rel = self.world_to_robot(p) - pos
        c, s = math.cos(yaw), math.sin(yaw)
        return (c * rel[0] + s * rel[1], -s * rel[0] + c * rel[1], rel[2])

    def _close(self, closedness: float) -> StepReport:
        st = self.state
        half_gap = finger_offset(st.arm.gripper) - 0.007
        best_miss: tuple[float, str, tuple[float, float, float]] | None = None
        for rec_name, kind in self._handles():
            rec = st.layout.receptacles[rec_name]
            h = self.robot_to_world(self._handle_robot(rec, st.open_fraction(rec_name)))
            gx, gy, gz = self._in_gripper(h)
            if abs(gx) <= FINGER_LENGTH / 2 and abs(gy) <= half_gap and abs(gz) <= 0.08:
                self._coupling = _Coupling(rec_name, kind)
                st.arm = st.arm.with_gripper(1.0 - 2 * 0.015 / MAX_OPENING)
                return StepReport(attached=f"{rec_name}/handle")
        _, gyaw = self.gripper_pose()
        for name, info in st.layout.objects.items():
            if name == st.held or st.locations[name].relation == "held":
                continue
            x, y, z, oyaw = st.object_poses[name]
            gx, gy, gz = self._in_gripper((x, y, z))
            sx, sy, sz = info.cls.size
            rel = oyaw - (st.robot.yaw + gyaw)
            width = 0.5 * (abs(sx * math.sin(rel)) + abs(sy * math.cos(rel)))  # half-extent across the gap
            miss = math.sqrt(gx * gx + gy * gy + gz * gz)
            if best_miss is None or miss < best_miss[0]:
                best_miss = (miss, name, (gx, gy, gz))
            if abs(gx) > FINGER_LENGTH / 2 + 0.01 or abs(gz) > sz / 2 + FINGER_HEIGHT / 2 - 0.005:
                continue
            if abs(gy) + width > half_gap + 0.01:
                if abs(gy) < half_gap and 2 * width > MAX_OPENING:
                    st.arm = st.arm.with_gripper(closedness)
                    return StepReport(message=f"the {name} is {2 * width * 100:.0f} cm wide, wider than the open gripper")
                continue
            if finger_offset(closedness) - 0.007 >= width:
                continue  # not closed far enough to touch it
            st.held = name
            st.held_dz = gz
            st.locations[name] = ObjectLocation(None, "held", None)
            st.arm = st.arm.with_gripper(1.0 - (width + 0.0) / (MAX_OPENING / 2))
            st._carry_held()
            return StepReport(attached=name)
        st.arm = st.arm.with_gripper(closedness)
        if best_miss is None:
            return StepReport(message="the gripper closed on nothing")
        _, name, (gx, gy, gz) = best_miss
        return StepReport(message=f"the gripper closed on nothing: the {name} is {_describe_offset(gx, gy, gz)} the fingers")

    def _handles(self) -> list[tuple[str, str]]:
        return [(n, r.type.articulation) for n, r in self.state.layout.receptacles.items() if r.type.articulation]

    def _open(self, closedness: float) -> StepReport:
        st = self.state
        st.arm = st.arm.with_gripper(closedness)
        if self._coupling is not None:
            name = self._coupling.receptacle
            self._coupling = None
            return StepReport(released=f"{name}/handle")
        obj = st.held
        assert obj is not None
        self._drop(obj)
        return StepReport(released=obj)

    def _drop(self, obj: str) -> None:
        """The released object falls onto the highest surface below it (or the floor)."""
        st = self.state
        info = st.layout.objects[obj]
        x, y, z, yaw = st.object_poses[obj]
        bottom = z - info.cls.size[2] / 2
        best: tuple[float, Receptacle] | None = None
        for rec in st.layout.receptacles.values():
            lx, ly = rec.to_local(x, y)
            x0, y0, x1, y1 = rec.placement_area()
            slide = st._slide_offset(rec)
            margin = info.radius * 0.5
            if not (x0 + slide - margin <= lx <= x1 + slide + margin and y0 - margin <= ly <= y1 + margin):
                continue
            if rec.type.articulated and not st.is_open.get(rec.name, False):
                continue
            rest = rec.rest_height()
            if rest <= bottom + 0.03 and (best is None or rest > best[0]):
                best = (rest, rec)
        st.held = None
        st.held_dz = 0.0
        if best is None:
            room = st.layout.room_at(x, y) or st.robot_room()
            st._set_object(obj, (x, y, info.cls.size[2] / 2, yaw), ObjectLocation(None, "floor", room))
        else:
            rest, rec = best
            st._set_object(obj, (x, y, rest + info.cls.size[2] / 2, yaw), ObjectLocation(rec.name, rec.type.relation, rec.room))

    def release_all(self) -> StepReport:
        """Open the gripper fully (drops what it holds, lets go of handles)."""
        return self.set_gripper(0.0)

    def stow(self, steps: int = 5) -> StepReport:
        """Bring the arm back to the carry pose (joint-space motion, what it holds comes along).
        A door or drawer handle is let go first."""
        st = self.state
        report = StepReport()
        if self._coupling is not None:
            report = report.merge(self._open(0.0))
        carry = ArmPose.carry()
        start = st.arm
        grip = start.gripper if st.held else carry.gripper
        for k in range(1, steps + 1):
            a = k / steps
            lift, shoulder, elbow, wrist = (s + a * (c - s) for s, c in zip(start.as_list()[:4], carry.as_list()[:4]))
            st.arm = ArmPose(lift, shoulder, elbow, wrist, gripper=grip)
            st._carry_held()
        if st.held is None:
            st.arm = carry
        report.duration = steps * self.dt
        self.sim_time += report.duration
        self.counters.add("stow_arm")
        return report

    def stow_arm(self) -> StepReport:
        return self.stow()

    def ready(self, position: tuple[float, float, float], steps: int = 5) -> StepReport:
        """Bring the gripper to ``position`` (robot frame) by a joint-space motion, as a driver's unstow
        does (no collision check; what it holds comes along). Out of the arm's reach: nothing moves."""
        st = self.state
        target = arm_ik((float(position[0]), float(position[1]), float(position[2])), 0.0, st.arm.gripper)
        if target is None:
            return StepReport(clipped=True, message=f"{tuple(position)} is out of the arm's reach")
        start = st.arm
        for k in range(1, steps + 1):
            a = k / steps
            lift, shoulder, elbow, wrist = (s + a * (t - s) for s, t in zip(start.as_list()[:4], target.as_list()[:4]))
            st.arm = ArmPose(lift, shoulder, elbow, wrist, gripper=start.gripper)
            st._carry_held()
        report = StepReport(duration=steps * self.dt)
        self.sim_time += report.duration
        self.counters.add("ready_arm")
        return report

    def reset(self) -> None:
        """Forget couplings (called when the world is reset: a new episode starts with open hands)."""
        self._coupling = None

    # ---- cameras ---------------------------------------------------------------------------------
    def renderer(self, size: tuple[int, int], fovy: float = 90.0) -> HomeRenderer:
        """A renderer (cached) with ``size`` = (height, width), depth and segmentation enabled."""
        from homiebot.worlds.home.render import HomeRenderer

        key = (int(size[0]), int(size[1]), float(fovy))
        if key not in self._renderers:
            self._renderers[key] = HomeRenderer(self.state.layout, width=key[1], height=key[0], fovy=fovy)
        return self._renderers[key]

    def render(self, size: tuple[int, int], views: tuple[str, ...] = ("front",), robot_pose: tuple[float, float, float] | None = None,
               fovy: float = 90.0, segmentation: bool = True) -> dict[str, RenderedView]:
        """Render head camera views at ``size`` (height, width); ``robot_pose`` renders as if the
        base stood there (e.g. a goal view) without changing the state; ``segmentation=False`` skips
        the instance-id pass (half the cost)."""
        bad = [v for v in views if v not in VIEWS]
        if bad:
            raise ValueError(f"unknown views {bad}; expected some of {list(VIEWS)}")
        r = self.renderer(size, fovy)
        state = self.state
        if robot_pose is not None:
            state = copy.copy(state)
            state.robot = type(self.state.robot)(*robot_pose)
        r.sync(state)
        if segmentation:
            return r.render(views)
        r.segmentation_enabled = False
        try:
            return r.render(views)
        finally:
            r.segmentation_enabled = True

    def close(self) -> None:
        for r in self._renderers.values():
            r.close()
        self._renderers.clear()



def _describe_offset(gx: float, gy: float, gz: float) -> str:
    """Plain words for where a point is relative to the fingers: "12 cm left of and 3 cm below"."""
    parts = []
    for value, pos, neg in ((gy, "left of", "right of"), (gx, "beyond", "short of"), (gz, "above", "below")):
        if abs(value) >= 0.01:
            parts.append(f"{abs(value) * 100:.0f} cm {pos if value > 0 else neg}")
    if not parts:
        return "right between"
    return " and ".join(parts)
