"""What may arrive on the graph's topics, and how a node reads it without ever being brought down.

A RunTask goal is read into a ``Submission`` (pydantic: one-line reasons for what is wrong). Topic
callbacks are wrapped so that nothing a sender does raises out of them (an exception in a
subscription callback would stop the node's executor): a message a callback refuses (``WireError``)
is logged, throttled per topic, and dropped.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError, field_validator, model_validator
from rclpy.node import Node

MAX_ID_CHARS = 200
LOG_EVERY = 2.0  # seconds between two log lines about rejected messages on one topic

RequestId = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS)]


class WireError(ValueError):
    """A message that cannot be accepted; the text says why (one line)."""


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


def describe(err: ValidationError) -> str:
    """A pydantic error in one line: ``field: problem; ...``."""
    parts = []
    for e in err.errors()[:5]:
        where = ".".join(str(p) for p in e["loc"]) or "message"
        parts.append(f"{where}: {e['msg']}")
    return "; ".join(parts)


def safe_callback(node: Node, topic: str, callback: Callable[[Any], None]) -> Callable[[Any], None]:
    """Wrap a subscription callback: whatever the message does, the node keeps running (the log names the topic as
    the graph resolves it, under its namespace)."""
    logger = node.get_logger()
    try:
        topic = node.resolve_topic_name(topic)
    except Exception:  # a description rather than a name (a driver's "what"): said as given
        pass

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
