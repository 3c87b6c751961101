"""Where the robot base stops to use something in the embedded home: the candidate goal poses of Go to.

A receptacle is approached at the manipulation standoff, facing it (doors and drawers only from their
front), an object from where its receptacle is approached nearest to it, a room in its free middle and
the person beside them.
"""

from __future__ import annotations

import math

from homiebot.worlds.home.catalog import ROBOT_RADIUS
from homiebot.worlds.home.facts import MANIPULATION_STANDOFF, PERSON_STOP, HomeFacts
from homiebot.worlds.home.joints import Joints
from homiebot.worlds.home.layout import Receptacle
from homiebot.worlds.home.navigation import Pose2D
from homiebot.worlds.home.person_state import PERSON_RADIUS


def spread(half: float, step: float = 0.3) -> list[float]:
    """Offsets along an edge of half-length ``half``: the middle first, then outwards every ``step``."""
    out = [0.0]
    k = 1
    while k * step <= half - 0.1:
        out += [k * step, -k * step]
        k += 1
    return out


def closest_on_rect(rec: Receptacle, wx: float, wy: float) -> tuple[float, float]:
    """The point of a receptacle's footprint nearest to the world point (wx, wy)."""
    lx, ly = rec.to_local(wx, wy)
    hx, hy, _ = rec.half
    return rec.to_world(min(max(lx, -hx), hx), min(max(ly, -hy), hy))


class Approach:
    """Goal poses for the robot base around the home's things."""

    def __init__(self, home: HomeFacts) -> None:
        self._home = home
        self._joints = Joints(home)

    def anchor(self, target: str) -> tuple[float, float]:
        """The plan-view point a target stands for: its centre (a room's middle, the person where they are)."""
        h = self._home
        if h.person is not None and target == h.person.name:
            return (h.person.x, h.person.y)
        if target in h.layout.receptacles:
            rec = h.layout.receptacles[target]
            return (rec.x, rec.y)
        if target in h.layout.rooms:
            return h.layout.rooms[target].center
        x, y, _, _ = h.object_poses[target]
        return (x, y)

    def goal_poses(self, target: str) -> list[Pose2D]:
        """Candidate stopping poses for Go to, best first; the planner takes the cheapest reachable."""
        h = self._home
        assert h.nav is not None
        if target in h.layout.rooms:  # the free middle, where the person does not stand
            room = h.layout.rooms[target]
            p = h.person
            near = [] if p is None else [(p.x, p.y, PERSON_STOP)]  # as robot_plan keeps
            return h.nav.free_poses_in_room(room, avoid=near)
        if target in h.layout.receptacles:
            return self.poses_facing(h.layout.receptacles[target], None)
        if h.person is not None and target == h.person.name:  # beside them, from the robot's side first
            p, r = h.person, h.robot
            around = h.nav.poses_around_point(p.x, p.y, MANIPULATION_STANDOFF + ROBOT_RADIUS + PERSON_RADIUS, (p.x, p.y))
            return sorted(around, key=lambda g: math.dist((g.x, g.y), (r.x, r.y)))
        loc = h.locations[target]
        x, y, _, _ = h.object_poses[target]
        if loc.receptacle is not None:
            return self.poses_facing(h.layout.receptacles[loc.receptacle], (x, y))
        return h.nav.poses_around_point(x, y, MANIPULATION_STANDOFF + ROBOT_RADIUS, (x, y))

    def poses_facing(self, rec: Receptacle, point: tuple[float, float] | None) -> list[Pose2D]:
        """Poses around a receptacle at the manipulation standoff, facing it (or ``point`` on it); the
        front first, or the nearest to ``point`` first when one is given."""
        assert self._home.nav is not None
        hx, hy, _ = rec.half
        d = MANIPULATION_STANDOFF + ROBOT_RADIUS
        candidates: list[tuple[float, float]] = []
        # front first (doors and drawers are only usable from there), then along the sides and back
        for ly in spread(hy):
            if rec.type.articulation == "hinge" and ly + ROBOT_RADIUS > hy - 0.1:
                continue  # standing there would block the door from swinging open
            candidates.append(rec.to_world(hx + d + self._joints.slide_offset(rec), ly))
        if rec.type.articulation is None:
            for lx in spread(hx):
                candidates.append(rec.to_world(lx, hy + d))
                candidates.append(rec.to_world(lx, -hy - d))
            for ly in spread(hy):
                candidates.append(rec.to_world(-hx - d, ly))
        look = point or (rec.x, rec.y)
        poses = []
        for cx, cy in candidates:
            aim = look if point else closest_on_rect(rec, cx, cy)
            poses.append(Pose2D(cx, cy, math.atan2(aim[1] - cy, aim[0] - cx)))
        if point is not None:
            poses.sort(key=lambda p: math.hypot(p.x - point[0], p.y - point[1]))
        return poses
