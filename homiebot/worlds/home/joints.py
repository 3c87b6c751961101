"""Doors and drawers of the embedded home: their continuous opening and what moves with it.

Each articulated receptacle has an opening fraction ``joint_open`` (0 closed .. 1 fully open);
``is_open`` follows it (``fraction >= OPEN_THRESHOLD``), and so do a drawer's contents and the
navigation occupancy.
"""

from __future__ import annotations

from homiebot.worlds.home.catalog import DRAWER_TRAVEL, ROBOT_RADIUS
from homiebot.worlds.home.facts import OPEN_THRESHOLD, HomeFacts, Outcome
from homiebot.worlds.home.layout import Receptacle
from homiebot.worlds.home.queries import HomeQueries


class Joints:
    """Reads and moves the home's door and drawer joints."""

    def __init__(self, home: HomeFacts) -> None:
        self._home = home

    def open_fraction(self, receptacle: str) -> float:
        """How far a door or drawer is open, 0 (closed) .. 1 (fully open)."""
        h = self._home
        return h.joint_open.get(receptacle, 1.0 if h.is_open.get(receptacle, False) else 0.0)

    def slide_offset(self, rec: Receptacle) -> float:
        """How far a drawer's contents are currently moved out along its +x (0 for other receptacles)."""
        if rec.type.articulation != "slide":
            return 0.0
        return DRAWER_TRAVEL * self.open_fraction(rec.name)

    def set_joint_open(self, receptacle: str, fraction: float) -> None:
        """Move a door or drawer to an opening fraction; drawer contents slide with it, ``is_open`` and
        the navigation occupancy follow."""
        h = self._home
        rec = h.layout.receptacles[receptacle]
        fraction = min(max(float(fraction), 0.0), 1.0)
        before = self.slide_offset(rec)
        h.joint_open[receptacle] = fraction
        shift = self.slide_offset(rec) - before
        if shift:
            for obj in HomeQueries(h).objects_at(receptacle):
                x, y, z, yaw = h.object_poses[obj]
                lx, ly = rec.to_local(x, y)
                h.object_poses[obj] = (*rec.to_world(lx + shift, ly), z, yaw)
        h.is_open[receptacle] = fraction >= OPEN_THRESHOLD
        assert h.nav is not None
        h.nav.set_open_state(h.is_open)

    def door_swing_clear(self, rec: Receptacle) -> bool:
        """True when the robot base stands clear of the area a door sweeps when it opens."""
        robot = self._home.robot
        for x0, y0, x1, y1 in rec.open_extent():
            lx, ly = rec.to_local(robot.x, robot.y)
            if x0 - ROBOT_RADIUS < lx < x1 + ROBOT_RADIUS and y0 - ROBOT_RADIUS < ly < y1 + ROBOT_RADIUS:
                return False
        return True

    def articulate(self, receptacle: str, open_: bool) -> Outcome:
        """Open or close a door or drawer from where the base stands; contents of a drawer move with it."""
        h = self._home
        rec = h.layout.receptacles[receptacle]
        if not HomeQueries(h).within_reach(receptacle):
            return Outcome(False, f"the {receptacle} is out of the arm's reach")
        if open_ and rec.type.articulation == "hinge" and not self.door_swing_clear(rec):
            return Outcome(False, f"the robot stands in the way of the {receptacle}'s door")
        target = 1.0 if open_ else 0.0
        if h.is_open[receptacle] == open_ and h.joint_open.get(receptacle, target) == target:
            return Outcome(True)
        self.set_joint_open(receptacle, target)
        return Outcome(True)
