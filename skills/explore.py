"""The Explore skill: frontier-based exploration of one room, for worlds that build a semantic map.

``[Explore, kitchen]`` drives into the room, observes, and then repeatedly drives to the most
rewarding reachable frontier inside the room (``perception.exploration.next_frontier_goal``),
observing at each stop, until the room has no reachable frontier left or ``max_goals`` stops were
made. Success says what was newly seen.

Composition: a navigation model that can also explore answers to one model name, so the skill
optionally wraps another skill (``navigation``: an entry point in ``homiebot.skills``, built with
``navigation_params``) and hands it every other action (Go to). The mapped-mode defaults in
``homiebot.config`` configure NoMaD this way.
"""

from __future__ import annotations

import math
from typing import Any

from homiebot.contracts import Action, Subtask
from homiebot.perception.exploration import next_frontier_goal
from homiebot.skills.base import Skill, SkillContext, SkillResult
from homiebot.worlds.base import World


def navigate_to_point(state: Any, x: float, y: float) -> tuple[bool, float]:
    """Drive the embedded home's robot along a collision-free path to (x, y), facing along the way.
    Returns (reached, metres driven); the pose is unchanged when no path exists."""
    from homiebot.worlds.home.navigation import Pose2D
    from homiebot.worlds.home.state import RobotPose

    r = state.robot
    heading = math.atan2(y - r.y, x - r.x)
    path = state.nav.plan(Pose2D(r.x, r.y, r.yaw), [Pose2D(x, y, heading)])
    if path is None:
        return False, 0.0
    end = path.poses[-1]
    state.robot = RobotPose(end.x, end.y, end.yaw)
    state.path_length += path.length
    carry = getattr(state, "_carry_held", None)
    if carry is not None:
        carry()
    return True, path.length


def _turn(state: Any, delta: float) -> None:
    from homiebot.worlds.home.state import RobotPose

    r = state.robot
    state.robot = RobotPose(r.x, r.y, (r.yaw + delta + math.pi) % (2 * math.pi) - math.pi)


class ExploreSkill(Skill):
    """Explore a room by frontiers (see the module doc). Needs a world with ``explore_step`` and a map
    (the PerceivingWorld of mapped perception) over the embedded home's state."""

    def __init__(self, model: str, actions: frozenset[Action] | None = None, max_goals: int = 6,
                 navigation: str | None = None, navigation_params: dict[str, Any] | None = None,
                 profile: str | dict = "default") -> None:
        """``max_goals``: frontier stops per Explore; ``navigation``: skill entry point handling the
        other actions (Go to), built with ``navigation_params`` (and ``profile`` when it takes one)."""
        self.navigation: Skill | None = None
        if navigation is not None:
            import inspect

            from homiebot import registry

            cls = registry.load("skills", navigation)
            params = dict(navigation_params or {})
            if "profile" in inspect.signature(cls.__init__).parameters:
                params.setdefault("profile", profile)
            self.navigation = cls(model=model, **params)
        own = frozenset({Action.EXPLORE}) | (self.navigation.actions if self.navigation else frozenset())
        super().__init__(model, frozenset(actions) if actions else own)
        if max_goals < 0:
            raise ValueError(f"max_goals must be >= 0, got {max_goals}")
        self.max_goals = int(max_goals)

    def availability(self) -> str | None:
        return self.navigation.availability() if self.navigation else None

    def supports(self, world: World) -> str | None:
        if not callable(getattr(world, "explore_step", None)) or getattr(world, "map", None) is None:
            return (f"exploration needs a world that builds a semantic map (perception mode 'mapped'); "
                    f"{type(world).__name__} has none")
        if getattr(world, "state", None) is None:
            return f"{type(world).__name__} exposes no state to drive the robot in"
        return self.navigation.supports(world) if self.navigation else None

    def run(self, subtask: Subtask, world: World, context: SkillContext) -> SkillResult:
        if subtask.action is not Action.EXPLORE:
            if self.navigation is None or subtask.action not in self.navigation.actions:
                return SkillResult(False, f"{self.model} cannot {subtask.action.value.lower()}")
            return self.navigation.run(subtask, world, context)
        room = subtask.target or ""
        smap = world.map  # type: ignore[attr-defined]
        state = world.state  # type: ignore[attr-defined]
        if room not in {r.name for r in smap.rooms}:
            return SkillResult(False, f"'{room}' is not a room of the floor plan")
        before = {i.id for i in smap.instances()}
        start = state.path_length
        if state.robot_room() != room:
            outcome = state.navigate(room)
            if not outcome.ok:
                return SkillResult(False, outcome.reason)
        world.explore_step()  # type: ignore[attr-defined]  # look around where we stand: the four cameras,
        _turn(state, math.pi / 4)  # then turned by 45 degrees (a second sighting confirms what was seen)
        world.explore_step()  # type: ignore[attr-defined]
        _turn(state, -math.pi / 4)
        stops = 0
        tried: set[tuple[int, int]] = set()
        while stops < self.max_goals:
            goal = next_frontier_goal(smap, room=room)
            if goal is None:
                break
            key = (round(goal[0] / 0.25), round(goal[1] / 0.25))
            if key in tried:
                break
            tried.add(key)
            reached, _ = navigate_to_point(state, *goal)
            if not reached:
                continue
            stops += 1
            world.explore_step()  # type: ignore[attr-defined]
        new = [smap.description(i) for i in smap.instances() if i.id not in before]
        seen = "; ".join(new) if new else "nothing new"
        left = next_frontier_goal(smap, room=room) is not None
        tail = " (parts of the room are still unexplored)" if left else ""
        return SkillResult(True, f"explored the {room} with {stops} stops; newly seen: {seen}{tail}",
                           path_length=state.path_length - start)

    def close(self) -> None:
        if self.navigation is not None:
            self.navigation.close()
