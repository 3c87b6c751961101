"""Safety settings of a run (``safety:`` in the YAML config)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from homiebot.core.contracts import Action


class KeepOutRule(BaseModel):
    """Something the robot must never do. ``target`` names a thing or its kind ("oven" matches
    ``oven``, ``white_oven`` and ``oven_1``); ``actions`` limits the rule to those actions (empty: any
    action on the target); ``room`` is a room the robot must not enter: a subtask whose target is in
    it, or whose only route passes through it, is refused. ``reason`` is what the planner is told."""

    model_config = ConfigDict(extra="forbid")
    target: str | None = None
    actions: list[Action] = []
    room: str | None = None
    reason: str = ""

    @model_validator(mode="after")
    def _something(self) -> KeepOutRule:
        if (self.target is None) == (self.room is None):
            raise ValueError("a keep-out rule names exactly one of target or room")
        if self.room is not None and self.actions:
            raise ValueError("a room rule applies to every action; leave actions out")
        return self

    def describe(self) -> str:
        """The rule in words, e.g. "never open the fridge" or "never enter the bathroom"."""
        if self.reason:
            return self.reason
        if self.room is not None:
            return f"never enter the {self.room.replace('_', ' ')}"
        verbs = " or ".join(a.value.lower() for a in self.actions) if self.actions else "touch or go to"
        return f"never {verbs} the {self.target.replace('_', ' ') if self.target else ''}"


class SafetySettings(BaseModel):
    """Limits below the robot's own (None: the robot's), the watchdog, keep-out rules and approval."""

    model_config = ConfigDict(extra="forbid")
    max_linear: float | None = Field(None, gt=0, description="m/s")
    max_angular: float | None = Field(None, gt=0, description="rad/s")
    max_linear_accel: float = Field(1.0, gt=0, description="m/s^2")
    max_angular_accel: float = Field(3.0, gt=0, description="rad/s^2")
    max_ee_speed: float | None = Field(None, gt=0, description="m/s")
    watchdog: float = Field(0.5, gt=0, description="seconds without a base command before the base is stopped")
    keep_out: list[KeepOutRule] = []
    approve: Literal["every_subtask", "manipulation", "never"] = "never"
    approval_timeout: float = Field(120.0, gt=0, description="seconds to wait for an operator; a timeout rejects")
    estop_heartbeat: float | None = Field(None, gt=0, description="deadman mode: the e-stop engages when no message has "
                                          "come on /homiebot/estop for this many seconds (an operator's device sends "
                                          "false periodically); None: off")
