"""``MapAccess``: what a skill or the exploration phase reads of, and does to, the semantic map a world keeps.

Exploration needs little of the map: the floor plan's rooms, the mapped things (plain values), the next
frontier worth driving to, where a person in view stands, and a way to look again from where the robot
stands. Naming exactly that keeps skills off the map's internals, so the map can live in the process
that builds it (``KeptMap`` over a ``MapKeeper`` here) or be reached over an interface of its own.

``KeptMap`` reads the keeper through ``MapSource`` only, so this module needs nothing of
``map_keeper``, which imports it to hand out its ``KeptMap``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from typing import Protocol

from homiebot.core.contracts import PersonSeen
from homiebot.core.map_access import MapAccess, MappedPlace
from homiebot.core.rooms import RoomPrior
from homiebot.perception.exploration import next_frontier_goal
from homiebot.perception.semantic_map import SemanticMap


class PeopleInView(Protocol):
    """The people a map's cameras saw (``MappedBelief``): the latest sighting by name, and who is in view now."""

    @property
    def people(self) -> Mapping[str, PersonSeen]: ...

    @property
    def in_view(self) -> AbstractSet[str]: ...


class MapSource(Protocol):
    """What ``KeptMap`` reads of the map's keeper (``MapKeeper``): the map and the people seen."""

    @property
    def map(self) -> SemanticMap: ...

    @property
    def belief(self) -> PeopleInView: ...


class KeptMap:
    """``MapAccess`` to the map a ``MapKeeper`` keeps in this process; ``look`` is the world's observe-and-update."""

    def __init__(self, keeper: MapSource, look: Callable[[], object]) -> None:
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


__all__ = ["KeptMap", "MapAccess", "MappedPlace", "MapSource", "PeopleInView"]
