"""The embedded home robot's base: velocity commands integrated against the occupancy grid, and
navigation along planned paths.

A velocity ``(v, omega)`` is integrated in small sub-steps; the round footprint (``ROBOT_RADIUS``) is
checked against the occupancy grid and motion stops at the first new contact (a collision is
reported). The person's body stops the base as furniture does, and ``navigate_to`` plans around them.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from homiebot.core.robot import MotionReport
from homiebot.worlds.home.catalog import ROBOT_RADIUS
from homiebot.worlds.home.facts import RobotPose
from homiebot.worlds.home.navigation import Pose2D
from homiebot.worlds.home.person_state import PERSON_RADIUS
from homiebot.worlds.home.state import HomeState

SUB_LINEAR = 0.02  # m per integration sub-step of the base
SUB_ANGULAR = math.radians(3.0)  # rad per integration sub-step of the base


class BaseDrive:
    """Moves the robot base, stopping it at furniture, walls and the person."""

    def __init__(self, state: Callable[[], HomeState]) -> None:
        self._state = state  # read through on every call: the world may replace its state on reset

    def contacts(self, x: float, y: float) -> frozenset[tuple[int, int]]:
        """Occupied grid cells whose centres lie under the round footprint at (x, y)."""
        nav = self._state().nav
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

    def into_person(self, x: float, y: float, nx: float, ny: float) -> bool:
        """True when moving the base centre from (x, y) to (nx, ny) presses it further into the person's body."""
        p = self._state().person
        if p is None:
            return False
        touch = ROBOT_RADIUS + PERSON_RADIUS
        after = math.hypot(nx - p.x, ny - p.y)
        return after < touch and after < math.hypot(x - p.x, y - p.y)

    def drive(self, v: float, omega: float, duration: float) -> MotionReport:
        """Hold a body velocity (m/s forward, rad/s counter-clockwise, within the limits) for ``duration``
        seconds; stops at the first new contact."""
        n = max(1, int(math.ceil(max(abs(v) * duration / SUB_LINEAR, abs(omega) * duration / SUB_ANGULAR))))
        h = duration / n
        st = self._state()
        start_contacts = self.contacts(st.robot.x, st.robot.y)
        report = MotionReport(duration=duration)
        for _ in range(n):
            x, y, yaw = st.robot.x, st.robot.y, st.robot.yaw
            mid = yaw + 0.5 * omega * h
            nx, ny = x + v * h * math.cos(mid), y + v * h * math.sin(mid)
            if v != 0.0 and (not self.contacts(nx, ny) <= start_contacts or self.into_person(x, y, nx, ny)):
                report.collision = True
                report.message = "the base bumped into an obstacle and stopped"
                break
            st.robot.x, st.robot.y, st.robot.yaw = nx, ny, math.atan2(math.sin(yaw + omega * h), math.cos(yaw + omega * h))
            report.distance += abs(v) * h
        st.path_length += report.distance
        st.placement.carry_held()
        return report

    def navigate_to(self, x: float, y: float, yaw: float | None = None, tolerance: float = 0.0) -> MotionReport:
        """Plan over the true occupancy grid, around the person, and move along the path kinematically.
        Collision-free by construction."""
        st = self._state()
        assert st.nav is not None
        r = st.robot
        if yaw is None and tolerance <= 0.0:
            yaw = math.atan2(y - r.y, x - r.x)  # the heading of travel
        goals = [Pose2D(x, y, math.atan2(y - r.y, x - r.x) if yaw is None else yaw)]
        if tolerance > 0.0:
            goals = st.nav.free_poses_near(x, y, tolerance, yaw)
        path = st.robot_plan(goals)
        if path is None:
            return MotionReport(message=f"no collision-free path to ({x:.2f}, {y:.2f})")
        end = path.poses[-1]
        st.robot = RobotPose(end.x, end.y, end.yaw)
        st.path_length += path.length
        st.placement.carry_held()
        return MotionReport(distance=path.length)
