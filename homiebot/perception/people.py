"""People the cameras see: a detection of the class ``person`` becomes the observation's ``PersonSeen``.

In the simulator the world reports the person it holds; a robot's world reports nobody, so mapped
perception asks its detector. A person detection is placed as objects are: its mask (or box) pixels with
valid depth, those near the median depth (a box also covers what is behind them), back-projected into the
map frame; the person stands at the median of those points. People are not map things: the semantic map
leaves their detections out (they walk away), and only the latest sighting counts.

Tasks have one person (contract: one name), so the best-scored sighting over the four views is kept.
What they hold is not told from a box: ``holding`` stays unknown (None).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from homiebot.core.contracts import PERSON_KIND, Observation, PersonSeen
from homiebot.perception.detection import Detection
from homiebot.perception.projection import CameraError, CameraRig, backproject

PERSON_RADIUS = 0.25  # plan-view body, for the gap between the robot base's edge and them
BODY_DEPTH = 0.4  # metres around the median depth that count as the person's own pixels
MIN_POINTS = 8  # fewer pixels with valid depth place nobody


def person_position(det: Detection, depth: np.ndarray, intrinsics: tuple[float, float, float, float], cam: np.ndarray,
                    min_depth: float = 0.2) -> tuple[float, float] | None:
    """Where (x, y, map frame) a detection's pixels with valid depth put the person; None with too few."""
    rows, cols = np.nonzero(det.pixel_mask(depth.shape))
    d = depth[rows, cols]
    ok = np.isfinite(d) & (d > min_depth)
    if ok.sum() < MIN_POINTS:
        return None
    rows, cols, d = rows[ok], cols[ok], d[ok]
    near = np.abs(d - np.median(d)) <= BODY_DEPTH
    if near.sum() < MIN_POINTS:
        return None
    points = backproject(rows[near], cols[near], d[near], intrinsics, cam)
    return float(np.median(points[:, 0])), float(np.median(points[:, 1]))


def people_seen(obs: Observation, detections: Mapping[str, Sequence[Detection]], rig: CameraRig, robot_radius: float,
                room_of: Callable[[float, float], str | None] | None = None, name: str = PERSON_KIND) -> list[PersonSeen]:
    """The person of the best-scored ``person`` detection of any view that has depth (none: an empty list),
    as the observation's ``people`` hold them: ``name``, position, the gap from the robot base's edge
    (``robot_radius`` from the observation's pose), their room by ``room_of``."""
    best: tuple[float, float, float] | None = None  # score, x, y
    for view, dets in detections.items():
        img = obs.views.get(view)  # type: ignore[call-overload]
        if img is None or img.depth is None:
            continue
        for det in dets:
            if det.label != PERSON_KIND or (best is not None and det.score <= best[0]):
                continue
            try:
                cam = rig.pose(view)
            except CameraError:
                continue
            at = person_position(det, np.asarray(img.depth), rig.intrinsics, cam)
            if at is not None:
                best = (det.score, *at)
    if best is None:
        return []
    _, x, y = best
    gap = max(0.0, math.hypot(x - obs.pose.x, y - obs.pose.y) - robot_radius - PERSON_RADIUS)
    return [PersonSeen(name=name, x=round(x, 3), y=round(y, 3), distance=round(gap, 3),
                       room=room_of(x, y) if room_of is not None else None)]


def without_people(detections: Mapping[str, Sequence[Detection]]) -> dict[str, list[Detection]]:
    """The detections that are not of people (what the semantic map takes)."""
    return {view: [d for d in dets if d.label != PERSON_KIND] for view, dets in detections.items()}
