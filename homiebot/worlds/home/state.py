"""The mutable truth of the embedded home: where objects are, which doors are open, the robot.

``HomeState`` is privileged simulator state. It answers the error detector's questions
(``homiebot.core.errors.WorldBelief``) and offers the kinematic primitives privileged skills use:
navigate, grasp, place, drop and articulate. Each primitive checks geometry (reach, free space,
container state) and returns an ``Outcome`` saying why it failed.

Doors and drawers have a continuous opening fraction ``joint_open`` (0 closed .. 1 fully open) that
arm-driven control moves; ``is_open`` is derived from it (``fraction >= OPEN_THRESHOLD``) and is what
the detector, goals and navigation occupancy read. ``arm`` and ``head_tilt`` are the robot's arm
joints and head pitch offset, written by ``homiebot.worlds.home.control`` and drawn by the renderer.

The person's body is an obstacle for the robot's motion (``robot_plan``): routes go around them where
there is room, Go to stops clear of them, and where they stand in the only way (a doorway, a corridor) a
navigation may wait a few seconds of their time for them to move on before it reports the way blocked.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from homiebot.core.contracts import PERSON_KIND
from homiebot.core.errors import Entity
from homiebot.worlds.home.catalog import DRAWER_TRAVEL, GRIPPER_OFFSET, ROBOT_RADIUS
from homiebot.worlds.home.layout import Layout, ObjectInfo, Receptacle, build_layout
from homiebot.worlds.home.navigation import CLEARANCE, Disc, NavigationMap, Path, Pose2D
from homiebot.worlds.home.person import (
    CARRIED,
    PERSON_RADIUS,
    Leg,
    PersonState,
    advance,
    carry,
    plan_script,
    prelude_of,
    round_start,
    start_pose,
)
from homiebot.worlds.home.robot import ArmPose, arm_fk
from homiebot.worlds.home.scene import SceneError, SceneSpec

ARM_REACH = 0.95  # horizontal reach from the base edge when standing still
MANIPULATION_STANDOFF = 0.25  # gap between base and furniture after Go to
GIVE_REACH = ARM_REACH + 0.35  # a person reaches out for what they are handed
FOLLOW_GAP = 0.6  # Follow keeps this gap between the base's edge and the person
OPEN_THRESHOLD = 0.5  # a door or drawer counts as open from half its travel (45 degrees, 17.5 cm)
PERSON_GAP = 0.1  # the base's edge stops at least this far from the person's body (closer is the detector's D2)
PERSON_WAIT_SECONDS = 5.0  # how long a navigation waits, at most, for the person to clear the only way
PERSON_WAIT_STEP = 0.5  # seconds of the person's time between two looks at whether the way is clear
PERSON_STOP = ROBOT_RADIUS + PERSON_RADIUS + PERSON_GAP  # nearest the base centre comes to the person's centre


def _spread(half: float, step: float = 0.3) -> list[float]:
    """Offsets along an edge of half-length ``half``: the middle first, then outwards every ``step``."""
    out = [0.0]
    k = 1
    while k * step <= half - 0.1:
        out += [k * step, -k * step]
        k += 1
    return out


@dataclass(frozen=True)
class Outcome:
    """Result of a kinematic primitive: ``ok`` and, when not ok, the reason in plain words."""

    ok: bool
    reason: str = ""
    path_length: float = 0.0


EntityView = Entity  # what ``lookup`` returns: the detector's view of a named thing


@dataclass(frozen=True)
class ObjectLocation:
    receptacle: str | None  # None when on the floor or held
    relation: str  # "on" | "in" | "floor" | "held" | "person" (in the person's hands)
    room: str | None


@dataclass
class RobotPose:
    x: float
    y: float
    yaw: float  # radians


@dataclass
class HomeState:
    layout: Layout
    robot: RobotPose
    object_poses: dict[str, tuple[float, float, float, float]] = field(default_factory=dict)
    locations: dict[str, ObjectLocation] = field(default_factory=dict)
    is_open: dict[str, bool] = field(default_factory=dict)
    held: str | None = None
    path_length: float = 0.0
    nav: NavigationMap | None = None
    joint_open: dict[str, float] = field(default_factory=dict)
    arm: ArmPose = field(default_factory=ArmPose.carry)
    head_tilt: float = 0.0
    held_dz: float = 0.0  # height of the held object's centre above the gripper centre
    person: PersonState | None = None  # the scene's person, when it has one
    person_legs: list[Leg] = field(default_factory=list)  # their timed plan (fixed when the home is built)
    person_prelude: float = 0.0  # seconds of round-0 steps (before the task) at the start of the plan

    # ---- construction -------------------------------------------------------------------
    @classmethod
    def from_spec(cls, spec: SceneSpec, nav_resolution: float = 0.1) -> HomeState:
        """Build the state of a validated scene; raise SceneError if objects cannot be placed."""
        layout = build_layout(spec)
        state = cls(layout=layout, robot=RobotPose(spec.robot.position[0], spec.robot.position[1], math.radians(spec.robot.yaw)))
        state.is_open = {r.name: r.open for r in spec.receptacles if layout.receptacles[r.name].type.articulated}
        state.joint_open = {name: 1.0 if opened else 0.0 for name, opened in state.is_open.items()}
        state.nav = NavigationMap(layout, resolution=nav_resolution)
        state.nav.set_open_state(state.is_open)
        rng = random.Random(f"{spec.name}:{spec.seed}")
        for obj in spec.objects:
            info = layout.objects[obj.name]
            if obj.floor is not None:
                room = layout.room_at(*obj.floor)
                if room is None:
                    raise SceneError(f"object '{obj.name}' lies on the floor at {obj.floor}, outside every room")
                for rec in layout.receptacles.values():
                    if rec.footprint_distance(*obj.floor) < info.radius:
                        raise SceneError(f"object '{obj.name}' on the floor at {obj.floor} is under receptacle '{rec.name}'")
                state._set_object(obj.name, (obj.floor[0], obj.floor[1], info.cls.size[2] / 2, 0.0), ObjectLocation(None, "floor", room))
                continue
            assert obj.receptacle is not None  # exactly one of on, in, floor (ObjectSpec._one_placement)
            rec = layout.receptacles[obj.receptacle]
            if not rec.type.fits(info.cls):
                raise SceneError(f"object '{obj.name}' ({info.cls.size[2]:.2f} m tall) does not fit in '{rec.name}'")
            if obj.offset is not None:
                spot = state._local_spot_if_free(rec, info, obj.offset)
                if spot is None:
                    raise SceneError(f"object '{obj.name}': offset {obj.offset} is outside '{rec.name}' or collides with another object")
            else:
                spot = state._free_local_spot(rec, info, rng)
                if spot is None:
                    raise SceneError(f"object '{obj.name}': no free space left on/in '{rec.name}'")
            state._put_at(obj.name, rec, spot)
        if not state.nav.is_floor_free(state.robot.x, state.robot.y, 0.5 * ROBOT_RADIUS):
            raise SceneError(f"the robot's start position {list(spec.robot.position)} is inside furniture or a wall")
        if spec.person is not None:
            state.person = start_pose(spec.person, state)
            state.person_legs = plan_script(spec.person, state, state.person)
            state.person_prelude = prelude_of(state.person_legs, spec.person)
        return state

    # ---- queries (also the detector's WorldBelief interface) ------------------------------
    def names(self) -> list[str]:
        return [*self.layout.rooms, *self.layout.receptacles, *self.layout.objects, *self._person_names()]

    def _person_names(self) -> list[str]:
        return [self.person.name] if self.person is not None else []

    def is_person(self, name: str | None) -> bool:
        return self.person is not None and name == self.person.name

    def lookup(self, name: str) -> EntityView | None:
        if self.is_person(name):
            return EntityView(name, PERSON_KIND)
        if name in self.layout.objects:
            return EntityView(name, "object")
        if name in self.layout.receptacles:
            rec = self.layout.receptacles[name]
            return EntityView(name, "receptacle", rec.type.articulated, self.is_open.get(name), rec.type.relation)
        if name in self.layout.rooms:
            return EntityView(name, "room")
        return None

    def held_object(self) -> str | None:
        return self.held

    def enclosing_container(self, obj: str) -> str | None:
        """The closed-able receptacle an object is inside of, if any."""
        loc = self.locations.get(obj)
        if loc and loc.relation == "in" and loc.receptacle and self.layout.receptacles[loc.receptacle].type.articulated:
            return loc.receptacle
        return None

    def location(self, obj: str) -> ObjectLocation:
        return self.locations[obj]

    def objects_at(self, receptacle: str) -> list[str]:
        return sorted(o for o, loc in self.locations.items() if loc.receptacle == receptacle)

    def room_of(self, name: str) -> str | None:
        if name in self.layout.rooms:
            return name
        if name in self.layout.receptacles:
            return self.layout.receptacles[name].room
        if name == self.held:
            return self.robot_room()
        if self.person is not None and name == self.person.name:
            return self.layout.room_at(self.person.x, self.person.y)
        return self.locations[name].room

    def robot_room(self) -> str | None:
        return self.layout.room_at(self.robot.x, self.robot.y)

    def distance_to(self, name: str) -> float:
        """Gap in metres between the robot base's edge and the named thing (plan view)."""
        rx, ry = self.robot.x, self.robot.y
        if name in self.layout.receptacles:
            centre = self.layout.receptacles[name].footprint_distance(rx, ry)
        elif name in self.layout.rooms:
            return self.layout.rooms[name].distance(rx, ry)
        elif name == self.held:
            return GRIPPER_OFFSET[0] - ROBOT_RADIUS  # in the gripper, just in front of the base
        elif self.person is not None and name == self.person.name:
            return max(0.0, math.hypot(self.person.x - rx, self.person.y - ry) - ROBOT_RADIUS - PERSON_RADIUS)
        else:
            x, y, _, _ = self.object_poses[name]
            centre = math.hypot(x - rx, y - ry)
        return max(0.0, centre - ROBOT_RADIUS)

    # ---- the moving parts as JSON, to mirror this state in another process ----------------------
    def dynamic(self) -> dict:
        """Robot pose, arm, object poses and locations, door states, held object, path length."""
        return {"robot": [self.robot.x, self.robot.y, self.robot.yaw], "held": self.held, "path_length": self.path_length,
                "object_poses": {k: list(v) for k, v in self.object_poses.items()},
                "locations": {k: [v.receptacle, v.relation, v.room] for k, v in self.locations.items()},
                "is_open": dict(self.is_open), "joint_open": dict(self.joint_open),
                "arm": self.arm.as_list(), "head_tilt": self.head_tilt, "held_dz": self.held_dz,
                **({"person": self.person.as_json()} if self.person is not None else {})}

    def apply_dynamic(self, data: dict) -> None:
        """Take over the moving parts published by ``dynamic()`` of another copy of the same scene."""
        self.robot = RobotPose(*data["robot"])
        self.held = data["held"]
        self.path_length = data["path_length"]
        self.object_poses = {k: tuple(v) for k, v in data["object_poses"].items()}
        self.locations = {k: ObjectLocation(*v) for k, v in data["locations"].items()}
        self.is_open = dict(data["is_open"])
        self.joint_open = {k: float(v) for k, v in data.get("joint_open", {k: 1.0 if v else 0.0 for k, v in self.is_open.items()}).items()}
        self.arm = ArmPose(*data["arm"]) if data.get("arm") else ArmPose.carry()
        self.head_tilt = float(data.get("head_tilt", 0.0))
        self.held_dz = float(data.get("held_dz", 0.0))
        if data.get("person") is not None:
            self.person = PersonState.from_json(data["person"])
        assert self.nav is not None
        self.nav.set_open_state(self.is_open)

    # ---- the person ------------------------------------------------------------------------
    def round_time(self, round_index: int) -> float:
        """The person's clock when round ``round_index`` begins (0: the exploration phase, before the task)."""
        return round_start(round_index, self.person_prelude)

    def advance_people(self, until: float) -> None:
        """Play the person's script up to their clock time ``until`` (seconds; see ``person.round_start``)."""
        if self.person is None:
            return
        # seeded by the scene and the leg, so that where a placed object lands never depends on call order
        rng = random.Random(f"{self.layout.spec.name}:{self.layout.spec.seed}:person:{self.person.next_leg}")
        advance(self.person, self.person_legs, until, self, rng)

    def give(self, obj: str, person: str) -> Outcome:
        """Hand the held ``obj`` to the person, who must be within reach and have a free hand."""
        p = self.person
        if p is None or person != p.name:
            return Outcome(False, f"there is nobody called {person} here")
        if self.held != obj:
            return Outcome(False, f"the hand does not hold the {obj}")
        if self.distance_to(person) > GIVE_REACH:
            return Outcome(False, f"the {person} is out of reach ({self.distance_to(person):.1f} m away)")
        if p.held is not None:
            return Outcome(False, f"the {person}'s hands are full (they carry the {p.held})")
        self.held = None
        p.held = obj
        p.yaw = math.atan2(self.robot.y - p.y, self.robot.x - p.x)  # they turned to take it
        p.events.append(f"{p.clock:.0f}s: was given {obj}")
        carry(p, self)
        return Outcome(True)

    def follow(self, person: str, round_index: int) -> Outcome:
        """Walk with the person through round ``round_index`` (until the next round begins) and stop
        ``FOLLOW_GAP`` from them, facing them."""
        assert self.nav is not None
        p = self.person
        if p is None or person != p.name:
            return Outcome(False, f"there is nobody called {person} here")
        self.advance_people(self.round_time(round_index + 1))
        start = Pose2D(self.robot.x, self.robot.y, self.robot.yaw)
        for gap in (FOLLOW_GAP, FOLLOW_GAP + 0.4, FOLLOW_GAP + 0.9):
            radius = ROBOT_RADIUS + PERSON_RADIUS + gap
            goals = sorted(self.nav.poses_around_point(p.x, p.y, radius, (p.x, p.y)),
                           key=lambda g: math.dist((g.x, g.y), (start.x, start.y)))
            path = self.robot_plan(goals)
            if path is not None:
                end = path.poses[-1]
                self.robot = RobotPose(end.x, end.y, end.yaw)
                self.path_length += path.length
                self._carry_held()
                return Outcome(True, path_length=path.length)
        return Outcome(False, f"no free path to keep up with the {person}")

    # ---- the person as an obstacle ----------------------------------------------------------
    def person_discs(self) -> list[Disc]:
        """Where the base centre may not go because of the person (empty without one): their body, the
        base's radius and the planning clearance around where they stand now."""
        p = self.person
        return [] if p is None else [(p.x, p.y, PERSON_RADIUS + ROBOT_RADIUS + CLEARANCE)]

    def robot_plan(self, goals: list[Pose2D]) -> Path | None:
        """The robot's shortest path from where it stands to the first reachable goal, around the person,
        ending ``PERSON_GAP`` or more from their body (the grid alone tells that to a cell)."""
        assert self.nav is not None
        p = self.person
        if p is not None:
            goals = [g for g in goals if math.hypot(g.x - p.x, g.y - p.y) >= PERSON_STOP]
        return self.nav.plan(Pose2D(self.robot.x, self.robot.y, self.robot.yaw), goals, avoid=self.person_discs())

    def person_in_the_way(self, goals: list[Pose2D]) -> bool:
        """True when only the person keeps the robot from the goals (there is a way without them)."""
        assert self.nav is not None
        return self.person is not None and self.nav.plan(Pose2D(self.robot.x, self.robot.y, self.robot.yaw), goals) is not None

    def wait_limit(self, round_index: int) -> float | None:
        """The person's clock time up to which a navigation of round ``round_index`` waits for them:
        ``PERSON_WAIT_SECONDS`` from now, never past the next round's start; None without a person and
        before the task (round 0), when their unseen steps must not start early."""
        if self.person is None or round_index < 1:
            return None
        return min(self.person.clock + PERSON_WAIT_SECONDS, self.round_time(round_index + 1))

    def wait_for_way(self, target: str, until: float) -> tuple[Path | None, float]:
        """Let the person's time run in steps of ``PERSON_WAIT_STEP`` up to ``until`` while they stand in
        the only way to ``target``; the path once they cleared it (or None) and the seconds waited."""
        p = self.person
        if p is None:
            return None, 0.0
        start = p.clock
        while p.clock < until:
            self.advance_people(min(until, p.clock + PERSON_WAIT_STEP))
            path = self.robot_plan(self._goal_poses(target))  # a person target has moved on too
            if path is not None:
                return path, p.clock - start
        return None, p.clock - start

    # ---- primitives for privileged skills --------------------------------------------------
    def way_to(self, target: str, wait_until: float | None = None) -> tuple[Path | None, str | None]:
        """The robot's path around the person to a pose from which ``target`` can be used. Where the person
        stands in the only way, it waits for them up to their clock time ``wait_until`` (None: not at all,
        as when they must not act yet). Without a path, why when the person is the reason (else None)."""
        goals = self._goal_poses(target)
        path = self.robot_plan(goals)
        if path is not None or not self.person_in_the_way(goals):
            return path, None
        waited = 0.0
        if wait_until is not None:
            path, waited = self.wait_for_way(target, wait_until)
        if path is not None:
            return path, None
        assert self.person is not None
        after = f" (waited {waited:.1f} s for them to move)" if waited else ""
        return None, f"the {self.person.name} stands in the only way to the {target}{after}"

    def navigate(self, target: str, wait_until: float | None = None) -> Outcome:
        """Drive along a collision-free path around the person to a pose from which ``target`` can be used
        (``way_to``: waiting for the person up to ``wait_until``)."""
        path, blocked = self.way_to(target, wait_until)
        if path is None:
            return Outcome(False, blocked or f"no collision-free path to the {target}")
        end = path.poses[-1]
        self.robot = RobotPose(end.x, end.y, end.yaw)
        self.path_length += path.length
        self._carry_held()
        return Outcome(True, path_length=path.length)

    def nudge_towards(self, target: str, gap: float) -> None:
        """Move straight towards the target until the base is ``gap`` metres from it (ignores occupancy:
        used to model a navigation policy that overshoots and ends up pressed against furniture)."""
        dist = self.distance_to(target)
        if dist <= gap:
            return
        tx, ty = self._anchor(target)
        heading = math.atan2(ty - self.robot.y, tx - self.robot.x)
        step = self._short_of_person(heading, dist - gap)
        self.robot = RobotPose(self.robot.x + step * math.cos(heading), self.robot.y + step * math.sin(heading), heading)
        self.path_length += step
        self._carry_held()

    def _short_of_person(self, heading: float, step: float) -> float:
        """How far of ``step`` the base may move straight along ``heading`` and keep ``PERSON_GAP`` from the
        person's body (all of it without a person, or when moving away from them)."""
        p = self.person
        if p is None:
            return step
        limit = PERSON_STOP
        dx, dy = self.robot.x - p.x, self.robot.y - p.y
        b = dx * math.cos(heading) + dy * math.sin(heading)  # |d + s u|^2 = s^2 + 2 b s + |d|^2
        c = dx * dx + dy * dy - limit * limit
        if b >= 0:
            return step  # moving away from them (or past them, never closer)
        if c <= 0:
            return 0.0  # already at the gap and moving closer
        if b * b - c <= 0:
            return step  # the line passes them by
        return min(step, -b - math.sqrt(b * b - c))

    def within_reach(self, target: str) -> bool:
        """True if the arm can reach the target from where the base stands."""
        return self.distance_to(target) <= ARM_REACH

    def grasp(self, obj: str) -> Outcome:
        """Pick ``obj`` into the gripper (the detector has already checked logic and distance)."""
        if self.locations[obj].relation == CARRIED and self.person is not None:
            return Outcome(False, f"the {self.person.name} is holding the {obj}")
        if not self.within_reach(obj):
            return Outcome(False, f"the {obj} is out of the arm's reach")
        container = self.enclosing_container(obj)
        if container and not self.is_open[container]:
            return Outcome(False, f"the {obj} is inside the closed {container}")
        self.held = obj
        self.held_dz = 0.0
        self.locations[obj] = ObjectLocation(None, "held", None)
        self._carry_held()
        return Outcome(True)

    def place(self, obj: str, receptacle: str, rng: random.Random) -> Outcome:
        """Put the held ``obj`` on/in ``receptacle`` at a free spot."""
        rec = self.layout.receptacles[receptacle]
        if not self.within_reach(receptacle):
            return Outcome(False, f"the {receptacle} is out of the arm's reach")
        if rec.type.articulated and not self.is_open[receptacle]:
            return Outcome(False, f"the {receptacle} is closed")
        if len(self.objects_at(receptacle)) >= rec.type.capacity:
            return Outcome(False, f"the {receptacle} is full")
        if not rec.type.fits(self.layout.objects[obj].cls):
            return Outcome(False, f"the {obj} is too tall to fit in the {receptacle}")
        spot = self._free_local_spot(rec, self.layout.objects[obj], rng, tidy=True, reach_from=(self.robot.x, self.robot.y))
        if spot is None:
            return Outcome(False, f"there is no free space {rec.type.relation} the {receptacle}")
        self.held = None
        self._put_at(obj, rec, spot)
        return Outcome(True)

    def drop_held(self, rng: random.Random) -> str | None:
        """The held object falls to the floor near the robot; returns its name."""
        obj = self.held
        if obj is None:
            return None
        info = self.layout.objects[obj]
        assert self.nav is not None
        for _ in range(50):
            angle = self.robot.yaw + rng.uniform(-1.2, 1.2)
            dist = ROBOT_RADIUS + rng.uniform(0.15, 0.45)
            x, y = self.robot.x + dist * math.cos(angle), self.robot.y + dist * math.sin(angle)
            room = self.layout.room_at(x, y)
            if room and self.nav.is_floor_free(x, y, info.radius) and self._floor_clear(obj, x, y, info.radius):
                break
        else:
            x, y, room = self.robot.x, self.robot.y, self.robot_room()
        self.held = None
        self._set_object(obj, (x, y, info.cls.size[2] / 2, rng.uniform(-math.pi, math.pi)), ObjectLocation(None, "floor", room))
        return obj

    def articulate(self, receptacle: str, open_: bool) -> Outcome:
        """Open or close a door or drawer; contents of a drawer move with it."""
        rec = self.layout.receptacles[receptacle]
        if not self.within_reach(receptacle):
            return Outcome(False, f"the {receptacle} is out of the arm's reach")
        if open_ and rec.type.articulation == "hinge" and not self._door_swing_clear(rec):
            return Outcome(False, f"the robot stands in the way of the {receptacle}'s door")
        target = 1.0 if open_ else 0.0
        if self.is_open[receptacle] == open_ and self.joint_open.get(receptacle, target) == target:
            return Outcome(True)
        self.set_joint_open(receptacle, target)
        return Outcome(True)

    def open_fraction(self, receptacle: str) -> float:
        """How far a door or drawer is open, 0 (closed) .. 1 (fully open)."""
        return self.joint_open.get(receptacle, 1.0 if self.is_open.get(receptacle, False) else 0.0)

    def set_joint_open(self, receptacle: str, fraction: float) -> None:
        """Move a door or drawer to an opening fraction; drawer contents slide with it, ``is_open`` and
        the navigation occupancy follow."""
        rec = self.layout.receptacles[receptacle]
        fraction = min(max(float(fraction), 0.0), 1.0)
        before = self._slide_offset(rec)
        self.joint_open[receptacle] = fraction
        shift = self._slide_offset(rec) - before
        if shift:
            for obj in self.objects_at(receptacle):
                x, y, z, yaw = self.object_poses[obj]
                lx, ly = rec.to_local(x, y)
                self.object_poses[obj] = (*rec.to_world(lx + shift, ly), z, yaw)
        self.is_open[receptacle] = fraction >= OPEN_THRESHOLD
        assert self.nav is not None
        self.nav.set_open_state(self.is_open)

    # ---- internals -------------------------------------------------------------------------
    def _anchor(self, target: str) -> tuple[float, float]:
        if self.person is not None and target == self.person.name:
            return (self.person.x, self.person.y)
        if target in self.layout.receptacles:
            rec = self.layout.receptacles[target]
            return (rec.x, rec.y)
        if target in self.layout.rooms:
            return self.layout.rooms[target].center
        x, y, _, _ = self.object_poses[target]
        return (x, y)

    def _goal_poses(self, target: str) -> list[Pose2D]:
        """Candidate stopping poses for Go to, best first; the planner takes the cheapest reachable."""
        assert self.nav is not None
        if target in self.layout.rooms:  # the free middle, where the person does not stand
            room = self.layout.rooms[target]
            p = self.person
            near = [] if p is None else [(p.x, p.y, PERSON_STOP)]  # as robot_plan keeps
            return self.nav.free_poses_in_room(room, avoid=near)
        if target in self.layout.receptacles:
            return self._poses_facing(self.layout.receptacles[target], None)
        if self.person is not None and target == self.person.name:  # beside them, from the robot's side first
            p, r = self.person, self.robot
            around = self.nav.poses_around_point(p.x, p.y, MANIPULATION_STANDOFF + ROBOT_RADIUS + PERSON_RADIUS, (p.x, p.y))
            return sorted(around, key=lambda g: math.dist((g.x, g.y), (r.x, r.y)))
        loc = self.locations[target]
        x, y, _, _ = self.object_poses[target]
        if loc.receptacle is not None:
            return self._poses_facing(self.layout.receptacles[loc.receptacle], (x, y))
        return self.nav.poses_around_point(x, y, MANIPULATION_STANDOFF + ROBOT_RADIUS, (x, y))

    def _poses_facing(self, rec: Receptacle, point: tuple[float, float] | None) -> list[Pose2D]:
        """Poses around a receptacle at the manipulation standoff, facing it; the front first."""
        assert self.nav is not None
        hx, hy, _ = rec.half
        d = MANIPULATION_STANDOFF + ROBOT_RADIUS
        candidates: list[tuple[float, float]] = []
        # front first (doors and drawers are only usable from there), then along the sides and back
        for ly in _spread(hy):
            if rec.type.articulation == "hinge" and ly + ROBOT_RADIUS > hy - 0.1:
                continue  # standing there would block the door from swinging open
            candidates.append(rec.to_world(hx + d + self._slide_offset(rec), ly))
        if rec.type.articulation is None:
            for lx in _spread(hx):
                candidates.append(rec.to_world(lx, hy + d))
                candidates.append(rec.to_world(lx, -hy - d))
            for ly in _spread(hy):
                candidates.append(rec.to_world(-hx - d, ly))
        look = point or (rec.x, rec.y)
        poses = []
        for cx, cy in candidates:
            aim = look if point else self._closest_on_rect(rec, cx, cy)
            poses.append(Pose2D(cx, cy, math.atan2(aim[1] - cy, aim[0] - cx)))
        if point is not None:
            poses.sort(key=lambda p: math.hypot(p.x - point[0], p.y - point[1]))
        return poses

    @staticmethod
    def _closest_on_rect(rec: Receptacle, wx: float, wy: float) -> tuple[float, float]:
        lx, ly = rec.to_local(wx, wy)
        hx, hy, _ = rec.half
        return rec.to_world(min(max(lx, -hx), hx), min(max(ly, -hy), hy))

    def _door_swing_clear(self, rec: Receptacle) -> bool:
        for x0, y0, x1, y1 in rec.open_extent():
            lx, ly = rec.to_local(self.robot.x, self.robot.y)
            if x0 - ROBOT_RADIUS < lx < x1 + ROBOT_RADIUS and y0 - ROBOT_RADIUS < ly < y1 + ROBOT_RADIUS:
                return False
        return True

    def _set_object(self, name: str, pose: tuple[float, float, float, float], loc: ObjectLocation) -> None:
        self.object_poses[name] = pose
        self.locations[name] = loc

    def _carry_held(self) -> None:
        if self.held is None:
            return
        c, s = math.cos(self.robot.yaw), math.sin(self.robot.yaw)
        if self.arm == ArmPose.carry():
            (gx, gy, gz), yaw = GRIPPER_OFFSET, 0.0
        else:
            fk = arm_fk(self.arm)
            (gx, gy, gz), yaw = fk.gripper, fk.yaw
        self.object_poses[self.held] = (self.robot.x + c * gx - s * gy, self.robot.y + s * gx + c * gy, gz + self.held_dz,
                                        self.robot.yaw + yaw)

    def _local_spot_if_free(self, rec: Receptacle, info: ObjectInfo, spot: tuple[float, float]) -> tuple[float, float] | None:
        if not rec.type.fits(info.cls):
            return None
        x0, y0, x1, y1 = rec.placement_area()
        r = info.radius
        lx, ly = spot
        if not (x0 + r <= lx <= x1 - r and y0 + r <= ly <= y1 - r):
            return None
        for other in self.objects_at(rec.name):
            ox, oy = self._local_of(rec, other)
            if math.hypot(ox - lx, oy - ly) < r + self.layout.objects[other].radius + 0.02:
                return None
        if not rec.type.articulated and not self._reachable(rec, rec.to_world(lx, ly)):
            return None
        return spot

    def _reachable(self, rec: Receptacle, point: tuple[float, float]) -> bool:
        """True if the base can stand somewhere from which the arm reaches ``point`` on ``rec``."""
        assert self.nav is not None
        limit = ROBOT_RADIUS + ARM_REACH - 0.05
        return any(self.nav.is_free(p.x, p.y) and math.dist((p.x, p.y), point) <= limit for p in self._poses_facing(rec, point))

    def _free_local_spot(self, rec: Receptacle, info: ObjectInfo, rng: random.Random, tidy: bool = False,
                         reach_from: tuple[float, float] | None = None) -> tuple[float, float] | None:
        """A free resting spot (receptacle frame): random tries, else the outermost free grid spot.
        ``tidy`` skips the random tries, as a robot putting things down neatly would."""
        if not rec.type.fits(info.cls):
            return None
        x0, y0, x1, y1 = rec.placement_area()
        r = info.radius
        if x1 - x0 < 2 * r or y1 - y0 < 2 * r:
            return None
        if not tidy:
            for _ in range(60):
                spot = (rng.uniform(x0 + r, x1 - r), rng.uniform(y0 + r, y1 - r))
                if self._local_spot_if_free(rec, info, spot) is not None:
                    return spot
        # a grid search, outermost spots first: packs objects along the edges and leaves the middle free
        step = 0.02
        xs = [x0 + r + i * step for i in range(int((x1 - x0 - 2 * r) / step) + 1)]
        ys = [y0 + r + j * step for j in range(int((y1 - y0 - 2 * r) / step) + 1)]
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        grid = sorted(((x, y) for x in xs for y in ys), key=lambda p: (-max(abs(p[0] - cx), abs(p[1] - cy)), rng.random()))
        if reach_from is not None:  # spots the arm reaches from where the base stands come first
            limit = ROBOT_RADIUS + ARM_REACH - 0.1
            offset = self._slide_offset(rec)
            grid.sort(key=lambda p: math.dist(rec.to_world(p[0] + offset, p[1]), reach_from) > limit)
        return next((p for p in grid if self._local_spot_if_free(rec, info, p) is not None), None)

    def _local_of(self, rec: Receptacle, obj: str) -> tuple[float, float]:
        x, y, _, _ = self.object_poses[obj]
        lx, ly = rec.to_local(x, y)
        return (lx - self._slide_offset(rec), ly)

    def _put_at(self, obj: str, rec: Receptacle, spot: tuple[float, float]) -> None:
        info = self.layout.objects[obj]
        lx = spot[0] + self._slide_offset(rec)
        wx, wy = rec.to_world(lx, spot[1])
        z = rec.rest_height() + info.cls.size[2] / 2
        self._set_object(obj, (wx, wy, z, rec.yaw), ObjectLocation(rec.name, rec.type.relation, rec.room))

    def _slide_offset(self, rec: Receptacle) -> float:
        """How far a drawer's contents are currently moved out along its +x (0 for other receptacles)."""
        if rec.type.articulation != "slide":
            return 0.0
        return DRAWER_TRAVEL * self.open_fraction(rec.name)

    def _floor_clear(self, obj: str, x: float, y: float, r: float) -> bool:
        for other, loc in self.locations.items():
            if other != obj and loc.relation == "floor":
                ox, oy, _, _ = self.object_poses[other]
                if math.hypot(ox - x, oy - y) < r + self.layout.objects[other].radius + 0.02:
                    return False
        return True
