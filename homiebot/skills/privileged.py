"""Privileged skills for the embedded home ("with background information"): kinematic execution
that uses simulator truth, with real reach, occupancy and container checks and seeded failures.

They act on ``World.ground_truth()`` (the home's state) instead of a ``Robot``: a simulation-only
shortcut, refused by ``supports`` on a world without ground truth (a real robot).

With a person in the home, a navigation skill that can Go to can also Follow them, and a manipulation
skill that can Put can also Give to them (a hand-over is a put into a hand): the planner is offered
Follow and Give only for tasks with a person, so configurations need not list them.
"""

from __future__ import annotations

import random

from homiebot.core.contracts import Action, SkillFailure, Subtask
from homiebot.core.world import World
from homiebot.core.world_capabilities import PrivilegedWorld
from homiebot.skills.base import Skill, SkillContext, SkillResult
from homiebot.skills.failures import FailureProfile, draw, load_profile

NAVIGATION = frozenset({Action.GO_TO})
MANIPULATION = frozenset({Action.PICK, Action.PUT, Action.OPEN, Action.CLOSE})
_WITH_PEOPLE = {Action.GO_TO: Action.FOLLOW, Action.PUT: Action.GIVE}  # what a skill's action extends to


def _home_state(world: World):  # noqa: ANN202 - the home's state, reached only through the World interface
    state = world.ground_truth() if isinstance(world, PrivilegedWorld) else None
    if state is None:
        raise TypeError(f"privileged skills need a simulated world with privileged state, not {type(world).__name__}")
    return state


class _PrivilegedSkill(Skill):
    default_actions: frozenset[Action] = frozenset()

    def __init__(self, model: str, actions: frozenset[Action] | None = None, profile: str | dict = "default",
                 weak_at: tuple[str, ...] = ()) -> None:
        own = frozenset(actions) if actions else self.default_actions
        super().__init__(model, own | {_WITH_PEOPLE[a] for a in own if a in _WITH_PEOPLE})
        self.profile: FailureProfile = load_profile(profile)
        self.weak_at = tuple(weak_at)

    def supports(self, world: World) -> str | None:
        if not isinstance(world, PrivilegedWorld) or world.ground_truth() is None:
            return (f"{self.model}'s privileged skill is simulation-only and {type(world).__name__} has no simulator truth; "
                    f"configure a policy skill for {self.model}")
        return None

    @staticmethod
    def _unknown(state, subtask: Subtask) -> SkillResult | None:
        """A failed attempt when a name is not in the world (e.g. a map instance bound to no object)."""
        for name in (subtask.target, subtask.place):
            if name is not None and state.lookup(name) is None:
                return SkillResult(False, f"there is no {name} to act on here", reason=SkillFailure.FAILED)
        return None

    def _failed_by_chance(self, sub: Subtask, ctx: SkillContext, target_kind: str) -> str | None:
        """Decide from the profile whether this attempt fails; returns the reason if so."""
        f = self.profile.of(sub.action)
        hard = f.hard + (self.profile.mismatch if target_kind in self.weak_at else 0.0)
        if draw(ctx.episode_seed, ctx.round, f"{self.model}:hard") < hard:
            why = f"{self.model} is unreliable for this kind of target" if target_kind in self.weak_at else f"{self.model} cannot complete it"
            return why
        if draw(ctx.episode_seed, ctx.round, f"{self.model}:slip", ctx.attempt) < f.slip:
            return "the attempt slipped"
        return None


class PrivilegedNavigation(_PrivilegedSkill):
    """Go to a room, a receptacle, an object or a person along an A* path over the occupancy grid, around the
    person (waiting a few seconds of their time when they stand in the only way, else unreachable); Follow a
    person through the round, stopping at a distance that keeps them in view."""

    default_actions = NAVIGATION

    def run(self, subtask: Subtask, world: World | None, context: SkillContext) -> SkillResult:
        assert world is not None, "privileged skills run in the process that holds the world"
        state = _home_state(world)
        if (unknown := self._unknown(state, subtask)) is not None:
            return unknown
        target = subtask.target or ""
        kind = state.lookup(target).kind
        if subtask.action is Action.FOLLOW:
            return self._follow(state, target, context)
        size = "room" if kind == "room" else ("large" if kind in ("receptacle", "person") else "small")
        reason = self._failed_by_chance(subtask, context, size)
        if reason:
            return SkillResult(False, reason, reason=SkillFailure.FAILED)
        outcome = state.navigate(target, wait_until=state.wait_limit(context.round))  # waits for a person in the way
        if not outcome.ok:
            return SkillResult(False, outcome.reason, reason=SkillFailure.UNREACHABLE)
        travelled = outcome.path_length
        if kind != "room" and draw(context.episode_seed, context.round, f"{self.model}:overshoot") < self.profile.of(Action.GO_TO).overshoot:
            before = state.path_length
            state.nudge_towards(target, gap=0.02 + 0.05 * draw(context.episode_seed, context.round, "gap"))
            travelled += state.path_length - before
        return SkillResult(True, path_length=travelled)

    def _follow(self, state, target: str, context: SkillContext) -> SkillResult:  # noqa: ANN001 - the home's state
        reason = self._failed_by_chance(Subtask(action=Action.GO_TO, target=target), context, "person")
        if reason:
            return SkillResult(False, reason, reason=SkillFailure.FAILED)
        outcome = state.follow(target, context.round)  # with them until the next round begins
        if not outcome.ok:
            return SkillResult(False, outcome.reason, reason=SkillFailure.UNREACHABLE)
        return SkillResult(True, path_length=outcome.path_length)


class PrivilegedManipulation(_PrivilegedSkill):
    """Pick, Put, Open and Close by moving objects and joints kinematically."""

    default_actions = MANIPULATION

    def run(self, subtask: Subtask, world: World | None, context: SkillContext) -> SkillResult:
        assert world is not None, "privileged skills run in the process that holds the world"
        state = _home_state(world)
        if (unknown := self._unknown(state, subtask)) is not None:
            return unknown
        reason = self._failed_by_chance(subtask, context, "object")
        if subtask.action is Action.PUT:
            rng = random.Random(f"{context.episode_seed}:{context.round}:{context.attempt}:place")
            if reason is None:
                outcome = state.place(subtask.target, subtask.place, rng)
                if outcome.ok:
                    return SkillResult(True)
                reason = outcome.reason
            if draw(context.episode_seed, context.round, f"{self.model}:drop", context.attempt) < self.profile.of(Action.PUT).drop:
                return SkillResult(False, reason, dropped=state.drop_held(rng), reason=SkillFailure.GRASP_MISSED)
            return SkillResult(False, reason, reason=SkillFailure.FAILED)
        if reason:
            return SkillResult(False, reason, reason=SkillFailure.FAILED)
        if subtask.action is Action.GIVE:
            outcome = state.give(subtask.target, subtask.place)
        elif subtask.action is Action.PICK:
            outcome = state.grasp(subtask.target)
        elif subtask.action in (Action.OPEN, Action.CLOSE):
            outcome = state.articulate(subtask.target, subtask.action is Action.OPEN)
        else:
            return SkillResult(False, f"{self.model} does not perform {subtask.action.value}", reason=SkillFailure.FAILED)
        return SkillResult(outcome.ok, outcome.reason, reason=None if outcome.ok else SkillFailure.FAILED)
