"""Path planning on the occupancy grid: the compiled Dijkstra gives the paths of a textbook heap-based one.

``_reference_dijkstra`` is the plain algorithm (a binary heap of (distance, cell), strict improvement,
no corner cutting). Every case compares the whole path, cell by cell and pose by pose, and its length.
"""

from __future__ import annotations

import heapq
import math
import random

import numpy as np
import pytest

from homiebot.bench.suite import load_suite
from homiebot.worlds.home.navigation import _MOVES, NavigationMap, Pose2D
from homiebot.worlds.home.scene import load_scene
from homiebot.worlds.home.state import HomeState

from ..conftest import ROOT


def _reference_dijkstra(nav: NavigationMap, start, targets, grid=None):
    blocked = nav.planning if grid is None else grid
    dist = {start: 0.0}
    parent = {}
    heap = [(0.0, start)]
    remaining = set(targets)
    ni, nj = nav.shape
    while heap and remaining:
        d, c = heapq.heappop(heap)
        if d > dist[c]:
            continue
        remaining.discard(c)
        for di, dj, cost in _MOVES:
            n = (c[0] + di, c[1] + dj)
            if not (0 <= n[0] < ni and 0 <= n[1] < nj) or blocked[n]:
                continue
            if di and dj and (blocked[c[0] + di, c[1]] or blocked[c[0], c[1] + dj]):
                continue
            nd = d + cost * nav.resolution
            if nd < dist.get(n, math.inf):
                dist[n] = nd
                parent[n] = c
                heapq.heappush(heap, (nd, n))
    return dist, parent


class _ReferenceMap(NavigationMap):
    def _dijkstra(self, start, targets, grid):  # type: ignore[override]
        return _reference_dijkstra(self, start, targets, grid)


def _as_reference(nav: NavigationMap) -> NavigationMap:
    ref = object.__new__(_ReferenceMap)
    ref.__dict__.update(nav.__dict__)
    return ref


def _random_free_pose(nav: NavigationMap, rng: random.Random) -> Pose2D:
    free = np.argwhere(~nav.planning)
    i, j = free[rng.randrange(len(free))]
    x, y = nav.centre((int(i), int(j)))
    return Pose2D(x + rng.uniform(-0.04, 0.04), y + rng.uniform(-0.04, 0.04), rng.uniform(-3, 3))


def _compare(nav: NavigationMap, rng: random.Random, plans: int, discs: int = 0) -> int:
    ref = _as_reference(nav)
    found = 0
    for _ in range(plans):
        start = _random_free_pose(nav, rng)
        goals = [_random_free_pose(nav, rng) for _ in range(rng.randint(1, 6))]
        avoid = [(p.x, p.y, rng.uniform(0.3, 0.8)) for p in (_random_free_pose(nav, rng) for _ in range(discs))]
        got, want = nav.plan(start, goals, avoid), ref.plan(start, goals, avoid)
        assert (got is None) == (want is None)
        if got is not None and want is not None:
            assert got.poses == want.poses and got.length == want.length
            found += 1
    return found


@pytest.mark.parametrize("scene", ["demo", 0, 3, 6])
def test_paths_equal_the_reference_dijkstra_in_real_homes(scene) -> None:
    if scene == "demo":
        spec = load_scene(ROOT / "config" / "scenes" / "demo.yaml")
    else:
        from homiebot.core.tasks import Task
        from homiebot.worlds.home.scenes import HomeScenes

        task: Task = load_suite("home100", "test")[int(scene)]
        spec = HomeScenes().load(task)
    state = HomeState.from_spec(spec)
    rng = random.Random(str(scene))
    assert _compare(state.nav, rng, 40) > 20
    # doors and drawers swung open change the grid (and so the cached move graph)
    openable = [n for n, r in state.layout.receptacles.items() if r.open_extent()]
    state.nav.set_open_state({n: rng.random() < 0.5 for n in openable})
    assert _compare(state.nav, rng, 20) > 8


def test_paths_equal_the_reference_on_cluttered_random_grids() -> None:
    spec = load_scene(ROOT / "config" / "scenes" / "demo.yaml")
    nav = HomeState.from_spec(spec).nav
    rng = random.Random(7)
    for density in (0.05, 0.15, 0.3):
        blocked = np.random.default_rng(int(density * 100)).random(nav.shape) < density
        nav.planning = nav.planning | blocked  # a fresh grid: the move graph is rebuilt
        _compare(nav, rng, 25)


def test_paths_around_discs_to_avoid_equal_the_reference_and_leave_the_grid_as_it_was() -> None:
    nav = HomeState.from_spec(load_scene(ROOT / "config" / "scenes" / "demo.yaml")).nav
    before = nav.planning.copy()
    assert _compare(nav, random.Random(5), 30, discs=2) > 10
    assert (nav.planning == before).all()


def test_a_start_inside_furniture_escapes_to_the_nearest_free_cell() -> None:
    state = HomeState.from_spec(load_scene(ROOT / "config" / "scenes" / "demo.yaml"))
    ref = _as_reference(state.nav)
    start = Pose2D(1.05, 1.2, 0.0)  # too close to the fridge for the base
    goal = [Pose2D(2.5, 6.2, 0.0)]
    got, want = state.nav.plan(start, goal), ref.plan(start, goal)
    assert got is not None and want is not None and got.poses == want.poses and got.length == want.length


def test_an_unreachable_goal_gives_no_path() -> None:
    nav = HomeState.from_spec(load_scene(ROOT / "config" / "scenes" / "demo.yaml")).nav
    start = _random_free_pose(nav, random.Random(1))
    walled = nav.planning.copy()
    i, j = nav.cell(start.x, start.y)
    walled[i - 2: i + 3, j - 2: j + 3] = True
    walled[i - 1: i + 2, j - 1: j + 2] = False  # a free pocket around the start, closed all round
    nav.planning = walled
    far = [p for p in [_random_free_pose(nav, random.Random(k)) for k in range(20)] if math.dist((p.x, p.y), (start.x, start.y)) > 1]
    assert nav.plan(start, far[:3]) is None
