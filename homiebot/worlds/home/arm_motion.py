"""The embedded home robot's arm: end-effector steps through the closed-form IK, joint-space moves.

End-effector deltas go through ``robot.arm_ik`` (position and yaw; roll and pitch are not actuated: the
gripper stays level); a target that is out of reach or inside furniture is cut back along the motion
to the last feasible point and reported. While the gripper holds a door handle or drawer knob, moving
it drags the joint along the door arc or the drawer axis instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from homiebot.core.robot import MotionReport, wrap_angle
from homiebot.worlds.home.catalog import DRAWER_TRAVEL
from homiebot.worlds.home.gripper import Gripper
from homiebot.worlds.home.hand_frames import gripper_pose, handle_in_robot, robot_to_world
from homiebot.worlds.home.mjcf import PANEL, door_handle_local, door_hinge_local, drawer_handle_local
from homiebot.worlds.home.robot import FINGER_HEIGHT, ArmPose, arm_ik
from homiebot.worlds.home.state import HomeState

HANDLE_TURNS = (0.0, 0.3, -0.3, 0.6, -0.6, 0.9, -0.9, 1.2, -1.2)  # gripper yaws tried about a handle bar


class ArmMotion:
    """Moves the arm's joints, and what the gripper holds with them."""

    def __init__(self, state: Callable[[], HomeState], gripper: Gripper) -> None:
        self._state = state  # read through on every call: the world may replace its state on reset
        self._gripper = gripper

    def move(self, t: np.ndarray, dyaw: float) -> MotionReport:
        """Move the gripper by a robot-frame translation ``t`` and a yaw ``dyaw`` (already within the speed
        limits); a held handle is dragged along its joint."""
        return self._move_coupled(t, dyaw) if self._gripper.coupling else self._move_free(t, dyaw)

    def stow(self, steps: int) -> MotionReport:
        """Bring the arm back to the carry pose in ``steps`` joint-space steps (what it holds comes along),
        letting go of a door or drawer handle first."""
        st = self._state()
        report = MotionReport()
        if self._gripper.coupling is not None:
            report = report.merge(self._gripper.open(0.0))
        carry = ArmPose.carry()
        start = st.arm
        grip = start.gripper if st.held else carry.gripper
        for k in range(1, steps + 1):
            a = k / steps
            lift, shoulder, elbow, wrist = (s + a * (c - s) for s, c in zip(start.as_list()[:4], carry.as_list()[:4]))
            st.arm = ArmPose(lift, shoulder, elbow, wrist, gripper=grip)
            st.placement.carry_held()
        if st.held is None:
            st.arm = carry
        return report

    def ready(self, position: tuple[float, float, float], steps: int) -> MotionReport | None:
        """Bring the gripper to ``position`` (robot frame) in ``steps`` joint-space steps, with no collision
        check; None, and nothing moves, when that is out of the arm's reach."""
        st = self._state()
        target = arm_ik((float(position[0]), float(position[1]), float(position[2])), 0.0, st.arm.gripper)
        if target is None:
            return None
        start = st.arm
        for k in range(1, steps + 1):
            a = k / steps
            lift, shoulder, elbow, wrist = (s + a * (t - s) for s, t in zip(start.as_list()[:4], target.as_list()[:4]))
            st.arm = ArmPose(lift, shoulder, elbow, wrist, gripper=start.gripper)
            st.placement.carry_held()
        return MotionReport()

    def blocked(self, g: np.ndarray) -> str:
        """Why the gripper (and what it holds) cannot be at world point ``g``; "" if it can."""
        st = self._state()
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
            slide = st.joints.slide_offset(rec)
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

    def _feasible(self, pos: np.ndarray, yaw: float, rising_out: bool = False) -> tuple[ArmPose | None, str]:
        st = self._state()
        pose = arm_ik(tuple(pos), yaw, st.arm.gripper)
        if pose is None:
            return None, "the target is out of the arm's reach"
        blocker = "" if rising_out else self.blocked(robot_to_world(st, pos))
        if blocker:
            return None, blocker
        return pose, ""

    def _move_free(self, t: np.ndarray, dyaw: float) -> MotionReport:
        st = self._state()
        pos, yaw = gripper_pose(st)
        target, target_yaw = pos + t, yaw + dyaw
        pose, why = self._feasible(target, target_yaw)
        # a hand already in furniture (the base drove it there, or a joint-space motion, which checks
        # nothing) may rise out of it; otherwise it would be stuck for good
        rising_out = pose is None and t[2] >= 0.0 and bool(self.blocked(robot_to_world(st, pos)))
        if rising_out:
            pose, why = self._feasible(target, target_yaw, rising_out)
        report = MotionReport()
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
            st.arm = pose
            st.placement.carry_held()
        return report

    def _move_coupled(self, t: np.ndarray, dyaw: float) -> MotionReport:
        """Drag a held door handle along its arc or a drawer knob along its axis."""
        coupling = self._gripper.coupling
        assert coupling is not None
        st = self._state()
        rec = st.layout.receptacles[coupling.receptacle]
        pos, yaw = gripper_pose(st)
        wanted = robot_to_world(st, pos + t)
        lx, ly = rec.to_local(wanted[0], wanted[1])
        current = st.open_fraction(rec.name)
        if coupling.kind == "hinge":
            ax, ay = door_hinge_local(rec)
            hx0, hy0, _ = door_handle_local(rec, 0.0)
            base = math.atan2(hy0 - ay, hx0 - ax)
            target = min(max(wrap_angle(math.atan2(ly - ay, lx - ax) - base) / (math.pi / 2), 0.0), 1.0)
        else:
            hx_now = drawer_handle_local(rec, current * DRAWER_TRAVEL)[0]
            target = min(max(current + (lx - hx_now) / DRAWER_TRAVEL, 0.0), 1.0)
        report = MotionReport()
        best = None
        for k in range(13):  # the full step first, then shorter ones
            frac = current + (target - current) * (1.0 - k / 12)
            handle = handle_in_robot(st, rec, frac)
            for turn in HANDLE_TURNS:  # the gripper may turn about the handle bar to stay within its joint limits
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
