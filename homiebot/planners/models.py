"""Which low-level model to name for a subtask: the one best suited, or another after a failure."""

from __future__ import annotations

from collections.abc import Sequence

from homiebot.core.contracts import Action, Subtask
from homiebot.planners.base import ModelInfo

# preferred model per (action, target kind); target kind matters only for Go to
PREFERRED = {
    (Action.GO_TO, "room"): "NoMaD",
    (Action.GO_TO, "receptacle"): "NoMaD",
    (Action.GO_TO, "object"): "PixNav",
    (Action.PICK, None): "RT-1-X",
    (Action.PUT, None): "RT-1-X",
    (Action.OPEN, None): "octo",
    (Action.CLOSE, None): "octo",
}


def choose_model(sub: Subtask, target_kind: str | None, models: Sequence[ModelInfo], failed: Sequence[str] = ()) -> str | None:
    """The preferred capable model, skipping those that already failed this subtask (cycling when all did)."""
    if sub.action is Action.END:
        return None
    able = sorted(m.name for m in models if sub.action.value in m.actions)
    if not able:
        return None
    preferred = PREFERRED.get((sub.action, target_kind if sub.action is Action.GO_TO else None))
    order = sorted(able, key=lambda m: (m != preferred, m))
    fresh = [m for m in order if m not in failed]
    if fresh:
        return fresh[0]
    return order[len(failed) % len(order)]
