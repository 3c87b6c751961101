"""``SightingAssociation``: which instance of the semantic map each sighting of an update is.

A sighting matches an instance by label and distance (a label of the same group is accepted when
the sighting lies inside the instance: detectors confuse lemons and oranges); furniture, seen in
parts, matches on shared points or touching boxes. Unmatched sightings relocate a stale instance of
their label, else start a new instance. Larger sightings go first, so they claim their instance.
"""

from __future__ import annotations

import numpy as np

from homiebot.perception.instance_fusion import InstanceFusion, voxel_size
from homiebot.perception.instance_store import InstanceStore
from homiebot.perception.map_instance import MapInstance, Sighting3D, no_voxels
from homiebot.perception.vocabulary import is_receptacle, same_group

HELD_IN_VIEW = 1.0  # metres from the robot within which a sighting of the held object's kind is the held object


class SightingAssociation:
    """Matches sightings to the instances of ``store`` and fuses them in through ``fusion``."""

    def __init__(self, store: InstanceStore, fusion: InstanceFusion) -> None:
        self.store = store
        self.fusion = fusion

    def cost(self, s: Sighting3D, inst: MapInstance) -> float | None:
        """Association cost (metres), or None when outside the gate."""
        if inst.held or not same_group(s.label, inst.label):
            return None
        exact = s.label == inst.label
        c = s.centre
        if inst.kind == "receptacle":
            # partial views of furniture: match on shared points, or on touching boxes
            lo, hi = inst.lo - 0.1, inst.hi + 0.1
            if inst.open_lo is not None:
                assert inst.open_hi is not None  # the open outline's corners are set together
                lo, hi = np.minimum(lo, inst.open_lo - 0.1), np.maximum(hi, inst.open_hi + 0.1)
            frac = float(np.mean(np.all((s.points >= lo) & (s.points <= hi), axis=1)))
            slo, shi = np.percentile(s.points[:, :2], [5, 95], axis=0)
            gap = float(np.linalg.norm(np.maximum(0.0, np.maximum(lo[:2] - shi, slo - hi[:2]))))
            if exact and (frac >= 0.3 or gap <= 0.05):
                return 1.0 - frac + gap
            if not exact and frac >= 0.6:
                return 1.5 - frac
            return None
        sup = self.store.find(inst.placed_on) if inst.placed_on is not None else None
        if sup is not None and exact:
            if np.all(c[:2] >= sup.lo[:2] - 0.1) and np.all(c[:2] <= sup.hi[:2] + 0.1):
                return 0.2
        dist = float(np.linalg.norm(c - inst.position))
        gate = 0.3 if exact else 0.12
        return dist + (0.0 if exact else 0.5) if dist <= gate else None

    def associate(self, sightings: list[Sighting3D], robot: tuple[float, float, float] | None,
                  round_index: int) -> tuple[set[str], list[str], list[str]]:
        """Fuse an update's sightings into the map: the ids (seen, created, relocated)."""
        seen: set[str] = set()
        created: list[str] = []
        relocated: list[str] = []
        held = self.store.held()
        pending: list[Sighting3D] = []
        for s in sorted(sightings, key=lambda s: (-len(s.points), s.view, s.label)):
            # what the gripper holds is in view of the front camera: not a new object
            if held is not None and same_group(s.label, held.label) and robot is not None and \
                    np.hypot(*(s.centre[:2] - np.array(robot[:2]))) < HELD_IN_VIEW:
                continue
            match = self._best_match(s)
            if match is not None:
                seen.add(match.id)  # the id before fusing: a relabel gives the instance a new one
                self.fusion.fuse(match, s, round_index)
            else:
                pending.append(s)
        for s in pending:  # new things: relocate a stale belief of the same label, else create
            match = self._best_match(s)
            if match is not None:  # an instance created by an earlier sighting of this same update
                seen.add(match.id)
                self.fusion.fuse(match, s, round_index)
                continue
            old = self.stale_match(s)
            if old is not None:
                old.forget_geometry()
                old.stale, old.misses, old.placed_on = False, 0, None
                self.fusion.fuse(old, s, round_index)
                seen.add(old.id)
                relocated.append(old.id)
                continue
            inst = self.new_instance(s, round_index)
            seen.add(inst.id)
            created.append(inst.id)
        return seen, created, relocated

    def _best_match(self, s: Sighting3D) -> MapInstance | None:
        """The non-stale instance of least cost (ties: the smaller id), or None when none is in the gate."""
        costs = [(c, inst.id) for inst in self.store if not inst.stale
                 for c in [self.cost(s, inst)] if c is not None]
        if not costs:
            return None
        return self.store.get(min(costs)[1])

    def stale_match(self, s: Sighting3D) -> MapInstance | None:
        """The nearest stale object of the sighting's label (and colour, when both are known), or None."""
        cands = [i for i in self.store if i.stale and i.label == s.label and i.kind == "object"
                 and (i.colour is None or s.colour is None or i.colour == s.colour)]
        return min(cands, key=lambda i: float(np.linalg.norm(i.position - s.centre))) if cands else None

    def new_instance(self, s: Sighting3D, round_index: int) -> MapInstance:
        """A new instance from a sighting of update ``round_index``."""
        iid = self.store.new_id(s.label)
        inst = MapInstance(iid, s.label, "receptacle" if is_receptacle(s.label) else "object", s.centre.copy(),
                           s.centre.copy(), s.centre.copy(), voxel_size(s.label), no_voxels(),
                           first_seen=round_index, confidence=0.0)
        self.store.add(inst)
        self.fusion.fuse(inst, s, round_index)
        return inst
