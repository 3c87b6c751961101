"""Room priors: named rectangles from a labelled floor plan (a real robot gets them from its map).

``rooms_from`` accepts ``RoomPrior`` objects, anything with ``name, x0, y0, x1, y1`` attributes
(the embedded home's ``Room``), ``(name, x0, y0, x1, y1)`` tuples or mappings with those keys.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


class RoomPriorError(ValueError):
    """A room prior is malformed."""


@dataclass(frozen=True)
class RoomPrior:
    """An axis-aligned named rectangle of the floor plan."""

    name: str
    x0: float
    y0: float
    x1: float
    y1: float

    def __post_init__(self) -> None:
        if not self.name:
            raise RoomPriorError("a room needs a name")
        if not (self.x1 > self.x0 and self.y1 > self.y0):
            raise RoomPriorError(f"room '{self.name}': need x1 > x0 and y1 > y0, got ({self.x0}, {self.y0}, {self.x1}, {self.y1})")

    @property
    def center(self) -> tuple[float, float]:
        return (0.5 * (self.x0 + self.x1), 0.5 * (self.y0 + self.y1))

    @property
    def rect(self) -> tuple[float, float, float, float]:
        return (self.x0, self.y0, self.x1, self.y1)

    def contains(self, x: float, y: float, margin: float = 0.0) -> bool:
        return self.x0 - margin <= x <= self.x1 + margin and self.y0 - margin <= y <= self.y1 + margin

    def distance(self, x: float, y: float) -> float:
        """Plan-view distance from a point to the rectangle (0 inside)."""
        dx = max(self.x0 - x, 0.0, x - self.x1)
        dy = max(self.y0 - y, 0.0, y - self.y1)
        return (dx * dx + dy * dy) ** 0.5


def _one(item: Any) -> RoomPrior:
    if isinstance(item, RoomPrior):
        return item
    if isinstance(item, Mapping):
        try:
            return RoomPrior(str(item["name"]), *(float(item[k]) for k in ("x0", "y0", "x1", "y1")))
        except KeyError as err:
            raise RoomPriorError(f"room mapping {dict(item)} lacks key {err}; need name, x0, y0, x1, y1") from err
    if isinstance(item, (tuple, list)):
        if len(item) != 5:
            raise RoomPriorError(f"room tuple must be (name, x0, y0, x1, y1), got {item!r}")
        return RoomPrior(str(item[0]), *(float(v) for v in item[1:]))
    if all(hasattr(item, k) for k in ("name", "x0", "y0", "x1", "y1")):
        return RoomPrior(str(item.name), float(item.x0), float(item.y0), float(item.x1), float(item.y1))
    raise RoomPriorError(f"cannot read a room from {item!r}; give RoomPrior, (name, x0, y0, x1, y1) or a mapping")


def rooms_from(rooms: Iterable[Any] | Mapping[str, Any] | None) -> list[RoomPrior]:
    """Normalise room priors; a mapping's values are used (e.g. ``layout.rooms``)."""
    if rooms is None:
        return []
    items = rooms.values() if isinstance(rooms, Mapping) else rooms
    out = [_one(r) for r in items]
    names = [r.name for r in out]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise RoomPriorError(f"room names must be unique; repeated: {dupes}")
    return out


def room_at(rooms: list[RoomPrior], x: float, y: float) -> str | None:
    """The room containing a point; a point on a shared wall or just outside goes to the nearest room
    within 0.3 m; None when no room is that close."""
    best, best_d = None, 0.3
    for r in rooms:
        if r.contains(x, y):
            return r.name
        d = r.distance(x, y)
        if d <= best_d:
            best, best_d = r.name, d
    return best
