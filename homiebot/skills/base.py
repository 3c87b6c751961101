"""The Skill interface: a low-level model that executes one subtask attempt in a world."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import ClassVar

from pydantic import BaseModel

from homiebot.core.contracts import Action, SkillFailure, Subtask
from homiebot.core.world import World


@dataclass(frozen=True)
class SkillContext:
    """Per-attempt information; skills derive all randomness from these fields."""

    episode_seed: int
    round: int
    attempt: int  # 1-based
    max_attempts: int


@dataclass(frozen=True)
class SkillResult:
    """What one attempt achieved. ``reason`` says why a failed attempt failed (typed; the message
    says it in words); ``dropped`` names an object that fell out of the gripper; ``stats`` holds
    optional execution figures (e.g. control steps, simulated seconds)."""

    success: bool
    message: str = ""
    dropped: str | None = None
    path_length: float = 0.0
    stats: dict = field(default_factory=dict)
    reason: SkillFailure | None = None

    @property
    def failure(self) -> SkillFailure:
        """The typed reason of a failed attempt (``FAILED`` when the skill gave none)."""
        return self.reason or SkillFailure.FAILED


class Skill(ABC):
    """A low-level model wrapped to execute high-level actions.

    ``model`` is the name planners use to choose it (e.g. "RT-1-X"); ``actions`` are the actions
    it can execute. Subtask names are already grounded to canonical world names when ``run`` is called.
    """

    #: the parameters model of its ``params:`` (a pydantic model, extra="forbid"); None: derived from the constructor
    Params: ClassVar[type[BaseModel] | None] = None

    def __init__(self, model: str, actions: frozenset[Action]) -> None:
        self.model = model
        self.actions = actions

    def availability(self) -> str | None:
        """None if the skill can run here, else a message saying what is missing and how to install it."""
        return None

    def supports(self, world: World) -> str | None:
        """None if the skill can act in this world (its robot has the parts it needs, its world has
        the ground truth a privileged skill reads), else why not."""
        return None

    @abstractmethod
    def run(self, subtask: Subtask, world: World | None, context: SkillContext) -> SkillResult:
        """Execute one attempt of ``subtask``; must leave the world consistent on failure. ``world``
        is None only for a skill that forwards the attempt to the process holding the world."""

    def close(self) -> None:
        """Release model weights, processes or connections."""
