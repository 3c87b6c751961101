"""Static geometry of a home resolved from a SceneSpec: rooms, walls with doorways, furniture frames.

The layout never changes during an episode; what moves (objects, doors, the robot) lives in
``HomeState``. Geometric validation (furniture inside its room, no overlaps, rooms connected)
happens here and raises ``SceneError`` with the offending names.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from homiebot.worlds.home.catalog import (
    COLORS,
    DOOR_WIDTH,
    DRAWER_TRAVEL,
    OBJECT_CLASSES,
    RECEPTACLE_TYPES,
    RGBA,
    ROOM_TYPES,
    WALL_THICKNESS,
    ObjectClass,
    ReceptacleType,
    RoomType,
)
from homiebot.worlds.home.person_script import PersonSpec
from homiebot.worlds.home.scene import SceneError, SceneSpec

PLACEMENT_MARGIN = 0.05  # keep objects this far from the edge of a surface
CONTAINER_WALL = 0.04


@dataclass(frozen=True)
class Room:
    name: str
    type: RoomType
    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def center(self) -> tuple[float, float]:
        return (0.5 * (self.x0 + self.x1), 0.5 * (self.y0 + self.y1))

    def contains(self, x: float, y: float, margin: float = 0.0) -> bool:
        return self.x0 + margin <= x <= self.x1 - margin and self.y0 + margin <= y <= self.y1 - margin

    def distance(self, x: float, y: float) -> float:
        """Distance from a point to this room's rectangle (0 inside)."""
        dx = max(self.x0 - x, 0.0, x - self.x1)
        dy = max(self.y0 - y, 0.0, y - self.y1)
        return math.hypot(dx, dy)


@dataclass(frozen=True)
class Box2D:
    """An axis-aligned wall segment (x0, y0)-(x1, y1) in plan view."""

    x0: float
    y0: float
    x1: float
    y1: float


@dataclass(frozen=True)
class Receptacle:
    """A piece of furniture placed in the world. Local frame: +x out of the front, z up."""

    name: str
    type: ReceptacleType
    room: str
    x: float
    y: float
    yaw: float  # radians
    color_name: str

    @property
    def color(self) -> RGBA:
        return COLORS[self.color_name]

    @property
    def half(self) -> tuple[float, float, float]:
        d, w, h = self.type.size
        return (0.5 * d, 0.5 * w, h)

    def to_world(self, lx: float, ly: float) -> tuple[float, float]:
        c, s = math.cos(self.yaw), math.sin(self.yaw)
        return (self.x + c * lx - s * ly, self.y + s * lx + c * ly)

    def to_local(self, wx: float, wy: float) -> tuple[float, float]:
        c, s = math.cos(self.yaw), math.sin(self.yaw)
        dx, dy = wx - self.x, wy - self.y
        return (c * dx + s * dy, -s * dx + c * dy)

    def footprint_distance(self, wx: float, wy: float) -> float:
        """Distance from a world point to this receptacle's footprint rectangle (0 inside)."""
        lx, ly = self.to_local(wx, wy)
        hx, hy, _ = self.half
        return math.hypot(max(abs(lx) - hx, 0.0), max(abs(ly) - hy, 0.0))

    def corners(self) -> list[tuple[float, float]]:
        hx, hy, _ = self.half
        return [self.to_world(sx * hx, sy * hy) for sx, sy in ((1, 1), (-1, 1), (-1, -1), (1, -1))]

    def placement_area(self) -> tuple[float, float, float, float]:
        """Local rectangle (x0, y0, x1, y1) where objects may rest, before any drawer slide."""
        hx, hy, _ = self.half
        inset = PLACEMENT_MARGIN + (CONTAINER_WALL if self.type.relation == "in" else 0.0)
        side = inset + self.type.side_inset
        return (-hx + inset + self.type.back_inset, -hy + side, hx - inset, hy - side)

    def rest_height(self) -> float:
        return self.type.interior_z

    def slide_offset(self, is_open: bool) -> float:
        """How far the contents are moved out along +x (drawers slide out when open)."""
        return DRAWER_TRAVEL if (self.type.articulation == "slide" and is_open) else 0.0

    def front_point(self, standoff: float) -> tuple[float, float]:
        """A world point in front of the receptacle, ``standoff`` metres from its front face."""
        hx, _, _ = self.half
        return self.to_world(hx + standoff, 0.0)

    def open_extent(self) -> list[tuple[float, float, float, float]]:
        """Local rectangles swept by the door or drawer when open (for occupancy)."""
        hx, hy, _ = self.half
        if self.type.articulation == "slide":
            return [(hx, -hy, hx + DRAWER_TRAVEL, hy)]
        if self.type.articulation == "hinge":
            # door hinged on the +y edge swings out to stand perpendicular to the front
            return [(hx, hy - 0.04, hx + 2 * hy, hy + 0.02)]
        return []


