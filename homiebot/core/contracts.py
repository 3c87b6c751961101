"""The messages exchanged between homiebot components, as versioned pydantic models.

Every model serialises to JSON and back without loss (``model_dump_json`` / ``model_validate_json``);
this JSON is what travels between ROS 2 nodes and what episode records are made of. Images travel
as arrays (base64-encoded in JSON) inside an Observation, and as PNG file paths inside records.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Sequence
from enum import Enum
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, PlainValidator, model_validator

# 2: skill failures carry a typed reason (``SkillFailure``) in E1/E2 feedback details; termination
#    "refused" (a planner that declines the instruction) and "cancelled" (by an operator); safety error
#    codes S1 (a keep-out rule) and S2 (the operator rejected the subtask); safety events in records.
# 3: the Ask action ([Ask, <question>]: a clarifying question to the user, answered in that round's
#    feedback); error code U1 (nobody answered); ``Exchange`` (question, answer, relevance) in step records;
#    ``understood`` (the goal a planner read from the instruction) in episode records; termination "reported"
#    (a planner that stops to say which part of the instruction it could not understand or ground).
# 4: people in the home: the Follow action ([Follow, person]) and the Give action ([Give, object, person]),
#    offered only when the task has a person; ``PersonSeen`` (a person in view, where, what in hand) in
#    observations (``people``) and in step records (``people``). Records of versions 1-3 still load.
CONTRACT_VERSION = 4
ViewName = Literal["front", "left", "back", "right"]
VIEW_NAMES: tuple[ViewName, ...] = ("front", "left", "back", "right")


class Action(str, Enum):
    """The high-level actions a planner may choose from."""

    GO_TO = "Go to"
    PICK = "Pick"
    PUT = "Put"
    OPEN = "Open"
    CLOSE = "Close"
    END = "End"
    EXPLORE = "Explore"  # look around a room for what has not been seen yet: [Explore, kitchen]
    ASK = "Ask"  # a clarifying question to the user: [Ask, which mug do you mean?]; needs no model
    FOLLOW = "Follow"  # keep a person in view at a distance as they move: [Follow, person]
    GIVE = "Give"  # hand the held object to a person within reach: [Give, white_mug, person]


EMMOE_ACTIONS = (Action.GO_TO, Action.PICK, Action.PUT, Action.OPEN, Action.CLOSE, Action.END)
NO_MODEL_ACTIONS = (Action.END, Action.ASK)  # decided by the planner alone: no low-level model runs them
PEOPLE_ACTIONS = (Action.FOLLOW, Action.GIVE)  # act with a person: offered only when the task has one
PERSON_KIND = "person"  # the kind (and perception class) of a person in beliefs and instance labels


def offered_actions(model_actions: Iterable[Iterable[str]], ask: bool = False, people: bool = False) -> list[str]:
    """The actions to offer a planner: the EMMOE six always, extensions (Explore) only when a model can do them,
    Ask only when someone can answer (``ask``), Follow and Give only when a model can do them and the task has a
    person (``people``)."""
    extra = {a for acts in model_actions for a in acts}
    return [a.value for a in Action
            if a in EMMOE_ACTIONS or (a.value in extra and (people or a not in PEOPLE_ACTIONS)) or (ask and a is Action.ASK)]


class ErrorCode(str, Enum):
    """Why a subtask failed; the taxonomy of the EMMOE paper (section 3.3, appendix E)."""

    F1 = "F1"  # malformed output, action or model not available
    F2 = "F2"  # target does not exist / cannot be grounded
    L1 = "L1"  # hand full but Pick/Open/Close
    L2 = "L2"  # hand empty but Put
    L3 = "L3"  # Put into or Pick from a closed container
    L4 = "L4"  # action does not apply to this kind of target (e.g. Open a table)
    D1 = "D1"  # target too far to reach
    D2 = "D2"  # target too close for the arm to extend
    E1 = "E1"  # the low-level skill failed after all attempts
    E2 = "E2"  # a failed Put dropped the object
    # homiebot's safety codes, beyond the paper's ten
    S1 = "S1"  # a keep-out rule forbids the subtask (a place, an object or an action on it)
    S2 = "S2"  # the operator rejected the subtask (or did not answer in time)
    # people in the loop
    U1 = "U1"  # a question (Ask) got no answer: nobody to ask, or nobody answered in time

    @property
    def category(self) -> str:
        return {"F": "format", "L": "logical", "D": "distance", "E": "execution", "S": "safety",
                "U": "user"}[self.value[0]]


class SkillFailure(str, Enum):
    """Why a skill attempt failed, as a robot can tell; E1 and E2 feedback carry the last attempt's
    in ``details['reason']`` (the message says it in words)."""

    UNREACHABLE = "unreachable"  # no path, or the target is out of the arm's reach
    GRASP_MISSED = "grasp_missed"  # the gripper closed on nothing, or let the object go
    COLLISION = "collision"  # the base or the arm bumped into something and gave up
    TIMEOUT = "timeout"  # the model ran out of steps (or time) without finishing
    UNAVAILABLE = "unavailable"  # the model or the robot did not answer (a server or driver gone)
    STOPPED = "stopped"  # stopped from outside (cancel, e-stop)
    FAILED = "failed"  # the model stopped by itself short of the goal, or any other reason


class Status(str, Enum):
    SUCCESS = "success"
    FAIL = "fail"


class _Contract(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _array_to_json(a: np.ndarray) -> dict[str, Any]:
    a = np.ascontiguousarray(a)
    return {"dtype": str(a.dtype), "shape": list(a.shape), "data": base64.b64encode(a.tobytes()).decode("ascii")}


def _array_from_any(v: Any) -> np.ndarray:
    if isinstance(v, np.ndarray):
        return v
    if isinstance(v, dict) and {"dtype", "shape", "data"} <= set(v):
        return np.frombuffer(base64.b64decode(v["data"]), dtype=np.dtype(v["dtype"])).reshape(v["shape"]).copy()
    raise ValueError("expected a numpy array or {dtype, shape, data} mapping")


NDArray = Annotated[np.ndarray, PlainValidator(_array_from_any), PlainSerializer(_array_to_json, when_used="json")]


class Subtask(_Contract):
    """One step of a plan: ``[Go to, fridge]``, ``[Put, green_can, fridge]``, ``[Explore, kitchen]``, ``[End]``,
    ``[Ask, which mug do you mean?]`` (the question is the target), ``[Follow, person]``, ``[Give, white_mug, person]``
    (the person is the place)."""

    action: Action
    target: str | None = None
    place: str | None = None

    @model_validator(mode="after")
    def _arity(self) -> Subtask:
        if self.action is Action.END:
            if self.target or self.place:
                raise ValueError("End takes no target")
        elif not self.target:
            raise ValueError(f"{self.action.value} needs a target")
        if self.action is Action.PUT and not self.place:
            raise ValueError("Put needs an object and a place: [Put, object, place]")
        if self.action is Action.GIVE and not self.place:
            raise ValueError("Give needs an object and a person: [Give, object, person]")
        if self.action not in (Action.PUT, Action.GIVE) and self.place:
            raise ValueError(f"{self.action.value} takes one target, not two")
        return self

    def text(self) -> str:
        """The paper's bracketed form, e.g. ``[Put, green_can, fridge]``."""
        parts = [self.action.value] + [p for p in (self.target, self.place) if p]
        return "[" + ", ".join(parts) + "]"

    @classmethod
    def from_text(cls, text: str) -> Subtask:
        """Parse the bracketed form strictly (raises ValueError); lenient parsing lives in parsing.py."""
        return parse_subtask_text(text)

    def __str__(self) -> str:
        return self.text()


