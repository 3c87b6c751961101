"""What the semantic map holds: instances, the 3D sightings fused into them, update reports, its error.

An instance's geometry is a set of voxels of its fused points, packed into one int64 key per voxel
(``pack_voxels``, 21 bits per axis), so merging sightings is a ``np.unique`` over keys.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from homiebot.perception.vocabulary import articulated


class MapError(ValueError):
    """The semantic map was given bad input; the message says what to pass instead."""


_PACK = 1 << 20  # voxel index offset; 21 bits per axis


def pack_voxels(keys: np.ndarray) -> np.ndarray:
    """N x 3 integer voxel indices -> N packed int64 keys."""
    k = keys.astype(np.int64) + _PACK
    return (k[:, 0] << 42) | (k[:, 1] << 21) | k[:, 2]


def unpack_voxels(packed: np.ndarray) -> np.ndarray:
    """N packed keys -> N x 3 integer voxel indices (the inverse of ``pack_voxels``)."""
    mask = (1 << 21) - 1
    return np.stack([(packed >> 42) & mask, (packed >> 21) & mask, packed & mask], axis=1) - _PACK


def no_voxels() -> np.ndarray:
    """An empty voxel key set."""
    return np.empty(0, dtype=np.int64)


@dataclass
class Sighting3D:
    """One detection lifted to 3D."""

    label: str
    score: float
    view: str
    points: np.ndarray  # N x 3 world points
    colour: str | None
    is_open: bool | None

    @property
    def centre(self) -> np.ndarray:
        """The centre of the points' 5-95 percentile box (robust to stray background points)."""
        lo, hi = np.percentile(self.points, [5, 95], axis=0)
        return 0.5 * (lo + hi)


@dataclass
class MapInstance:
    """One object or piece of furniture the robot believes in."""

    id: str
    label: str
    kind: str  # "object" | "receptacle"
    position: np.ndarray  # x, y, z of the centre
    lo: np.ndarray  # robust bounding box corners
    hi: np.ndarray
    voxel: float
    voxels: np.ndarray  # packed voxel keys of fused points
    colour: str | None = None
    confidence: float = 0.0
    times_seen: int = 0
    first_seen: int = 0
    last_seen: int = 0
    misses: int = 0  # visible-but-not-detected updates in a row
    stale: bool = False
    held: bool = False
    is_open: bool | None = None
    relation: str | None = None  # "on" | "in" | "floor" | "held" (objects)
    support: str | None = None  # receptacle instance id
    room: str | None = None
    label_votes: Counter = field(default_factory=Counter)
    colour_votes: Counter = field(default_factory=Counter)
    placed_on: str | None = None  # set by mark_placed until the object is seen again
    closed_geometry: bool = False  # voxels come from sightings with the door/drawer closed
    open_lo: np.ndarray | None = None  # outline with the door/drawer open (articulated receptacles)
    open_hi: np.ndarray | None = None

    @property
    def articulated(self) -> bool:
        """Whether it has a door or drawer."""
        return articulated(self.label)

    @property
    def extent(self) -> np.ndarray:
        """Size along x, y, z (metres)."""
        return self.hi - self.lo

    def phrase(self) -> str:
        """'white mug' / 'fridge' — colour and label in words."""
        words = self.label.replace("_", " ")
        return f"{self.colour} {words}" if self.colour else words

    def forget_geometry(self) -> None:
        """Drop the fused voxels (it moved: old points would drag it back); the box stays until new ones come."""
        self.voxels = no_voxels()

    def fit_box(self) -> None:
        """Box and centre from the voxels: 2-98 percentiles for furniture (partial views), 5-95 for objects."""
        pts = (unpack_voxels(self.voxels) + 0.5) * self.voxel
        q = (2, 98) if self.kind == "receptacle" else (5, 95)
        self.lo, self.hi = np.percentile(pts, q[0], axis=0), np.percentile(pts, q[1], axis=0)
        self.position = 0.5 * (self.lo + self.hi)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able description."""
        r = lambda v: [round(float(x), 3) for x in v]  # noqa: E731
        return {"id": self.id, "label": self.label, "kind": self.kind, "colour": self.colour, "position": r(self.position),
                "extent": r(self.extent), "confidence": round(self.confidence, 3), "times_seen": self.times_seen,
                "first_seen": self.first_seen, "last_seen": self.last_seen, "room": self.room, "stale": self.stale,
                "held": self.held, "is_open": self.is_open, "relation": self.relation, "support": self.support}


@dataclass(frozen=True)
class UpdateReport:
    """What one update changed (instance ids)."""

    round: int
    seen: tuple[str, ...]
    created: tuple[str, ...]
    relocated: tuple[str, ...]
    missed: tuple[str, ...]
    became_stale: tuple[str, ...]
    dropped: tuple[str, ...]