@dataclass(frozen=True)
class ObjectInfo:
    """The static description of an object: what it is and how it looks."""

    name: str
    cls: ObjectClass
    color_name: str

    @property
    def color(self) -> RGBA:
        return COLORS[self.color_name]

    @property
    def radius(self) -> float:
        return self.cls.radius


@dataclass
class Layout:
    """Everything about a home that does not move."""

    spec: SceneSpec
    rooms: dict[str, Room]
    walls: list[Box2D]
    doors: list[tuple[str, str, tuple[float, float]]]  # (room a, room b, doorway centre)
    receptacles: dict[str, Receptacle]
    objects: dict[str, ObjectInfo]
    bounds: tuple[float, float, float, float] = field(default=(0, 0, 0, 0))
    person: PersonSpec | None = None  # drawn as a figure; where they are is state (HomeState.person)

    def room_at(self, x: float, y: float) -> str | None:
        for room in self.rooms.values():
            if room.contains(x, y):
                return room.name
        return None


def _shared_edge(a: Room, b: Room) -> tuple[str, float, float, float] | None:
    """If two rooms share a wall, return (axis, coordinate, start, end) of the shared segment."""
    eps = 1e-6
    for axis, a_hi, b_lo, a_lo, b_hi in (("x", a.x1, b.x0, a.x0, b.x1), ("y", a.y1, b.y0, a.y0, b.y1)):
        for coord_a, coord_b in ((a_hi, b_lo), (a_lo, b_hi)):
            if abs(coord_a - coord_b) < eps:
                if axis == "x":
                    lo, hi = max(a.y0, b.y0), min(a.y1, b.y1)
                else:
                    lo, hi = max(a.x0, b.x0), min(a.x1, b.x1)
                if hi - lo > eps:
                    return (axis, coord_a, lo, hi)
    return None


def _walls_and_doors(rooms: dict[str, Room], pairs: list[tuple[str, str]] | None):
    """Wall segments along every room edge, with a doorway cut where connected rooms meet."""
    doors: list[tuple[str, str, tuple[float, float]]] = []
    cuts: list[tuple[str, float, float, float]] = []  # axis, coord, gap start, gap end
    names = list(rooms)
    wanted = {frozenset(p) for p in pairs} if pairs is not None else None
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            edge = _shared_edge(rooms[a], rooms[b])
            explicit = wanted is not None and frozenset((a, b)) in wanted
            if edge is None:
                if explicit:
                    raise SceneError(f"door between '{a}' and '{b}': these rooms do not share a wall")
                continue
            if wanted is not None and not explicit:
                continue
            axis, coord, lo, hi = edge
            if hi - lo < DOOR_WIDTH + 0.3:
                if explicit:
                    raise SceneError(f"door between '{a}' and '{b}': their shared wall is too short ({hi - lo:.2f} m)")
                continue
            mid = 0.5 * (lo + hi)
            cuts.append((axis, coord, mid - DOOR_WIDTH / 2, mid + DOOR_WIDTH / 2))
            doors.append((a, b, (coord, mid) if axis == "x" else (mid, coord)))
    # Every room edge becomes wall; shared edges appear twice, which is harmless for occupancy
    # and rendering, but we deduplicate to keep the model small.
    segments: set[tuple[str, float, float, float]] = set()
    for r in rooms.values():
        segments.update({("x", r.x0, r.y0, r.y1), ("x", r.x1, r.y0, r.y1), ("y", r.y0, r.x0, r.x1), ("y", r.y1, r.x0, r.x1)})
    walls: list[Box2D] = []
    half = WALL_THICKNESS / 2
    for axis, coord, lo, hi in sorted(segments):
        pieces = [(lo, hi)]
        for c_axis, c_coord, g0, g1 in cuts:
            if c_axis != axis or abs(c_coord - coord) > 1e-6:
                continue
            pieces = [p for s, e in pieces for p in ((s, min(e, g0)), (max(s, g1), e)) if p[1] - p[0] > 1e-6]
        for s, e in pieces:
            if axis == "x":
                walls.append(Box2D(coord - half, s - half, coord + half, e + half))
            else:
                walls.append(Box2D(s - half, coord - half, e + half, coord + half))
    return _dedupe(walls), doors