class Exchange(_Contract):
    """A question the planner asked (Ask) and what came back."""

    question: str
    answer: str | None = Field(None, description="None when nobody answered")
    relevant: bool | None = Field(None, description="the simulated user's judgement: does the question bear on "
                                                    "what it wants (None: a person or graph answered, no judgement)")
    resolved: int = Field(0, ge=0, description="the relevant questions this one counts as, by the simulated user's "
                                               "judgement: the open things its answer settled or narrowed (two for "
                                               "'which sponge, and where should it go?'); 0 when not relevant or not "
                                               "judged (older records: read as 1 when relevant)")
    answerer: str = Field("", description="who answered: simulated, persona:<name>, persona-llm:<name> (a language "
                                          "model phrased the persona's answer), persona:<name> (<why the model's words "
                                          "were not used>), terminal, ros, none")


class PlannerOutput(_Contract):
    """What a planner decides in one round."""

    version: int = CONTRACT_VERSION
    analysis: str = ""
    subtask: Subtask
    model: str | None = Field(None, description="low-level model name; None for End")


# A ``Feedback.details`` key: the model whose skill ran in place of the one the planner chose, which
# cannot run here (a configured ``fallback``); displays name it instead of the chosen model.
STAND_IN = "stand_in"


class Feedback(_Contract):
    """The result of one subtask, phrased so a language model can act on it."""

    version: int = CONTRACT_VERSION
    status: Status
    code: ErrorCode | None = None
    message: str = ""
    details: dict[str, str] = Field(default_factory=dict, description="machine-readable facts, e.g. {'container': 'fridge'}")

    @model_validator(mode="after")
    def _code_iff_fail(self) -> Feedback:
        if (self.status is Status.FAIL) != (self.code is not None):
            raise ValueError("a failed feedback needs an error code and a successful one must not have one")
        return self

    @classmethod
    def ok(cls, message: str = "") -> Feedback:
        return cls(status=Status.SUCCESS, message=message)

    @classmethod
    def fail(cls, code: ErrorCode, message: str, **details: str) -> Feedback:
        return cls(status=Status.FAIL, code=code, message=message, details=details)

    @property
    def success(self) -> bool:
        return self.status is Status.SUCCESS


