"""2D occupancy from the home's geometry, and shortest collision-free paths for the robot base.

The raw grid marks walls, furniture footprints and swung-open doors/drawers. The planning grid
inflates it by the base radius, so a free planning cell is a position the base centre may occupy.
Paths come from Dijkstra over the 8-connected planning grid (no corner cutting), run by scipy's compiled
``csgraph.dijkstra`` on a graph built once per planning grid. Among equally short ways into a cell the path
takes the one from the neighbour that is nearest the start, then the lowest (i, j): the order in which a
textbook heap-based Dijkstra settles cells, so the same grid always gives the same path.

Things that move (a person) are not in the grids: a plan may name discs to keep the base centre out of
(``avoid``), added to the planning grid for that plan only, so that the grids stay the home's own.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import dijkstra

from homiebot.worlds.home.catalog import ROBOT_RADIUS
from homiebot.worlds.home.layout import Layout, Receptacle, Room

CLEARANCE = 0.04  # extra margin on top of the base radius
_SQRT2 = math.sqrt(2.0)
Disc = tuple[float, float, float]  # (x, y, radius): a round obstacle the base centre must stay out of
_MOVES = [(-1, 0, 1.0), (1, 0, 1.0), (0, -1, 1.0), (0, 1, 1.0), (-1, -1, _SQRT2), (-1, 1, _SQRT2), (1, -1, _SQRT2), (1, 1, _SQRT2)]


@dataclass(frozen=True)
class Pose2D:
    x: float
    y: float
    yaw: float


@dataclass(frozen=True)
class Path:
    poses: list[Pose2D]
    length: float


class NavigationMap:
    """Occupancy grids of one home and a path planner over them."""

    def __init__(self, layout: Layout, resolution: float = 0.1) -> None:
        self.layout = layout
        self.resolution = resolution
        x0, y0, x1, y1 = layout.bounds
        self.origin = (x0, y0)
        self.shape = (int(math.ceil((x1 - x0) / resolution)) + 1, int(math.ceil((y1 - y0) / resolution)) + 1)
        ix, iy = np.meshgrid(np.arange(self.shape[0]), np.arange(self.shape[1]), indexing="ij")
        self._cx = x0 + (ix + 0.5) * resolution
        self._cy = y0 + (iy + 0.5) * resolution
        self._static = self._rasterise_static()
        self._open: dict[str, bool] = {}
        self.occupancy = self._static.copy()
        self._keep_out = np.zeros(self.shape, dtype=bool)  # rooms the robot must not enter (safety rules)
        self._graph: csr_matrix | None = None  # the planning grid's move graph, built on the first plan
        self.planning = self._inflate(self.occupancy, ROBOT_RADIUS + CLEARANCE)

    @property
    def planning(self) -> np.ndarray:
        """Cells the base centre may not occupy (occupancy inflated by the base radius, plus keep-out rooms)."""
        return self._planning

    @planning.setter
    def planning(self, grid: np.ndarray) -> None:
        self._planning = grid
        self._graph = None

    # ---- grids ---------------------------------------------------------------------------
    def _rasterise_static(self) -> np.ndarray:
        grid = np.ones(self.shape, dtype=bool)  # outside every room is blocked
        for room in self.layout.rooms.values():
            grid &= ~((self._cx >= room.x0) & (self._cx <= room.x1) & (self._cy >= room.y0) & (self._cy <= room.y1))
        for w in self.layout.walls:
            grid |= (self._cx >= w.x0) & (self._cx <= w.x1) & (self._cy >= w.y0) & (self._cy <= w.y1)
        for rec in self.layout.receptacles.values():
            hx, hy, _ = rec.half
            grid |= self._local_rect(rec, -hx, -hy, hx, hy)
        return grid

    def _local_rect(self, rec: Receptacle, x0: float, y0: float, x1: float, y1: float) -> np.ndarray:
        c, s = math.cos(rec.yaw), math.sin(rec.yaw)
        dx, dy = self._cx - rec.x, self._cy - rec.y
        lx, ly = c * dx + s * dy, -s * dx + c * dy
        return (lx >= x0) & (lx <= x1) & (ly >= y0) & (ly <= y1)

    def _inflate(self, grid: np.ndarray, radius: float) -> np.ndarray:
        r = int(math.ceil(radius / self.resolution))
        out = grid.copy()
        padded = np.pad(grid, r, constant_values=True)
        for di in range(-r, r + 1):
            for dj in range(-r, r + 1):
                if (di * di + dj * dj) * self.resolution**2 <= radius * radius + 1e-9:
                    out |= padded[r + di: r + di + self.shape[0], r + dj: r + dj + self.shape[1]]
        return out

    def set_open_state(self, is_open: dict[str, bool]) -> None:
        """Mark swung-open doors and pulled-out drawers as obstacles."""
        if is_open == self._open:
            return
        self._open = dict(is_open)
        grid = self._static.copy()
        for name, opened in is_open.items():
            if opened:
                rec = self.layout.receptacles[name]
                for rect in rec.open_extent():
                    grid |= self._local_rect(rec, *rect)
        self.occupancy = grid
        self.planning = self._inflate(grid, ROBOT_RADIUS + CLEARANCE) | self._keep_out

    def keep_out(self, rooms: list) -> None:
        """Never plan through these rooms (rectangles with ``x0, y0, x1, y1``)."""
        mask = np.zeros(self.shape, dtype=bool)
        for room in rooms:
            mask |= (self._cx >= room.x0) & (self._cx <= room.x1) & (self._cy >= room.y0) & (self._cy <= room.y1)
        self._keep_out = mask
        self.planning = self._inflate(self.occupancy, ROBOT_RADIUS + CLEARANCE) | mask

    # ---- cell helpers ----------------------------------------------------------------------
    def cell(self, x: float, y: float) -> tuple[int, int] | None:
        i = int((x - self.origin[0]) / self.resolution)
        j = int((y - self.origin[1]) / self.resolution)
        if 0 <= i < self.shape[0] and 0 <= j < self.shape[1]:
            return (i, j)
        return None

    def centre(self, cell: tuple[int, int]) -> tuple[float, float]:
        return (float(self._cx[cell]), float(self._cy[cell]))

    def is_free(self, x: float, y: float) -> bool:
        """True if the base centre may stand at (x, y)."""
        c = self.cell(x, y)
        return c is not None and not self.planning[c]

    def is_floor_free(self, x: float, y: float, radius: float) -> bool:
        """True if a disc of ``radius`` on the floor touches no wall or furniture."""
        for dx, dy in ((0, 0), (radius, 0), (-radius, 0), (0, radius), (0, -radius)):
            c = self.cell(x + dx, y + dy)
            if c is None or self.occupancy[c]:
                return False
        return True

    # ---- goal candidates -------------------------------------------------------------------
    def free_poses_in_room(self, room: Room, limit: int = 12, avoid: Sequence[Disc] = ()) -> list[Pose2D]:
        """Free base positions in a room (out of the ``avoid`` discs too), nearest to its centre first."""
        cx, cy = room.center
        inside = (self._cx > room.x0) & (self._cx < room.x1) & (self._cy > room.y0) & (self._cy < room.y1) & ~self.blocked(avoid)
        idx = np.argwhere(inside)
        if len(idx) == 0:
            return []
        d = np.hypot(self._cx[inside] - cx, self._cy[inside] - cy)
        order = np.argsort(d, kind="stable")[:limit]
        return [Pose2D(float(self._cx[tuple(idx[k])]), float(self._cy[tuple(idx[k])]),
                       math.atan2(cy - self._cy[tuple(idx[k])], cx - self._cx[tuple(idx[k])])) for k in order]

    def free_poses_near(self, x: float, y: float, radius: float, yaw: float | None = None, limit: int = 12) -> list[Pose2D]:
        """Free base positions within ``radius`` of (x, y), nearest first, facing (x, y) (or ``yaw``)."""
        inside = (np.hypot(self._cx - x, self._cy - y) <= radius) & ~self.planning
        idx = np.argwhere(inside)
        if len(idx) == 0:
            return []
        d = np.hypot(self._cx[inside] - x, self._cy[inside] - y)
        order = np.argsort(d, kind="stable")[:limit]
        poses = []
        for k in order:
            px, py = float(self._cx[tuple(idx[k])]), float(self._cy[tuple(idx[k])])
            poses.append(Pose2D(px, py, math.atan2(y - py, x - px) if yaw is None else yaw))
        return poses

    @staticmethod
    def poses_around_point(x: float, y: float, radius: float, look: tuple[float, float], n: int = 16) -> list[Pose2D]:
        poses = []
        for k in range(n):
            a = 2 * math.pi * k / n
            px, py = x + radius * math.cos(a), y + radius * math.sin(a)
            poses.append(Pose2D(px, py, math.atan2(look[1] - py, look[0] - px)))
        return poses

    # ---- planning --------------------------------------------------------------------------
    def blocked(self, avoid: Sequence[Disc] = ()) -> np.ndarray:
        """The planning grid with the cells whose centres lie in any of the ``avoid`` discs blocked too."""
        if not avoid:
            return self.planning
        grid = self.planning.copy()
        for x, y, radius in avoid:
            grid |= np.hypot(self._cx - x, self._cy - y) <= radius
        return grid

    def _nearest_free(self, start: tuple[int, int], grid: np.ndarray) -> tuple[tuple[int, int], float] | None:
        """Breadth-first escape from an occupied start cell (the base was pushed against something)."""
        seen = {start}
        frontier = [start]
        while frontier:
            nxt = []
            for c in frontier:
                if not grid[c]:
                    return c, math.dist(self.centre(start), self.centre(c))
                for di, dj, _ in _MOVES:
                    n = (c[0] + di, c[1] + dj)
                    if 0 <= n[0] < self.shape[0] and 0 <= n[1] < self.shape[1] and n not in seen and not self._static[n]:
                        seen.add(n)
                        nxt.append(n)
            frontier = nxt
        return None

    def plan(self, start: Pose2D, goals: list[Pose2D], avoid: Sequence[Disc] = ()) -> Path | None:
        """Shortest path from ``start`` to the first goal (in the given preference order) that is reachable,
        keeping the base centre out of the ``avoid`` discs as well."""
        s = self.cell(start.x, start.y)
        if s is None:
            return None
        grid = self.blocked(avoid)
        escape = 0.0
        if grid[s]:
            found = self._nearest_free(s, grid)
            if found is None:
                return None
            s, escape = found
        goal_cells = {}
        for rank, g in enumerate(goals):
            c = self.cell(g.x, g.y)
            if c is not None and not grid[c] and c not in goal_cells:
                goal_cells[c] = rank
        if not goal_cells:
            return None
        dist, parent = self._dijkstra(s, set(goal_cells), grid)
        reachable = [c for c in goal_cells if c in dist]
        if not reachable:
            return None
        best = min(reachable, key=lambda c: (goal_cells[c], dist[c]))
        goal = goals[goal_cells[best]]
        cells = [best]
        while cells[-1] != s:
            cells.append(parent[cells[-1]])
        cells.reverse()
        points = [(start.x, start.y)] + [self.centre(c) for c in cells[1:-1]] + [(goal.x, goal.y)]
        length = escape + sum(math.dist(a, b) for a, b in zip(points, points[1:]))
        poses = [Pose2D(px, py, math.atan2(qy - py, qx - px)) for (px, py), (qx, qy) in zip(points, points[1:])]
        poses.append(goal)
        return Path(poses, length)

    def _move_graph(self) -> csr_matrix:
        """The move graph of the current planning grid (shared by the copies of one home: each episode copies it)."""
        if self._graph is None:
            self._graph = _move_graph(self.shape, self.resolution, np.packbits(self.planning).tobytes())
        return self._graph

    def _dijkstra(self, start: tuple[int, int], targets: set[tuple[int, int]], grid: np.ndarray):
        """Distances from ``start`` to every reachable target over the free cells of ``grid`` (the planning
        grid, or it with discs to avoid), and each path cell's predecessor on the way back."""
        ni, nj = self.shape
        graph = self._move_graph() if grid is self.planning else _move_graph(self.shape, self.resolution, np.packbits(grid).tobytes())
        flat = dijkstra(graph, directed=True, indices=start[0] * nj + start[1])
        dist = {c: float(flat[c[0] * nj + c[1]]) for c in targets if math.isfinite(flat[c[0] * nj + c[1]])}
        return dist, _Predecessors(graph, flat, nj)


