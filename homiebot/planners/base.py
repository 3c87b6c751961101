"""The Planner interface shared by every backend (oracle, replay, and model-based planners)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel

from homiebot.core.contracts import Feedback, Observation
from homiebot.core.tasks import Task


class PlannerError(RuntimeError):
    """The planner could not produce any text this round (API down, model crashed...)."""


class PlanCancelled(PlannerError):
    """The round's decision was cancelled before the planner answered (the user cancelled the episode while a model
    was generating): the episode ends ``cancelled`` and the round is not recorded."""


class PlannerConfigError(ValueError):
    """The planner cannot be used with this configuration, task or world."""


@dataclass(frozen=True)
class ModelInfo:
    """A low-level model the planner may choose, and what it is good at."""

    name: str
    actions: tuple[str, ...]
    description: str = ""


class GroundTruthSource(Protocol):
    """What a privileged planner may read: a world (``homiebot.core.world.World``) or a mirror of one."""

    def ground_truth(self) -> Any | None:
        """The simulator's own state; None on a real robot."""
        ...


@dataclass(frozen=True)
class RecalledSegment:
    """A segment of a remembered demonstration retrieved for the episode's instruction
    (``homiebot.memory``): its caption, its cosine similarity to the instruction, what was put where
    (object, place: the segmentation's structured record), its key frames' image files, and the room
    the demonstrator was in (None when not known)."""

    caption: str
    score: float
    demo: str = ""
    put: tuple[tuple[str, str], ...] = ()
    key_frames: tuple[str, ...] = ()
    room: str | None = None


@dataclass
class EpisodeContext:
    """Given to a planner when an episode starts."""

    task: Task
    models: list[ModelInfo]
    seed: int
    world: GroundTruthSource | None = None  # only privileged planners may use it
    ask: bool = False  # someone answers [Ask, <question>]: the planner may ask
    memories: list[RecalledSegment] = field(default_factory=list)  # recalled for the instruction, best first
    max_rounds: int | None = None  # the episode's round limit (None: not known)


@dataclass(frozen=True)
class PlannerRequest:
    """Everything the planner sees in one round."""

    round: int
    system: str
    user: str
    instruction: str
    inventory: list[str]
    history: list[str]
    feedback: Feedback | None
    observation: Observation | None
    scene_map: dict | None = None  # the semantic map's summary, when perception is "mapped"
    memories: list[RecalledSegment] = field(default_factory=list)  # demonstration segments recalled for the instruction


@dataclass(frozen=True)
class PlannerReply:
    """Raw planner text plus accounting (tokens, latency) for the step record."""

    text: str
    usage: dict[str, float] = field(default_factory=dict)  # e.g. prompt_tokens, completion_tokens, latency_s
    prompt: str | None = None  # the user text actually sent, when the planner built its own


class Planner(ABC):
    """Decides the next subtask. Output is raw text; the agent parses and checks it."""

    #: image kinds of the four views this planner looks at ("image", "depth", "segmentation");
    #: a planner that needs none may be given no observation when images are costly to move
    needs_views: tuple[str, ...] = ("image", "depth", "segmentation")
    #: the parameters model of its ``params:`` (a pydantic model, extra="forbid"); None: derived from the constructor
    Params: ClassVar[type[BaseModel] | None] = None

    def reset(self, context: EpisodeContext) -> None:
        """Prepare for a new episode; raise PlannerConfigError if the context is unusable."""

    @abstractmethod
    def plan(self, request: PlannerRequest) -> PlannerReply:
        """Return the raw text of the next decision; raise PlannerError if none can be produced."""

    def understood(self) -> str | None:
        """What the planner read the instruction to mean, in its words (None: it does not say)."""
        return None

    def report(self) -> str | None:
        """Set when the planner ended the episode to report what it could not understand or ground."""
        return None

    def backend_name(self) -> str | None:
        """The backend that answers this episode, as it named itself on ``reset`` (a planner served by a node that
        may have been replaced); None: the configured name stands."""
        return None

    def close(self) -> None:
        """Release clients, weights or servers."""

    @classmethod
    def from_params(cls, **params: Any) -> Planner:
        """Build from configuration parameters (unknown parameters are an error)."""
        return cls(**params)
