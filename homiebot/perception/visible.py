"""What is in view: per-instance sightings from instance segmentation, and 2D support relations.

Works on any Observation whose views carry segmentation and whose ``labels`` name the instance ids
(the embedded home's oracle perception, or a detector that fills them in).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from homiebot.core.contracts import Observation

MIN_PIXELS = 6  # smaller blobs are too unreliable to act on


@dataclass(frozen=True)
class Sighting:
    """One instance in one view."""

    name: str
    category: str
    view: str
    pixels: int
    bbox: tuple[int, int, int, int]  # row0, col0, row1, col1 (inclusive)
    depth: float | None  # median depth of its pixels, metres

    @property
    def centre(self) -> tuple[float, float]:
        r0, c0, r1, c1 = self.bbox
        return ((r0 + r1) / 2, (c0 + c1) / 2)


def sightings(obs: Observation) -> dict[str, list[Sighting]]:
    """Every labelled instance visible in the observation, with one Sighting per view it appears in."""
    out: dict[str, list[Sighting]] = {}
    for view, img in obs.views.items():
        seg = img.segmentation
        if seg is None:
            continue
        ids, counts = np.unique(seg, return_counts=True)
        for inst, count in zip(ids.tolist(), counts.tolist()):
            label = obs.labels.get(inst)
            if label is None or count < MIN_PIXELS:
                continue
            rows, cols = np.nonzero(seg == inst)
            depth = None
            if img.depth is not None:
                values = img.depth[rows, cols]
                values = values[values > 0]
                depth = float(np.median(values)) if values.size else None
            out.setdefault(label.name, []).append(Sighting(label.name, label.category, view, count,
                                                           (int(rows.min()), int(cols.min()), int(rows.max()), int(cols.max())), depth))
    return out


def rests_on(obj: Sighting, support: Sighting, depth_tolerance: float = 0.6) -> bool:
    """True if, in one view, ``obj`` appears to rest on or in ``support``: its centre lies inside the
    support's box (slightly enlarged) and, with depth, both are about as far away."""
    if obj.view != support.view:
        return False
    r, c = obj.centre
    r0, c0, r1, c1 = support.bbox
    pad_r, pad_c = 0.1 * (r1 - r0 + 1), 0.1 * (c1 - c0 + 1)
    inside = (r0 - pad_r) <= r <= (r1 + pad_r) and (c0 - pad_c) <= c <= (c1 + pad_c)
    if not inside:
        return False
    if obj.depth is None or support.depth is None:
        return True
    return abs(obj.depth - support.depth) <= depth_tolerance


def supports(seen: dict[str, list[Sighting]], obj: str) -> list[str]:
    """Names of the things ``obj`` appears to rest on/in, best (largest) first."""
    found: dict[str, int] = {}
    for o in seen.get(obj, []):
        for name, sights in seen.items():
            if name == obj:
                continue
            for s in sights:
                if rests_on(o, s):
                    found[name] = max(found.get(name, 0), s.pixels)
    return sorted(found, key=lambda n: -found[n])


def standing_in(obs: Observation, seen: dict[str, list[Sighting]], kinds: set[str] | frozenset[str]) -> dict[str, str]:
    """The room each visible piece of furniture (category in ``kinds``) stands in: the floor seen just
    below it, in the view that shows most of it. Furniture whose foot is hidden tells nothing."""
    rooms = {inst: label.name for inst, label in obs.labels.items() if label.category == "room"}
    if not rooms:
        return {}
    out: dict[str, str] = {}
    for name, sights in seen.items():
        if not sights or sights[0].category not in kinds:
            continue
        best = max(sights, key=lambda s: s.pixels)
        seg = obs.views[best.view].segmentation  # type: ignore[index]
        if seg is None:
            continue
        r0, c0, r1, c1 = best.bbox
        strip = seg[r1 + 1:min(seg.shape[0], r1 + 4), c0:c1 + 1]
        floors = [rooms[i] for i in strip.ravel().tolist() if i in rooms]
        if floors:
            out[name] = max(set(floors), key=floors.count)
    return out
