"""Terminal lines about an episode, shared by ``homiebot run``, ``homiebot submit`` and the graph's
task manager, so that an episode reads the same whichever way it was run."""

from __future__ import annotations

from homiebot.contracts import StepRecord


def task_line(instruction: str, planner: str, seed: int, profile: str) -> str:
    """The line an episode starts with."""
    return f"task: {instruction}  (planner {planner}, seed {seed}, profile {profile})"


def round_line(index: int, subtask: str | None, model: str | None, code: str | None, seconds: float,
               success: bool = True, message: str = "") -> str:
    """One round: subtask, model, ok or the failure code, its time, and the failure's message."""
    status = "ok" if success or code is None else code
    line = f"round {index:2d} | {subtask or '[invalid output]':<42} | {model or '-':<7} | {status:<3} | {seconds:5.2f}s"
    if not success:
        line += f" | {message}"
    return line


def step_line(step: StepRecord) -> str:
    """``round_line`` of a recorded round."""
    fb = step.feedback
    return round_line(step.round, step.output.subtask.text() if step.output else None, step.output.model if step.output else None,
                      fb.code.value if fb.code else None, step.timings.total, fb.success, fb.message)


def verdict_line(goal_satisfied: bool | None, ended: bool, termination: str, rounds: int, failed: int, path_length: float,
                 seconds: float) -> str:
    """How an episode finished (its record's path is printed on the next line)."""
    verdict = {True: "goal reached", False: "goal NOT reached", None: "no goal to check"}[goal_satisfied]
    how = ("ended with End" if termination == "end" else f"ended with End ({termination})") if ended else f"ended by {termination}"
    return f"{verdict}; {how} after {rounds} rounds ({failed} failed), path {path_length:.1f} m, {seconds:.1f} s"
