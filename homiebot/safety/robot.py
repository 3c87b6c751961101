"""``SafeRobot``: every motion command to a robot passes through here.

* base: velocities clipped to the speed limits (the robot's, or lower ones from the settings) and
  their change per command to the acceleration limits;
* arm: end-effector steps clipped to the speed limit and kept inside the workspace box;
* e-stop and cancel: every command first checks them and raises ``Stopped`` (the skill ends before
  its next control step); engaging the e-stop also calls the robot's ``stop`` at once;
* watchdog: when the base was last told to move and no command follows within ``watchdog`` seconds
  (a policy that hangs, a process stuck), the base is stopped. The robot side keeps its own
  ``cmd_vel`` timeout too, since this watchdog dies with the process it runs in.

Clipped commands are safety events, coalesced: one event per kind of clip until a command passes
unclipped again.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import numpy as np

from homiebot.core.robot import (
    ArmState,
    BasePose,
    CameraFrame,
    CameraInfo,
    Capabilities,
    GripperState,
    MotionReport,
    Robot,
    RobotLimits,
    Unsupported,
)
from homiebot.safety.settings import SafetySettings
from homiebot.safety.state import SafetyState

if TYPE_CHECKING:
    from homiebot.core.camera_geometry import TrainingCamera


class SafeRobot(Robot):
    """A ``Robot`` that enforces ``SafetySettings`` and the ``SafetyState`` on another one."""

    def __init__(self, inner: Robot, settings: SafetySettings, state: SafetyState) -> None:
        self.inner = inner
        self.settings = settings
        self.state = state
        self.name = inner.name
        lim = inner.limits
        self._limits = RobotLimits(
            min(lim.max_linear, settings.max_linear or lim.max_linear),
            min(lim.max_angular, settings.max_angular or lim.max_angular),
            min(lim.max_ee_speed, settings.max_ee_speed or lim.max_ee_speed),
            lim.max_ee_yaw_rate, lim.workspace_min, lim.workspace_max)
        self._velocity = (0.0, 0.0)  # the last base velocity commanded (for the acceleration limit)
        self._last_command = self.inner.clock()
        self._clipping: set[str] = set()
        self._lock = threading.Lock()
        self._watchdog: threading.Thread | None = None
        # drive() calls in flight: in lock-step the robot's clock jumps by a whole command at the step's end, before
        # drive() returns and notes it, and a watchdog look in between took the command for silence
        self._driving = 0
        self._closed = threading.Event()
        state.on_estop.append(self._estop_stop)
        state.on_release.append(self._estop_release)

    # ---- description and sensing: passed through ---------------------------------------------------
    @property
    def capabilities(self) -> Capabilities:
        return self.inner.capabilities

    @property
    def limits(self) -> RobotLimits:
        return self._limits

    def camera_info(self, camera: str, size: tuple[int, int] | None = None) -> CameraInfo:
        return self.inner.camera_info(camera, size)

    def read_camera(self, camera: str, size: tuple[int, int] | None = None, depth: bool = False) -> CameraFrame:
        return self.inner.read_camera(camera, size, depth)

    def read_policy_camera(self, camera: str, spec: TrainingCamera, depth: bool = False, model: str = "the model") -> CameraFrame:
        return self.inner.read_policy_camera(camera, spec, depth, model)  # a simulator renders the training camera itself

    def odometry(self) -> BasePose:
        return self.inner.odometry()

    def arm_state(self) -> ArmState:
        return self.inner.arm_state()

    def gripper_state(self) -> GripperState:
        return self.inner.gripper_state()

    # ---- base -------------------------------------------------------------------------------------
    def drive(self, linear: float, angular: float, duration: float) -> MotionReport:
        self._before_command()
        v, w = self._limit_base(float(linear), float(angular), float(duration))
        with self._lock:
            self._driving += 1  # a command in flight is being sent: no watchdog while it lasts
        try:
            report = self.inner.drive(v, w, duration)
        finally:
            with self._lock:
                self._driving -= 1
        with self._lock:
            self._velocity = (v, w) if not report.collision else (0.0, 0.0)
            self._last_command = self.inner.clock()
        self._ensure_watchdog()
        return report

    def _limit_base(self, v: float, w: float, duration: float) -> tuple[float, float]:
        lim, s = self._limits, self.settings
        wanted = (v, w)
        v = float(np.clip(v, -lim.max_linear, lim.max_linear))
        w = float(np.clip(w, -lim.max_angular, lim.max_angular))
        speed_clipped = (v, w) != wanted
        pv, pw = self._velocity
        dv, dw = s.max_linear_accel * duration, s.max_angular_accel * duration
        # stopping is never limited: braking harder is always allowed
        v2 = v if abs(v) <= abs(pv) and v * pv >= 0 else float(np.clip(v, pv - dv, pv + dv))
        w2 = w if abs(w) <= abs(pw) and w * pw >= 0 else float(np.clip(w, pw - dw, pw + dw))
        self._note_clip("base_speed", speed_clipped, f"base velocity ({wanted[0]:.2f} m/s, {wanted[1]:.2f} rad/s) limited to "
                                                     f"({lim.max_linear:.2f} m/s, {lim.max_angular:.2f} rad/s)")
        self._note_clip("base_accel", (v2, w2) != (v, w), f"base acceleration limited to {s.max_linear_accel:.2f} m/s^2 "
                                                           f"and {s.max_angular_accel:.2f} rad/s^2")
        return v2, w2

    def navigate_to(self, x: float, y: float, yaw: float | None = None, tolerance: float = 0.0) -> MotionReport:
        self._before_command()
        report = self.inner.navigate_to(x, y, yaw, tolerance)
        self._still(commanded=True)
        return report

    def hold(self, duration: float) -> MotionReport:
        self._before_command()
        report = self.inner.hold(duration)
        self._still(commanded=True)
        return report

    def tilt_head(self, delta: float) -> MotionReport:
        self._before_command()
        return self.inner.tilt_head(delta)

    # ---- arm ---------------------------------------------------------------------------------------
    def move_end_effector(self, translation: np.ndarray, rotation: np.ndarray, duration: float) -> MotionReport:
        self._before_command()
        t = np.asarray(translation, dtype=float).reshape(3)
        limit = self._limits.max_ee_speed * duration
        norm = float(np.linalg.norm(t))
        speed_clipped = norm > limit
        if speed_clipped:
            t = t * (limit / norm)
        t, boxed = self._inside_workspace(t)
        self._note_clip("ee_speed", speed_clipped, f"end-effector step limited to {limit * 100:.0f} cm per period")
        self._note_clip("workspace", boxed, "end-effector target kept inside the arm's workspace")
        return self.inner.move_end_effector(t, rotation, duration)

    def _inside_workspace(self, t: np.ndarray) -> tuple[np.ndarray, bool]:
        try:
            here = self.inner.arm_state().position
        except Unsupported:
            return t, False
        lo, hi = np.asarray(self._limits.workspace_min), np.asarray(self._limits.workspace_max)
        target = np.clip(here + t, lo, hi)
        return target - here, bool(np.any(np.abs(target - (here + t)) > 1e-9))

    def set_gripper(self, closedness: float) -> MotionReport:
        self._before_command()
        return self.inner.set_gripper(closedness)

    def stow_arm(self) -> MotionReport:
        self._before_command()
        return self.inner.stow_arm()

    def clock(self) -> float:
        return self.inner.clock()

    def unwrapped(self) -> Robot:
        return self.inner.unwrapped()

    def stop(self) -> None:
        self._still()
        self.inner.stop()

    def _still(self, commanded: bool = False) -> None:
        """The base was told to stand still (``commanded``: by a command, which also feeds the watchdog)."""
        with self._lock:
            self._velocity = (0.0, 0.0)
            if commanded:
                self._last_command = self.inner.clock()

    def close(self) -> None:
        self._closed.set()
        for hooks, hook in ((self.state.on_estop, self._estop_stop), (self.state.on_release, self._estop_release)):
            if hook in hooks:
                hooks.remove(hook)

    # ---- checks -------------------------------------------------------------------------------------
    def _before_command(self) -> None:
        try:
            self.state.check()
        except Exception:
            self.stop()
            raise

    def _estop_stop(self) -> None:
        self._still()
        self.inner.emergency_stop()

    def _estop_release(self) -> None:
        self.inner.emergency_release()

    def _note_clip(self, kind: str, clipped: bool, message: str) -> None:
        if clipped and kind not in self._clipping:
            self._clipping.add(kind)
            self.state.record("limit_clipped", message, limit=kind)
        elif not clipped:
            self._clipping.discard(kind)

    # ---- watchdog -----------------------------------------------------------------------------------
    def _ensure_watchdog(self) -> None:
        if self._watchdog is None or not self._watchdog.is_alive():
            self._watchdog = threading.Thread(target=self._watch, name="homiebot-safety-watchdog", daemon=True)
            self._watchdog.start()

    def _watch(self) -> None:
        period = self.settings.watchdog
        while not self._closed.wait(min(0.05, period / 4)):
            with self._lock:
                moving = self._velocity != (0.0, 0.0) and not self._driving
                quiet = self.inner.clock() - self._last_command  # the robot's clock: simulated time in lock-step
            if moving and quiet > period:
                self.stop()
                self.state.record("watchdog_stop", f"no base command for {quiet:.2f} s (watchdog {period:.2f} s): base stopped",
                                  quiet=f"{quiet:.3f}")
            if not moving and quiet > 10 * period:
                return  # idle: the next motion command starts it again


__all__ = ["SafeRobot"]
