"""``SupportRelations``: where each instance of the semantic map is, relative to rooms and furniture.

Every instance gets its room from the floor-plan prior. An object inside the outline of a confirmed
receptacle (an open drawer's outline included) rests on or in the smallest such one: "on" when it
sits on top or things go on that receptacle (a table), else "in"; an object near the floor is on the
floor; what the robot holds is "held".
"""

from __future__ import annotations

import numpy as np

from homiebot.core.rooms import RoomPrior, room_at
from homiebot.perception.instance_store import InstanceStore
from homiebot.perception.map_instance import MapInstance
from homiebot.perception.vocabulary import relation_of

FLOOR_HEIGHT = 0.35  # metres: an object centre below this, on no receptacle, is on the floor


class SupportRelations:
    """Refreshes rooms and support relations of the instances of ``store``."""

    def __init__(self, store: InstanceStore, rooms: list[RoomPrior]) -> None:
        self.store = store
        self.rooms = rooms

    def refresh(self) -> None:
        """Recompute every instance's room, and every object's relation and support."""
        recs = [i for i in self.store if i.kind == "receptacle" and self.store.is_confirmed(i) and not i.stale]
        for inst in self.store:
            inst.room = room_at(self.rooms, float(inst.position[0]), float(inst.position[1]))
            if inst.kind != "object":
                continue
            if inst.held:
                inst.relation, inst.support = "held", None
                continue
            rec = self.support_of(inst, recs)
            if rec is not None:
                bottom = inst.position[2] - 0.5 * inst.extent[2]
                on_top = bottom >= rec.hi[2] - 0.06 or relation_of(rec.label) == "on"
                inst.relation, inst.support = ("on" if on_top else "in"), rec.id
            elif inst.position[2] < FLOOR_HEIGHT:
                inst.relation, inst.support = "floor", None
            else:
                inst.relation, inst.support = None, None

    @staticmethod
    def support_of(inst: MapInstance, recs: list[MapInstance]) -> MapInstance | None:
        """The smallest (in plan view) of ``recs`` whose outline holds the object, or None."""
        best = None
        for rec in recs:
            lo, hi = rec.lo, rec.hi
            if rec.is_open and rec.open_lo is not None and rec.label == "drawer":
                assert rec.open_hi is not None  # the open outline's corners are set together
                lo, hi = np.minimum(lo, rec.open_lo), np.maximum(hi, rec.open_hi)
            inside = np.all(inst.position[:2] >= lo[:2] - 0.06) and np.all(inst.position[:2] <= hi[:2] + 0.06)
            if not inside or inst.position[2] > rec.hi[2] + 0.45 or inst.position[2] < rec.lo[2] - 0.05:
                continue
            area = float(np.prod(np.maximum(rec.extent[:2], 0.05)))
            if best is None or area < best[0]:
                best = (area, rec)
        return None if best is None else best[1]
