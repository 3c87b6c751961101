"""What may arrive on the graph's topics, and how a node reads it without ever being brought down.

Every JSON message a node subscribes to is parsed under a size limit and validated by a pydantic
contract; a message that fails is logged (throttled) and dropped, or answered with an error where
the protocol has a reply. Callbacks are wrapped so that nothing a sender does raises out of them:
an exception in a subscription callback would stop the node's executor.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, ValidationError, field_validator, model_validator
from rclpy.node import Node

MAX_MESSAGE_BYTES = 1_000_000  # default limit of one JSON message (node parameter ``max_message_bytes``)
MAX_ID_CHARS = 200
LOG_EVERY = 2.0  # seconds between two log lines about rejected messages on one topic

RequestId = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS)]
M = TypeVar("M", bound=BaseModel)


class WireError(ValueError):
    """A message that cannot be accepted; the text says why (one line)."""


class RpcRequest(BaseModel):
    """A request on ``/homiebot/<service>/request``."""

    model_config = ConfigDict(extra="forbid")
    id: RequestId
    method: Annotated[str, Field(min_length=1, max_length=100)] | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    cancel: StrictBool = False
    local: StrictBool = False
    owner: Annotated[str, Field(max_length=MAX_ID_CHARS)] | None = None  # the calling node, for episode sessions


class RpcReply(BaseModel):
    """A reply on ``/homiebot/<service>/reply`` (what a client accepts)."""

    model_config = ConfigDict(extra="allow")
    id: RequestId
    kind: str


class Stamped(BaseModel):
    """A per-round JSON message (``/homiebot/world/belief``, ``/homiebot/observation``, ``/homiebot/world/map``)."""

    model_config = ConfigDict(extra="allow")
    episode: StrictInt = 0
    round: StrictInt = Field(0, ge=0)


class Label(BaseModel):
    name: str
    category: str


class ObservationMeta(Stamped):
    """``/homiebot/observation``: what the mapper reads of it."""

    labels: dict[str, Label] = Field(default_factory=dict)
    mapped: StrictBool = False


class MapMessage(Stamped):
    """``/homiebot/world/map``: the world's map summary and, optionally, its occupancy grid."""

    summary: Any = None
    occupancy: dict[str, Any] | None = None


class Submission(BaseModel):
    """A task to run (a ``RunTask`` goal, read): an instruction in a scene, a task, or a task file (one of them)."""

    model_config = ConfigDict(extra="forbid")
    id: RequestId | StrictInt | None = None
    instruction: Annotated[str, Field(min_length=1)] | None = None
    scene: Annotated[str, Field(min_length=1, max_length=4096)] | StrictInt | None = None  # a seed or a scene file
    task: dict[str, Any] | None = None
    task_file: Annotated[str, Field(min_length=1, max_length=4096)] | None = None
    seed: Annotated[StrictInt, Field(ge=0, lt=2**32)] | None = None

    @field_validator("instruction")
    @classmethod
    def _not_blank(cls, v: str | None) -> str | None:
        if v is not None and not v.strip():
            raise ValueError("the instruction is empty")
        return v

    @model_validator(mode="after")
    def _one_form(self) -> Submission:
        forms = [f for f, given in (("instruction/scene", self.instruction is not None or self.scene is not None),
                                    ("task", self.task is not None), ("task_file", self.task_file is not None)) if given]
        if len(forms) > 1:
            raise ValueError(f"give one of instruction/scene, task or task_file, not {' and '.join(forms)}")
        return self


class Heartbeat(BaseModel):
    """``/homiebot/heartbeat``: a node saying it is alive; ``instance`` changes when its process is replaced."""

    model_config = ConfigDict(extra="forbid")
    node: Annotated[str, Field(min_length=1, max_length=100)]
    instance: Annotated[str, Field(min_length=1, max_length=100)]
    pid: StrictInt


def read_json(data: str, limit: int = MAX_MESSAGE_BYTES) -> Any:
    """Parse a JSON text of at most ``limit`` bytes (WireError otherwise)."""
    if len(data) > limit or len(data.encode("utf-8", "surrogatepass")) > limit:
        raise WireError(f"message of {len(data.encode('utf-8', 'surrogatepass'))} bytes is over the limit of {limit}")
    try:
        value = json.loads(data)
    except (ValueError, RecursionError) as err:
        raise WireError(f"not JSON: {err}") from None
    return value


def readable_id(value: Any) -> str | None:
    """The id of a message that failed validation, if one can be read (for the error event or reply)."""
    if isinstance(value, dict):
        rid = value.get("id")
        if isinstance(rid, (str, int)) and not isinstance(rid, bool) and 0 < len(str(rid)) <= MAX_ID_CHARS:
            return str(rid)
    return None


def describe(err: ValidationError) -> str:
    """A pydantic error in one line: ``field: problem; ...``."""
    parts = []
    for e in err.errors()[:5]:
        where = ".".join(str(p) for p in e["loc"]) or "message"
        parts.append(f"{where}: {e['msg']}")
    return "; ".join(parts)


def parse(model: type[M], data: str, limit: int = MAX_MESSAGE_BYTES) -> M:
    """Read and validate one JSON message (WireError with a one-line reason)."""
    value = read_json(data, limit)
    if not isinstance(value, dict):
        raise WireError(f"expected a JSON object, got {type(value).__name__}")
    try:
        return model.model_validate(value)
    except ValidationError as err:
        raise WireError(describe(err)) from None


def message_limit(node: Node) -> int:
    """The node's ``max_message_bytes`` parameter when declared, else the default."""
    if node.has_parameter("max_message_bytes"):
        return int(node.get_parameter("max_message_bytes").value)
    return MAX_MESSAGE_BYTES


def safe_callback(node: Node, topic: str, callback: Callable[[Any], None]) -> Callable[[Any], None]:
    """Wrap a subscription callback: whatever the message does, the node keeps running."""
    logger = node.get_logger()

    def guarded(msg: Any) -> None:
        try:
            callback(msg)
        except WireError as err:
            logger.warning(f"dropped a message on {topic}: {err}", throttle_duration_sec=LOG_EVERY)
        except Exception as err:  # a bug or a message no contract foresaw: report, never stop the node
            logger.error(f"dropped a message on {topic}: {type(err).__name__}: {err}", throttle_duration_sec=LOG_EVERY)

    return guarded


def finite(values: Any) -> bool:
    """True if every number in a (nested) JSON value is finite."""
    if isinstance(values, float):
        return math.isfinite(values)
    if isinstance(values, dict):
        return all(finite(v) for v in values.values())
    if isinstance(values, list):
        return all(finite(v) for v in values)
    return True
