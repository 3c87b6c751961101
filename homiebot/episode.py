"""One episode of the agent loop, as both runners play it.

The in-process runner (``homiebot.runtime``) and the task manager node (``homiebot.ros.nodes.task_manager``)
assemble different parts, local ones or proxies of the other nodes, and hand them here as
``EpisodeParts``: ``play_episode`` builds the agent of them, makes the task's goal check, lets an
observer watch, runs the loop and returns its record; an episode that fails before anything was
recorded leaves no folder behind. What each runner says about the episode (progress lines, status
events, bags) and what it owns (building, closing) stays with the runner.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from homiebot.agent import Agent, AgentSettings, Checker, Runs
from homiebot.core.contracts import EpisodeRecord, Observation, StepRecord
from homiebot.core.records import EpisodeWriter
from homiebot.core.tasks import Task
from homiebot.core.world import World
from homiebot.core.world_capabilities import GoalJudge
from homiebot.people.base import User
from homiebot.planners.base import ModelInfo, Planner, PlannerConfigError
from homiebot.safety.gate import SafetyGate
from homiebot.safety.state import SafetyState


class EpisodeObserver(Protocol):
    """Watches an episode as it runs (a live viewer, a video); its calls must not block the loop."""

    def start(self, world: World, safety: SafetyState | None) -> None: ...

    def observation(self, obs: Observation) -> None: ...

    def step(self, step: StepRecord) -> None: ...

    def end(self, record: EpisodeRecord | None) -> None: ...


class Fanout:
    """Several observers as one, each told everything in the order given."""

    def __init__(self, observers: list[EpisodeObserver]) -> None:
        self.observers = observers

    def start(self, world: World, safety: SafetyState | None) -> None:
        """The episode starts in ``world``, with ``safety`` its e-stop and cancel state."""
        for o in self.observers:
            o.start(world, safety)

    def observation(self, obs: Observation) -> None:
        """A round's observation, before the planner sees it."""
        for o in self.observers:
            o.observation(obs)

    def step(self, step: StepRecord) -> None:
        """A finished round."""
        for o in self.observers:
            o.step(step)

    def end(self, record: EpisodeRecord | None) -> None:
        """The episode ended (``None``: it failed without a record)."""
        for o in self.observers:
            o.end(record)


@dataclass(frozen=True)
class EpisodeParts:
    """What one episode runs on: the world, the planner, what executes subtasks and the models it
    offers, the loop's settings; optionally the safety gate, the user who answers questions and the
    maker of the pre-execution checker (default: a local ErrorDetector)."""

    world: World
    planner: Planner
    executor: Runs
    models: list[ModelInfo]
    settings: AgentSettings
    planner_name: str
    gate: SafetyGate | None = None
    user: User | None = None
    make_checker: Callable[[Task], Checker] | None = None

    def agent(self) -> Agent:
        """The agent loop over these parts."""
        return Agent(self.world, self.planner, self.executor, self.models, self.settings, planner_name=self.planner_name,
                     make_checker=self.make_checker, safety=self.gate, user=self.user)


def goal_check(task: Task, world: World) -> Callable[[], bool | None] | None:
    """Whether ``world`` satisfies the task's goal, asked at the episode's end; None for a task without one
    or a world that cannot judge goals."""
    goal = task.goal
    return (lambda: world.goal_satisfied(goal)) if goal is not None and isinstance(world, GoalJudge) else None


def recorded(writer: EpisodeWriter) -> bool:
    """Whether the episode's record was published (its folder holds episode.json)."""
    return (writer.final_dir / "episode.json").is_file()


def play_episode(parts: EpisodeParts, task: Task, seed: int, writer: EpisodeWriter | None = None, config: dict[str, Any] | None = None,
                 on_step: Callable[[StepRecord], None] | None = None, observer: EpisodeObserver | None = None,
                 discard_on: tuple[type[Exception], ...] = (PlannerConfigError,)) -> EpisodeRecord:
    """Run one episode of ``task`` on ``parts`` and return its record (written by ``writer``, if any).

    ``on_step`` hears each finished round; ``observer`` watches the whole episode and is told its end
    even when it fails. A failure among ``discard_on`` that comes before anything was recorded (by
    default the planner refusing the instruction) removes the writer's unfinished folder, after its
    ``before_finish`` hooks have run (a bag is closed); a folder holding a finished round is never
    removed (a full disk at the end leaves it in ``.partial``, as its message says). The failure is
    raised again either way."""
    agent = parts.agent()
    check = goal_check(task, parts.world)
    if observer is not None:
        observer.start(parts.world, parts.gate.state if parts.gate is not None else None)
        agent.on_observe = observer.observation
        on_step = _both(observer.step, on_step)
    record = None
    try:
        record = agent.run(task, seed, writer=writer, config=config, on_step=on_step, goal_check=check)
    except discard_on:
        if writer is not None and not recorded(writer) and not writer.rounds_written:
            _discard(writer)
        raise
    finally:
        if observer is not None:
            observer.end(record)
    return record


def _discard(writer: EpisodeWriter) -> None:
    """Remove an unrecorded episode's folder; what must happen before its folder goes (closing a bag
    recorded into it) happens first."""
    for hook in writer.before_finish:
        hook()
    writer.discard()


def _both(first: Callable[[StepRecord], None], then: Callable[[StepRecord], None] | None) -> Callable[[StepRecord], None]:
    """One step callback calling ``first``, then ``then`` (if any)."""
    def call(step: StepRecord) -> None:
        first(step)
        if then is not None:
            then(step)
    return call
