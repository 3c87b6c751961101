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

``HomeState`` holds the facts and assembles the parts that work on them, each with one job:
``queries`` (what is where), ``joints`` (doors and drawers), ``approach`` (where Go to stops),
``placement`` (free spots for objects), ``hands`` (grasp, place, drop, give) and ``routes`` (paths
around the person). A part is a view made on demand, so copies of the state never share one.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from homiebot.worlds.home.approach import Approach
from homiebot.worlds.home.catalog import ROBOT_RADIUS
from homiebot.worlds.home.facts import (  # noqa: F401 - re-exported: the state model's names
    ARM_REACH,
    MANIPULATION_STANDOFF,
    OPEN_THRESHOLD,
    PERSON_GAP,
    PERSON_STOP,
    EntityView,
    ObjectLocation,
    Outcome,
    RobotPose,
)
from homiebot.worlds.home.hands import GIVE_REACH, Hands  # noqa: F401 - GIVE_REACH re-exported
from homiebot.worlds.home.joints import Joints
from homiebot.worlds.home.layout import Layout, ObjectInfo, Receptacle, build_layout
from homiebot.worlds.home.navigation import Disc, NavigationMap, Path, Pose2D
from homiebot.worlds.home.person import plan_script, play, prelude_of, round_start, start_pose
from homiebot.worlds.home.person_state import Leg, PersonState
from homiebot.worlds.home.placement import Placement
from homiebot.worlds.home.queries import HomeQueries
from homiebot.worlds.home.robot import ArmPose
from homiebot.worlds.home.routes import (  # noqa: F401 - re-exported
    FOLLOW_GAP,
    PERSON_WAIT_SECONDS,
    PERSON_WAIT_STEP,
    RobotRoutes,
)
from homiebot.worlds.home.scene import SceneError, SceneSpec


