"""The semantic map: object and furniture instances fused from detections, plus occupancy.

Per update (one observation: four views, their detections and camera poses):

1. each detection's mask pixels with depth are back-projected to world points (subsampled, depth
   outliers against the median rejected); geometry is kept as a small voxel set per instance, whose
   robust bounding box gives position and extent;
2. detections are associated with instances by label and distance (a label of the same group is
   accepted when the detection lies inside the instance: detectors confuse lemons and oranges);
   unmatched ones relocate a stale instance of that label, else start a new instance;
3. instances that should have been seen (their centre projects into a view, close enough and not
   hidden behind something nearer) but were not, lose confidence and become ``stale`` after
   ``stale_after`` such misses in a row; a fresh sighting of the label elsewhere takes over;
4. support relations ("on"/"in" a receptacle), rooms (from the floor-plan prior), container states
   and the occupancy grid are refreshed.

An instance counts (``confirmed``) after ``min_sightings`` sightings in different updates, so a
detector's one-off false positives never reach the planner.

Container state: the door or drawer of an articulated receptacle changes its outline in ways that
are hard to read from geometry alone, so the state comes from the detection's ``open`` attribute
when the detector knows it (the simulator's detector does), from ``open_hints`` passed to
``update``, or from ``set_open`` (e.g. after the robot's own Open/Close succeeded).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from homiebot.core.contracts import PERSON_KIND, Observation
from homiebot.perception.colour import colour_name
from homiebot.perception.detection import Detection
from homiebot.perception.occupancy import Frontier, OccupancyGrid
from homiebot.perception.projection import CameraError, CameraRig, backproject, pixel_grid, project
from homiebot.perception.rooms import RoomPrior, room_at, rooms_from
from homiebot.perception.vocabulary import articulated, is_receptacle, relation_of, same_group, typical_size


class MapError(ValueError):
    """The semantic map was given bad input; the message says what to pass instead."""


_PACK = 1 << 20  # voxel index offset; 21 bits per axis


def _pack(keys: np.ndarray) -> np.ndarray:
    k = keys.astype(np.int64) + _PACK
    return (k[:, 0] << 42) | (k[:, 1] << 21) | k[:, 2]


def _unpack(packed: np.ndarray) -> np.ndarray:
    mask = (1 << 21) - 1
    return np.stack([(packed >> 42) & mask, (packed >> 21) & mask, packed & mask], axis=1) - _PACK


@dataclass
class Sighting3D:
    """One detection lifted to 3D."""

    label: str
    score: float
    view: str
    points: np.ndarray  # N x 3 world points
    colour: str | None
    is_open: bool | None

    @property
    def centre(self) -> np.ndarray:
        lo, hi = np.percentile(self.points, [5, 95], axis=0)
        return 0.5 * (lo + hi)


@dataclass
class MapInstance:
    """One object or piece of furniture the robot believes in."""

    id: str
    label: str
    kind: str  # "object" | "receptacle"
    position: np.ndarray  # x, y, z of the centre
    lo: np.ndarray  # robust bounding box corners
    hi: np.ndarray
    voxel: float
    voxels: np.ndarray  # packed voxel keys of fused points
    colour: str | None = None
    confidence: float = 0.0
    times_seen: int = 0
    first_seen: int = 0
    last_seen: int = 0
    misses: int = 0  # visible-but-not-detected updates in a row
    stale: bool = False
    held: bool = False
    is_open: bool | None = None
    relation: str | None = None  # "on" | "in" | "floor" | "held" (objects)
    support: str | None = None  # receptacle instance id
    room: str | None = None
    label_votes: Counter = field(default_factory=Counter)
    colour_votes: Counter = field(default_factory=Counter)
    placed_on: str | None = None  # set by mark_placed until the object is seen again
    closed_geometry: bool = False  # voxels come from sightings with the door/drawer closed
    open_lo: np.ndarray | None = None  # outline with the door/drawer open (articulated receptacles)
    open_hi: np.ndarray | None = None

    @property
    def articulated(self) -> bool:
        return articulated(self.label)

    @property
    def extent(self) -> np.ndarray:
        return self.hi - self.lo

    def phrase(self) -> str:
        """'white mug' / 'fridge' — colour and label in words."""
        words = self.label.replace("_", " ")
        return f"{self.colour} {words}" if self.colour else words

    def to_dict(self) -> dict[str, Any]:
        """JSON-able description."""
        r = lambda v: [round(float(x), 3) for x in v]  # noqa: E731
        return {"id": self.id, "label": self.label, "kind": self.kind, "colour": self.colour, "position": r(self.position),
                "extent": r(self.extent), "confidence": round(self.confidence, 3), "times_seen": self.times_seen,
                "first_seen": self.first_seen, "last_seen": self.last_seen, "room": self.room, "stale": self.stale,
                "held": self.held, "is_open": self.is_open, "relation": self.relation, "support": self.support}


@dataclass(frozen=True)
class UpdateReport:
    """What one update changed (instance ids)."""

    round: int
    seen: tuple[str, ...]
    created: tuple[str, ...]
    relocated: tuple[str, ...]
    missed: tuple[str, ...]
    became_stale: tuple[str, ...]
    dropped: tuple[str, ...]


class SemanticMap:
    """Fuses per-view detections with depth into object instances, relations and occupancy.

    ``rooms``: floor-plan prior (see ``perception.rooms.rooms_from``); ``bounds``: the mapped area
    (x0, y0, x1, y1), default the rooms' bounding box plus 1 m (required without rooms).
    """

    def __init__(self, rooms: Iterable[Any] | Mapping[str, Any] | None = None, bounds: tuple[float, float, float, float] | None = None,
                 resolution: float = 0.05, min_sightings: int = 2, stale_after: int = 3, max_points: int = 400,
                 occupancy_stride: int = 4, max_range: float = 4.0, min_depth: float = 0.2, robot_radius: float = 0.35,
                 min_expected_pixels: float = 60.0) -> None:
        self.rooms: list[RoomPrior] = rooms_from(rooms)
        if bounds is None:
            if not self.rooms:
                raise MapError("SemanticMap needs rooms (a floor-plan prior) or explicit bounds=(x0, y0, x1, y1)")
            bounds = (min(r.x0 for r in self.rooms) - 1.0, min(r.y0 for r in self.rooms) - 1.0,
                      max(r.x1 for r in self.rooms) + 1.0, max(r.y1 for r in self.rooms) + 1.0)
        if min_sightings < 1 or stale_after < 1 or max_points < 8 or occupancy_stride < 1:
            raise MapError("min_sightings and stale_after must be >= 1, max_points >= 8, occupancy_stride >= 1")
        self.occupancy = OccupancyGrid(bounds, resolution)
        self.min_sightings, self.stale_after = int(min_sightings), int(stale_after)
        self.max_points, self.occupancy_stride = int(max_points), int(occupancy_stride)
        self.max_range, self.min_depth, self.robot_radius = float(max_range), float(min_depth), float(robot_radius)
        self.min_expected_pixels = float(min_expected_pixels)  # smaller in the image: a miss is no evidence
        self._instances: dict[str, MapInstance] = {}
        self._counters: Counter = Counter()
        self.round = -1
        self.robot: tuple[float, float, float] | None = None

    # ---- access ---------------------------------------------------------------------------------
    def instances(self, confirmed: bool = True, include_stale: bool = False) -> list[MapInstance]:
        """Instances in creation order; by default only confirmed, non-stale ones."""
        return [i for i in self._instances.values()
                if (not confirmed or self.is_confirmed(i)) and (include_stale or not i.stale)]

    def is_confirmed(self, inst: MapInstance) -> bool:
        return inst.times_seen >= self.min_sightings or inst.held

    def get(self, instance_id: str) -> MapInstance:
        """The instance with this id (MapError listing the known ids otherwise)."""
        inst = self._instances.get(instance_id)
        if inst is None:
            known = ", ".join(i.id for i in self.instances()) or "none yet"
            raise MapError(f"no map instance '{instance_id}'; known instances: {known}")
        return inst

    def __contains__(self, instance_id: object) -> bool:
        return instance_id in self._instances

    def held(self) -> MapInstance | None:
        return next((i for i in self._instances.values() if i.held), None)

    def contents(self, receptacle_id: str) -> list[MapInstance]:
        """Confirmed objects on or in a receptacle instance."""
        return [i for i in self.instances() if i.support == receptacle_id]

    def room_of_point(self, x: float, y: float) -> str | None:
        return room_at(self.rooms, x, y)

    # ---- the update -------------------------------------------------------------------------------
    def update(self, obs: Observation, detections: Mapping[str, list[Detection]], rig: CameraRig,
               robot_pose: tuple[float, float, float] | None = None, open_hints: Mapping[str, bool] | None = None) -> UpdateReport:
        """Integrate one observation. ``detections``: view -> detections of that view's image;
        ``rig``: intrinsics and world-from-camera pose per view; ``robot_pose``: (x, y, yaw), default
        the observation's pose; ``open_hints``: instance id -> open? for containers."""
        if not isinstance(obs, Observation):
            raise MapError(f"update needs a homiebot Observation, got {type(obs).__name__}")
        unknown_views = sorted(set(detections) - set(obs.views))
        if unknown_views:
            raise MapError(f"detections for views {unknown_views} that the observation does not have ({sorted(obs.views)})")
        self.round = int(obs.round)
        pose = robot_pose if robot_pose is not None else (obs.pose.x, obs.pose.y, obs.pose.yaw)
        self.robot = (float(pose[0]), float(pose[1]), float(pose[2]))
        sightings: list[Sighting3D] = []
        occ_points, occ_cams = [], []
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
            rows, cols = pixel_grid(depth.shape[0], depth.shape[1], self.occupancy_stride)
            d = depth[rows, cols]
            ok = (d > self.min_depth) & (d < 2.0 * self.max_range)
            occ_points.append(backproject(rows[ok], cols[ok], d[ok], rig.intrinsics, cam))
            occ_cams.append(np.broadcast_to(cam[:3, 3], (int(ok.sum()), 3)))
            for det in detections.get(view, []):
                if det.label == PERSON_KIND:
                    continue  # people walk off: not map things (perception.people places them)
                s = self._lift(det, view, img.rgb, depth, rig.intrinsics, cam)
                if s is not None:
                    sightings.append(s)
        seen, created, relocated = self._associate(sightings)
        merged = self._merge_duplicates(seen)
        missed, stale, dropped = self._check_misses(obs, rig, seen)
        for iid, value in (open_hints or {}).items():
            if iid in self._instances:
                self._instances[iid].is_open = bool(value)
        held = self.held()
        if held is not None:
            held.position = np.array([self.robot[0], self.robot[1], held.position[2]])
        self._refresh_relations()
        if occ_points:
            x, y, _ = self.robot
            ring = np.linspace(0, 2 * np.pi, 16, endpoint=False)
            footprint = np.concatenate([np.stack([x + r * np.cos(ring), y + r * np.sin(ring)], 1)
                                        for r in (0.0, 0.5 * self.robot_radius, self.robot_radius)])
            self.occupancy.integrate(np.concatenate(occ_points), np.concatenate(occ_cams), keep_free=footprint,
                                     ignore=(x, y, self.robot_radius + 0.35))
        seen = {i for i in seen if i in self._instances}
        return UpdateReport(self.round, tuple(sorted(seen)), tuple(i for i in created if i in self._instances), tuple(relocated),
                            tuple(missed), tuple(stale), tuple(merged + dropped))

    def _lift(self, det: Detection, view: str, rgb: np.ndarray, depth: np.ndarray, intrinsics, cam: np.ndarray) -> Sighting3D | None:
        """Back-project a detection's mask (or box) pixels with valid depth; None when too few."""
        mask = det.pixel_mask(depth.shape)
        if mask.shape != depth.shape:
            raise MapError(f"view '{view}': a '{det.label}' mask has shape {mask.shape}, the image is {depth.shape}")
        rows, cols = np.nonzero(mask)
        if len(rows) > self.max_points:  # even subsample: deterministic and spread over the mask
            pick = np.linspace(0, len(rows) - 1, self.max_points).astype(np.int64)
            rows, cols = rows[pick], cols[pick]
        d = depth[rows, cols]
        ok = d > self.min_depth
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

    # ---- association --------------------------------------------------------------------------------
    def _voxel_size(self, label: str) -> float:
        return 0.04 if is_receptacle(label) else 0.015

    def _cost(self, s: Sighting3D, inst: MapInstance) -> float | None:
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
        if inst.placed_on is not None and inst.placed_on in self._instances and exact:
            sup = self._instances[inst.placed_on]
            if np.all(c[:2] >= sup.lo[:2] - 0.1) and np.all(c[:2] <= sup.hi[:2] + 0.1):
                return 0.2
        dist = float(np.linalg.norm(c - inst.position))
        gate = 0.3 if exact else 0.12
        return dist + (0.0 if exact else 0.5) if dist <= gate else None

    def _associate(self, sightings: list[Sighting3D]) -> tuple[set[str], list[str], list[str]]:
        seen: set[str] = set()
        created: list[str] = []
        relocated: list[str] = []
        held = self.held()
        pending: list[Sighting3D] = []
        for s in sorted(sightings, key=lambda s: (-len(s.points), s.view, s.label)):
            # what the gripper holds is in view of the front camera: not a new object
            if held is not None and same_group(s.label, held.label) and self.robot is not None and \
                    np.hypot(*(s.centre[:2] - np.array(self.robot[:2]))) < 1.0:
                continue
            costs = [(c, inst.id) for inst in self._instances.values() if not inst.stale
                     for c in [self._cost(s, inst)] if c is not None]
            if costs:
                _, iid = min(costs)
                self._merge(self._instances[iid], s)
                seen.add(iid)
            else:
                pending.append(s)
        for s in pending:  # new things: relocate a stale belief of the same label, else create
            costs = [(c, inst.id) for inst in self._instances.values() if not inst.stale
                     for c in [self._cost(s, inst)] if c is not None]
            if costs:  # an instance created by an earlier sighting of this same update
                iid = min(costs)[1]
                self._merge(self._instances[iid], s)
                seen.add(iid)
                continue
            old = self._stale_match(s)
            if old is not None:
                self._reset_geometry(old)
                old.stale, old.misses, old.placed_on = False, 0, None
                self._merge(old, s)
                seen.add(old.id)
                relocated.append(old.id)
                continue
            inst = self._new_instance(s)
            seen.add(inst.id)
            created.append(inst.id)
        return seen, created, relocated

    def _merge_duplicates(self, seen: set[str]) -> list[str]:
        """Two instances of one label that turn out to overlap (partial views of one piece of
        furniture, seen first from different sides) become one; the older id survives."""
        removed: list[str] = []
        for iid in sorted(seen):
            inst = self._instances.get(iid)
            if inst is None:
                continue
            for other in list(self._instances.values()):
                if other is inst or other.label != inst.label or other.held or inst.held:
                    continue
                pad = 0.1 if inst.kind == "receptacle" else 0.03
                small, big = (other, inst) if np.prod(other.extent[:2] + 0.01) <= np.prod(inst.extent[:2] + 0.01) else (inst, other)
                if not (np.all(small.position[:2] >= big.lo[:2] - pad) and np.all(small.position[:2] <= big.hi[:2] + pad)):
                    continue
                keep, drop = (inst, other) if (inst.first_seen, inst.id) <= (other.first_seen, other.id) else (other, inst)
                if keep.voxel == drop.voxel and drop.voxels.size:
                    keep.voxels = np.unique(np.concatenate([keep.voxels, drop.voxels]))
                    pts = (_unpack(keep.voxels) + 0.5) * keep.voxel
                    q = (2, 98) if keep.kind == "receptacle" else (5, 95)
                    keep.lo, keep.hi = np.percentile(pts, q[0], axis=0), np.percentile(pts, q[1], axis=0)
                    keep.position = 0.5 * (keep.lo + keep.hi)
                keep.times_seen = max(keep.times_seen, drop.times_seen) + (1 if drop.last_seen != keep.last_seen else 0)
                keep.last_seen = max(keep.last_seen, drop.last_seen)
                keep.stale = keep.stale and drop.stale
                keep.misses = min(keep.misses, drop.misses)
                keep.label_votes.update(drop.label_votes)
                keep.colour_votes.update(drop.colour_votes)
                if keep.open_lo is None and drop.open_lo is not None:
                    keep.open_lo, keep.open_hi = drop.open_lo, drop.open_hi
                for o in self._instances.values():
                    if o.support == drop.id:
                        o.support = keep.id
                del self._instances[drop.id]
                removed.append(drop.id)
                if drop is inst:
                    break
        return removed

    def _stale_match(self, s: Sighting3D) -> MapInstance | None:
        cands = [i for i in self._instances.values() if i.stale and i.label == s.label and i.kind == "object"
                 and (i.colour is None or s.colour is None or i.colour == s.colour)]
        return min(cands, key=lambda i: float(np.linalg.norm(i.position - s.centre))) if cands else None

    def _new_instance(self, s: Sighting3D) -> MapInstance:
        self._counters[s.label] += 1
        iid = f"{s.label}_{self._counters[s.label]}"
        while iid in self._instances:
            self._counters[s.label] += 1
            iid = f"{s.label}_{self._counters[s.label]}"
        inst = MapInstance(iid, s.label, "receptacle" if is_receptacle(s.label) else "object", s.centre.copy(),
                           s.centre.copy(), s.centre.copy(), self._voxel_size(s.label), np.empty(0, dtype=np.int64),
                           first_seen=self.round, confidence=0.0)
        self._instances[iid] = inst
        self._merge(inst, s)
        return inst

    def _reset_geometry(self, inst: MapInstance) -> None:
        inst.voxels = np.empty(0, dtype=np.int64)

    def _merge(self, inst: MapInstance, s: Sighting3D) -> None:
        """Fuse a sighting into an instance: geometry, votes, counters, confidence."""
        first_this_round = inst.last_seen != self.round or inst.times_seen == 0
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
            inst.voxels, inst.closed_geometry = np.empty(0, dtype=np.int64), True
        if fuse:
            keys = _pack(np.floor(s.points / inst.voxel).astype(np.int64))
            voxels = np.unique(np.concatenate([inst.voxels, keys]))
            if voxels.size > 6000:  # bound memory and time; keep an even spread
                voxels = voxels[np.linspace(0, voxels.size - 1, 6000).astype(np.int64)]
            inst.voxels = voxels
            pts = (_unpack(voxels) + 0.5) * inst.voxel
            q = (2, 98) if inst.kind == "receptacle" else (5, 95)
            inst.lo, inst.hi = np.percentile(pts, q[0], axis=0), np.percentile(pts, q[1], axis=0)
            inst.position = 0.5 * (inst.lo + inst.hi)
        if was_open is not None and inst.is_open is not None and was_open != inst.is_open:
            self._move_contents(inst, inst.is_open)
        if first_this_round:
            inst.times_seen += 1
            inst.confidence += (1.0 - inst.confidence) * 0.5 * max(0.1, min(1.0, s.score))
        inst.last_seen = self.round
        inst.misses = 0
        inst.placed_on = None
        top, count = inst.label_votes.most_common(1)[0]
        if top != inst.label and count > inst.label_votes[inst.label] and is_receptacle(top) == is_receptacle(inst.label):
            self._relabel(inst, top)

    def _slide(self, rec: MapInstance) -> np.ndarray | None:
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

    def _move_contents(self, rec: MapInstance, opened: bool) -> None:
        """A drawer opened or closed: objects in it move with it."""
        shift = self._slide(rec)
        if shift is None:
            return
        sign = 1.0 if opened else -1.0
        for inst in self._instances.values():
            if inst.support == rec.id and inst.kind == "object" and not inst.held:
                inst.position = inst.position + sign * shift
                inst.lo, inst.hi = inst.lo + sign * shift, inst.hi + sign * shift
                inst.voxels = np.empty(0, dtype=np.int64)

    def _relabel(self, inst: MapInstance, label: str) -> None:
        """An instance takes its majority label (a detector confused it at first) and a matching id."""
        del self._instances[inst.id]
        self._counters[label] += 1
        inst.label, inst.id = label, f"{label}_{self._counters[label]}"
        while inst.id in self._instances:
            self._counters[label] += 1
            inst.id = f"{label}_{self._counters[label]}"
        self._instances[inst.id] = inst

    # ---- misses ----------------------------------------------------------------------------------------
    def _surface_samples(self, inst: MapInstance, n: int = 48) -> np.ndarray:
        """Up to ``n`` observed surface points of an instance (its centre when none are kept)."""
        if inst.voxels.size == 0:
            return inst.position[None]
        pick = inst.voxels[np.linspace(0, inst.voxels.size - 1, min(n, inst.voxels.size)).astype(np.int64)]
        return (_unpack(pick) + 0.5) * inst.voxel

    def should_see(self, inst: MapInstance, obs: Observation, rig: CameraRig) -> bool:
        """True if, in some view, most of the instance's observed surface points project inside the
        image, within range, large enough to be detected, and not behind a nearer surface (seeing
        past where it was also counts: then it is gone)."""
        pts = self._surface_samples(inst)
        ext = np.sort(np.maximum(inst.extent, 0.01))[::-1]
        if inst.kind == "object":  # a few voxels under-estimate small things; use the class size
            ext = np.maximum(ext, 0.7 * np.sort(np.array(typical_size(inst.label)))[::-1])
        for view, img in obs.views.items():
            if img.depth is None or view not in rig.poses:
                continue
            r, c, z = project(pts, rig.intrinsics, rig.pose(view))
            h, w = img.depth.shape
            inside = (z > 0.3) & (z < self.max_range) & (r >= 4) & (r < h - 4) & (c >= 4) & (c < w - 4)
            if inside.mean() < 0.5:
                continue
            measured = img.depth[r[inside].astype(int), c[inside].astype(int)]
            unoccluded = float(((measured > 0) & (measured >= z[inside] - 0.08)).mean())
            zm = float(np.median(z[inside]))
            pixels = ext[0] * ext[1] * (rig.intrinsics[0] / zm) * (rig.intrinsics[1] / zm) * unoccluded
            if unoccluded >= 0.5 and pixels >= self.min_expected_pixels:
                return True
        return False

    def _check_misses(self, obs: Observation, rig: CameraRig, seen: set[str]) -> tuple[list[str], list[str], list[str]]:
        missed, stale, dropped = [], [], []
        for inst in list(self._instances.values()):
            if inst.id in seen or inst.held or inst.stale or inst.placed_on is not None:
                continue
            if not self.should_see(inst, obs, rig):
                continue
            inst.misses += 1
            inst.confidence *= 0.6
            missed.append(inst.id)
            if not self.is_confirmed(inst) and inst.misses >= 2:
                del self._instances[inst.id]  # an unconfirmed sighting not repeated: a false positive
                dropped.append(inst.id)
            elif inst.misses >= self.stale_after:
                inst.stale = True
                stale.append(inst.id)
                # if the same thing has meanwhile been seen somewhere else, that one is it: drop this belief
                twin = [o for o in self._instances.values() if o is not inst and not o.stale and o.label == inst.label
                        and o.first_seen > inst.last_seen and (o.colour == inst.colour or None in (o.colour, inst.colour))]
                if twin:
                    del self._instances[inst.id]
                    dropped.append(inst.id)
        return missed, stale, dropped

    # ---- relations ---------------------------------------------------------------------------------------
    def _refresh_relations(self) -> None:
        recs = [i for i in self._instances.values() if i.kind == "receptacle" and self.is_confirmed(i) and not i.stale]
        for inst in self._instances.values():
            inst.room = self.room_of_point(float(inst.position[0]), float(inst.position[1]))
            if inst.kind != "object":
                continue
            if inst.held:
                inst.relation, inst.support = "held", None
                continue
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
            if best is not None:
                rec = best[1]
                bottom = inst.position[2] - 0.5 * inst.extent[2]
                on_top = bottom >= rec.hi[2] - 0.06 or relation_of(rec.label) == "on"
                inst.relation, inst.support = ("on" if on_top else "in"), rec.id
            elif inst.position[2] < 0.35:
                inst.relation, inst.support = "floor", None
            else:
                inst.relation, inst.support = None, None

    # ---- actions of the robot -------------------------------------------------------------------------------
    def mark_held(self, instance_id: str) -> None:
        """The robot picked this object: it moves with the robot until placed."""
        inst = self.get(instance_id)
        if inst.kind != "object":
            raise MapError(f"'{instance_id}' is a {inst.label}, not an object the robot can hold")
        for other in self._instances.values():
            other.held = False if other is not inst else other.held
        inst.held, inst.stale, inst.misses, inst.placed_on = True, False, 0, None
        inst.relation, inst.support = "held", None
        if self.robot is not None:
            inst.position = np.array([self.robot[0], self.robot[1], inst.position[2]])

    def mark_placed(self, instance_id: str, receptacle_id: str | None) -> None:
        """The robot put the held object on/in a receptacle (or, with None, on the floor beside it);
        its position becomes the receptacle's top centre until it is seen again."""
        inst = self.get(instance_id)
        inst.held = False
        inst.misses = 0
        if receptacle_id is None:
            if self.robot is not None:
                inst.position = np.array([self.robot[0], self.robot[1], 0.5 * inst.extent[2]])
            inst.relation, inst.support = "floor", None
        else:
            rec = self.get(receptacle_id)
            if rec.kind != "receptacle":
                raise MapError(f"'{receptacle_id}' is not a receptacle; objects can only be placed on or in furniture")
            inst.position = np.array([rec.position[0], rec.position[1], rec.hi[2] + 0.5 * inst.extent[2]])
            inst.placed_on = rec.id
            inst.relation, inst.support = relation_of(rec.label) or "on", rec.id
        self._reset_geometry(inst)
        half = 0.5 * inst.extent
        inst.lo, inst.hi = inst.position - half, inst.position + half

    def set_open(self, instance_id: str, is_open: bool) -> None:
        """Record a container's door/drawer state (e.g. after the robot's Open/Close succeeded)."""
        inst = self.get(instance_id)
        if not inst.articulated:
            raise MapError(f"'{instance_id}' ({inst.label}) has no door or drawer")
        was_open = inst.is_open
        inst.is_open = bool(is_open)
        if was_open is not None and was_open != inst.is_open:
            self._move_contents(inst, inst.is_open)

    # ---- exploration ------------------------------------------------------------------------------------
    def frontiers(self, room: str | None = None, min_size: int = 4) -> list[Frontier]:
        """Frontier clusters, largest first; ``room`` restricts them to that room's rectangle."""
        region = None
        if room is not None:
            match = [r for r in self.rooms if r.name == room]
            if not match:
                raise MapError(f"unknown room '{room}'; rooms: {', '.join(r.name for r in self.rooms) or 'none'}")
            region = match[0].rect
        return self.occupancy.frontiers(min_size=min_size, region=region)

    def to_occupancy_msg_fields(self, frame_id: str = "map") -> dict:
        """nav_msgs/OccupancyGrid fields (resolution, width, height, origin, int8 data -1/0/100)."""
        return self.occupancy.to_msg_fields(frame_id)

    # ---- text and JSON ----------------------------------------------------------------------------------
    def where(self, inst: MapInstance) -> str:
        """'on the brown table_1 (kitchen)' / 'in the robot's gripper' / 'in the kitchen'."""
        if inst.held:
            return "in the robot's gripper"
        room = f" ({inst.room})" if inst.room else ""
        if inst.support and inst.support in self._instances:
            sup = self._instances[inst.support]
            return f"{inst.relation} the {sup.phrase()} {sup.id}{room}"
        if inst.relation == "floor":
            return f"on the floor{room}"
        return f"in the {inst.room}" if inst.room else "somewhere"

    def description(self, inst: MapInstance) -> str:
        """One line for prompts and grounding messages, e.g. 'white mug mug_1 on the white desk desk_1 (bedroom)'."""
        state = ""
        if inst.articulated and inst.is_open is not None:
            state = ", open" if inst.is_open else ", closed"
        if inst.kind == "receptacle":
            return f"{inst.phrase()} {inst.id}{state}" + (f" ({inst.room})" if inst.room else "")
        stale = f" (last seen in round {inst.last_seen}, not there any more)" if inst.stale else ""
        return f"{inst.phrase()} {inst.id} {self.where(inst)}{stale}"

    def summary(self) -> dict[str, Any]:
        """JSON-able state: instances (confirmed; stale ones flagged), rooms, explored area, frontiers."""
        return {"round": self.round,
                "robot": None if self.robot is None else [round(v, 3) for v in self.robot],
                "instances": [i.to_dict() for i in self.instances(include_stale=True)],
                "rooms": [{"name": r.name, "rect": list(r.rect)} for r in self.rooms],
                "explored_m2": round(self.occupancy.explored_area(), 2),
                "frontiers": [f.to_dict() for f in self.frontiers()[:10]]}

    def describe(self, max_lines: int = 40) -> str:
        """Short text of what the robot has seen, by room, for planner prompts."""
        lines = []
        by_room: dict[str, list[MapInstance]] = {}
        for inst in self.instances(include_stale=True):
            by_room.setdefault(inst.room or "unknown room", []).append(inst)
        for room in [r.name for r in self.rooms] + ["unknown room"]:
            items = by_room.get(room)
            if not items:
                continue
            recs = [i for i in items if i.kind == "receptacle"]
            parts = []
            for rec in recs:
                contents = [o for o in self.instances() if o.support == rec.id]
                state = "" if rec.is_open is None or not rec.articulated else (" (open)" if rec.is_open else " (closed)")
                inner = f": {', '.join(f'{o.phrase()} {o.id}' for o in contents)} {relation_of(rec.label) or 'on'} it" if contents else ""
                parts.append(f"{rec.phrase()} {rec.id}{state}{inner}")
            loose = [o for o in items if o.kind == "object" and (o.support is None or o.stale) and not o.held]
            parts += [self.description(o).replace(f" ({room})", "") for o in loose]
            lines.append(f"{room}: " + "; ".join(parts))
        held = self.held()
        if held is not None:
            lines.append(f"holding: {held.phrase()} {held.id}")
        if not lines:
            return "Nothing seen yet."
        return "\n".join(lines[:max_lines])
