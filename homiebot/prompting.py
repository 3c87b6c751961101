"""The planner's instructions and per-round user text (the EMMOE conventions, in homiebot's words)."""

from __future__ import annotations

from collections.abc import Sequence

from homiebot.contracts import Action, Feedback

SYSTEM_TEMPLATE = """You control a one-armed household robot and decide, one step at a time, what it does next.
Each round you receive:
- four camera images taken from the robot, in the order front, left, back, right;
- the task to accomplish;
- the inventory: what the robot holds. It has one hand: it cannot Pick, Open or Close while holding something, and it can only Put when holding something;
- the history of earlier subtasks, each marked success or fail;
- feedback explaining why the last subtask failed (None if it succeeded).

Answer with the single next subtask, never a whole plan, as JSON:
{{"analysis": "<what you see, what happened so far, and why this step comes next>", "subtask": ["<action>", "<target>"], "model": "<model>"}}
Actions: {actions}. Put takes an object and a place: ["Put", "<object>", "<place>"]. When the task is complete answer ["End"] with model null.
Models: {models}
Only refer to things you can see or have seen. Go next to something before handling it, and open containers before you pick up what goes inside them."""


def system_text(models: Sequence[tuple[str, str]]) -> str:
    """The system instructions for the given (model name, what it is good at) pairs."""
    actions = ", ".join(a.value for a in Action)
    listed = "; ".join(f"{name} ({desc})" if desc else name for name, desc in models)
    return SYSTEM_TEMPLATE.format(actions=actions, models=listed)


def history_line(index: int, subtask_text: str, model: str | None, success: bool) -> str:
    """One line of execution history, e.g. ``(3) [Pick, green_can] (RT-1-X) (success)``."""
    return f"({index}) {subtask_text} ({model or 'None'}) ({'success' if success else 'fail'})"


def user_text(instruction: str, inventory: Sequence[str], history: Sequence[str], feedback: Feedback | None) -> str:
    """The per-round message that accompanies the four images."""
    fb = "None" if feedback is None or feedback.success else feedback.message
    hist = "\n".join(history) if history else "None"
    inv = ", ".join(inventory) if inventory else "None"
    return (f"Task: {instruction}\nInventory: {inv}\nHistorical Execution:\n{hist}\nFeedback: {fb}\n"
            "Now output the analysis, the next subtask and the model.")
