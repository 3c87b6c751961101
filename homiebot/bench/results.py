"""One evaluated run, in the compact form stored as a line of ``results.jsonl``.

A RunResult carries everything the metrics need (the task's keypaths, aliases, expert length and
attributes, and each executed step's subtask and feedback), so metrics can be recomputed from the
results file alone, without the suite or the episode folders.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from homiebot.core.contracts import EpisodeRecord
from homiebot.core.tasks import Situated

Attribute = Literal["short-horizon", "long-horizon", "open-ended", "logical", "human-style"]
ATTRIBUTES: tuple[str, ...] = ("short-horizon", "long-horizon", "open-ended", "logical", "human-style")


class StepSummary(BaseModel):
    """One round: the parsed subtask (empty action when the output was unusable) and its feedback."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    action: str = Field("", description="'Go to', 'Pick', ... or '' when the planner output was unusable")
    target: str | None = None
    place: str | None = None
    model: str | None = None
    success: bool
    code: str | None = Field(None, description="error code (F1 ... E2) when the step failed")
    relevant: bool | None = Field(None, description="for an Ask step: the simulated user's relevance judgement")
    resolved: int | None = Field(None, ge=0, description="for a relevant Ask step: the open things its answer settled "
                                                         "or narrowed, i.e. the relevant questions it counts as")
    path_length: float = Field(0.0, ge=0.0, description="metres the base moved in the round")

    def text(self) -> str:
        """The bracketed form, e.g. '[Put, green_can, fridge]'; '[]' for an unusable output."""
        parts = [p for p in (self.action, self.target, self.place) if p]
        return "[" + ", ".join(parts) + "]"


class RunResult(BaseModel):
    """A finished (task, run) pair."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    task_id: str
    run: int
    seed: int
    planner: str = ""
    split: str | None = None
    attributes: list[str] = []
    keypaths: list[list[str]] = []
    aliases: dict[str, str] = {}
    expert_length: int | None = None
    steps: list[StepSummary] = []
    ended: bool = False
    termination: str = "max_rounds"
    goal_satisfied: bool | None = None
    path_length: float = 0.0
    wall_time: float = 0.0
    error: str | None = None  # why the run could not run or stopped (e.g. the planner refused the instruction)
    safety_events: dict[str, int] = {}  # safety events of the episode by kind (limit_clipped, keep_out, estop, ...)
    min_questions: int | None = None  # K of a task whose instruction leaves things open (ARS, QR)
    situated: Situated | None = None  # a situated (SIF) task: its kind and the shortest path (SPL)

    @property
    def key(self) -> tuple[str, int]:
        return (self.task_id, self.run)


def summarise_steps(record: EpisodeRecord) -> list[StepSummary]:
    """Compact the steps of an episode record."""
    out = []
    for s in record.steps:
        sub = s.output.subtask if s.output else None
        names = s.acted or sub  # executed steps: the names the skills acted on (the planner's words grounded)
        out.append(StepSummary(
            action=sub.action.value if sub else "", target=names.target if names else None, place=names.place if names else None,
            model=s.output.model if s.output else None, success=s.feedback.success,
            code=s.feedback.code.value if s.feedback.code else None,
            relevant=s.exchange.relevant if s.exchange is not None else None,
            resolved=s.exchange.resolved if s.exchange is not None and s.exchange.relevant else None,
            path_length=round(max(s.path_length, 0.0), 4),
        ))
    return out


@dataclass
class ResultsFile:
    """The readable content of a results.jsonl file."""

    results: list[RunResult]
    skipped: int = 0  # lines that are not a RunResult (e.g. the last line of a killed evaluation)
    duplicates: int = 0  # repeated (task_id, run) keys; the first copy is kept
    first_problem: str = ""
    problems: list[str] = field(default_factory=list)  # "line N: why" for every skipped line
    valid_bytes: int = 0  # length of the file up to the end of its last complete line


def read_results(path: Path) -> ResultsFile:
    """Read results tolerantly: skip unreadable lines, keep the first copy of a repeated key."""
    out = ResultsFile(results=[])
    if not path.is_file():
        return out
    seen: set[tuple[str, int]] = set()
    data = path.read_bytes()
    offset = 0
    for number, raw in enumerate(data.splitlines(keepends=True), 1):
        offset += len(raw)
        if raw.endswith(b"\n"):
            out.valid_bytes = offset
        line = raw.decode("utf-8", errors="replace")
        if not line.strip():
            continue
        try:
            result = RunResult.model_validate_json(line)
        except (ValidationError, ValueError) as exc:
            out.skipped += 1
            out.problems.append(f"line {number}: {str(exc).splitlines()[0]}")
            out.first_problem = out.first_problem or out.problems[-1]
            continue
        if result.key in seen:
            out.duplicates += 1
            continue
        seen.add(result.key)
        out.results.append(result)
    return out
