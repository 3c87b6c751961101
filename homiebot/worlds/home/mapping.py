"""The embedded home's help for the semantic map: cameras, door states, exploration and truth binding.

Nothing here is available on a real robot: ``rig_from_home`` reads the renderer's camera poses,
``sim_open_state`` the true door states, ``bind_to_truth``/``evaluate_map`` the true object poses.
Privileged skills use ``bind_to_truth`` to act on mapped instances; tests and benchmarks use the
sweeps and the evaluation.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from homiebot.core.contracts import VIEW_NAMES
from homiebot.perception.detection import Detector
from homiebot.perception.detectors import detect_views
from homiebot.perception.exploration import next_frontier_goal
from homiebot.perception.projection import CameraRig
from homiebot.perception.semantic_map import SemanticMap, UpdateReport

NEAR_FRONTIER = 1.2  # metres from a frontier goal the person stands on that the robot may look from instead


class HomePerceptionHints:
    """``PerceptionHints`` of an ``EmbeddedHome``: true door states and the binding of map instances to
    the home's objects."""

    def __init__(self, world: Any) -> None:
        self.world = world

    def open_state(self) -> dict[int, bool]:
        return sim_open_state(self.world)

    def bind(self, smap: SemanticMap, radius: float) -> dict[str, str]:
        return bind_to_truth(smap, self.world.state, radius=radius)

    def held_name(self) -> str | None:
        return self.world.state.held


class MirrorHints:
    """``PerceptionHints`` of a ``HomeMirror`` (the mapper node's): the binding and the held object from the
    mirrored state; no door states (the world node sends those, it has the renderer's ids)."""

    def __init__(self, mirror: Any) -> None:
        self.mirror = mirror

    def open_state(self) -> dict[int, bool]:
        return {}

    def bind(self, smap: SemanticMap, radius: float) -> dict[str, str]:
        return bind_to_truth(smap, self.mirror.state, radius=radius)

    def held_name(self) -> str | None:
        return self.mirror.state.held


def rig_from_home(world: Any) -> CameraRig:
    """Intrinsics and per-view camera poses of an EmbeddedHome (valid after ``world.observe``)."""
    r = world.renderer
    return CameraRig(r.camera_intrinsics(), {v: r.camera_pose(v) for v in VIEW_NAMES})


def sim_open_state(world: Any) -> dict[int, bool]:
    """Instance id -> open? for the articulated receptacles of an EmbeddedHome."""
    ids = world.renderer.instance_ids
    return {ids[n]: bool(v) for n, v in world.state.is_open.items() if n in ids}


def map_for_home(world: Any, **params: Any) -> SemanticMap:
    """A SemanticMap whose room prior is the home's floor plan."""
    return SemanticMap(rooms=world.state.layout.rooms, **params)


def observe_into(world: Any, smap: SemanticMap, detector: Detector, round_index: int) -> UpdateReport:
    """Render one observation, detect in every view and update the map."""
    obs = world.observe(round_index)
    detections = detect_views(detector, obs, round_index, open_state=sim_open_state(world))
    return smap.update(obs, detections, rig_from_home(world))


@dataclass
class SweepResult:
    """What an exploration sweep did."""

    rounds: int = 0
    visited: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    reports: list[UpdateReport] = field(default_factory=list)


def _turn(world: Any, delta: float) -> None:
    """Rotate the robot in place (kinematic, like the privileged navigation)."""
    from homiebot.worlds.home.state import RobotPose

    r = world.state.robot
    world.state.robot = RobotPose(r.x, r.y, (r.yaw + delta + math.pi) % (2 * math.pi) - math.pi)


def explore_sweep(world: Any, smap: SemanticMap, detector: Detector, targets: Iterable[str] | None = None,
                  open_containers: bool = True, turn: float = 0.5, start_round: int = 0) -> SweepResult:
    """Drive to every room and receptacle (or ``targets``), observing twice at each stop (the
    second time turned by ``turn`` radians, so each thing is seen in two updates); closed doors
    and drawers are opened to look inside and closed again. Returns what was done."""
    state = world.state
    if targets is None:
        targets = []
        for room in state.layout.rooms:
            targets.append(room)
            targets += [n for n, rec in state.layout.receptacles.items() if rec.room == room]
    result = SweepResult()
    k = start_round

    def look(times: int = 2) -> None:
        nonlocal k
        for i in range(times):
            if i:
                _turn(world, turn)
            result.reports.append(observe_into(world, smap, detector, k))
            k += 1
        if times > 1:
            _turn(world, -turn * (times - 1))

    for target in targets:
        if not state.navigate(target).ok:
            result.failed.append(target)
            continue
        result.visited.append(target)
        look()
        rec = state.layout.receptacles.get(target)
        if open_containers and rec is not None and rec.type.articulated and not state.is_open.get(target, False):
            if state.articulate(target, True).ok:
                look()
                state.articulate(target, False)
                look(1)
    result.rounds = k - start_round
    return result


