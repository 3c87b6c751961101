"""The kinematic hand of the privileged skills: grasp, place, drop and give in the embedded home.

Each primitive checks geometry (reach, container state, free space) and returns an ``Outcome`` saying
why it failed; the detector has already checked the logic (what is held, what is where).
"""

from __future__ import annotations

import math
import random

from homiebot.worlds.home.catalog import ROBOT_RADIUS
from homiebot.worlds.home.facts import ARM_REACH, HomeFacts, ObjectLocation, Outcome
from homiebot.worlds.home.person import carry
from homiebot.worlds.home.person_state import CARRIED
from homiebot.worlds.home.placement import Placement
from homiebot.worlds.home.queries import HomeQueries

GIVE_REACH = ARM_REACH + 0.35  # a person reaches out for what they are handed


class Hands:
    """Moves objects into, out of and away from the robot's gripper."""

    def __init__(self, home: HomeFacts) -> None:
        self._home = home
        self._queries = HomeQueries(home)
        self._placement = Placement(home)

    def grasp(self, obj: str) -> Outcome:
        """Pick ``obj`` into the gripper."""
        h = self._home
        if h.locations[obj].relation == CARRIED and h.person is not None:
            return Outcome(False, f"the {h.person.name} is holding the {obj}")
        if not self._queries.within_reach(obj):
            return Outcome(False, f"the {obj} is out of the arm's reach")
        container = self._queries.enclosing_container(obj)
        if container and not h.is_open[container]:
            return Outcome(False, f"the {obj} is inside the closed {container}")
        h.held = obj
        h.held_dz = 0.0
        h.locations[obj] = ObjectLocation(None, "held", None)
        self._placement.carry_held()
        return Outcome(True)

    def place(self, obj: str, receptacle: str, rng: random.Random) -> Outcome:
        """Put the held ``obj`` on/in ``receptacle`` at a free spot."""
        h = self._home
        rec = h.layout.receptacles[receptacle]
        if not self._queries.within_reach(receptacle):
            return Outcome(False, f"the {receptacle} is out of the arm's reach")
        if rec.type.articulated and not h.is_open[receptacle]:
            return Outcome(False, f"the {receptacle} is closed")
        if len(self._queries.objects_at(receptacle)) >= rec.type.capacity:
            return Outcome(False, f"the {receptacle} is full")
        if not rec.type.fits(h.layout.objects[obj].cls):
            return Outcome(False, f"the {obj} is too tall to fit in the {receptacle}")
        spot = self._placement.free_local_spot(rec, h.layout.objects[obj], rng, tidy=True, reach_from=(h.robot.x, h.robot.y))
        if spot is None:
            return Outcome(False, f"there is no free space {rec.type.relation} the {receptacle}")
        h.held = None
        self._placement.put_at(obj, rec, spot)
        return Outcome(True)

    def drop_held(self, rng: random.Random) -> str | None:
        """The held object falls to the floor near the robot; returns its name."""
        h = self._home
        obj = h.held
        if obj is None:
            return None
        info = h.layout.objects[obj]
        assert h.nav is not None
        for _ in range(50):
            angle = h.robot.yaw + rng.uniform(-1.2, 1.2)
            dist = ROBOT_RADIUS + rng.uniform(0.15, 0.45)
            x, y = h.robot.x + dist * math.cos(angle), h.robot.y + dist * math.sin(angle)
            room = h.layout.room_at(x, y)
            if room and h.nav.is_floor_free(x, y, info.radius) and self._placement.floor_clear(obj, x, y, info.radius):
                break
        else:
            x, y, room = h.robot.x, h.robot.y, self._queries.robot_room()
        h.held = None
        self._placement.set_object(obj, (x, y, info.cls.size[2] / 2, rng.uniform(-math.pi, math.pi)),
                                   ObjectLocation(None, "floor", room))
        return obj

    def give(self, obj: str, person: str) -> Outcome:
        """Hand the held ``obj`` to the person, who must be within reach and have a free hand."""
        h = self._home
        p = h.person
        if p is None or person != p.name:
            return Outcome(False, f"there is nobody called {person} here")
        if h.held != obj:
            return Outcome(False, f"the hand does not hold the {obj}")
        if self._queries.distance_to(person) > GIVE_REACH:
            return Outcome(False, f"the {person} is out of reach ({self._queries.distance_to(person):.1f} m away)")
        if p.held is not None:
            return Outcome(False, f"the {person}'s hands are full (they carry the {p.held})")
        h.held = None
        p.held = obj
        p.yaw = math.atan2(h.robot.y - p.y, h.robot.x - p.x)  # they turned to take it
        p.events.append(f"{p.clock:.0f}s: was given {obj}")
        carry(p, h)
        return Outcome(True)
