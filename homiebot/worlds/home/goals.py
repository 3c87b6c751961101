"""Evaluate task goal conditions against the embedded home's true state."""

from __future__ import annotations

from homiebot.core.tasks import Condition, ContainerState, ObjectAt, PersonHas, RobotIn
from homiebot.worlds.home.state import HomeState


def candidates(state: HomeState, cond: ObjectAt | PersonHas) -> list[str]:
    """Objects that could satisfy an ObjectAt or PersonHas condition (one named object, or all of a class)."""
    if cond.object is not None:
        return [cond.object]
    return sorted(n for n, info in state.layout.objects.items() if info.cls.name == cond.object_class)


def condition_holds(state: HomeState, cond: Condition) -> bool:
    if isinstance(cond, ObjectAt):
        return any(state.locations[o].receptacle in cond.receptacles for o in candidates(state, cond))
    if isinstance(cond, ContainerState):
        return state.is_open.get(cond.receptacle, False) == cond.open
    if isinstance(cond, RobotIn):
        return state.robot_room() == cond.room
    if isinstance(cond, PersonHas):
        p = state.person
        return p is not None and p.name == cond.person and p.held in candidates(state, cond)
    raise TypeError(f"unknown goal condition {cond!r}")


def goal_holds(state: HomeState, goal: list[Condition]) -> bool:
    return all(condition_holds(state, c) for c in goal)
