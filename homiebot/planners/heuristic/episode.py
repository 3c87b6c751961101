"""The state the heuristic planner's parts share during one episode: what is known, the plan read from the
instruction, how phrases are grounded, and the round and report that end it."""

from __future__ import annotations

from dataclasses import dataclass, field

from homiebot.core.contracts import Action
from homiebot.perception.grounding import Grounder, TextEmbedder
from homiebot.planners.base import ModelInfo
from homiebot.planners.instructions import Plan
from homiebot.planners.understanding import Understanding

from .memory import Memory


@dataclass
class Episode:
    """One episode's shared state; every part reads it live, so what one part learns the others see."""

    embedder: TextEmbedder | None = None  # for reading instructions and answers (None: words only)
    mem: Memory = field(default_factory=Memory)
    grounder: Grounder = field(default_factory=lambda: Grounder({}, None))
    read: Understanding = field(default_factory=lambda: Understanding(Plan()))
    plan: Plan = field(default_factory=Plan)  # the goals acted on; answers and the scene make its phrases precise
    models: list[ModelInfo] = field(default_factory=list)
    can_ask: bool = False  # someone answers [Ask, ...]
    max_rounds: int | None = None
    round: int = 0
    report: str | None = None  # why it ends without doing the task, once that is settled
    unread: list[str] = field(default_factory=list)  # parts of the request the plan does not cover (planners/coverage.py)

    def can_explore(self) -> bool:
        """Whether a model offers the Explore action."""
        return any(Action.EXPLORE.value in info.actions for info in self.models)
