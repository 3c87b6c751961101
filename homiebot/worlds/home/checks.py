"""Privileged truth about skill attempts in the embedded home: the simulation's ``AttemptCheck``.

Success is read from ``HomeState`` (the object is lifted off its support, lies on the place, the
door is open), and so are goal images for image-goal navigation models (rendered from the pose a
Go to would end at, with the target's pixels as the mask). None of this exists on a real robot.
"""

from __future__ import annotations

import math

import numpy as np

from homiebot.core.attempt_checks import AttemptCheck, Tolerances
from homiebot.core.camera_geometry import TrainingCamera
from homiebot.core.contracts import Action, SkillFailure, Subtask
from homiebot.core.robot import Robot
from homiebot.worlds.home.control import HomeControl

OPEN_DONE, CLOSED_DONE = 0.9, 0.05  # opening fractions that count as opened / closed
LIFTED = 0.02  # m above the support that counts as lifted


def target_bearing(control: HomeControl, target: str) -> tuple[float, float]:
    """(gap from the base edge, heading error in radians) to a target's nearest point."""
    st = control.state
    r = st.robot
    if target in st.layout.receptacles:
        rec = st.layout.receptacles[target]
        lx, ly = rec.to_local(r.x, r.y)
        hx, hy, _ = rec.half
        px, py = rec.to_world(min(max(lx, -hx), hx), min(max(ly, -hy), hy))
    elif target in st.layout.rooms:
        return st.distance_to(target), 0.0
    else:
        px, py = st.object_poses[target][:2]
    err = math.atan2(py - r.y, px - r.x) - r.yaw
    return st.distance_to(target), math.atan2(math.sin(err), math.cos(err))


class SimTruthCheck(AttemptCheck):
    """Judges attempts from the embedded home's state (its robot must be the home's ``HomeControl``)."""

    def __init__(self) -> None:
        self._held_before: str | None = None

    @staticmethod
    def _control(robot: Robot) -> HomeControl:
        robot = robot.unwrapped()
        if not isinstance(robot, HomeControl):
            raise TypeError(f"the simulator's truth check needs the embedded home's robot, not {type(robot).__name__}")
        return robot

    def begin(self, subtask: Subtask, robot: Robot) -> None:
        self._held_before = self._control(robot).state.held

    def done_early(self, subtask: Subtask, robot: Robot, tol: Tolerances) -> bool:
        """A lifted object, or standing at the manipulation standoff squarely facing the target
        (for policies that do not stop by themselves)."""
        ctl = self._control(robot)
        if subtask.action is Action.PICK:
            return self.succeeded(subtask, robot, tol)
        if subtask.action is Action.GO_TO:
            target = subtask.target or ""
            if target in ctl.state.layout.rooms:
                return self.succeeded(subtask, robot, tol)
            gap, err = target_bearing(ctl, target)
            return gap <= tol.early_gap and abs(err) <= math.radians(5)
        return False

    def succeeded(self, subtask: Subtask, robot: Robot, tol: Tolerances) -> bool:
        ctl = self._control(robot)
        st = ctl.state
        target = subtask.target or ""
        if subtask.action is Action.GO_TO:
            if target in st.layout.rooms:
                return st.robot_room() == target
            gap, err = target_bearing(ctl, target)
            return gap <= tol.goal_gap and abs(err) <= tol.facing
        if subtask.action is Action.PICK:
            if st.held != target:
                return False
            info = st.layout.objects[target]
            bottom = st.object_poses[target][2] - info.cls.size[2] / 2
            return bottom >= _support_height(ctl) + LIFTED
        if subtask.action is Action.PUT:
            loc = st.locations.get(target)
            return st.held is None and loc is not None and loc.receptacle == subtask.place
        if subtask.action is Action.OPEN:
            return st.open_fraction(target) >= OPEN_DONE
        if subtask.action is Action.CLOSE:
            return st.open_fraction(target) <= CLOSED_DONE
        return False

    def dropped(self, subtask: Subtask, robot: Robot) -> str | None:
        st = self._control(robot).state
        if subtask.action is Action.PUT and self._held_before and st.held is None:
            return self._held_before  # released, but not on/in the place: E2
        return None

    def failure(self, subtask: Subtask, robot: Robot, model: str, last_message: str, timed_out: bool) -> tuple[SkillFailure, str]:
        ctl = self._control(robot)
        st = ctl.state
        target = subtask.target or ""
        detail = f": {last_message}" if last_message else ""
        stopped = SkillFailure.TIMEOUT if timed_out else SkillFailure.FAILED
        if subtask.action is Action.GO_TO:
            if target in st.layout.rooms:
                return stopped, f"{model} did not reach the {target}{detail}"
            gap, err = target_bearing(ctl, target)
            return stopped, (f"{model} stopped {gap:.2f} m from the {target}, {abs(math.degrees(err)):.0f} degrees off to the "
                             f"{'left' if err > 0 else 'right'}{detail}")
        if subtask.action is Action.PICK:
            if st.held == target:
                return stopped, f"{model} grasped the {target} but could not lift it{detail}"
            return SkillFailure.GRASP_MISSED, f"{model} failed to grasp the {target}{detail or ': the gripper never closed around it'}"
        if subtask.action is Action.PUT:
            if self._held_before != target:
                return SkillFailure.FAILED, f"the {target} is not in the gripper: pick it up first"
            if st.held is not None:
                return stopped, f"{model} did not release the {target} on the {subtask.place}{detail}"
            where = st.locations[target].receptacle or "floor"
            return SkillFailure.GRASP_MISSED, f"the {target} fell onto the {where} instead of the {subtask.place}"
        verb = "open" if subtask.action is Action.OPEN else "close"
        return stopped, f"{model} could not {verb} the {target} (it is {st.open_fraction(target) * 100:.0f}% open){detail}"

    def goal_view(self, subtask: Subtask, robot: Robot, size: tuple[int, int],
                  camera: TrainingCamera | None = None) -> tuple[np.ndarray | None, np.ndarray | None]:
        """The front view from the pose a Go to would end at, and the target's mask in it (through the
        model's training camera when ``camera`` is given)."""
        if subtask.action is not Action.GO_TO:
            return None, None
        ctl = self._control(robot)
        st = ctl.state
        poses = st.approach.goal_poses(subtask.target or "")
        free = [p for p in poses if st.nav is not None and st.nav.is_free(p.x, p.y)] or poses
        if not free:
            return None, None
        fovy = 90.0
        if camera is not None:
            size, fovy = camera.frame_size, round(camera.vfov_deg, 6)
        view = ctl.render(size, robot_pose=(free[0].x, free[0].y, free[0].yaw), fovy=fovy)["front"]
        ident = ctl.renderer(size, fovy).instance_ids.get(subtask.target or "")
        mask = None if view.segmentation is None or ident is None else view.segmentation == ident
        return view.rgb, mask


def _support_height(ctl: HomeControl) -> float:
    """Height of the highest surface under the gripper (the floor if none)."""
    st = ctl.state
    g = ctl.robot_to_world(ctl.gripper_pose()[0])
    best = 0.0
    for rec in st.layout.receptacles.values():
        lx, ly = rec.to_local(g[0], g[1])
        hx, hy, _ = rec.half
        slide = st.joints.slide_offset(rec)
        if -hx <= lx <= hx + slide and abs(ly) <= hy:
            best = max(best, rec.rest_height())
    return best


__all__ = ["SimTruthCheck", "target_bearing"]
