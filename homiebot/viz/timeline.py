"""Text of timeline entries and captions, shared by the live view, replays and videos (no viewer imports)."""

from __future__ import annotations

from homiebot.core.contracts import SafetyEvent, StepRecord


def step_subtask(step: StepRecord) -> str:
    """The round's subtask as text (``[invalid output]`` when the planner's answer did not parse)."""
    return step.output.subtask.text() if step.output else "[invalid output]"


def step_status(step: StepRecord) -> str:
    """``ok`` or the feedback's error code."""
    fb = step.feedback
    return "ok" if fb.success or fb.code is None else fb.code.value


def round_entry(step: StepRecord) -> str:
    """One timeline line per round: subtask, model, feedback code and message."""
    model = (step.output.model if step.output else None) or "-"
    line = f"round {step.round}: {step_subtask(step)} ({model}) {step_status(step)}"
    if not step.feedback.success:
        line += f": {step.feedback.message}"
    return line


def safety_entry(event: SafetyEvent) -> str:
    """A safety event as a timeline line."""
    details = ", ".join(f"{k}={v}" for k, v in sorted(event.details.items()))
    return f"safety {event.kind}" + (f": {event.message}" if event.message else "") + (f" ({details})" if details else "")
