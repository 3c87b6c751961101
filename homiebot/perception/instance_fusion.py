"""``InstanceFusion``: evidence fused into the semantic map's instances.

A sighting adds its points to an instance's voxels (whose robust box gives position and extent),
votes for its label and colour, and counts once per update towards confirmation. An articulated
receptacle seen open keeps that outline apart from its closed geometry, and a drawer that opens or
closes carries what is in it. Two instances of one label that turn out to overlap become one.
"""

from __future__ import annotations

import numpy as np

from homiebot.perception.instance_store import InstanceStore
from homiebot.perception.map_instance import MapInstance, Sighting3D, no_voxels, pack_voxels
from homiebot.perception.vocabulary import is_receptacle, same_group

MAX_VOXELS = 6000  # per instance: bounds memory and time


def voxel_size(label: str) -> float:
    """Voxel edge (metres) for a label: coarse for furniture, fine for objects."""
    return 0.04 if is_receptacle(label) else 0.015


class InstanceFusion:
    """Fuses sightings into the instances of ``store``, and overlapping instances into one."""

    def __init__(self, store: InstanceStore) -> None:
        self.store = store

    def fuse(self, inst: MapInstance, s: Sighting3D, round_index: int) -> None:
        """Fuse a sighting of update ``round_index`` into an instance: geometry, votes, counters, confidence."""
        first_this_round = inst.last_seen != round_index or inst.times_seen == 0
        inst.label_votes[s.label] += 1
        if s.colour:
            inst.colour_votes[s.colour] += 1
            inst.colour = inst.colour_votes.most_common(1)[0][0]
        # a door or drawer standing open changes the outline: keep the closed geometry apart
        was_open = inst.is_open
        if s.is_open is not None:
            inst.is_open = s.is_open
        fuse = same_group(s.label, inst.label)  # association already checked it is the same thing
        if fuse and inst.articulated and s.is_open:
            lo, hi = np.percentile(s.points, [2, 98], axis=0)
            inst.open_lo = lo if inst.open_lo is None else np.minimum(inst.open_lo, lo)
            inst.open_hi = hi if inst.open_hi is None else np.maximum(inst.open_hi, hi)
            fuse = not inst.closed_geometry  # until it is seen closed, the open outline is all there is
        elif fuse and inst.articulated and s.is_open is False and not inst.closed_geometry:
            inst.voxels, inst.closed_geometry = no_voxels(), True
        if fuse:
            keys = pack_voxels(np.floor(s.points / inst.voxel).astype(np.int64))
            voxels = np.unique(np.concatenate([inst.voxels, keys]))
            if voxels.size > MAX_VOXELS:  # keep an even spread
                voxels = voxels[np.linspace(0, voxels.size - 1, MAX_VOXELS).astype(np.int64)]
            inst.voxels = voxels
            inst.fit_box()
        if was_open is not None and inst.is_open is not None and was_open != inst.is_open:
            self.move_contents(inst, inst.is_open)
        if first_this_round:
            inst.times_seen += 1
            inst.confidence += (1.0 - inst.confidence) * 0.5 * max(0.1, min(1.0, s.score))
        inst.last_seen = round_index
        inst.misses = 0
        inst.placed_on = None
        top, count = inst.label_votes.most_common(1)[0]
        if top != inst.label and count > inst.label_votes[inst.label] and is_receptacle(top) == is_receptacle(inst.label):
            self.store.relabel(inst, top)  # the majority label wins

    def merge_duplicates(self, seen: set[str]) -> list[str]:
        """Two instances of one label that turn out to overlap (partial views of one piece of
        furniture, seen first from different sides) become one; the older id survives. The ids removed."""
        removed: list[str] = []
        for iid in sorted(seen):
            inst = self.store.find(iid)
            if inst is None:
                continue
            for other in self.store.all():
                if other is inst or other.label != inst.label or other.held or inst.held:
                    continue
                pad = 0.1 if inst.kind == "receptacle" else 0.03
                small, big = (other, inst) if np.prod(other.extent[:2] + 0.01) <= np.prod(inst.extent[:2] + 0.01) else (inst, other)
                if not (np.all(small.position[:2] >= big.lo[:2] - pad) and np.all(small.position[:2] <= big.hi[:2] + pad)):
                    continue
                keep, drop = (inst, other) if (inst.first_seen, inst.id) <= (other.first_seen, other.id) else (other, inst)
                self._absorb(keep, drop)
                removed.append(drop.id)
                if drop is inst:
                    break
        return removed

    def _absorb(self, keep: MapInstance, drop: MapInstance) -> None:
        """``keep`` takes over ``drop``'s geometry, sightings and contents; ``drop`` leaves the store."""
        if keep.voxel == drop.voxel and drop.voxels.size:
            keep.voxels = np.unique(np.concatenate([keep.voxels, drop.voxels]))
            keep.fit_box()
        keep.times_seen = max(keep.times_seen, drop.times_seen) + (1 if drop.last_seen != keep.last_seen else 0)
        keep.last_seen = max(keep.last_seen, drop.last_seen)
        keep.stale = keep.stale and drop.stale
        keep.misses = min(keep.misses, drop.misses)
        keep.label_votes.update(drop.label_votes)
        keep.colour_votes.update(drop.colour_votes)
        if keep.open_lo is None and drop.open_lo is not None:
            keep.open_lo, keep.open_hi = drop.open_lo, drop.open_hi
        for o in self.store:
            if o.support == drop.id:
                o.support = keep.id
        self.store.remove(drop.id)

    def move_contents(self, rec: MapInstance, opened: bool) -> None:
        """A drawer opened or closed: objects in it move with it."""
        shift = self.slide(rec)
        if shift is None:
            return
        sign = 1.0 if opened else -1.0
        for inst in self.store:
            if inst.support == rec.id and inst.kind == "object" and not inst.held:
                inst.position = inst.position + sign * shift
                inst.lo, inst.hi = inst.lo + sign * shift, inst.hi + sign * shift
                inst.forget_geometry()

    @staticmethod
    def slide(rec: MapInstance) -> np.ndarray | None:
        """How far a drawer's contents move when it opens (x, y), from its open and closed outlines."""
        if rec.open_lo is None or rec.label != "drawer":  # only drawers carry their contents
            return None
        assert rec.open_hi is not None  # the open outline's corners are set together
        out = np.maximum(rec.open_hi[:2] - rec.hi[:2], 0.0)
        back = np.maximum(rec.lo[:2] - rec.open_lo[:2], 0.0)
        delta = np.where(out >= back, out, -back)
        k = int(np.argmax(np.abs(delta)))  # drawers slide along one axis
        shift = np.zeros(3)
        shift[k] = delta[k]
        return shift if abs(delta[k]) > 0.1 else None
