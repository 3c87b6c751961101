"""``MapAccess``: what a skill or the exploration phase reads of, and does to, the semantic map a world keeps.

Exploration needs little of the map: the floor plan's rooms, the mapped things (plain values), the next
frontier worth driving to, where a person in view stands, and a way to look again from where the robot
stands. Naming exactly that keeps skills off the map's internals, so the map can live in the process
that builds it (``KeptMap`` over a ``MapKeeper`` here) or be reached over an interface of its own.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from homiebot.perception.exploration import next_frontier_goal
from homiebot.perception.map_keeper import MapKeeper
from homiebot.perception.rooms import RoomPrior


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


class KeptMap:
    """``MapAccess`` to the map a ``MapKeeper`` keeps in this process; ``look`` is the world's observe-and-update."""

    def __init__(self, keeper: MapKeeper, look: Callable[[], object]) -> None:
        self.keeper = keeper
        self._look = look

    def rooms(self) -> list[RoomPrior]:
        return list(self.keeper.map.rooms)

    def places(self) -> list[MappedPlace]:
        smap = self.keeper.map
        return [MappedPlace(id=i.id, kind=i.kind, articulated=i.articulated, x=float(i.position[0]), y=float(i.position[1]),
                            reach=0.5 * float(max(i.extent[0], i.extent[1])), description=smap.description(i))
                for i in smap.instances()]

    def next_frontier(self, room: str | None = None) -> tuple[float, float] | None:
        return next_frontier_goal(self.keeper.map, room=room)

    def person_near(self, point: tuple[float, float], within: float) -> tuple[float, float] | None:
        belief = self.keeper.belief
        for name in sorted(belief.in_view):
            p = belief.people.get(name)
            if p is not None and math.dist((p.x, p.y), point) < within:
                return (p.x, p.y)
        return None

    def look(self) -> None:
        self._look()