class Pose2D(_Contract):
    x: float
    y: float
    yaw: float


class ViewImage(_Contract):
    """One camera's images: RGB uint8 HxWx3, optional depth (metres) and instance segmentation."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)
    rgb: NDArray
    depth: NDArray | None = None
    segmentation: NDArray | None = None


class InstanceLabel(_Contract):
    """What an instance id in the segmentation images is: its name and its category (class or type)."""

    name: str
    category: str


class PersonSeen(_Contract):
    """A person in view: who, where (map frame, metres), how far from the robot base, what in hand."""

    name: str
    x: float
    y: float
    distance: float = Field(ge=0.0, description="gap between the robot base's edge and the person")
    holding: str | None = None
    room: str | None = None


class Observation(_Contract):
    """What the robot perceives at the start of a round; views always front, left, back, right.

    ``labels`` maps the instance ids visible in the segmentation images to names and categories
    (what an instance-segmentation detector reports); it is empty when there is no segmentation.
    ``people`` are the persons in view (empty when nobody is seen).
    """

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)
    version: int = CONTRACT_VERSION
    round: int
    views: dict[ViewName, ViewImage]
    pose: Pose2D
    inventory: list[str] = []
    labels: dict[int, InstanceLabel] = Field(default_factory=dict)
    people: list[PersonSeen] = Field(default_factory=list)

    @model_validator(mode="after")
    def _all_views(self) -> Observation:
        missing = [v for v in VIEW_NAMES if v not in self.views]
        if missing:
            raise ValueError(f"observation is missing views {missing}")
        return self


class Timings(_Contract):
    """Seconds spent in each phase of a round."""

    observe: float = 0.0
    plan: float = 0.0
    check: float = 0.0
    execute: float = 0.0
    record: float = 0.0
    total: float = 0.0


class StepRecord(_Contract):
    """Everything about one round: enough to recompute metrics and to build training data."""

    version: int = CONTRACT_VERSION
    round: int
    prompt: str = Field(description="the planner's user text for this round (task, inventory, history, feedback)")
    raw_output: str
    output: PlannerOutput | None = Field(None, description="None when the raw output could not be parsed")
    feedback: Feedback
    inventory_before: list[str]
    inventory_after: list[str]
    skill: str | None = Field(None, description="the skill that executed the subtask, if any ran")
    acted: Subtask | None = Field(None, description="the executed subtask in the world's own names (a semantic map "
                                                    "grounds the planner's words to them); what metrics match")
    attempts: int = 0
    path_length: float = 0.0
    images: dict[ViewName, str] = Field(default_factory=dict, description="view -> PNG path relative to the episode folder")
    planner_usage: dict[str, float] = Field(default_factory=dict)
    exchange: Exchange | None = Field(None, description="the question and its answer, when the subtask was Ask")
    people: list[PersonSeen] = Field(default_factory=list, description="the persons in view at the start of the round")
    timings: Timings = Timings()

    @property
    def subtask(self) -> Subtask | None:
        return self.output.subtask if self.output else None


# How an episode ended: the planner's End; the round limit; repeated planner failures; a stop from
# outside (Ctrl-C, SIGTERM, a stopping graph); a component that failed (a node died, a call timed
# out); the planner declining the instruction before the first round; the planner stopping to report a part
# of the instruction it could not understand or ground (with nobody to ask).
Termination = Literal["end", "max_rounds", "planner_error", "interrupted", "error", "refused", "cancelled", "reported"]


class SafetyEvent(_Contract):
    """One thing the safety layer did, as recorded and published on ``/homiebot/safety``."""

    kind: Literal["limit_clipped", "keep_out", "watchdog_stop", "estop", "estop_released", "cancel", "approval"]
    stamp: float = Field(description="wall-clock seconds since the epoch")
    round: int | None = None
    message: str = ""
    details: dict[str, str] = Field(default_factory=dict, description="e.g. {'rule': 'never open the fridge'} or {'decision': 'reject'}")
TERMINATIONS: tuple[str, ...] = Termination.__args__  # type: ignore[attr-defined]


class EpisodeRecord(_Contract):
    """A complete episode, as written to ``episode.json``."""

    version: int = CONTRACT_VERSION
    episode_id: str
    instruction: str
    task_id: str | None = None
    scene: dict[str, Any] = Field(description="the full scene spec the episode started from")
    planner: str
    seed: int
    max_rounds: int
    config: dict[str, Any] = Field(default_factory=dict)
    steps: list[StepRecord] = []
    ended: bool = Field(False, description="True if the planner's last subtask was End")
    termination: Termination = "max_rounds"
    error: str | None = Field(None, description="what stopped the episode when termination is 'error' or 'refused'")
    safety_events: list[SafetyEvent] = Field(default_factory=list, description="limits clipped, keep-out refusals, "
                                             "watchdog stops, e-stops, cancels and approvals, in order")
    understood: str | None = Field(None, description="the goal the planner read from the instruction, in its words")
    goal_satisfied: bool | None = Field(None, description="simulator check of the task goal, when the task has one")
    path_length: float = 0.0
    wall_time: float = 0.0
    video: str | None = None


# The bracket form ``[action, target(, place)]``, read leniently (parsing.py builds on it for whole replies).
ACTION_LIST = "[" + ", ".join(a.value for a in Action) + "]"
_BRACKET = re.compile(r"\[([^\[\]]*)\]")


class FormatError(ValueError):
    """The planner's output is unusable; ``str(err)`` is actionable feedback for the planner."""


