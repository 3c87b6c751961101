"""Frontier-driven exploration targets from the semantic map's occupancy grid."""

from __future__ import annotations

import math

from homiebot.perception.occupancy import FREE, Frontier
from homiebot.perception.semantic_map import SemanticMap


def next_frontier_goal(smap: SemanticMap, room: str | None = None, robot: tuple[float, float] | None = None,
                       min_size: int = 6, min_distance: float = 0.5, clearance: float = 0.3) -> tuple[float, float] | None:
    """A free point next to the most rewarding frontier (size over travel distance), or None when
    the map (or ``room``) has no frontier left. The point is a free cell with ``clearance`` metres of
    known-free or unknown-but-not-occupied space around it, at least ``min_distance`` from the robot,
    so a navigation planner can reach it."""
    if robot is None:
        robot = (smap.robot[0], smap.robot[1]) if smap.robot is not None else None
    frontiers = smap.frontiers(room=room, min_size=min_size)
    best: tuple[float, tuple[float, float]] | None = None
    for f in frontiers:
        goal = _clear_point(smap, f, clearance)
        if goal is None:
            continue
        dist = math.dist(goal, robot) if robot is not None else 1.0
        if dist < min_distance:
            continue
        score = f.size / (1.0 + dist)
        if best is None or score > best[0]:
            best = (score, goal)
    return None if best is None else best[1]


def _clear_point(smap: SemanticMap, frontier: Frontier, clearance: float) -> tuple[float, float] | None:
    """The frontier's goal cell if no occupied cell lies within ``clearance``; else None."""
    grid = smap.occupancy
    x, y = frontier.goal
    if grid.state_at(x, y) != FREE:
        return None
    g = grid.grid()
    r = int(math.ceil(clearance / grid.resolution))
    iy = int((y - grid.origin[1]) / grid.resolution)
    ix = int((x - grid.origin[0]) / grid.resolution)
    patch = g[max(iy - r, 0):iy + r + 1, max(ix - r, 0):ix + r + 1]
    return None if (patch == 100).any() else (x, y)
