"""The error detector: checks a planned subtask before execution and classifies execution results.

Phases, in order (EMMOE section 3.3 / appendix E):

1. format   F1 model unknown, unavailable or unable to do the action;  F2 target cannot be grounded
2. logic    L1 hand full for Pick/Open/Close;  L2 hand empty (or holding something else) for Put/Give;
            L3 Put into / Pick from a closed container;  L4 action does not apply to the target kind
            (Follow or Give with nobody in sight is L4 too: a person to act with is missing)
3. distance D1 target (for Give: the person) farther than ``far`` metres;  D2 closer than ``near`` metres
4. execution (after the skill ran)  E1 failed every attempt;  E2 a failed Put dropped the object

The detector reads state only through ``WorldBelief``: privileged simulator truth in the embedded
home, the semantic mapper's belief plus the gripper state on a real robot.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from homiebot.core.contracts import PEOPLE_ACTIONS, PERSON_KIND, Action, ErrorCode, Feedback, PlannerOutput, SkillFailure, Subtask

MANIPULATION = (Action.PICK, Action.PUT, Action.OPEN, Action.CLOSE, Action.GIVE)



class ConfigError(ValueError):
    """A configuration that cannot be used; the message names the file and field."""

class EntityLike(Protocol):
    """Read-only view of a named thing (frozen dataclasses and plain objects both fit)."""

    @property
    def name(self) -> str: ...

    @property
    def kind(self) -> str: ...  # "object" | "receptacle" | "room" | "person"

    @property
    def articulated(self) -> bool: ...

    @property
    def is_open(self) -> bool | None: ...


@dataclass(frozen=True)
class Entity:
    """What the detector needs to know about a named thing (an ``EntityLike`` any belief may return)."""

    name: str
    kind: str  # "object" | "receptacle" | "room" | "person"
    articulated: bool = False
    is_open: bool | None = None
    relation: str | None = None  # receptacles: "on" or "in"


class WorldBelief(Protocol):
    """What the detector may ask about the world."""

    def names(self) -> list[str]:
        """Every name the agent may refer to."""
        ...

    def lookup(self, name: str) -> EntityLike | None:
        """The entity with this canonical name, or None."""
        ...

    def held_object(self) -> str | None:
        """The object in the gripper, if any."""
        ...

    def distance_to(self, name: str) -> float:
        """Gap in metres between the robot base and the entity."""
        ...

    def enclosing_container(self, obj: str) -> str | None:
        """The articulated receptacle the object is inside of, if any."""
        ...


class ResolvingBelief(WorldBelief, Protocol):
    """A belief that grounds free-form names itself (the semantic map: 'green can' -> 'can_3')."""

    def resolve(self, phrase: str) -> tuple[str | None, str]:
        """(canonical name, "") if the phrase names one thing, else (None, an actionable message with candidates)."""
        ...


def normalise_name(text: str) -> str:
    """'Green Can' / 'green-can' / ' green_can ' -> 'green_can'."""
    return re.sub(r"[\s\-]+", "_", text.strip().lower()).strip("_")


@dataclass(frozen=True)
class CheckResult:
    """Outcome of the pre-execution checks: a failure feedback, or the subtask with canonical names."""

    feedback: Feedback | None
    subtask: Subtask | None = None

    @property
    def passed(self) -> bool:
        return self.feedback is None


class ErrorDetector:
    """Pre-execution checks and execution-result classification, with no middleware inside."""

    def __init__(
        self,
        belief: WorldBelief,
        capabilities: Mapping[str, frozenset[Action]],
        aliases: Mapping[str, str] | None = None,
        far: float = 2.0,
        near: float = 0.1,
        suggest: bool = True,
        unavailable: Mapping[str, str] | None = None,
    ) -> None:
        self.belief = belief
        self.capabilities = dict(capabilities)
        self.unavailable = dict(unavailable or {})  # configured models that cannot run here -> why
        self.aliases = {normalise_name(k): v for k, v in (aliases or {}).items()}
        self.far = far
        self.near = near
        self.suggest = suggest

    # ---- grounding ------------------------------------------------------------------------
    def ground(self, name: str) -> str | None:
        """Canonical scene name for what the planner wrote, via normalisation, aliases and, for a
        belief that resolves names itself (the semantic map), its own grounding."""
        return self._ground(name)[0]

    def _ground(self, name: str) -> tuple[str | None, str]:
        """(canonical name, "") or (None, the resolving belief's explanation, "" for other beliefs)."""
        key = normalise_name(name)
        for candidate in (key, self.aliases.get(key)):
            if candidate and self.belief.lookup(candidate) is not None:
                return candidate, ""
        resolve = getattr(self.belief, "resolve", None)
        if resolve is None:
            return None, ""
        why = ""
        for phrase in (name, self.aliases.get(key)):
            if phrase:
                found, message = resolve(phrase)
                if found is not None:
                    return found, ""
                why = why or message  # the planner's own words first
        return None, why or f"{name} has not been seen."

    def _not_found(self, name: str, why: str = "") -> Feedback:
        if why:  # a map explains what it has seen instead
            return Feedback.fail(ErrorCode.F2, why, name=name)
        msg = f"{name} does not exist! Please choose another object"
        if self.suggest:
            close = difflib.get_close_matches(normalise_name(name), self.belief.names(), n=3, cutoff=0.6)
            if close:
                msg += f" (similar names: {', '.join(close)})"
        return Feedback.fail(ErrorCode.F2, msg + ".", name=name)

    # ---- phases 1-3 -----------------------------------------------------------------------
    def check(self, output: PlannerOutput) -> CheckResult:
        """Run the format, logic and distance checks for a non-End planner output."""
        sub = output.subtask
        fb = self._check_model(output)
        if fb:
            return CheckResult(fb)
        target, why = self._ground(sub.target or "")
        if target is None:
            nobody = self._nobody(sub) if sub.action is Action.FOLLOW else None
            return CheckResult(nobody or self._not_found(sub.target or "", why))
        place = None
        if sub.place is not None:
            place, why = self._ground(sub.place)
            if place is None:
                nobody = self._nobody(sub) if sub.action is Action.GIVE else None
                return CheckResult(nobody or self._not_found(sub.place, why))
        grounded = Subtask(action=sub.action, target=target, place=place)
        fb = self._check_logic(grounded) or self._check_distance(grounded)
        return CheckResult(fb, grounded if fb is None else None)

    def _nobody(self, sub: Subtask) -> Feedback | None:
        """L4 for Follow or Give when the belief knows of no person at all (nobody seen yet, or nobody here)."""
        if sub.action not in PEOPLE_ACTIONS or any(getattr(self.belief.lookup(n), "kind", None) == PERSON_KIND
                                                   for n in self.belief.names()):
            return None
        verb = "follow" if sub.action is Action.FOLLOW else "give anything to"
        return Feedback.fail(ErrorCode.L4, f"Unable to {verb} the {sub.place or sub.target}: nobody is in sight. Find the "
                                           "person first (go to where they were seen or said they would be).",
                             name=sub.place or sub.target or "")

    def _check_model(self, output: PlannerOutput) -> Feedback | None:
        action = output.subtask.action
        available = sorted(self.capabilities)
        if output.model in self.unavailable:
            return Feedback.fail(ErrorCode.F1, f"{output.model} is not installed here ({self.unavailable[output.model]}). "
                                               f"Choose a model from [{', '.join(available)}].", model=output.model)
        if output.model not in self.capabilities:
            return Feedback.fail(ErrorCode.F1, f"{output.model} is not in the model list! Choose a model from [{', '.join(available)}].")
        if action not in self.capabilities[output.model]:
            able = [m for m in available if action in self.capabilities[m]]
            return Feedback.fail(
                ErrorCode.F1,
                f"{output.model} cannot perform {action.value}. Models that can: [{', '.join(able) or 'none installed'}].",
            )
        return None

    def _check_logic(self, sub: Subtask) -> Feedback | None:
        act = sub.action
        verb = act.value.lower()
        held = self.belief.held_object()
        target = self.belief.lookup(sub.target or "")
        assert target is not None
        if held is not None and act in (Action.PICK, Action.OPEN, Action.CLOSE):
            return Feedback.fail(ErrorCode.L1, f"Unable to {verb}, the hand is full (holding the {held}); put it somewhere first.", held=held)
        if act in (Action.PUT, Action.GIVE):
            if held is None:
                return Feedback.fail(ErrorCode.L2, f"Unable to {verb}, the hand is empty; pick the object up first.")
            if sub.target != held:
                return Feedback.fail(ErrorCode.L2, f"Unable to {verb} the {sub.target}, the hand holds the {held}, not the {sub.target}.")
        if act is Action.FOLLOW and target.kind != PERSON_KIND:
            return Feedback.fail(ErrorCode.L4, f"Can not follow the {sub.target}! It is a {target.kind}; follow a person, or go to it instead.")
        if act is Action.GIVE:
            person = self.belief.lookup(sub.place or "")
            assert person is not None
            if person.kind != PERSON_KIND:
                return Feedback.fail(ErrorCode.L4, f"Can not give anything to the {sub.place}! It is a {person.kind}; give it to a "
                                                   "person, or put it on furniture with Put.")
        if act is Action.PICK and target.kind != "object":
            return Feedback.fail(ErrorCode.L4, f"Can not pick {sub.target}! It is a {target.kind}; please choose an object.")
        if act is Action.EXPLORE and target.kind != "room":
            return Feedback.fail(ErrorCode.L4, f"Can not explore {sub.target}! It is a {target.kind}; explore a room, or go to it instead.")
        if act in (Action.OPEN, Action.CLOSE) and not (target.kind == "receptacle" and target.articulated):
            return Feedback.fail(ErrorCode.L4, f"Can not {verb} {sub.target}! It has no door or drawer; please choose another object.")
        if act is Action.PUT:
            place = self.belief.lookup(sub.place or "")
            assert place is not None
            if place.kind != "receptacle":
                return Feedback.fail(ErrorCode.L4, f"Can not put anything on the {sub.place}! It is a {place.kind}; choose a piece of furniture.")
            if place.articulated and not place.is_open:
                return Feedback.fail(ErrorCode.L3, f"Unable to put, the {sub.place} is closed, you should open it first.", container=sub.place or "")
        if act is Action.PICK:
            container = self.belief.enclosing_container(sub.target or "")
            if container is not None:
                box = self.belief.lookup(container)
                if box is not None and not box.is_open:
                    return Feedback.fail(ErrorCode.L3, f"Unable to pick, the {sub.target} is in the {container}, which is closed; you should open it first.", container=container)
        return None

    def _check_distance(self, sub: Subtask) -> Feedback | None:
        if sub.action not in MANIPULATION:
            return None
        subject = sub.place if sub.action in (Action.PUT, Action.GIVE) else sub.target
        assert subject is not None
        distance = self.belief.distance_to(subject)
        verb = sub.action.value.lower()
        if distance > self.far:
            return Feedback.fail(ErrorCode.D1, f"Unable to {verb}, the target is far away ({distance:.1f} m); go to the {subject} first.", subject=subject)
        if distance < self.near:
            return Feedback.fail(ErrorCode.D2, f"Unable to {verb}, the target is too close ({distance:.2f} m) for the arm to extend; move back, e.g. go to the {subject} again.", subject=subject)
        return None

    # ---- phase 4 --------------------------------------------------------------------------
    @staticmethod
    def execution_failed(sub: Subtask, attempts: int, reason: str, dropped: str | None,
                         kind: SkillFailure = SkillFailure.FAILED) -> Feedback:
        """Classify a skill that did not succeed: E2 if the object was dropped, else E1. ``kind`` is
        the last attempt's typed reason; it travels in ``details['reason']``."""
        verb = sub.action.value.lower()
        if dropped is not None:
            return Feedback.fail(ErrorCode.E2, f"Unable to {verb}, and the object is missing: the {dropped} fell ({reason}); find it and pick it up again.",
                                 dropped=dropped, reason=kind.value)
        detail = f" ({reason})" if reason else ""
        return Feedback.fail(ErrorCode.E1, f"Unable to {verb}, the subtask is too difficult to perform after {attempts} attempts{detail}.",
                             reason=kind.value)


# ---- a belief that travels as JSON (between the world or mapper and a detector in another process) --
class SnapshotBelief:
    """A WorldBelief read from a JSON snapshot taken by ``take_snapshot``."""

    def __init__(self, data: dict) -> None:
        self.data = data
        self._entities = {n: Entity(n, e["kind"], e.get("articulated", False), e.get("is_open"), e.get("relation"))
                          for n, e in data["entities"].items()}

    def names(self) -> list[str]:
        return list(self._entities)

    def lookup(self, name: str) -> EntityLike | None:
        return self._entities.get(name)

    def held_object(self) -> str | None:
        return self.data.get("held")

    def distance_to(self, name: str) -> float:
        return float(self.data["entities"][name]["distance"])

    def enclosing_container(self, obj: str) -> str | None:
        return self.data["entities"].get(obj, {}).get("container")


def take_snapshot(belief: WorldBelief) -> dict:
    """Everything the detector may ask, for every name, as JSON-able data."""
    entities = {}
    for name in belief.names():
        e = belief.lookup(name)
        assert e is not None
        entities[name] = {"kind": e.kind, "articulated": bool(getattr(e, "articulated", False)), "is_open": e.is_open,
                          "relation": getattr(e, "relation", None), "distance": round(belief.distance_to(name), 6),
                          "container": belief.enclosing_container(name) if e.kind == "object" else None}
    return {"held": belief.held_object(), "entities": entities}