def explore_frontiers(world: Any, smap: SemanticMap, detector: Detector, max_goals: int = 20, room: str | None = None,
                      start_round: int = 0) -> SweepResult:
    """Frontier exploration: observe, drive to ``next_frontier_goal``, repeat until none is left
    (or ``max_goals``); goals the navigation cannot reach are skipped by observing from there anyway.
    The drives go around the person as a Go to does (``HomeState.robot_plan``) and never wait for them
    (their unseen steps must not start early); where they stand on a goal, the robot looks from a free
    spot within ``NEAR_FRONTIER`` of it."""
    from homiebot.worlds.home.navigation import Pose2D
    from homiebot.worlds.home.state import RobotPose

    state = world.state
    result = SweepResult()
    k = start_round
    result.reports.append(observe_into(world, smap, detector, k))
    k += 1
    for _ in range(max_goals):
        goal = next_frontier_goal(smap, room=room)
        if goal is None:
            break
        r = state.robot
        heading = math.atan2(goal[1] - r.y, goal[0] - r.x)
        path = state.robot_plan([Pose2D(goal[0], goal[1], heading)])  # around the person, as Go to plans
        if path is None and state.person is not None:  # they may stand on the goal: look from beside it
            path = state.robot_plan(state.nav.free_poses_near(goal[0], goal[1], NEAR_FRONTIER, limit=1000))
        if path is None:
            result.failed.append(f"({goal[0]:.2f}, {goal[1]:.2f})")
            break
        end = path.poses[-1]
        state.robot = RobotPose(end.x, end.y, end.yaw)
        state.path_length += path.length
        result.visited.append(f"({end.x:.2f}, {end.y:.2f})")
        result.reports.append(observe_into(world, smap, detector, k))
        k += 1
    result.rounds = k - start_round
    return result


# ---- truth ------------------------------------------------------------------------------------------
def _truth_entities(state: Any) -> list[tuple[str, str, float, float]]:
    """(canonical name, category, x, y) of every receptacle and every object not in the gripper."""
    out = [(n, rec.type.name, rec.x, rec.y) for n, rec in state.layout.receptacles.items()]
    for n, info in state.layout.objects.items():
        if n == state.held or n not in state.object_poses:
            continue
        x, y, _, _ = state.object_poses[n]
        out.append((n, info.cls.name, x, y))
    return out


def _match(smap: SemanticMap, state: Any, radius: float) -> tuple[dict[str, str], dict[str, float]]:
    """Greedy one-to-one matching of confirmed instances to truth by category, nearest first (x, y)."""
    truth = _truth_entities(state)
    insts = [i for i in smap.instances() if not i.held]
    pairs = []
    for inst in insts:
        for name, cat, x, y in truth:
            if cat == inst.label:
                d = math.hypot(inst.position[0] - x, inst.position[1] - y)
                if d <= radius:
                    pairs.append((d, inst.id, name))
    pairs.sort()
    bound: dict[str, str] = {}
    errors: dict[str, float] = {}
    used: set[str] = set()
    for d, iid, name in pairs:
        if iid in bound or name in used:
            continue
        bound[iid], errors[iid] = name, d
        used.add(name)
    held = smap.held()
    if held is not None and state.held is not None and held.label == state.layout.objects[state.held].cls.name:
        bound[held.id], errors[held.id] = state.held, 0.0
    return bound, errors


def bind_to_truth(smap: SemanticMap, state: Any, radius: float = 0.5) -> dict[str, str]:
    """Map instance id -> the simulator's canonical name (same category, nearest within ``radius``
    metres in x, y, one-to-one); instances without a counterpart are left out."""
    return _match(smap, state, radius)[0]


def evaluate_map(smap: SemanticMap, state: Any, radius: float = 0.5, names: Iterable[str] | None = None) -> dict[str, Any]:
    """Precision, recall and x-y position error of the confirmed instances against the truth
    (objects: pose centre; receptacles: footprint centre). ``names`` limits the truth set."""
    bound, errors = _match(smap, state, radius)
    truth = {n for n, *_ in _truth_entities(state)}
    if names is not None:
        truth &= set(names)
    insts = [i.id for i in smap.instances() if not i.held]
    tp = [iid for iid in insts if bound.get(iid) in truth]
    fp = [iid for iid in insts if iid not in bound]
    found = {bound[i] for i in tp}
    errs = np.array([errors[i] for i in tp]) if tp else np.array([np.nan])
    return {"precision": len(tp) / max(1, len(tp) + len(fp)), "recall": len(found) / max(1, len(truth)),
            "median_error": float(np.median(errs)), "p90_error": float(np.percentile(errs, 90)),
            "true_positives": len(tp), "false_positives": sorted(fp), "missed": sorted(truth - found),
            "binding": {i: bound[i] for i in tp}}
