"""What a skill or the exploration phase reads of, and does to, the semantic map a world keeps (``World.mapping``).

The interface only: the map that implements it lives in ``homiebot.perception`` (``KeptMap`` over a
``MapKeeper``) or in another process (the mapper node's, reached through ``homiebot.ros``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from homiebot.core.rooms import RoomPrior


@dataclass(frozen=True)
class MappedPlace:
    """One confirmed, not stale, instance of the map as exploration reads it."""

    id: str
    kind: str  # "object" or "receptacle"
    articulated: bool  # has a door or drawer (what rests in it is not seen from outside)
    x: float
    y: float
    reach: float  # half its larger horizontal extent (metres)
    description: str  # one line, e.g. "white mug mug_1 on the white desk desk_1 (bedroom)"


class MapAccess(Protocol):
    """The map of a world that builds one (``World.mapping``)."""

    def rooms(self) -> list[RoomPrior]:
        """The floor plan's rooms (the map's prior)."""
        ...

    def places(self) -> list[MappedPlace]:
        """The confirmed, not stale, instances, in the order they were first mapped."""
        ...

    def next_frontier(self, room: str | None = None) -> tuple[float, float] | None:
        """A reachable free point by the most rewarding frontier (of ``room``, or anywhere); None when none is left."""
        ...

    def person_near(self, point: tuple[float, float], within: float) -> tuple[float, float] | None:
        """Where a person in the latest view stands, when closer than ``within`` metres to ``point``."""
        ...

    def look(self) -> None:
        """Observe from where the robot stands and update the map (not an agent round)."""
        ...
