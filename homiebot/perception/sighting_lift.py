"""``ViewLifter``: an observation's views and detections lifted into the world, for the semantic map.

Each detection's mask pixels with depth become world points (an even subsample of at most
``max_points``; depths far from the mask's median, i.e. background inside a box-only mask, are
rejected), with the colour under them and the detector's ``open`` attribute. Each view's depth,
at ``occupancy_stride``, also becomes points for the occupancy grid, with the camera they were seen from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from homiebot.core.contracts import PERSON_KIND, Observation
from homiebot.perception.colour import colour_name
from homiebot.perception.detection import Detection
from homiebot.perception.map_instance import MapError, Sighting3D
from homiebot.perception.map_settings import MapSettings
from homiebot.perception.projection import CameraError, CameraRig, backproject, pixel_grid
from homiebot.perception.vocabulary import typical_size


@dataclass
class LiftedViews:
    """One observation in world coordinates."""

    sightings: list[Sighting3D] = field(default_factory=list)
    depth_points: list[np.ndarray] = field(default_factory=list)  # per view with depth: N x 3 world points
    cameras: list[np.ndarray] = field(default_factory=list)  # per view: N x 3, the camera each point was seen from


class ViewLifter:
    """Lifts views and detections to world points (see the module doc)."""

    def __init__(self, settings: MapSettings) -> None:
        self.settings = settings

    def lift_views(self, obs: Observation, detections: Mapping[str, list[Detection]], rig: CameraRig) -> LiftedViews:
        """The sightings and depth points of every view with depth (people left out: they walk off)."""
        lifted = LiftedViews()
        for view, img in obs.views.items():
            if img.depth is None:
                continue  # without depth nothing can be placed in the world
            try:
                cam = rig.pose(view)
            except CameraError as err:
                raise MapError(str(err)) from err
            depth = np.asarray(img.depth)
            if depth.shape != img.rgb.shape[:2]:
                raise MapError(f"view '{view}': depth {depth.shape} and RGB {img.rgb.shape[:2]} sizes differ")
            rows, cols = pixel_grid(depth.shape[0], depth.shape[1], self.settings.occupancy_stride)
            d = depth[rows, cols]
            ok = (d > self.settings.min_depth) & (d < 2.0 * self.settings.max_range)
            lifted.depth_points.append(backproject(rows[ok], cols[ok], d[ok], rig.intrinsics, cam))
            lifted.cameras.append(np.broadcast_to(cam[:3, 3], (int(ok.sum()), 3)))
            for det in detections.get(view, []):
                if det.label == PERSON_KIND:
                    continue  # people walk off: not map things (perception.people places them)
                s = self.lift(det, view, img.rgb, depth, rig.intrinsics, cam)
                if s is not None:
                    lifted.sightings.append(s)
        return lifted

    def lift(self, det: Detection, view: str, rgb: np.ndarray, depth: np.ndarray, intrinsics, cam: np.ndarray) -> Sighting3D | None:
        """Back-project a detection's mask (or box) pixels with valid depth; None when too few."""
        mask = det.pixel_mask(depth.shape)
        if mask.shape != depth.shape:
            raise MapError(f"view '{view}': a '{det.label}' mask has shape {mask.shape}, the image is {depth.shape}")
        rows, cols = np.nonzero(mask)
        if len(rows) > self.settings.max_points:  # even subsample: deterministic and spread over the mask
            pick = np.linspace(0, len(rows) - 1, self.settings.max_points).astype(np.int64)
            rows, cols = rows[pick], cols[pick]
        d = depth[rows, cols]
        ok = d > self.settings.min_depth
        if ok.sum() < 4:
            return None
        rows, cols, d = rows[ok], cols[ok], d[ok]
        try:
            size = max(typical_size(det.label))
        except KeyError:
            size = 1.0
        med = float(np.median(d))
        near = np.abs(d - med) <= max(0.15, size)  # box-only masks include background
        if near.sum() < 4:
            return None
        rows, cols, d = rows[near], cols[near], d[near]
        points = backproject(rows, cols, d, intrinsics, cam)
        colour = colour_name(rgb[rows, cols])
        is_open = det.attributes.get("open") if det.attributes else None
        return Sighting3D(det.label, float(det.score), view, points, colour, None if is_open is None else bool(is_open))
