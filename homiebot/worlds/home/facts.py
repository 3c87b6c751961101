"""The facts every part of the embedded home's state model works on, and the small values they trade.

``HomeFacts`` names the mutable truth (robot pose, object poses and locations, door states, the arm,
the person) that ``state.HomeState`` holds; the parts (queries, joints, approach, placement, hands,
routes) read and change it through this interface, so none of them depends on the class that
assembles them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from homiebot.core.errors import Entity
from homiebot.worlds.home.catalog import ROBOT_RADIUS
from homiebot.worlds.home.layout import Layout
from homiebot.worlds.home.navigation import NavigationMap
from homiebot.worlds.home.person_state import PERSON_RADIUS, Leg, PersonState
from homiebot.worlds.home.robot import ArmPose

ARM_REACH = 0.95  # horizontal reach from the base edge when standing still
MANIPULATION_STANDOFF = 0.25  # gap between base and furniture after Go to
OPEN_THRESHOLD = 0.5  # a door or drawer counts as open from half its travel (45 degrees, 17.5 cm)
PERSON_GAP = 0.1  # the base's edge stops at least this far from the person's body (closer is the detector's D2)
PERSON_STOP = ROBOT_RADIUS + PERSON_RADIUS + PERSON_GAP  # nearest the base centre comes to the person's centre

EntityView = Entity  # what ``lookup`` returns: the detector's view of a named thing


@dataclass(frozen=True)
class Outcome:
    """Result of a kinematic primitive: ``ok`` and, when not ok, the reason in plain words."""

    ok: bool
    reason: str = ""
    path_length: float = 0.0


@dataclass(frozen=True)
class ObjectLocation:
    """Where an object rests: its receptacle and relation to it, and the room."""

    receptacle: str | None  # None when on the floor or held
    relation: str  # "on" | "in" | "floor" | "held" | "person" (in the person's hands)
    room: str | None


@dataclass
class RobotPose:
    """The robot base's plan-view pose."""

    x: float
    y: float
    yaw: float  # radians


class HomeFacts(Protocol):
    """The mutable truth of the home, as the state model's parts read and change it."""

    layout: Layout
    robot: RobotPose
    object_poses: dict[str, tuple[float, float, float, float]]
    locations: dict[str, ObjectLocation]
    is_open: dict[str, bool]
    held: str | None
    path_length: float
    nav: NavigationMap | None
    joint_open: dict[str, float]
    arm: ArmPose
    head_tilt: float
    held_dz: float
    person: PersonState | None
    person_legs: list[Leg]
    person_prelude: float
