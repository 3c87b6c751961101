"""Seeded failure models for privileged skills, so that re-planning is exercised in simulation.

Per action: ``hard`` is the chance an invocation is beyond the skill (every attempt fails, giving E1),
``slip`` the chance a single attempt fails (a retry may succeed), ``drop`` the chance that a failed
Put lets the object fall (E2), ``overshoot`` the chance Go to ends pressed against the target (the
next manipulation then meets D2). ``mismatch`` is added to ``hard`` when a navigation model is used
for the kind of target it is weak at (NoMaD for small objects, PixNav for rooms).
"""

from __future__ import annotations

import random
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from homiebot.core.contracts import Action


class ActionFailures(BaseModel):
    model_config = ConfigDict(extra="forbid")
    hard: float = Field(0.0, ge=0, le=1)
    slip: float = Field(0.0, ge=0, le=1)
    drop: float = Field(0.0, ge=0, le=1)
    overshoot: float = Field(0.0, ge=0, le=1)


class FailureProfile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = "custom"
    actions: dict[Action, ActionFailures] = {}
    mismatch: float = Field(0.0, ge=0, le=1)

    def of(self, action: Action) -> ActionFailures:
        return self.actions.get(action, ActionFailures())


PROFILES: dict[str, FailureProfile] = {
    "perfect": FailureProfile(name="perfect"),
    "default": FailureProfile(
        name="default",
        mismatch=0.25,
        actions={
            Action.GO_TO: ActionFailures(hard=0.03, slip=0.10, overshoot=0.05),
            Action.PICK: ActionFailures(hard=0.08, slip=0.25),
            Action.PUT: ActionFailures(hard=0.05, slip=0.10, drop=0.5),
            Action.OPEN: ActionFailures(hard=0.06, slip=0.20),
            Action.CLOSE: ActionFailures(hard=0.03, slip=0.10),
        },
    ),
}


def load_profile(spec: str | dict) -> FailureProfile:
    """A built-in profile by name, a YAML file path, or an inline mapping."""
    if isinstance(spec, dict):
        data = spec
    elif spec in PROFILES:
        return PROFILES[spec]
    elif Path(spec).is_file():
        data = yaml.safe_load(Path(spec).read_text())
    else:
        raise ValueError(f"unknown failure profile '{spec}'; built-in: {', '.join(PROFILES)}, or give a YAML file")
    try:
        return FailureProfile.model_validate(data)
    except ValidationError as err:
        raise ValueError(f"invalid failure profile: {err.errors()[0]['loc']}: {err.errors()[0]['msg']}") from None


def draw(seed: int, round_index: int, tag: str, attempt: int = 0) -> float:
    """A reproducible uniform number for one decision of one round."""
    return random.Random(f"{seed}:{round_index}:{tag}:{attempt}").random()
