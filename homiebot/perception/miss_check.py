"""``MissCheck``: instances that an update should have seen but did not.

An instance should be seen when, in some view, most of its observed surface points project inside
the image, within range, large enough to be detected and not hidden behind something nearer.
Each such miss costs confidence; an unconfirmed instance missed twice was a false positive and is
dropped, a confirmed one becomes ``stale`` after ``stale_after`` misses in a row (and is dropped
when the same thing has meanwhile been seen elsewhere).
"""

from __future__ import annotations

import numpy as np

from homiebot.core.contracts import Observation
from homiebot.perception.instance_store import InstanceStore
from homiebot.perception.map_instance import MapInstance, unpack_voxels
from homiebot.perception.map_settings import MapSettings
from homiebot.perception.projection import CameraRig, project
from homiebot.perception.vocabulary import typical_size


class MissCheck:
    """Counts misses of the instances of ``store`` (see the module doc)."""

    def __init__(self, store: InstanceStore, settings: MapSettings) -> None:
        self.store = store
        self.settings = settings

    @staticmethod
    def surface_samples(inst: MapInstance, n: int = 48) -> np.ndarray:
        """Up to ``n`` observed surface points of an instance (its centre when none are kept)."""
        if inst.voxels.size == 0:
            return inst.position[None]
        pick = inst.voxels[np.linspace(0, inst.voxels.size - 1, min(n, inst.voxels.size)).astype(np.int64)]
        return (unpack_voxels(pick) + 0.5) * inst.voxel

    def should_see(self, inst: MapInstance, obs: Observation, rig: CameraRig) -> bool:
        """True if, in some view, most of the instance's observed surface points project inside the
        image, within range, large enough to be detected, and not behind a nearer surface (seeing
        past where it was also counts: then it is gone)."""
        pts = self.surface_samples(inst)
        ext = np.sort(np.maximum(inst.extent, 0.01))[::-1]
        if inst.kind == "object":  # a few voxels under-estimate small things; use the class size
            ext = np.maximum(ext, 0.7 * np.sort(np.array(typical_size(inst.label)))[::-1])
        for view, img in obs.views.items():
            if img.depth is None or view not in rig.poses:
                continue
            r, c, z = project(pts, rig.intrinsics, rig.pose(view))
            h, w = img.depth.shape
            inside = (z > 0.3) & (z < self.settings.max_range) & (r >= 4) & (r < h - 4) & (c >= 4) & (c < w - 4)
            if inside.mean() < 0.5:
                continue
            measured = img.depth[r[inside].astype(int), c[inside].astype(int)]
            unoccluded = float(((measured > 0) & (measured >= z[inside] - 0.08)).mean())
            zm = float(np.median(z[inside]))
            pixels = ext[0] * ext[1] * (rig.intrinsics[0] / zm) * (rig.intrinsics[1] / zm) * unoccluded
            if unoccluded >= 0.5 and pixels >= self.settings.min_expected_pixels:
                return True
        return False

    def check(self, obs: Observation, rig: CameraRig, seen: set[str]) -> tuple[list[str], list[str], list[str]]:
        """Count this update's misses: the ids (missed, became stale, dropped)."""
        missed, stale, dropped = [], [], []
        for inst in self.store.all():
            if inst.id in seen or inst.held or inst.stale or inst.placed_on is not None:
                continue
            if not self.should_see(inst, obs, rig):
                continue
            inst.misses += 1
            inst.confidence *= 0.6
            missed.append(inst.id)
            if not self.store.is_confirmed(inst) and inst.misses >= 2:
                self.store.remove(inst.id)  # an unconfirmed sighting not repeated: a false positive
                dropped.append(inst.id)
            elif inst.misses >= self.settings.stale_after:
                inst.stale = True
                stale.append(inst.id)
                # if the same thing has meanwhile been seen somewhere else, that one is it: drop this belief
                twin = [o for o in self.store if o is not inst and not o.stale and o.label == inst.label
                        and o.first_seen > inst.last_seen and (o.colour == inst.colour or None in (o.colour, inst.colour))]
                if twin:
                    self.store.remove(inst.id)
                    dropped.append(inst.id)
        return missed, stale, dropped
