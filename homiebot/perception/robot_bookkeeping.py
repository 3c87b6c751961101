"""``RobotBookkeeping``: the semantic map kept in step with what the robot itself did.

A picked object moves with the robot until placed; a placed one sits at the receptacle's top
centre (or on the floor beside the robot) until it is seen again; a door or drawer the robot
opened or closed takes that state, and a drawer's contents move with it.
"""

from __future__ import annotations

import numpy as np

from homiebot.perception.instance_fusion import InstanceFusion
from homiebot.perception.instance_store import InstanceStore
from homiebot.perception.map_instance import MapError
from homiebot.perception.vocabulary import relation_of


class RobotBookkeeping:
    """Applies the robot's Pick, Put, Open and Close to the instances of ``store``."""

    def __init__(self, store: InstanceStore, fusion: InstanceFusion) -> None:
        self.store = store
        self.fusion = fusion

    def mark_held(self, instance_id: str, robot: tuple[float, float, float] | None) -> None:
        """The robot (at ``robot``: x, y, yaw; None before any update) picked this object."""
        inst = self.store.get(instance_id)
        if inst.kind != "object":
            raise MapError(f"'{instance_id}' is a {inst.label}, not an object the robot can hold")
        for other in self.store:
            other.held = False if other is not inst else other.held
        inst.held, inst.stale, inst.misses, inst.placed_on = True, False, 0, None
        inst.relation, inst.support = "held", None
        if robot is not None:
            inst.position = np.array([robot[0], robot[1], inst.position[2]])

    def mark_placed(self, instance_id: str, receptacle_id: str | None, robot: tuple[float, float, float] | None) -> None:
        """The robot put the held object on/in a receptacle (or, with None, on the floor beside it)."""
        inst = self.store.get(instance_id)
        inst.held = False
        inst.misses = 0
        if receptacle_id is None:
            if robot is not None:
                inst.position = np.array([robot[0], robot[1], 0.5 * inst.extent[2]])
            inst.relation, inst.support = "floor", None
        else:
            rec = self.store.get(receptacle_id)
            if rec.kind != "receptacle":
                raise MapError(f"'{receptacle_id}' is not a receptacle; objects can only be placed on or in furniture")
            inst.position = np.array([rec.position[0], rec.position[1], rec.hi[2] + 0.5 * inst.extent[2]])
            inst.placed_on = rec.id
            inst.relation, inst.support = relation_of(rec.label) or "on", rec.id
        inst.forget_geometry()
        half = 0.5 * inst.extent
        inst.lo, inst.hi = inst.position - half, inst.position + half

    def set_open(self, instance_id: str, is_open: bool) -> None:
        """Record a container's door/drawer state (e.g. after the robot's Open/Close succeeded)."""
        inst = self.store.get(instance_id)
        if not inst.articulated:
            raise MapError(f"'{instance_id}' ({inst.label}) has no door or drawer")
        was_open = inst.is_open
        inst.is_open = bool(is_open)
        if was_open is not None and was_open != inst.is_open:
            self.fusion.move_contents(inst, inst.is_open)