def _dedupe(walls: list[Box2D]) -> list[Box2D]:
    out: list[Box2D] = []
    for w in walls:
        key = tuple(round(v, 6) for v in (w.x0, w.y0, w.x1, w.y1))
        if all(tuple(round(v, 6) for v in (o.x0, o.y0, o.x1, o.y1)) != key for o in out):
            out.append(w)
    return out


def _rects_overlap(a: Receptacle, b: Receptacle) -> bool:
    """Separating-axis test for two oriented footprints."""
    pa, pb = np.array(a.corners()), np.array(b.corners())
    for poly in (pa, pb):
        for i in range(4):
            edge = poly[(i + 1) % 4] - poly[i]
            axis = np.array([-edge[1], edge[0]])
            ra, rb = pa @ axis, pb @ axis
            if ra.max() <= rb.min() + 1e-6 or rb.max() <= ra.min() + 1e-6:
                return False
    return True


def _check_connected(rooms: dict[str, Room], doors: list[tuple[str, str, tuple[float, float]]]) -> None:
    if not rooms:
        raise SceneError("a scene needs at least one room")
    graph: dict[str, set[str]] = {name: set() for name in rooms}
    for a, b, _ in doors:
        graph[a].add(b)
        graph[b].add(a)
    start = next(iter(rooms))
    seen, todo = {start}, [start]
    while todo:
        for nxt in graph[todo.pop()] - seen:
            seen.add(nxt)
            todo.append(nxt)
    missing = sorted(set(rooms) - seen)
    if missing:
        raise SceneError(f"rooms {missing} cannot be reached from '{start}': they share no doorway with the rest of the home")


def build_layout(spec: SceneSpec) -> Layout:
    """Resolve a validated SceneSpec into world geometry, checking that it is physically sensible."""
    rooms = {
        r.name: Room(r.name, ROOM_TYPES[r.type], r.origin[0], r.origin[1], r.origin[0] + r.size[0], r.origin[1] + r.size[1])
        for r in spec.rooms
    }
    names = list(rooms)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            ra, rb = rooms[a], rooms[b]
            if min(ra.x1, rb.x1) - max(ra.x0, rb.x0) > 1e-6 and min(ra.y1, rb.y1) - max(ra.y0, rb.y0) > 1e-6:
                raise SceneError(f"rooms '{a}' and '{b}' overlap")
    walls, doors = _walls_and_doors(rooms, spec.doors)
    _check_connected(rooms, doors)

    receptacles: dict[str, Receptacle] = {}
    for r in spec.receptacles:
        rtype = RECEPTACLE_TYPES[r.type]
        rec = Receptacle(r.name, rtype, r.room, r.position[0], r.position[1], math.radians(r.yaw), r.color or rtype.colors[0])
        room = rooms[r.room]
        margin = WALL_THICKNESS / 2 - 1e-6
        for cx, cy in rec.corners():
            if not room.contains(cx, cy, margin):
                raise SceneError(f"receptacle '{r.name}' sticks out of room '{r.room}' "
                                 f"(corner at ({cx:.2f}, {cy:.2f}); room spans x {room.x0}..{room.x1}, y {room.y0}..{room.y1})")
        for other in receptacles.values():
            if _rects_overlap(rec, other):
                raise SceneError(f"receptacles '{r.name}' and '{other.name}' overlap")
        receptacles[r.name] = rec

    objects = {o.name: ObjectInfo(o.name, OBJECT_CLASSES[o.object_class], o.color) for o in spec.objects}
    xs = [v for r in rooms.values() for v in (r.x0, r.x1)]
    ys = [v for r in rooms.values() for v in (r.y0, r.y1)]
    pad = WALL_THICKNESS
    return Layout(spec, rooms, walls, doors, receptacles, objects, (min(xs) - pad, min(ys) - pad, max(xs) + pad, max(ys) + pad),
                  spec.person)