@functools.lru_cache(maxsize=8)
def _move_graph(shape: tuple[int, int], resolution: float, blocked_bits: bytes) -> csr_matrix:
    """Directed edges between free planning cells for the eight moves (diagonals only past two free cells).
    Every edge has its reverse with the same weight, so a cell's row lists the cells it can be entered from."""
    ni, nj = shape
    free = ~np.unpackbits(np.frombuffer(blocked_bits, dtype=np.uint8), count=ni * nj).astype(bool).reshape(shape)
    ids = np.arange(ni * nj).reshape(ni, nj)
    rows, cols, weights = [], [], []
    for di, dj, cost in _MOVES:
        src = (slice(max(0, -di), ni - max(0, di)), slice(max(0, -dj), nj - max(0, dj)))
        dst = (slice(max(0, di), ni - max(0, -di)), slice(max(0, dj), nj - max(0, -dj)))
        ok = free[src] & free[dst]
        if di and dj:  # the two cells beside the diagonal must be free too
            ok &= free[dst[0], src[1]] & free[src[0], dst[1]]
        rows.append(ids[src][ok])
        cols.append(ids[dst][ok])
        weights.append(np.full(int(ok.sum()), cost * resolution))
    return csr_matrix((np.concatenate(weights), (np.concatenate(rows), np.concatenate(cols))), shape=(ni * nj, ni * nj))


class _Predecessors:
    """The cell each path cell is entered from: of the neighbours that reach it at its distance, the one
    settled first by a heap-ordered Dijkstra (smallest distance, then smallest (i, j))."""

    def __init__(self, graph: csr_matrix, dist: np.ndarray, columns: int) -> None:
        self.graph, self.dist, self.columns = graph, dist, columns

    def __getitem__(self, cell: tuple[int, int]) -> tuple[int, int]:
        n = cell[0] * self.columns + cell[1]
        row = slice(self.graph.indptr[n], self.graph.indptr[n + 1])
        best: tuple[float, tuple[int, int]] | None = None
        for c, weight in zip(self.graph.indices[row].tolist(), self.graph.data[row].tolist()):
            d = float(self.dist[c])
            source = divmod(c, self.columns)
            if d + weight == self.dist[n] and (best is None or (d, source) < best):
                best = (d, source)
        if best is None:
            raise KeyError(cell)
        return best[1]
