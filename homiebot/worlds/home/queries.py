"""Questions about the embedded home's state: what exists, where it is, how far from the robot.

These answer the error detector's ``homiebot.core.errors.WorldBelief`` interface for ``state.HomeState``
and serve the other parts of the state model; nothing here changes the state.
"""

from __future__ import annotations

import math

from homiebot.core.contracts import PERSON_KIND
from homiebot.worlds.home.catalog import GRIPPER_OFFSET, ROBOT_RADIUS
from homiebot.worlds.home.facts import ARM_REACH, EntityView, HomeFacts, ObjectLocation
from homiebot.worlds.home.person_state import PERSON_RADIUS


class HomeQueries:
    """Read-only questions about a home's facts."""

    def __init__(self, home: HomeFacts) -> None:
        self._home = home

    def names(self) -> list[str]:
        """Every room, receptacle, object and person of the home."""
        h = self._home
        person = [h.person.name] if h.person is not None else []
        return [*h.layout.rooms, *h.layout.receptacles, *h.layout.objects, *person]

    def is_person(self, name: str | None) -> bool:
        """True when ``name`` is the scene's person."""
        return self._home.person is not None and name == self._home.person.name

    def lookup(self, name: str) -> EntityView | None:
        """The detector's view of a named thing, None when the home has no such thing."""
        h = self._home
        if self.is_person(name):
            return EntityView(name, PERSON_KIND)
        if name in h.layout.objects:
            return EntityView(name, "object")
        if name in h.layout.receptacles:
            rec = h.layout.receptacles[name]
            return EntityView(name, "receptacle", rec.type.articulated, h.is_open.get(name), rec.type.relation)
        if name in h.layout.rooms:
            return EntityView(name, "room")
        return None

    def enclosing_container(self, obj: str) -> str | None:
        """The closed-able receptacle an object is inside of, if any."""
        h = self._home
        loc = h.locations.get(obj)
        if loc and loc.relation == "in" and loc.receptacle and h.layout.receptacles[loc.receptacle].type.articulated:
            return loc.receptacle
        return None

    def location(self, obj: str) -> ObjectLocation:
        """Where an object rests."""
        return self._home.locations[obj]

    def objects_at(self, receptacle: str) -> list[str]:
        """The objects on or in a receptacle, sorted by name."""
        return sorted(o for o, loc in self._home.locations.items() if loc.receptacle == receptacle)

    def room_of(self, name: str) -> str | None:
        """The room a named thing is in (a room is in itself)."""
        h = self._home
        if name in h.layout.rooms:
            return name
        if name in h.layout.receptacles:
            return h.layout.receptacles[name].room
        if name == h.held:
            return self.robot_room()
        if h.person is not None and name == h.person.name:
            return h.layout.room_at(h.person.x, h.person.y)
        return h.locations[name].room

    def robot_room(self) -> str | None:
        """The room the robot base stands in (None between rooms)."""
        return self._home.layout.room_at(self._home.robot.x, self._home.robot.y)

    def distance_to(self, name: str) -> float:
        """Gap in metres between the robot base's edge and the named thing (plan view)."""
        h = self._home
        rx, ry = h.robot.x, h.robot.y
        if name in h.layout.receptacles:
            centre = h.layout.receptacles[name].footprint_distance(rx, ry)
        elif name in h.layout.rooms:
            return h.layout.rooms[name].distance(rx, ry)
        elif name == h.held:
            return GRIPPER_OFFSET[0] - ROBOT_RADIUS  # in the gripper, just in front of the base
        elif h.person is not None and name == h.person.name:
            return max(0.0, math.hypot(h.person.x - rx, h.person.y - ry) - ROBOT_RADIUS - PERSON_RADIUS)
        else:
            x, y, _, _ = h.object_poses[name]
            centre = math.hypot(x - rx, y - ry)
        return max(0.0, centre - ROBOT_RADIUS)

    def within_reach(self, target: str) -> bool:
        """True if the arm can reach the target from where the base stands."""
        return self.distance_to(target) <= ARM_REACH
