"""``SafetyGate``: what stands between a checked subtask and the executor, and around each round.

Per subtask: keep-out rules (S1, before any motion), then operator approval when configured (S2
on a rejection or a timeout; an edit replaces the subtask). Per round: the planner is not asked
while the e-stop holds, and a cancel ends the episode. The planner only ever sees the feedback
sentence, never the rule file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from homiebot.core.contracts import Action, ErrorCode, Feedback, Subtask
from homiebot.core.robot import Robot
from homiebot.core.world import World
from homiebot.core.world_capabilities import RoomAware, RoomKeeping
from homiebot.safety.approval import ApprovalRequest, Approver, Decision
from homiebot.safety.robot import SafeRobot
from homiebot.safety.settings import KeepOutRule, SafetySettings
from homiebot.safety.state import SafetyState

MANIPULATION = frozenset({Action.PICK, Action.PUT, Action.OPEN, Action.CLOSE})


def names_thing(name: str | None, target: str) -> bool:
    """Whether a world name is the thing or the kind a rule names: "fridge" names ``fridge``,
    ``white_fridge`` and ``fridge_2``; "kitchen counter" names ``kitchen_counter_1``."""
    if not name:
        return False
    want = re.sub(r"[\s-]+", "_", target.strip().lower())
    have = re.sub(r"_\d+$", "", name.lower())
    return have == want or have.endswith("_" + want)


@dataclass(frozen=True)
class Verdict:
    """What the gate says about a subtask: run ``subtask`` (possibly edited), or ``feedback`` instead."""

    subtask: Subtask | None
    feedback: Feedback | None = None


def protect(world: World, settings: SafetySettings, state: SafetyState) -> None:
    """The robot-side half of the safety layer, for the process where skills run: every command of
    ``world.robot`` through a ``SafeRobot``, navigation kept out of forbidden rooms."""
    world.install_guard(lambda robot: SafeRobot(robot, settings, state))
    if isinstance(world, RoomKeeping):
        world.keep_out_rooms({r.room for r in settings.keep_out if r.room is not None})


class SafetyGate:
    """Keep-out rules, approval, e-stop and cancel for one agent (see the module doc)."""

    def __init__(self, settings: SafetySettings, state: SafetyState | None = None, approver: Approver | None = None) -> None:
        self.settings = settings
        self.state = state or SafetyState()
        self.approver = approver
        if settings.approve != "never" and approver is None:
            raise ValueError(f"safety.approve is '{settings.approve}' but nobody can approve here (no terminal or approval topic)")
        self.rooms = {r.room for r in settings.keep_out if r.room is not None}

    def guard(self, robot: Robot) -> SafeRobot:
        """The robot wrapped in the limits, watchdog, e-stop and cancel (``World.install_guard``)."""
        return SafeRobot(robot, self.settings, self.state)

    def attach(self, world: World) -> None:
        """Make ``world`` put every command through this gate and keep its navigation out of forbidden rooms."""
        protect(world, self.settings, self.state)

    # ---- per round ---------------------------------------------------------------------------------
    def start_round(self, round_index: int) -> bool:
        """Before the planner is asked: wait while the e-stop holds. False when the episode is cancelled."""
        self.state.round = round_index
        if self.state.cancelled:
            return False
        return self.state.wait_released()

    # ---- per subtask --------------------------------------------------------------------------------
    def review(self, subtask: Subtask, model: str | None, world: World, round_index: int, instruction: str = "") -> Verdict:
        """Keep-out rules, then approval; the subtask to run or the feedback to give instead."""
        refusal = self.keep_out(subtask, world)
        if refusal is not None:
            return Verdict(None, refusal)
        if not self._needs_approval(subtask):
            return Verdict(subtask)
        assert self.approver is not None
        decision = self.approver.decide(ApprovalRequest(round_index, subtask, model, instruction), self.settings.approval_timeout)
        self._record(decision, subtask)
        if decision.verdict == "approve":
            return Verdict(subtask)
        if decision.verdict == "edit" and decision.subtask is not None:
            again = self.keep_out(decision.subtask, world)  # an edit is held to the same rules
            return Verdict(None, again) if again is not None else Verdict(decision.subtask)
        verb = subtask.action.value.lower()
        return Verdict(None, Feedback.fail(ErrorCode.S2, f"Unable to {verb}, the operator did not approve {subtask.text()}: "
                                                         f"{decision.reason}. Choose another subtask.", reason=decision.reason,
                                           name=subtask.place or subtask.target or ""))

    def _needs_approval(self, subtask: Subtask) -> bool:
        mode = self.settings.approve
        return mode == "every_subtask" or (mode == "manipulation" and subtask.action in MANIPULATION)

    def _record(self, decision: Decision, subtask: Subtask) -> None:
        details = {"decision": "timeout" if decision.timed_out else decision.verdict, "subtask": subtask.text()}
        if decision.reason:
            details["reason"] = decision.reason
        if decision.subtask is not None:
            details["edited"] = decision.subtask.text()
        self.state.record("approval", f"{details['decision']}: {subtask.text()}", **details)

    def keep_out(self, subtask: Subtask, world: World) -> Feedback | None:
        """S1 feedback if a keep-out rule forbids the subtask, else None (recorded as a safety event)."""
        for rule in self.settings.keep_out:
            why, name = self._breaks(rule, subtask, world)
            if why:
                message = f"Unable to {subtask.action.value.lower()}, {why} ({rule.describe()}). Choose another way to do the task."
                self.state.record("keep_out", message, rule=rule.describe(), subtask=subtask.text())
                return Feedback.fail(ErrorCode.S1, message, rule=rule.describe(), name=name)
        return None

    def _breaks(self, rule: KeepOutRule, sub: Subtask, world: World) -> tuple[str, str]:
        """(why the subtask breaks the rule, the name it concerns), or ("", "")."""
        things = [n for n in (sub.target, sub.place) if n]
        if rule.target is not None:
            if rule.actions and sub.action not in rule.actions:
                return "", ""
            hit = next((n for n in things if names_thing(n, rule.target)), None)
            return (f"a safety rule forbids it for the {hit.replace('_', ' ')}", hit) if hit else ("", "")
        room = rule.room or ""
        for name in things:
            if name == room or (isinstance(world, RoomAware) and world.room_of(name) == room):
                return f"the {name.replace('_', ' ')} is in the {room.replace('_', ' ')}, where the robot must not go", name
        if sub.action is Action.GO_TO and sub.target:
            route = world.route(sub.target) if isinstance(world, RoomAware) else None
            if route is not None and not route:
                return f"the {sub.target.replace('_', ' ')} cannot be reached without entering the {room.replace('_', ' ')}", sub.target
        return "", ""


__all__ = ["SafetyGate", "Verdict", "names_thing", "protect"]
