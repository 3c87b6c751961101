"""The embedded home robot's gripper: closing grasps what lies between the fingers, opening releases it.

Closing attaches an object only if it lies between the fingers and is narrower than the opening;
opening releases it and it falls onto the surface below (a receptacle or the floor). Closing on a
door handle or drawer knob couples the joint to the gripper (``coupling``), which the arm then drags.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from homiebot.core.robot import MotionReport
from homiebot.worlds.home.facts import ObjectLocation
from homiebot.worlds.home.hand_frames import Coupling, gripper_pose, handle_in_robot, robot_to_world, world_to_robot
from homiebot.worlds.home.layout import Receptacle
from homiebot.worlds.home.robot import FINGER_HEIGHT, FINGER_LENGTH, MAX_OPENING, finger_offset
from homiebot.worlds.home.state import HomeState

GRASP_CLOSEDNESS = 0.5  # a gripper command at or above this closes the fingers on what is between them


class Gripper:
    """The fingers, what they hold, and the door or drawer joint they may be coupled to."""

    def __init__(self, state: Callable[[], HomeState]) -> None:
        self._state = state  # read through on every call: the world may replace its state on reset
        self.coupling: Coupling | None = None

    def holding(self) -> bool:
        """True when the fingers hold an object or a handle."""
        return self._state().held is not None or self.coupling is not None

    def command(self, closedness: float) -> MotionReport:
        """Command the fingers (0 open .. 1 closed); closing grasps what lies between them, opening releases it."""
        st = self._state()
        closedness = min(max(closedness, 0.0), 1.0)
        holding = self.holding()
        if closedness >= GRASP_CLOSEDNESS and not holding:
            return self._close(closedness)
        if holding and closedness < GRASP_CLOSEDNESS:
            return self.open(closedness)
        if not holding:
            st.arm = st.arm.with_gripper(closedness)
        return MotionReport()

    def open(self, closedness: float) -> MotionReport:
        """Open the fingers to ``closedness``, letting go of a handle or dropping the held object."""
        st = self._state()
        st.arm = st.arm.with_gripper(closedness)
        if self.coupling is not None:
            name = self.coupling.receptacle
            self.coupling = None
            return MotionReport(released=f"{name}/handle")
        obj = st.held
        assert obj is not None
        self._drop(obj)
        return MotionReport(released=obj)

    def _in_gripper(self, p: np.ndarray | tuple[float, float, float]) -> tuple[float, float, float]:
        """World point -> gripper frame (along the fingers, left, up)."""
        st = self._state()
        pos, yaw = gripper_pose(st)
        rel = world_to_robot(st, p) - pos
        c, s = math.cos(yaw), math.sin(yaw)
        return (c * rel[0] + s * rel[1], -s * rel[0] + c * rel[1], rel[2])

    def _handles(self) -> list[tuple[str, str]]:
        return [(n, r.type.articulation) for n, r in self._state().layout.receptacles.items() if r.type.articulation]

    def _close(self, closedness: float) -> MotionReport:
        st = self._state()
        half_gap = finger_offset(st.arm.gripper) - 0.007
        best_miss: tuple[float, str, tuple[float, float, float]] | None = None
        for rec_name, kind in self._handles():
            rec = st.layout.receptacles[rec_name]
            h = robot_to_world(st, handle_in_robot(st, rec, st.open_fraction(rec_name)))
            gx, gy, gz = self._in_gripper(h)
            if abs(gx) <= FINGER_LENGTH / 2 and abs(gy) <= half_gap and abs(gz) <= 0.08:
                self.coupling = Coupling(rec_name, kind)
                st.arm = st.arm.with_gripper(1.0 - 2 * 0.015 / MAX_OPENING)
                return MotionReport(attached=f"{rec_name}/handle")
        _, gyaw = gripper_pose(st)
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
                    return MotionReport(message=f"the {name} is {2 * width * 100:.0f} cm wide, wider than the open gripper")
                continue
            if finger_offset(closedness) - 0.007 >= width:
                continue  # not closed far enough to touch it
            st.held = name
            st.held_dz = gz
            st.locations[name] = ObjectLocation(None, "held", None)
            st.arm = st.arm.with_gripper(1.0 - (width + 0.0) / (MAX_OPENING / 2))
            st.placement.carry_held()
            return MotionReport(attached=name)
        st.arm = st.arm.with_gripper(closedness)
        if best_miss is None:
            return MotionReport(message="the gripper closed on nothing")
        _, name, (gx, gy, gz) = best_miss
        return MotionReport(message=f"the gripper closed on nothing: the {name} is {describe_offset(gx, gy, gz)} the fingers")

    def _drop(self, obj: str) -> None:
        """The released object falls onto the highest surface below it (or the floor)."""
        st = self._state()
        info = st.layout.objects[obj]
        x, y, z, yaw = st.object_poses[obj]
        bottom = z - info.cls.size[2] / 2
        best: tuple[float, Receptacle] | None = None
        for rec in st.layout.receptacles.values():
            lx, ly = rec.to_local(x, y)
            x0, y0, x1, y1 = rec.placement_area()
            slide = st.joints.slide_offset(rec)
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
            st.placement.set_object(obj, (x, y, info.cls.size[2] / 2, yaw), ObjectLocation(None, "floor", room))
        else:
            rest, rec = best
            st.placement.set_object(obj, (x, y, rest + info.cls.size[2] / 2, yaw),
                                    ObjectLocation(rec.name, rec.type.relation, rec.room))


def describe_offset(gx: float, gy: float, gz: float) -> str:
    """Plain words for where a point is relative to the fingers: "12 cm left of and 3 cm below"."""
    parts = []
    for value, pos, neg in ((gy, "left of", "right of"), (gx, "beyond", "short of"), (gz, "above", "below")):
        if abs(value) >= 0.01:
            parts.append(f"{abs(value) * 100:.0f} cm {pos if value > 0 else neg}")
    if not parts:
        return "right between"
    return " and ".join(parts)
