"""What the embedded home is built from: the household vocabulary (``homiebot.core.vocabulary``) plus the
home's own geometry: room types and their furniture, door, drawer and wall dimensions, the robot.

Sizes are in metres.
"""

from __future__ import annotations

from dataclasses import dataclass

from homiebot.core.vocabulary import (  # noqa: F401 - the vocabulary, re-exported for the home's modules
    COLORS,
    OBJECT_CLASSES,
    RECEPTACLE_TYPES,
    RGBA,
    ObjectClass,
    ReceptacleType,
    Relation,
    Shape,
)

# Front-panel geometry shared by the state model (what is reachable) and the renderer (what is drawn).
DOOR_THICKNESS = 0.03
DRAWER_TRAVEL = 0.35
DRAWER_BOX_BOTTOM = 0.45  # height of the drawer box floor above ground
WALL_THICKNESS = 0.1
WALL_HEIGHT = 2.4
DOOR_WIDTH = 1.1


@dataclass(frozen=True)
class RoomType:
    """A kind of room and the furniture it usually holds (``must`` always, ``may`` sometimes)."""

    name: str
    floor_color: RGBA
    must: tuple[str, ...]
    may: tuple[str, ...]


ROOM_TYPES: dict[str, RoomType] = {
    r.name: r
    for r in (
        RoomType("kitchen", (0.78, 0.76, 0.70, 1), ("kitchen_counter", "fridge", "sink"), ("cabinet", "drawer", "table")),
        RoomType("living_room", (0.62, 0.52, 0.40, 1), ("sofa", "tv_stand"), ("table", "chair", "shelf", "cabinet")),
        RoomType("bedroom", (0.70, 0.64, 0.58, 1), ("bed",), ("drawer", "desk", "chair", "shelf")),
        RoomType("bathroom", (0.80, 0.84, 0.86, 1), ("sink",), ("cabinet", "shelf")),
        RoomType("dining_room", (0.60, 0.48, 0.36, 1), ("table",), ("chair", "cabinet", "shelf")),
        RoomType("office", (0.55, 0.55, 0.58, 1), ("desk",), ("shelf", "chair", "drawer", "cabinet")),
    )
}

# The Fetch-like robot, in its own frame (+x forward). The state model and the renderer both use these.
ROBOT_RADIUS = 0.3
ROBOT_HEIGHT = 1.1  # top of the torso
CAMERA_HEIGHT = 1.25
CAMERA_PITCH_DEG = -25.0  # looking slightly down so that table tops are in view
GRIPPER_OFFSET = (0.45, -0.15, 0.95)  # where a held object sits in the carry pose (off-centre: keeps the view clear)
VIEWS = ("front", "left", "back", "right")
VIEW_YAW_DEG = {"front": 0.0, "left": 90.0, "back": 180.0, "right": -90.0}
