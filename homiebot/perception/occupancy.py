"""A 2D occupancy grid from depth points, the explored area and frontiers.

Evidence per update, per cell (counted once per update so that near cells, which cover many
pixels, do not outvote far ones): points near floor height mark free, points in the obstacle band
mark occupied, and rays that end on the floor carve free space along their last, low part (only
where the ray passes below ``carve_height``: a higher ray may pass over furniture it cannot
rule out). Log-odds accumulate across updates, so a door that opens or an object that moves is
re-learnt. Cells are unknown until some evidence arrived.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

FREE, OCCUPIED, UNKNOWN = 0, 100, -1  # nav_msgs/OccupancyGrid values


class GridError(ValueError):
    """Bad grid parameters."""


@dataclass(frozen=True)
class Frontier:
    """A cluster of free cells bordering unknown space: where exploring would reveal more."""

    centroid: tuple[float, float]
    size: int  # cells
    goal: tuple[float, float]  # the cluster's free cell closest to its centroid (a reachable target)

    def to_dict(self) -> dict:
        return {"centroid": [round(v, 3) for v in self.centroid], "size": self.size, "goal": [round(v, 3) for v in self.goal]}


class OccupancyGrid:
    """Log-odds occupancy on a fixed axis-aligned area ``bounds = (x0, y0, x1, y1)`` in metres."""

    def __init__(self, bounds: tuple[float, float, float, float], resolution: float = 0.05, floor_max: float = 0.06,
                 obstacle_min: float = 0.12, obstacle_max: float = 1.9, carve_height: float = 0.3,
                 hit: float = 0.9, miss: float = 0.4, limit: float = 4.0) -> None:
        x0, y0, x1, y1 = (float(v) for v in bounds)
        if not (x1 > x0 and y1 > y0):
            raise GridError(f"grid bounds must be (x0, y0, x1, y1) with x1 > x0 and y1 > y0, got {bounds}")
        if resolution <= 0:
            raise GridError(f"grid resolution must be positive, got {resolution}")
        if not floor_max < obstacle_min < obstacle_max:
            raise GridError(f"need floor_max < obstacle_min < obstacle_max, got {floor_max}, {obstacle_min}, {obstacle_max}")
        self.resolution = float(resolution)
        self.origin = (x0, y0)
        self.width = int(np.ceil((x1 - x0) / resolution))
        self.height = int(np.ceil((y1 - y0) / resolution))
        self.floor_max, self.obstacle_min, self.obstacle_max = floor_max, obstacle_min, obstacle_max
        self.carve_height = carve_height
        self.hit, self.miss, self.limit = hit, miss, limit
        self.logodds = np.zeros((self.height, self.width), dtype=np.float32)
        self.explored = np.zeros((self.height, self.width), dtype=bool)

    # ---- coordinates ----------------------------------------------------------------------------
    def cells_of(self, xy: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(iy, ix, inside) cell indices of world points (N x 2)."""
        ix = np.floor((xy[:, 0] - self.origin[0]) / self.resolution).astype(np.int64)
        iy = np.floor((xy[:, 1] - self.origin[1]) / self.resolution).astype(np.int64)
        inside = (ix >= 0) & (ix < self.width) & (iy >= 0) & (iy < self.height)
        return iy, ix, inside

    def centre_of(self, iy: int, ix: int) -> tuple[float, float]:
        """World (x, y) of a cell centre."""
        return (self.origin[0] + (ix + 0.5) * self.resolution, self.origin[1] + (iy + 0.5) * self.resolution)

    def _flat(self, xy: np.ndarray) -> np.ndarray:
        iy, ix, inside = self.cells_of(xy)
        return np.unique(iy[inside] * self.width + ix[inside])

    # ---- updates ----------------------------------------------------------------------------------
    def integrate(self, points: np.ndarray, camera_xyz: np.ndarray, keep_free: np.ndarray | None = None,
                  ignore: tuple[float, float, float] | None = None) -> None:
        """Add one update's evidence. ``points``: world points (N x 3) with a depth return;
        ``camera_xyz``: the camera centre each point was seen from (N x 3, or 3); ``keep_free``:
        optional world (x, y) points known to be free (the robot's footprint); ``ignore``: (x, y, r)
        disc whose points are not obstacles (the robot itself and what it holds)."""
        pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
        cams = np.broadcast_to(np.asarray(camera_xyz, dtype=np.float64), pts.shape)
        z = pts[:, 2]
        floor = z <= self.floor_max
        obstacle = (z >= self.obstacle_min) & (z <= self.obstacle_max)
        if ignore is not None:
            x, y, r = ignore
            obstacle &= (pts[:, 0] - x) ** 2 + (pts[:, 1] - y) ** 2 > r * r
        occupied = self._flat(pts[obstacle, :2])
        free_parts = [self._flat(pts[floor, :2]), self._carve(pts[floor], cams[floor])]
        if keep_free is not None:
            free_parts.append(self._flat(np.asarray(keep_free, dtype=np.float64).reshape(-1, 2)))
        free = np.setdiff1d(np.unique(np.concatenate(free_parts)), occupied, assume_unique=True)
        flat_l, flat_e = self.logodds.reshape(-1), self.explored.reshape(-1)
        flat_l[occupied] = np.minimum(flat_l[occupied] + self.hit, self.limit)
        flat_l[free] = np.maximum(flat_l[free] - self.miss, -self.limit)
        flat_e[occupied] = True
        flat_e[free] = True

    def _carve(self, ends: np.ndarray, cams: np.ndarray, max_rays: int = 4096) -> np.ndarray:
        """Flat cells crossed by the low part (below ``carve_height``) of rays ending on the floor."""
        if not len(ends):
            return np.empty(0, dtype=np.int64)
        step = max(1, len(ends) // max_rays)
        ends, cams = ends[::step], cams[::step]
        h = np.maximum(cams[:, 2] - ends[:, 2], 1e-6)
        t0 = np.clip(1.0 - (self.carve_height - ends[:, 2]) / h, 0.0, 1.0)  # ray fraction where it drops below carve_height
        length = np.hypot(*(ends[:, :2] - cams[:, :2]).T) * (1.0 - t0)
        n = int(np.ceil(length.max() / (0.5 * self.resolution))) + 1 if len(length) else 1
        s = np.linspace(0.0, 1.0, n, endpoint=False)[None, :]  # stop short of the end cell itself
        t = t0[:, None] + (1.0 - t0[:, None]) * s
        xy = cams[:, None, :2] + t[..., None] * (ends[:, None, :2] - cams[:, None, :2])
        return self._flat(xy.reshape(-1, 2))

    # ---- queries -----------------------------------------------------------------------------------
    def grid(self) -> np.ndarray:
        """int8 cells (row = y, column = x): 0 free, 100 occupied, -1 unknown."""
        out = np.full(self.logodds.shape, UNKNOWN, dtype=np.int8)
        out[self.explored & (self.logodds <= 0)] = FREE
        out[self.explored & (self.logodds > 0)] = OCCUPIED
        return out

    def state_at(self, x: float, y: float) -> int:
        """FREE, OCCUPIED or UNKNOWN at a world point (UNKNOWN outside the grid)."""
        iy, ix, inside = self.cells_of(np.array([[x, y]]))
        return int(self.grid()[iy[0], ix[0]]) if inside[0] else UNKNOWN

    def explored_area(self) -> float:
        """Square metres with any evidence."""
        return float(self.explored.sum()) * self.resolution ** 2

    def frontiers(self, min_size: int = 4, region: tuple[float, float, float, float] | None = None) -> list[Frontier]:
        """Clusters (8-connected) of free cells next to unknown ones, largest first; ``region`` limits
        them to a rectangle (x0, y0, x1, y1), e.g. a room."""
        g = self.grid()
        free = g == FREE
        unknown = np.pad(g == UNKNOWN, 1, constant_values=True)
        near_unknown = unknown[:-2, 1:-1] | unknown[2:, 1:-1] | unknown[1:-1, :-2] | unknown[1:-1, 2:]
        mask = free & near_unknown
        if region is not None:
            rx0, ry0, rx1, ry1 = region
            ys = self.origin[1] + (np.arange(self.height) + 0.5) * self.resolution
            xs = self.origin[0] + (np.arange(self.width) + 0.5) * self.resolution
            mask &= ((ys >= ry0) & (ys <= ry1))[:, None] & ((xs >= rx0) & (xs <= rx1))[None, :]
        out = []
        for cells in _components(mask):
            if len(cells) < min_size:
                continue
            arr = np.array(cells)
            cy, cx = arr.mean(axis=0)
            best = arr[np.argmin((arr[:, 0] - cy) ** 2 + (arr[:, 1] - cx) ** 2)]
            out.append(Frontier(self.centre_of(cy, cx), len(cells), self.centre_of(int(best[0]), int(best[1]))))
        out.sort(key=lambda f: -f.size)
        return out

    def to_msg_fields(self, frame_id: str = "map") -> dict:
        """The fields of a nav_msgs/OccupancyGrid: info (resolution, width, height, origin) and data
        (row-major, index = x + y * width, values -1/0/100)."""
        return {"header": {"frame_id": frame_id},
                "info": {"resolution": self.resolution, "width": self.width, "height": self.height,
                         "origin": {"position": {"x": self.origin[0], "y": self.origin[1], "z": 0.0},
                                    "orientation": {"x": 0.0, "y": 0.0, "z": 0.0, "w": 1.0}}},
                "data": self.grid().ravel().tolist()}


def _components(mask: np.ndarray) -> list[list[tuple[int, int]]]:
    """8-connected components of a sparse boolean mask (breadth-first over its true cells only)."""
    todo = set(zip(*np.nonzero(mask)))
    comps = []
    while todo:
        seed = todo.pop()
        comp, queue = [seed], deque([seed])
        while queue:
            r, c = queue.popleft()
            for dr in (-1, 0, 1):
                for dc in (-1, 0, 1):
                    nb = (r + dr, c + dc)
                    if nb in todo:
                        todo.remove(nb)
                        comp.append(nb)
                        queue.append(nb)
        comps.append([(int(r), int(c)) for r, c in comp])
    return comps
