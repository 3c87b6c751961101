"""Terminal lines about an episode, shared by ``homiebot run``, ``homiebot submit`` and the graph's
task manager, so that an episode reads the same whichever way it was run."""

from __future__ import annotations

from homiebot.core.contracts import STAND_IN, EpisodeRecord, StepRecord


def task_line(instruction: str, planner: str, seed: int, profile: str) -> str:
    """The line an episode starts with."""
    return f"task: {instruction}  (planner {planner}, seed {seed}, profile {profile})"


def model_label(model: str | None, stand_in: str | None = None) -> str:
    """The model column: what ran, never a model that did not ('expert_nav for NoMaD (not installed)')."""
    if stand_in:
        return f"{stand_in} for {model} (not installed)"
    return model or "-"


def round_line(index: int, subtask: str | None, model: str | None, code: str | None, seconds: float,
               success: bool = True, message: str = "", stand_in: str | None = None) -> str:
    """One round: subtask, the model that ran, ok or the failure code, its time, and the failure's message."""
    status = "ok" if success or code is None else code
    line = f"round {index:2d} | {subtask or '[invalid output]':<42} | {model_label(model, stand_in):<7} | {status:<3} | {seconds:5.2f}s"
    if not success:
        line += f" | {message}"
    return line


def step_line(step: StepRecord) -> str:
    """``round_line`` of a recorded round."""
    fb = step.feedback
    return round_line(step.round, step.output.subtask.text() if step.output else None, step.output.model if step.output else None,
                      fb.code.value if fb.code else None, step.timings.total, fb.success, fb.message, fb.details.get(STAND_IN))


def verdict_line(goal_satisfied: bool | None, ended: bool, termination: str, rounds: int, failed: int, path_length: float,
                 seconds: float) -> str:
    """How an episode finished (its record's path is printed on the next line)."""
    verdict = {True: "goal reached", False: "goal NOT reached", None: "no goal to check"}[goal_satisfied]
    how = {"end": "ended with End", "reported": "stopped to report what it could not do"}.get(termination, f"ended by {termination}")
    if ended and termination not in ("end", "reported"):
        how = f"ended with End ({termination})"
    return f"{verdict}; {how} after {rounds} rounds ({failed} failed), path {path_length:.1f} m, {seconds:.1f} s"


def end_reason(record: EpisodeRecord) -> str:
    """Why the planner ended the episode, in its own words (the End round's analysis), or '' when it did not end it."""
    last = record.steps[-1] if record.steps else None
    if record.ended and last is not None and last.output is not None:
        return last.output.analysis.strip() or record.error or "the planner gave no reason"
    return ""
