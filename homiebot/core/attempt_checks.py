"""Whether a skill attempt succeeded: a pluggable check, because a simulator and a robot know different things.

In simulation the check reads privileged truth (``homiebot.worlds.home.checks.SimTruthCheck``). On a
robot, ``RobotSignalsCheck`` uses what the robot can tell by itself (the gripper closed on something,
the base stands where the map says the target is) plus the mapper's belief. A world names its
default through ``World.attempt_check``; a skill may be configured to use another.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from homiebot.core.camera_geometry import TrainingCamera
from homiebot.core.contracts import Action, SkillFailure, Subtask
from homiebot.core.errors import WorldBelief
from homiebot.core.robot import Robot, Unsupported


@dataclass(frozen=True)
class Tolerances:
    """When a Go to counts as arrived: ``goal_gap`` metres from the target's edge, within
    ``facing`` radians of facing it; ``early_gap`` ends the attempt before the policy stops;
    ``min_gap``: closer to a thing than this the arm cannot extend (the detector answers D2 below
    0.1 m), so a robot judged by its signals has not arrived there."""

    goal_gap: float = 0.45
    facing: float = 0.52
    early_gap: float = 0.27  # the manipulation standoff is 0.25 m
    min_gap: float = 0.12


class AttemptCheck(ABC):
    """Judges one attempt of a subtask executed through a ``Robot``."""

    def begin(self, subtask: Subtask, robot: Robot) -> None:
        """Called before the attempt's first command (remember what the hand held, say)."""

    def done_early(self, subtask: Subtask, robot: Robot, tol: Tolerances) -> bool:
        """True when the attempt has already succeeded and the skill may stop before the policy does."""
        return False

    @abstractmethod
    def succeeded(self, subtask: Subtask, robot: Robot, tol: Tolerances) -> bool:
        """Whether the attempt reached the subtask's goal (called once the policy stopped)."""

    @abstractmethod
    def failure(self, subtask: Subtask, robot: Robot, model: str, last_message: str, timed_out: bool) -> tuple[SkillFailure, str]:
        """The typed reason and an actionable sentence for an attempt that did not succeed."""

    def dropped(self, subtask: Subtask, robot: Robot) -> str | None:
        """The object a failed Put let go of somewhere else (E2), or None."""
        return None

    def goal_view(self, subtask: Subtask, robot: Robot, size: tuple[int, int],
                  camera: TrainingCamera | None = None) -> tuple[np.ndarray | None, np.ndarray | None]:
        """A goal image and the target's mask in it, for image-goal navigation models (through the model's
        training ``camera`` when given, else at ``size``); None if unknown."""
        return None, None


class RobotSignalsCheck(AttemptCheck):
    """What a real robot can tell: Pick succeeded when the gripper reports it holds something, Put when
    it no longer does, Give as Put (the person took it), Go to when the belief puts the target within reach,
    Follow when the belief puts the person within ``follow_gap``, Open/Close when the policy finished without
    a collision (the map sees the door state at the next observation)."""

    follow_gap = 1.5  # metres between base and person that count as keeping up

    def __init__(self, belief: WorldBelief) -> None:
        self.belief = belief
        self._held_before: bool | None = None

    def _holding(self, robot: Robot) -> bool | None:
        try:
            return robot.gripper_state().holding
        except Unsupported:
            return None

    def begin(self, subtask: Subtask, robot: Robot) -> None:
        self._held_before = self._holding(robot)

    def _gap(self, subtask: Subtask) -> float:
        try:
            return self.belief.distance_to(subtask.target or "")
        except (KeyError, ValueError):
            return float("inf")

    def _arrived(self, subtask: Subtask, gap: float, tol: Tolerances) -> bool:
        """Within ``gap`` of the target, and for a thing (not a room) no closer than the arm needs: a
        robot that overshot backs off on the next attempt instead of standing too close."""
        now = self._gap(subtask)
        if now > gap:
            return False
        entity = self.belief.lookup(subtask.target or "")
        return entity is None or entity.kind == "room" or now >= tol.min_gap

    def done_early(self, subtask: Subtask, robot: Robot, tol: Tolerances) -> bool:
        if subtask.action is Action.GO_TO:
            return self._arrived(subtask, min(tol.early_gap, tol.goal_gap), tol)  # never "done" short of success
        if subtask.action is Action.PICK:
            return self._holding(robot) is True
        return False

    def succeeded(self, subtask: Subtask, robot: Robot, tol: Tolerances) -> bool:
        if subtask.action is Action.GO_TO:
            return self._arrived(subtask, tol.goal_gap, tol)
        if subtask.action is Action.PICK:
            return self._holding(robot) is True
        if subtask.action in (Action.PUT, Action.GIVE):
            return self._held_before is not False and self._holding(robot) is False
        if subtask.action is Action.FOLLOW:
            return self._gap(subtask) <= self.follow_gap
        return subtask.action in (Action.OPEN, Action.CLOSE)

    def failure(self, subtask: Subtask, robot: Robot, model: str, last_message: str, timed_out: bool) -> tuple[SkillFailure, str]:
        target = subtask.target or ""
        detail = f": {last_message}" if last_message else ""
        kind = SkillFailure.TIMEOUT if timed_out else SkillFailure.FAILED
        if subtask.action is Action.GO_TO:
            gap = self._gap(subtask)
            where = f" ({gap:.2f} m away)" if gap != float("inf") else ""
            return kind, f"{model} did not reach the {target}{where}{detail}"
        if subtask.action is Action.PICK:
            return (kind if timed_out else SkillFailure.GRASP_MISSED), f"{model} failed to grasp the {target}{detail}"
        if subtask.action is Action.PUT:
            return kind, f"{model} did not release the {target} on the {subtask.place}{detail}"
        if subtask.action is Action.GIVE:
            return kind, f"the {subtask.place} did not take the {target}{detail}"
        if subtask.action is Action.FOLLOW:
            return kind, f"{model} lost the {target}{detail}"
        return kind, f"{model} could not {subtask.action.value.lower()} the {target}{detail}"


__all__ = ["AttemptCheck", "RobotSignalsCheck", "Tolerances"]