@dataclass
class HomeState:
    """The home's facts, and the detector's and privileged skills' interface to them."""

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
        placement = state.placement
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
                placement.set_object(obj.name, (obj.floor[0], obj.floor[1], info.cls.size[2] / 2, 0.0),
                                     ObjectLocation(None, "floor", room))
                continue
            assert obj.receptacle is not None  # exactly one of on, in, floor (ObjectSpec._one_placement)
            rec = layout.receptacles[obj.receptacle]
            if not rec.type.fits(info.cls):
                raise SceneError(f"object '{obj.name}' ({info.cls.size[2]:.2f} m tall) does not fit in '{rec.name}'")
            if obj.offset is not None:
                spot = placement.local_spot_if_free(rec, info, obj.offset)
                if spot is None:
                    raise SceneError(f"object '{obj.name}': offset {obj.offset} is outside '{rec.name}' or collides with another object")
            else:
                spot = placement.free_local_spot(rec, info, rng)
                if spot is None:
                    raise SceneError(f"object '{obj.name}': no free space left on/in '{rec.name}'")
            placement.put_at(obj.name, rec, spot)
        if not state.nav.is_floor_free(state.robot.x, state.robot.y, 0.5 * ROBOT_RADIUS):
            raise SceneError(f"the robot's start position {list(spec.robot.position)} is inside furniture or a wall")
        if spec.person is not None:
            state.person = start_pose(spec.person, state)
            state.person_legs = plan_script(spec.person, state, state.person)
            state.person_prelude = prelude_of(state.person_legs, spec.person)
        return state

    # ---- the parts ----------------------------------------------------------------------------
    @property
    def queries(self) -> HomeQueries:
        """What exists, where it is and how far from the robot."""
        return HomeQueries(self)

    @property
    def joints(self) -> Joints:
        """The doors' and drawers' opening."""
        return Joints(self)

    @property
    def approach(self) -> Approach:
        """Where the base stops to use something."""
        return Approach(self)

    @property
    def placement(self) -> Placement:
        """Free resting spots for objects, and the held object in the gripper."""
        return Placement(self)

    @property
    def hands(self) -> Hands:
        """Grasp, place, drop and give."""
        return Hands(self)

    @property
    def routes(self) -> RobotRoutes:
        """Paths for the base around the person."""
        return RobotRoutes(self)

    # ---- queries (also the detector's WorldBelief interface) ------------------------------
    def names(self) -> list[str]:
        """Every room, receptacle, object and person of the home."""
        return self.queries.names()

    def is_person(self, name: str | None) -> bool:
        """True when ``name`` is the scene's person."""
        return self.queries.is_person(name)

    def lookup(self, name: str) -> EntityView | None:
        """The detector's view of a named thing, None when the home has no such thing."""
        return self.queries.lookup(name)

    def held_object(self) -> str | None:
        """The object in the gripper, if any."""
        return self.held

    def enclosing_container(self, obj: str) -> str | None:
        """The closed-able receptacle an object is inside of, if any."""
        return self.queries.enclosing_container(obj)

    def location(self, obj: str) -> ObjectLocation:
        """Where an object rests."""
        return self.queries.location(obj)

    def objects_at(self, receptacle: str) -> list[str]:
        """The objects on or in a receptacle, sorted by name."""
        return self.queries.objects_at(receptacle)

    def room_of(self, name: str) -> str | None:
        """The room a named thing is in."""
        return self.queries.room_of(name)

    def robot_room(self) -> str | None:
        """The room the robot base stands in."""
        return self.queries.robot_room()

    def distance_to(self, name: str) -> float:
        """Gap in metres between the robot base's edge and the named thing (plan view)."""
        return self.queries.distance_to(name)

    def within_reach(self, target: str) -> bool:
        """True if the arm can reach the target from where the base stands."""
        return self.queries.within_reach(target)

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
        play(self, until)

    def give(self, obj: str, person: str) -> Outcome:
        """Hand the held ``obj`` to the person, who must be within reach and have a free hand."""
        return self.hands.give(obj, person)

    def follow(self, person: str, round_index: int) -> Outcome:
        """Walk with the person through round ``round_index`` and stop ``FOLLOW_GAP`` from them, facing them."""
        return self.routes.follow(person, round_index)

    def person_discs(self) -> list[Disc]:
        """Where the base centre may not go because of the person (empty without one)."""
        return self.routes.person_discs()

    def robot_plan(self, goals: list[Pose2D]) -> Path | None:
        """The robot's shortest path to the first reachable goal, around the person."""
        return self.routes.robot_plan(goals)

    def person_in_the_way(self, goals: list[Pose2D]) -> bool:
        """True when only the person keeps the robot from the goals."""
        return self.routes.person_in_the_way(goals)

    def wait_limit(self, round_index: int) -> float | None:
        """The person's clock time up to which a navigation of round ``round_index`` waits for them."""
        return self.routes.wait_limit(round_index)

    def wait_for_way(self, target: str, until: float) -> tuple[Path | None, float]:
        """Let the person's time run while they stand in the only way to ``target``; the path and seconds waited."""
        return self.routes.wait_for_way(target, until)

    # ---- primitives for privileged skills --------------------------------------------------
    def way_to(self, target: str, wait_until: float | None = None) -> tuple[Path | None, str | None]:
        """The robot's path around the person to a pose from which ``target`` can be used, and why not."""
        return self.routes.way_to(target, wait_until)

    def navigate(self, target: str, wait_until: float | None = None) -> Outcome:
        """Drive along a collision-free path around the person to a pose from which ``target`` can be used."""
        return self.routes.navigate(target, wait_until)

    def nudge_towards(self, target: str, gap: float) -> None:
        """Move straight towards the target until the base is ``gap`` metres from it (ignores occupancy)."""
        self.routes.nudge_towards(target, gap)

    def grasp(self, obj: str) -> Outcome:
        """Pick ``obj`` into the gripper (the detector has already checked logic and distance)."""
        return self.hands.grasp(obj)

    def place(self, obj: str, receptacle: str, rng: random.Random) -> Outcome:
        """Put the held ``obj`` on/in ``receptacle`` at a free spot."""
        return self.hands.place(obj, receptacle, rng)

    def drop_held(self, rng: random.Random) -> str | None:
        """The held object falls to the floor near the robot; returns its name."""
        return self.hands.drop_held(rng)

    def articulate(self, receptacle: str, open_: bool) -> Outcome:
        """Open or close a door or drawer; contents of a drawer move with it."""
        return self.joints.articulate(receptacle, open_)

    def open_fraction(self, receptacle: str) -> float:
        """How far a door or drawer is open, 0 (closed) .. 1 (fully open)."""
        return self.joints.open_fraction(receptacle)

    def set_joint_open(self, receptacle: str, fraction: float) -> None:
        """Move a door or drawer to an opening fraction; drawer contents, ``is_open`` and occupancy follow."""
        self.joints.set_joint_open(receptacle, fraction)

    # ---- older names, kept for the simulator's other modules --------------------------------
    def _goal_poses(self, target: str) -> list[Pose2D]:
        return self.approach.goal_poses(target)

    def _carry_held(self) -> None:
        self.placement.carry_held()

    def _set_object(self, name: str, pose: tuple[float, float, float, float], loc: ObjectLocation) -> None:
        self.placement.set_object(name, pose, loc)

    def _slide_offset(self, rec: Receptacle) -> float:
        return self.joints.slide_offset(rec)

    def _local_spot_if_free(self, rec: Receptacle, info: ObjectInfo, spot: tuple[float, float]) -> tuple[float, float] | None:
        return self.placement.local_spot_if_free(rec, info, spot)

    def _local_of(self, rec: Receptacle, obj: str) -> tuple[float, float]:
        return self.placement.local_of(rec, obj)
