"""The exploration phase before a task's instruction (``tasks.Exploration``), for worlds that build a map.

The robot looks around where it stands, then repeatedly drives to the most rewarding reachable frontier
of its semantic map (anywhere in the home) and looks again, until no frontier is left; then it looks at
every open piece of furniture it mapped from close by (small things on a far table are too small to
see), nearest first. The stop budget bounds both. What it saw stays in the map the planner reads when
the task begins. The robot's navigation keeps it clear of a person; where a person it saw stands on a
frontier's goal, it looks from ``BESIDE_PERSON`` metres from them on its own side instead (it never waits
for them: their unseen steps must not start early).
"""

from __future__ import annotations

import math
from typing import Protocol

from homiebot.contracts import PersonSeen
from homiebot.perception.exploration import next_frontier_goal
from homiebot.perception.semantic_map import SemanticMap, UpdateReport
from homiebot.robot import Robot

LOOK_GAP = 0.9  # metres from a piece of furniture's edge to look at what rests on it
BESIDE_PERSON = 0.9  # metres from a person standing on a frontier's goal (centres) to look from instead


class _Sightings(Protocol):
    people: dict[str, PersonSeen]  # name -> the latest sighting
    in_view: set[str]  # the names the latest observation shows


class _Mapping(Protocol):
    @property
    def map(self) -> SemanticMap: ...

    @property
    def belief(self) -> _Sightings: ...

    def explore_step(self) -> UpdateReport: ...


def explore_home(world: _Mapping, robot: Robot, max_stops: int) -> int:
    """Explore by frontiers until none is left or ``max_stops`` stops were made; returns the stops made."""
    world.explore_step()
    stops = 0
    tried: set[tuple[int, int]] = set()
    while stops < max_stops:
        goal = next_frontier_goal(world.map)
        if goal is None:
            break
        key = (round(goal[0] / 0.25), round(goal[1] / 0.25))
        if key in tried:  # a frontier that driving there did not clear: unreachable for this robot
            break
        tried.add(key)
        step = robot.navigate_to(goal[0], goal[1])
        if step.message and (person := _person_on(world, goal)) is not None:
            here = robot.odometry()
            away = math.atan2(here.y - person[1], here.x - person[0])
            x, y = person[0] + BESIDE_PERSON * math.cos(away), person[1] + BESIDE_PERSON * math.sin(away)
            step = robot.navigate_to(x, y, math.atan2(goal[1] - y, goal[0] - x))
        if step.message:
            continue
        stops += 1
        world.explore_step()
    return stops + _look_at_furniture(world, robot, max_stops - stops)


def _person_on(world: _Mapping, goal: tuple[float, float]) -> tuple[float, float] | None:
    """Where a person in the latest view stands, when within ``BESIDE_PERSON`` of ``goal`` (else None)."""
    belief = world.belief
    for name in sorted(belief.in_view):
        p = belief.people.get(name)
        if p is not None and math.dist((p.x, p.y), goal) < BESIDE_PERSON:
            return (p.x, p.y)
    return None


def _look_at_furniture(world: _Mapping, robot: Robot, budget: int) -> int:
    """Stand next to each mapped receptacle without a door (nearest first) and look; returns the stops made."""
    visited: set[str] = set()
    stops = 0
    while stops < budget:
        here = robot.odometry()
        todo = [i for i in world.map.instances()
                if i.kind == "receptacle" and not i.articulated and not i.stale and i.id not in visited]
        if not todo:
            break
        nearest = min(todo, key=lambda i: (math.dist((here.x, here.y), (float(i.position[0]), float(i.position[1]))), i.id))
        visited.add(nearest.id)
        x, y = float(nearest.position[0]), float(nearest.position[1])
        reach = 0.5 * float(max(nearest.extent[0], nearest.extent[1])) + LOOK_GAP
        if robot.navigate_to(x, y, None, tolerance=reach).message:
            continue
        stops += 1
        world.explore_step()
    return stops
