"""The Explore skill: frontier-based exploration of one room, for worlds that build a semantic map.

``[Explore, kitchen]`` drives into the room, observes, and then repeatedly drives to the most
rewarding reachable frontier inside the room (``MapAccess.next_frontier``),
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

from homiebot.core.contracts import Action, SkillFailure, Subtask
from homiebot.core.map_access import MapAccess
from homiebot.core.robot import Robot, RobotUnavailable, Unsupported
from homiebot.core.rooms import RoomPrior
from homiebot.core.world import World
from homiebot.core.world_capabilities import MappedWorld
from homiebot.skills.base import Skill, SkillContext, SkillResult

TURN = math.pi / 4  # look again turned by this much: a second sighting confirms what was seen


def _room_of(rooms: list[RoomPrior], x: float, y: float) -> str | None:
    """The first room whose rectangle holds the point (its edges included)."""
    return next((r.name for r in rooms if r.contains(x, y)), None)


class ExploreSkill(Skill):
    """Explore a room by frontiers (see the module doc). Needs a world that builds a map (``World.mapping``:
    the PerceivingWorld of mapped perception) and a robot with navigation of its own (``Robot.navigate_to``):
    the room's prior and the map give the goals, the robot drives."""

    def __init__(self, model: str, actions: frozenset[Action] | None = None, max_goals: int = 6,
                 navigation: str | None = None, navigation_params: dict[str, Any] | None = None,
                 profile: str | dict = "default") -> None:
        """``max_goals``: frontier stops per Explore; ``navigation``: skill entry point handling the
        other actions (Go to), built with ``navigation_params`` (and ``profile`` when it takes one)."""
        self.navigation: Skill | None = None
        if navigation is not None:
            import inspect

            from homiebot.core import registry

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
        if not isinstance(world, MappedWorld) or world.mapping() is None:
            return (f"exploration needs a world that builds a semantic map (perception mode 'mapped'); "
                    f"{type(world).__name__} has none")
        if world.robot is None:
            return f"{type(world).__name__} has no robot to explore with"
        return self.navigation.supports(world) if self.navigation else None

    def run(self, subtask: Subtask, world: World | None, context: SkillContext) -> SkillResult:
        if subtask.action is not Action.EXPLORE:
            if self.navigation is None or subtask.action not in self.navigation.actions:
                return SkillResult(False, f"{self.model} cannot {subtask.action.value.lower()}")
            return self.navigation.run(subtask, world, context)
        assert world is not None, "exploring runs in the process that holds the world"
        room = subtask.target or ""
        smap = world.mapping() if isinstance(world, MappedWorld) else None
        robot = world.robot
        if smap is None:
            return SkillResult(False, f"{type(world).__name__} builds no map to explore with", reason=SkillFailure.UNAVAILABLE)
        prior = next((r for r in smap.rooms() if r.name == room), None)
        if prior is None:
            return SkillResult(False, f"'{room}' is not a room of the floor plan", reason=SkillFailure.FAILED)
        if robot is None:
            return SkillResult(False, f"{type(world).__name__} has no robot to explore with", reason=SkillFailure.UNAVAILABLE)
        before = {p.id for p in smap.places()}
        try:
            return self._explore(smap, robot, prior, before)
        except (RobotUnavailable, Unsupported) as err:
            return SkillResult(False, f"{self.model} could not explore the {room}: {err}", reason=SkillFailure.UNAVAILABLE)

    def _explore(self, smap: MapAccess, robot: Robot, prior: RoomPrior, before: set[str]) -> SkillResult:
        room = prior.name
        travelled = 0.0
        here = robot.odometry()
        if _room_of(smap.rooms(), here.x, here.y) != room:
            cx, cy = prior.center
            entry = robot.navigate_to(cx, cy, None, tolerance=0.5 * min(prior.x1 - prior.x0, prior.y1 - prior.y0))
            if entry.message:
                return SkillResult(False, f"could not get into the {room}: {entry.message}", reason=SkillFailure.UNREACHABLE)
            travelled += entry.distance
        smap.look()  # look around where we stand: the four cameras,
        spin = robot.limits.max_angular
        robot.drive(0.0, spin, TURN / spin)  # then turned in place (a second sighting confirms)
        smap.look()
        robot.drive(0.0, -spin, TURN / spin)
        stops = 0
        tried: set[tuple[int, int]] = set()
        while stops < self.max_goals:
            goal = smap.next_frontier(room)
            if goal is None:
                break
            key = (round(goal[0] / 0.25), round(goal[1] / 0.25))
            if key in tried:
                break
            tried.add(key)
            step = robot.navigate_to(goal[0], goal[1])
            if step.message:
                continue
            travelled += step.distance
            stops += 1
            smap.look()
        new = [p.description for p in smap.places() if p.id not in before]
        seen = "; ".join(new) if new else "nothing new"
        left = smap.next_frontier(room) is not None
        tail = " (parts of the room are still unexplored)" if left else ""
        return SkillResult(True, f"explored the {room} with {stops} stops; newly seen: {seen}{tail}", path_length=travelled)

    def close(self) -> None:
        if self.navigation is not None:
            self.navigation.close()