def _key(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


_ACTIONS = {_key(a.value): a for a in Action}


def parse_action(text: str) -> Action:
    """Map 'go to', 'Go_To', 'GOTO' ... to an Action; FormatError otherwise."""
    action = _ACTIONS.get(_key(text))
    if action is None:
        raise FormatError(f"'{text.strip()}' is not in the action list! Choose an action from {ACTION_LIST}.")
    return action


def _clean_name(text: str) -> str:
    return text.strip().strip("'\"`").strip()


def subtask_from_parts(parts: Sequence[Any]) -> Subtask:
    """Build a Subtask from [action, target(, place)], with feedback-quality errors."""
    items = [_clean_name(str(p)) for p in parts if p is not None and _clean_name(str(p))]
    if not items:
        raise FormatError(f"The subtask is empty. Write it as [action, target], e.g. [Go to, kitchen], with an action from {ACTION_LIST}.")
    action = parse_action(items[0])
    args = items[1:]
    if action is Action.END:
        return Subtask(action=action)
    if action is Action.ASK:
        if not args:
            raise FormatError("Ask needs a question: write [Ask, <your question to the user>].")
        return Subtask(action=action, target=", ".join(args))
    if action is Action.PUT:
        if len(args) != 2:
            raise FormatError("Put needs the object and the place: write [Put, object, place], e.g. [Put, green_can, fridge].")
        return Subtask(action=action, target=args[0], place=args[1])
    if action is Action.GIVE:
        if len(args) != 2:
            raise FormatError("Give needs the object and the person: write [Give, object, person], e.g. [Give, white_mug, person].")
        return Subtask(action=action, target=args[0], place=args[1])
    if len(args) != 1:
        raise FormatError(f"{action.value} takes exactly one target: write [{action.value}, target], got {len(args)} arguments.")
    return Subtask(action=action, target=args[0])


def parse_subtask_text(text: str) -> Subtask:
    """Parse ``[action, target(, place)]`` (brackets optional)."""
    match = _BRACKET.search(text)
    body = match.group(1) if match else text
    return subtask_from_parts(body.split(","))
