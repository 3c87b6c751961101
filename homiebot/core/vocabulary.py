"""The household vocabulary: object classes, receptacle types and colours, with their typical sizes.

Every part of homiebot speaks it: worlds build homes from it (the embedded home's catalog adds its
geometry), detectors report its names as labels, the semantic map and the planners reason with its
categories and receptacle facts. Sizes are in metres. Receptacle sizes are full extents
``(depth, width, height)`` in the receptacle's own frame, whose +x axis points out of its front
(where doors open and where the robot stands to use it). Object sizes are full extents ``(x, y, z)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

RGBA = tuple[float, float, float, float]

COLORS: dict[str, RGBA] = {
    "red": (0.80, 0.12, 0.12, 1.0),
    "green": (0.15, 0.65, 0.20, 1.0),
    "blue": (0.15, 0.30, 0.80, 1.0),
    "yellow": (0.95, 0.85, 0.15, 1.0),
    "orange": (0.95, 0.55, 0.10, 1.0),
    "purple": (0.50, 0.20, 0.65, 1.0),
    "pink": (0.95, 0.55, 0.70, 1.0),
    "white": (0.92, 0.92, 0.90, 1.0),
    "black": (0.10, 0.10, 0.10, 1.0),
    "gray": (0.50, 0.50, 0.52, 1.0),
    "brown": (0.50, 0.32, 0.18, 1.0),
    "beige": (0.85, 0.78, 0.62, 1.0),
    "silver": (0.75, 0.76, 0.78, 1.0),
}

Shape = Literal["sphere", "ellipsoid", "cylinder", "box", "capsule", "bowl", "mug"]


@dataclass(frozen=True)
class ObjectClass:
    """A class of small, graspable objects."""

    name: str
    shape: Shape
    size: tuple[float, float, float]
    colors: tuple[str, ...]
    category: str

    @property
    def radius(self) -> float:
        """Footprint radius used for placement and clearance checks."""
        return 0.5 * max(self.size[0], self.size[1])


def _obj(name: str, shape: Shape, size: tuple[float, float, float], colors: str, category: str) -> ObjectClass:
    return ObjectClass(name, shape, size, tuple(colors.split()), category)


OBJECT_CLASSES: dict[str, ObjectClass] = {
    c.name: c
    for c in (
        _obj("apple", "sphere", (0.08, 0.08, 0.08), "red green yellow", "fruit"),
        _obj("orange", "sphere", (0.08, 0.08, 0.08), "orange", "fruit"),
        _obj("lemon", "ellipsoid", (0.09, 0.06, 0.06), "yellow green", "fruit"),
        _obj("peach", "sphere", (0.07, 0.07, 0.07), "pink orange", "fruit"),
        _obj("pear", "ellipsoid", (0.07, 0.07, 0.10), "green yellow", "fruit"),
        _obj("banana", "capsule", (0.18, 0.04, 0.04), "yellow green", "fruit"),
        _obj("can", "cylinder", (0.066, 0.066, 0.12), "red green blue silver", "drink"),
        _obj("bottle", "cylinder", (0.07, 0.07, 0.24), "green blue white", "drink"),
        _obj("cereal_box", "box", (0.07, 0.19, 0.27), "red yellow blue", "food"),
        _obj("cracker_box", "box", (0.06, 0.16, 0.21), "red orange", "food"),
        _obj("sugar_box", "box", (0.04, 0.09, 0.17), "white yellow", "food"),
        _obj("soup_can", "cylinder", (0.07, 0.07, 0.10), "red white", "food"),
        _obj("bowl", "bowl", (0.16, 0.16, 0.06), "red blue white green", "kitchenware"),
        _obj("mug", "mug", (0.09, 0.09, 0.10), "white red blue black", "kitchenware"),
        _obj("cup", "cylinder", (0.07, 0.07, 0.09), "white blue pink", "kitchenware"),
        _obj("plate", "cylinder", (0.22, 0.22, 0.02), "white blue", "kitchenware"),
        _obj("sponge", "box", (0.10, 0.07, 0.035), "yellow green pink", "cleaning"),
        _obj("soap", "box", (0.09, 0.06, 0.03), "white green pink", "cleaning"),
        _obj("book", "box", (0.16, 0.23, 0.03), "red blue green black", "office"),
        _obj("remote", "box", (0.05, 0.17, 0.02), "black gray", "electronics"),
        _obj("toy_block", "box", (0.06, 0.06, 0.06), "red green blue yellow", "toy"),
        _obj("towel", "box", (0.20, 0.14, 0.04), "white blue beige", "textile"),
        _obj("candle", "cylinder", (0.06, 0.06, 0.10), "white red purple", "decor"),
        _obj("teddy_bear", "ellipsoid", (0.12, 0.10, 0.16), "brown beige pink", "toy"),
    )
}

Relation = Literal["on", "in"]
Articulation = Literal["hinge", "slide"]


@dataclass(frozen=True)
class ReceptacleType:
    """A kind of furniture that objects can be placed on or in.

    ``relation`` is how objects relate to it ("on" a table, "in" a fridge). ``articulation`` is the
    joint of its door or drawer, if any; only articulated receptacles can be opened and closed.
    ``interior_z`` is the height objects rest at (the top for surfaces, a shelf for containers);
    ``clearance`` is the free height above it inside a container (None: open above). ``back_inset``
    and ``side_inset`` keep objects off a backrest or armrests.
    """

    name: str
    size: tuple[float, float, float]
    relation: Relation
    interior_z: float
    colors: tuple[str, ...]
    articulation: Articulation | None = None
    capacity: int = 6
    clearance: float | None = None
    back_inset: float = 0.0
    side_inset: float = 0.0

    @property
    def articulated(self) -> bool:
        return self.articulation is not None

    def fits(self, cls: ObjectClass) -> bool:
        """True if an object of this class fits inside (always true for open surfaces)."""
        return self.clearance is None or cls.size[2] <= self.clearance


RECEPTACLE_TYPES: dict[str, ReceptacleType] = {
    r.name: r
    for r in (
        ReceptacleType("table", (0.8, 1.2, 0.75), "on", 0.75, ("brown", "white", "black", "gray"), capacity=8),
        ReceptacleType("kitchen_counter", (0.6, 1.8, 0.9), "on", 0.9, ("white", "gray", "beige"), capacity=8),
        ReceptacleType("sofa", (0.85, 1.9, 0.45), "on", 0.45, ("blue", "gray", "red", "beige"), capacity=6,
                       back_inset=0.12, side_inset=0.10),
        ReceptacleType("tv_stand", (0.45, 1.4, 0.5), "on", 0.5, ("black", "brown", "white"), capacity=5),
        ReceptacleType("chair", (0.5, 0.5, 0.46), "on", 0.46, ("brown", "black", "white"), capacity=2),
        ReceptacleType("sink", (0.6, 0.8, 0.9), "in", 0.78, ("white", "silver"), capacity=4),
        ReceptacleType("cabinet", (0.5, 0.8, 0.9), "in", 0.08, ("brown", "white", "gray"), "hinge", capacity=5, clearance=0.74),
        ReceptacleType("drawer", (0.5, 0.7, 0.75), "in", 0.52, ("brown", "white", "gray"), "slide", capacity=4, clearance=0.19),
        ReceptacleType("fridge", (0.7, 0.8, 1.8), "in", 0.9, ("white", "silver"), "hinge", capacity=6, clearance=0.8),
        ReceptacleType("bed", (2.0, 1.5, 0.5), "on", 0.5, ("blue", "white", "beige"), capacity=6),
        ReceptacleType("shelf", (0.35, 1.0, 1.1), "on", 1.1, ("brown", "white"), capacity=5),
        ReceptacleType("desk", (0.7, 1.3, 0.75), "on", 0.75, ("brown", "white", "black"), capacity=6),
    )
}

CATEGORY_WORDS: dict[str, str] = {
    "fruit": "fruit",
    "drink": "drink",
    "beverage": "drink",
    "food": "food",
    "snack": "food",
    "eat": "food",
    "dish": "kitchenware",
    "dishe": "kitchenware",
    "kitchenware": "kitchenware",
    "cleaning": "cleaning",
    "toy": "toy",
    "textile": "textile",
    "decoration": "decor",
    "decor": "decor",
    "electronic": "electronics",
    "gadget": "electronics",
}
"""Words people use for a whole category of object classes ('a piece of fruit', 'something to drink',
'a toy'), in singular form, each with the ``ObjectClass.category`` it covers."""
