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

from homiebot.core.map_access import MapAccess
from homiebot.core.robot import Robot

LOOK_GAP = 0.9  # metres from a piece of furniture's edge to look at what rests on it
BESIDE_PERSON = 0.9  # metres from a person standing on a frontier's goal (centres) to look from instead


def explore_home(smap: MapAccess, robot: Robot, max_stops: int) -> int:
    """Explore by frontiers until none is left or ``max_stops`` stops were made; returns the stops made."""
    smap.look()
    stops = 0
    tried: set[tuple[int, int]] = set()
    while stops < max_stops:
        goal = smap.next_frontier()
        if goal is None:
            break
        key = (round(goal[0] / 0.25), round(goal[1] / 0.25))
        if key in tried:  # a frontier that driving there did not clear: unreachable for this robot
            break
        tried.add(key)
        step = robot.navigate_to(goal[0], goal[1])
        if step.message and (person := smap.person_near(goal, BESIDE_PERSON)) is not None:
            here = robot.odometry()
            away = math.atan2(here.y - person[1], here.x - person[0])
            x, y = person[0] + BESIDE_PERSON * math.cos(away), person[1] + BESIDE_PERSON * math.sin(away)
            step = robot.navigate_to(x, y, math.atan2(goal[1] - y, goal[0] - x))
        if step.message:
            continue
        stops += 1
        smap.look()
    return stops + _look_at_furniture(smap, robot, max_stops - stops)


def _look_at_furniture(smap: MapAccess, robot: Robot, budget: int) -> int:
    """Stand next to each mapped receptacle without a door (nearest first) and look; returns the stops made."""
    visited: set[str] = set()
    stops = 0
    while stops < budget:
        here = robot.odometry()
        todo = [p for p in smap.places() if p.kind == "receptacle" and not p.articulated and p.id not in visited]
        if not todo:
            break
        nearest = min(todo, key=lambda p: (math.dist((here.x, here.y), (p.x, p.y)), p.id))
        visited.add(nearest.id)
        if robot.navigate_to(nearest.x, nearest.y, None, tolerance=nearest.reach + LOOK_GAP).message:
            continue
        stops += 1
        smap.look()
    return stops
