"""``MapBelief``: the error detector's WorldBelief answered from the semantic map.

Names are map instance ids ("can_1", "fridge_1") plus room names; kinds, door states and "in"
relations come from what was observed; distances from the robot pose of the last update; the held
object from the robot's own gripper state.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from homiebot.core.errors import Entity
from homiebot.perception.semantic_map import SemanticMap
from homiebot.perception.vocabulary import relation_of


class MapBelief:
    """WorldBelief over a SemanticMap. ``gripper`` returns the held instance id (the robot's own
    gripper state); without it, the map's ``mark_held`` bookkeeping is used."""

    def __init__(self, smap: SemanticMap, gripper: Callable[[], str | None] | None = None, robot_radius: float = 0.3) -> None:
        self.map = smap
        self.gripper = gripper
        self.robot_radius = robot_radius

    def names(self) -> list[str]:
        return [i.id for i in self.map.instances()] + [r.name for r in self.map.rooms]

    def lookup(self, name: str) -> Entity | None:
        room = next((r for r in self.map.rooms if r.name == name), None)
        if room is not None:
            return Entity(name, "room")
        if name not in self.map:
            return None
        inst = self.map.get(name)
        if inst.stale or not (self.map.is_confirmed(inst) or inst.id == self.held_object()):
            return None
        if inst.kind == "receptacle":
            return Entity(name, "receptacle", inst.articulated, inst.is_open, relation_of(inst.label))
        return Entity(name, "object")

    def held_object(self) -> str | None:
        if self.gripper is not None:
            return self.gripper()
        held = self.map.held()
        return held.id if held else None

    def distance_to(self, name: str) -> float:
        """Gap between the robot base's edge and the thing, in plan view (inf before any update)."""
        if self.map.robot is None:
            return math.inf
        rx, ry = self.map.robot[0], self.map.robot[1]
        room = next((r for r in self.map.rooms if r.name == name), None)
        if room is not None:
            return room.distance(rx, ry)
        inst = self.map.get(name)
        if inst.id == self.held_object():
            return 0.15
        if inst.kind == "receptacle":
            gap = np.maximum(0.0, np.maximum(inst.lo[:2] - (rx, ry), np.array((rx, ry)) - inst.hi[:2]))
            centre = float(np.linalg.norm(gap))
        else:
            centre = math.hypot(inst.position[0] - rx, inst.position[1] - ry)
        return max(0.0, centre - self.robot_radius)

    def enclosing_container(self, obj: str) -> str | None:
        if obj not in self.map:
            return None
        inst = self.map.get(obj)
        if inst.relation == "in" and inst.support and inst.support in self.map and self.map.get(inst.support).articulated:
            return inst.support
        return None
