"""Where objects rest in the embedded home: free spots on and in receptacles, the floor, the gripper.

Spots are in a receptacle's frame (a drawer's frame moves out with it); a spot is free when the object
fits there without touching another one and, on open furniture, when the arm can reach it from some
free place for the base.
"""

from __future__ import annotations

import math
import random

from homiebot.worlds.home.approach import Approach
from homiebot.worlds.home.catalog import GRIPPER_OFFSET, ROBOT_RADIUS
from homiebot.worlds.home.facts import ARM_REACH, HomeFacts, ObjectLocation
from homiebot.worlds.home.joints import Joints
from homiebot.worlds.home.layout import ObjectInfo, Receptacle
from homiebot.worlds.home.queries import HomeQueries
from homiebot.worlds.home.robot import ArmPose, arm_fk


class Placement:
    """Finds free resting spots and puts objects there (or keeps the held one in the gripper)."""

    def __init__(self, home: HomeFacts) -> None:
        self._home = home
        self._joints = Joints(home)
        self._queries = HomeQueries(home)
        self._approach = Approach(home)

    def set_object(self, name: str, pose: tuple[float, float, float, float], loc: ObjectLocation) -> None:
        """Set an object's pose (x, y, z, yaw) and location."""
        self._home.object_poses[name] = pose
        self._home.locations[name] = loc

    def carry_held(self) -> None:
        """Move the held object (if any) to where the gripper is now."""
        h = self._home
        if h.held is None:
            return
        c, s = math.cos(h.robot.yaw), math.sin(h.robot.yaw)
        if h.arm == ArmPose.carry():
            (gx, gy, gz), yaw = GRIPPER_OFFSET, 0.0
        else:
            fk = arm_fk(h.arm)
            (gx, gy, gz), yaw = fk.gripper, fk.yaw
        h.object_poses[h.held] = (h.robot.x + c * gx - s * gy, h.robot.y + s * gx + c * gy, gz + h.held_dz, h.robot.yaw + yaw)

    def local_spot_if_free(self, rec: Receptacle, info: ObjectInfo, spot: tuple[float, float]) -> tuple[float, float] | None:
        """``spot`` (receptacle frame) when the object may rest there, else None."""
        if not rec.type.fits(info.cls):
            return None
        x0, y0, x1, y1 = rec.placement_area()
        r = info.radius
        lx, ly = spot
        if not (x0 + r <= lx <= x1 - r and y0 + r <= ly <= y1 - r):
            return None
        for other in self._queries.objects_at(rec.name):
            ox, oy = self.local_of(rec, other)
            if math.hypot(ox - lx, oy - ly) < r + self._home.layout.objects[other].radius + 0.02:
                return None
        if not rec.type.articulated and not self.reachable(rec, rec.to_world(lx, ly)):
            return None
        return spot

    def reachable(self, rec: Receptacle, point: tuple[float, float]) -> bool:
        """True if the base can stand somewhere from which the arm reaches ``point`` on ``rec``."""
        nav = self._home.nav
        assert nav is not None
        limit = ROBOT_RADIUS + ARM_REACH - 0.05
        poses = self._approach.poses_facing(rec, point)
        return any(nav.is_free(p.x, p.y) and math.dist((p.x, p.y), point) <= limit for p in poses)

    def free_local_spot(self, rec: Receptacle, info: ObjectInfo, rng: random.Random, tidy: bool = False,
                        reach_from: tuple[float, float] | None = None) -> tuple[float, float] | None:
        """A free resting spot (receptacle frame): random tries, else the outermost free grid spot.
        ``tidy`` skips the random tries, as a robot putting things down neatly would; ``reach_from``
        puts the spots an arm reaches from that point first."""
        if not rec.type.fits(info.cls):
            return None
        x0, y0, x1, y1 = rec.placement_area()
        r = info.radius
        if x1 - x0 < 2 * r or y1 - y0 < 2 * r:
            return None
        if not tidy:
            for _ in range(60):
                spot = (rng.uniform(x0 + r, x1 - r), rng.uniform(y0 + r, y1 - r))
                if self.local_spot_if_free(rec, info, spot) is not None:
                    return spot
        # a grid search, outermost spots first: packs objects along the edges and leaves the middle free
        step = 0.02
        xs = [x0 + r + i * step for i in range(int((x1 - x0 - 2 * r) / step) + 1)]
        ys = [y0 + r + j * step for j in range(int((y1 - y0 - 2 * r) / step) + 1)]
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        grid = sorted(((x, y) for x in xs for y in ys), key=lambda p: (-max(abs(p[0] - cx), abs(p[1] - cy)), rng.random()))
        if reach_from is not None:  # spots the arm reaches from where the base stands come first
            limit = ROBOT_RADIUS + ARM_REACH - 0.1
            offset = self._joints.slide_offset(rec)
            grid.sort(key=lambda p: math.dist(rec.to_world(p[0] + offset, p[1]), reach_from) > limit)
        return next((p for p in grid if self.local_spot_if_free(rec, info, p) is not None), None)

    def local_of(self, rec: Receptacle, obj: str) -> tuple[float, float]:
        """Where an object on/in ``rec`` rests, in the receptacle's frame (a drawer's slide taken out)."""
        x, y, _, _ = self._home.object_poses[obj]
        lx, ly = rec.to_local(x, y)
        return (lx - self._joints.slide_offset(rec), ly)

    def put_at(self, obj: str, rec: Receptacle, spot: tuple[float, float]) -> None:
        """Rest an object on/in ``rec`` at ``spot`` (receptacle frame)."""
        info = self._home.layout.objects[obj]
        lx = spot[0] + self._joints.slide_offset(rec)
        wx, wy = rec.to_world(lx, spot[1])
        z = rec.rest_height() + info.cls.size[2] / 2
        self.set_object(obj, (wx, wy, z, rec.yaw), ObjectLocation(rec.name, rec.type.relation, rec.room))

    def floor_clear(self, obj: str, x: float, y: float, r: float) -> bool:
        """True when no other object on the floor lies within ``r`` (plus its own radius) of (x, y)."""
        h = self._home
        for other, loc in h.locations.items():
            if other != obj and loc.relation == "floor":
                ox, oy, _, _ = h.object_poses[other]
                if math.hypot(ox - x, oy - y) < r + h.layout.objects[other].radius + 0.02:
                    return False
        return True
