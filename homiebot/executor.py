"""The skill executor: routes a checked subtask to the skill of the chosen model and runs attempts."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

from homiebot.core.contracts import STAND_IN, Action, Feedback, SkillFailure, Subtask
from homiebot.core.errors import ErrorDetector
from homiebot.core.world import World
from homiebot.core.world_capabilities import MappedWorld
from homiebot.skills.base import Skill, SkillContext, SkillResult

SkillT = TypeVar("SkillT", bound=Skill)

DEFAULT_ATTEMPTS = {Action.PUT: 1}  # a failed Put is not retried: the object may already be gone


@dataclass(frozen=True)
class Execution:
    feedback: Feedback
    skill: str
    attempts: int
    path_length: float
    acted: Subtask | None = None  # the subtask in the names the skills acted on


def skill_name(skill: Skill) -> str:
    """How the record names a skill: its own ``name`` if it has one, else its class."""
    return getattr(skill, "name", None) or type(skill).__name__


def run_attempt(skill: Skill, subtask: Subtask, world: World | None, context: SkillContext,
                acted: Subtask | None = None) -> SkillResult:
    """One attempt, with the world translating names for its skills (``acted``, when the caller has
    translated already) and hearing about the outcome. ``world`` is None where the skill forwards
    the attempt to the process that holds the world."""
    if world is None:
        return skill.run(subtask, world, context)
    if not isinstance(world, MappedWorld):
        return skill.run(acted or subtask, world, context)
    result = skill.run(acted or world.skill_subtask(subtask), world, context)
    world.note_execution(subtask, result.success)
    return result


def stopped(why: str, attempt: int) -> SkillResult:
    """The result of an attempt that did not start because motion is not allowed (e-stop or cancel)."""
    return SkillResult(False, f"stopped before attempt {attempt}: {why}", reason=SkillFailure.STOPPED)


def is_last_attempt(result: SkillResult, context: SkillContext) -> bool:
    """Whether the executor stops after this attempt: it succeeded, dropped the object (E2), was
    stopped (e-stop or cancel), or was the last one allowed (E1). A world can tell from this that no
    retry follows."""
    return (result.success or result.dropped is not None or result.reason is SkillFailure.STOPPED
            or context.attempt >= context.max_attempts)


class Executor(Generic[SkillT]):
    """Runs subtasks with the skills registered for each model name."""

    def __init__(self, skills: Mapping[str, SkillT], max_attempts: int = 3, attempts_by_action: Mapping[Action, int] | None = None,
                 unavailable: Mapping[str, str] | None = None, fallbacks: Mapping[str, str] | None = None,
                 interruption: Callable[[], str | None] | None = None) -> None:
        """``unavailable``: configured models that cannot run here -> why (the detector answers F1).
        ``fallbacks``: such a model -> the model whose skill runs in its place (said in the feedback).
        ``interruption``: asked before every attempt; a reason (e-stop, cancel) stops the attempts."""
        self.interruption = interruption
        self.skills = dict(skills)
        self.max_attempts = max_attempts
        self.attempts_by_action = dict(DEFAULT_ATTEMPTS if attempts_by_action is None else attempts_by_action)
        self.fallbacks = {m: f for m, f in (fallbacks or {}).items() if f in self.skills}
        self.unavailable = {m: why for m, why in (unavailable or {}).items() if m not in self.fallbacks}

    def capabilities(self) -> dict[str, frozenset[Action]]:
        """Model name -> actions its skill executes (what the detector checks model choices against)."""
        caps = {model: skill.actions for model, skill in self.skills.items()}
        return caps | {model: self.skills[fb].actions for model, fb in self.fallbacks.items()}

    def execute(self, subtask: Subtask, model: str, world: World | None, seed: int, round_index: int) -> Execution:
        """Run up to N attempts; E1 if all fail, E2 as soon as an attempt drops the object."""
        note, stand_in = "", None
        if model in self.fallbacks:
            stand_in = self.fallbacks[model]
            note = f" ({model} is not installed here; {stand_in} ran in its place)"
            model = stand_in
        skill = self.skills[model]
        acted = world.skill_subtask(subtask) if isinstance(world, MappedWorld) else None  # once, not per attempt
        limit = self.attempts_by_action.get(subtask.action, self.max_attempts)
        travelled = 0.0
        attempt = 0
        while True:
            attempt += 1
            context = SkillContext(seed, round_index, attempt, limit)
            why = self.interruption() if self.interruption else None
            result = stopped(why, attempt) if why else run_attempt(skill, subtask, world, context, acted)
            travelled += result.path_length
            if not is_last_attempt(result, context):
                continue
            if result.success:
                fb = Feedback.ok(note.strip(" ()"))
            else:
                fb = ErrorDetector.execution_failed(subtask, attempt, result.message + note, result.dropped, result.failure)
            if stand_in is not None:
                fb = fb.model_copy(update={"details": {**fb.details, STAND_IN: stand_in}})
            return Execution(fb, skill_name(skill), attempt, travelled, acted)

    def close(self) -> None:
        for skill in self.skills.values():
            skill.close()
