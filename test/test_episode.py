"""One episode's body (homiebot.episode) over fakes: the agent, the goal check, observers, the folder
of an episode that failed before anything was recorded."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pytest

from homiebot.agent import AgentSettings
from homiebot.core.contracts import Action, Feedback, Observation, Pose2D, Subtask, ViewImage
from homiebot.core.errors import CheckResult
from homiebot.core.records import EpisodeWriter
from homiebot.core.tasks import Task
from homiebot.episode import EpisodeParts, Fanout, play_episode, recorded
from homiebot.executor import Execution
from homiebot.planners.base import ModelInfo, Planner, PlannerConfigError, PlannerReply
from homiebot.safety.gate import SafetyGate
from homiebot.safety.settings import SafetySettings
from test.fakes import PlanarWorld

MODELS = [ModelInfo("Walker", ("Go to",), "drives to a named place")]


class ScriptedPlanner(Planner):
    """Answers from a script, one line a round; ``refuse`` is raised when an episode starts."""

    def __init__(self, answers: list[str], refuse: Exception | None = None) -> None:
        self.answers, self.refuse = list(answers), refuse

    def reset(self, context) -> None:
        if self.refuse is not None:
            raise self.refuse

    def plan(self, request) -> PlannerReply:
        return PlannerReply(self.answers.pop(0))


class Walks:
    """Executes every subtask successfully, without moving."""

    def __init__(self) -> None:
        self.executed: list[str] = []

    @property
    def unavailable(self) -> Mapping[str, str]:
        return {}

    def capabilities(self) -> Mapping[str, frozenset[Action]]:
        return {"Walker": frozenset({Action.GO_TO})}

    def execute(self, subtask: Subtask, model: str, world, seed: int, round_index: int) -> Execution:
        self.executed.append(subtask.text())
        return Execution(Feedback.ok(), "walker", 1, 0.0)


class PassesAll:
    """A checker that lets every subtask through as given."""

    def __init__(self) -> None:
        self.checked = 0

    def check(self, output) -> CheckResult:
        self.checked += 1
        return CheckResult(None, output.subtask)


class SeeingWorld(PlanarWorld):
    """A planar world whose four views are flat grey."""

    def observe(self, round_index: int) -> Observation:
        p = self.own_robot().pose
        views = {v: ViewImage(rgb=np.full((4, 4, 3), 128, np.uint8)) for v in ("front", "left", "back", "right")}
        return Observation(round=round_index, views=views, pose=Pose2D(x=p.x, y=p.y, yaw=p.yaw), inventory=[])


class GoalWorld(SeeingWorld):
    """A seeing world whose goal always holds."""

    def goal_satisfied(self, goal) -> bool:
        return True


class Watcher:
    """Notes what it is told, in order."""

    def __init__(self, name: str, heard: list[str]) -> None:
        self.name, self.heard = name, heard

    def start(self, world, safety) -> None:
        self.heard.append(f"{self.name} start {'with' if safety is not None else 'without'} safety")

    def observation(self, obs) -> None:
        self.heard.append(f"{self.name} observation {obs.round}")

    def step(self, step) -> None:
        self.heard.append(f"{self.name} step {step.round}")

    def end(self, record) -> None:
        self.heard.append(f"{self.name} end {'record' if record is not None else 'none'}")


GO_THEN_END = ["Analysis: go\nSubtask: [Go to, marker]\nModel: Walker", "Analysis: done\nSubtask: [End]"]


def _parts(planner: Planner, world: PlanarWorld | None = None, **extra) -> EpisodeParts:
    return EpisodeParts(world or SeeingWorld(), planner, Walks(), MODELS, AgentSettings(max_rounds=4), "scripted", **extra)


def _task(goal: list | None = None) -> Task:
    return Task(id="walk", instruction="go to the marker", goal=goal)


def test_an_episode_runs_on_its_parts_and_writes_its_record(tmp_path: Path) -> None:
    parts = _parts(ScriptedPlanner(GO_THEN_END), GoalWorld())
    writer = EpisodeWriter(tmp_path, "walk_seed3", images=False)
    rounds: list[int] = []
    record = play_episode(parts, _task(goal=[]), 3, writer=writer, config={"a": 1}, on_step=lambda s: rounds.append(s.round))
    assert rounds == [1, 2] and record.ended and record.termination == "end"
    assert record.planner == "scripted" and record.seed == 3 and record.config == {"a": 1}
    assert record.goal_satisfied is True, "a task with a goal is checked against the world"
    assert parts.executor.executed == ["[Go to, marker]"]
    assert recorded(writer) and json.loads((writer.final_dir / "episode.json").read_text())["episode_id"] == "walk_seed3"


def test_a_task_without_a_goal_is_not_checked() -> None:
    record = play_episode(_parts(ScriptedPlanner(GO_THEN_END), GoalWorld()), _task(), 0)
    assert record.goal_satisfied is None


def test_the_parts_checker_and_gate_are_the_ones_used() -> None:
    checker = PassesAll()
    made: list[str] = []

    def make_checker(task: Task) -> PassesAll:
        made.append(task.id)
        return checker

    parts = _parts(ScriptedPlanner(GO_THEN_END), make_checker=make_checker, gate=SafetyGate(SafetySettings()))
    record = play_episode(parts, _task(), 0)
    assert made == ["walk"] and checker.checked == 1 and record.ended


def test_observers_hear_the_whole_episode_in_order() -> None:
    heard: list[str] = []
    play_episode(_parts(ScriptedPlanner(GO_THEN_END), gate=SafetyGate(SafetySettings())), _task(), 0,
                 on_step=lambda s: heard.append(f"caller step {s.round}"),
                 observer=Fanout([Watcher("a", heard), Watcher("b", heard)]))
    assert heard == ["a start with safety", "b start with safety",
                     "a observation 1", "b observation 1", "a step 1", "b step 1", "caller step 1",
                     "a observation 2", "b observation 2", "a step 2", "b step 2", "caller step 2",
                     "a end record", "b end record"]


def test_a_refused_instruction_leaves_no_folder_and_closes_what_recorded_into_it(tmp_path: Path) -> None:
    heard: list[str] = []
    writer = EpisodeWriter(tmp_path, "walk_seed0", images=False)
    writer.before_finish.append(lambda: heard.append("bag closed"))
    with pytest.raises(PlannerConfigError, match="cannot"):
        play_episode(_parts(ScriptedPlanner([], refuse=PlannerConfigError("cannot plan this"))), _task(), 0, writer=writer,
                     observer=Watcher("viewer", heard))
    assert heard == ["viewer start without safety", "bag closed", "viewer end none"]
    assert not writer.work_dir.exists() and not writer.final_dir.exists()


def test_other_failures_keep_the_unfinished_folder_unless_named(tmp_path: Path) -> None:
    kept = EpisodeWriter(tmp_path, "kept", images=False)
    with pytest.raises(RuntimeError):
        play_episode(_parts(ScriptedPlanner([], refuse=RuntimeError("the planner node died"))), _task(), 0, writer=kept)
    assert kept.work_dir.is_dir(), "what was written stays for finalise_leftovers"
    gone = EpisodeWriter(tmp_path, "gone", images=False)
    with pytest.raises(RuntimeError):
        play_episode(_parts(ScriptedPlanner([], refuse=RuntimeError("the planner node died"))), _task(), 0, writer=gone,
                     discard_on=(Exception,))
    assert not gone.work_dir.exists()


def test_a_failure_after_the_record_was_written_keeps_it(tmp_path: Path) -> None:
    class Breaks(ScriptedPlanner):
        def plan(self, request) -> PlannerReply:
            raise PlannerConfigError("the API key was rejected")

    writer = EpisodeWriter(tmp_path, "walk_seed0", images=False)
    with pytest.raises(PlannerConfigError):
        play_episode(_parts(Breaks([])), _task(), 0, writer=writer, discard_on=(Exception,))
    assert recorded(writer), "the rounds' record is published by the loop itself"
    assert json.loads((writer.final_dir / "episode.json").read_text())["termination"] == "error"


def test_a_full_disk_at_the_end_keeps_the_rounds_in_the_partial_folder_as_the_graph_says(tmp_path: Path, monkeypatch) -> None:
    """The graph's task manager discards the folder of any failed episode with nothing in it; one whose rounds
    were written stays, so that the StorageError's "what was recorded of it stays in <.partial>" holds."""
    import errno
    import os

    from homiebot.core import records

    real = records.atomic_write_text

    def full(path, text):
        if path.name == "episode.json":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        real(path, text)

    monkeypatch.setattr(records, "atomic_write_text", full)
    writer = EpisodeWriter(tmp_path, "walk_seed0", images=False)
    with pytest.raises(records.StorageError, match="stays in") as failed:
        play_episode(_parts(ScriptedPlanner(GO_THEN_END), GoalWorld()), _task(), 0, writer=writer, discard_on=(Exception,))
    assert str(writer.work_dir) in str(failed.value) and writer.rounds_written == 2
    assert len(records.finished_steps(writer.work_dir / records.STEPS_FILE)) == 2 and not writer.final_dir.exists()
    with pytest.raises(ValueError, match="2 recorded round"):
        writer.discard()
    assert writer.work_dir.is_dir()
