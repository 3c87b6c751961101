"""The safety layer's ``homiebot_msgs`` messages, to and from homiebot's own types.

Each ``*_from_msg`` raises WireError (one line) for a message that cannot be accepted, so that a
subscription wrapped by ``safe_callback`` drops it with a warning.
"""

from __future__ import annotations

import math
from typing import Any, get_args

from builtin_interfaces.msg import Time
from homiebot_msgs import msg as hb
from pydantic import ValidationError

from homiebot.core.contracts import SafetyEvent
from homiebot.core.parsing import FormatError, parse_subtask_text
from homiebot.ros.messages.common import pairs_from_msg, pairs_msg, subtask_msg
from homiebot.ros.messages.wire import MAX_ID_CHARS, WireError, describe
from homiebot.safety.approval import ApprovalRequest, Decision

SAFETY_KINDS: tuple[str, ...] = get_args(SafetyEvent.model_fields["kind"].annotation)
VERDICTS = (hb.ApprovalDecision.APPROVE, hb.ApprovalDecision.REJECT, hb.ApprovalDecision.EDIT)


def episode_text(episode: Any) -> str:
    """A publisher's episode (a submission id, an episode number, or None) as the message's string."""
    return "" if episode is None else str(episode)


def wall_stamp(seconds: float) -> Time:
    """Wall-clock seconds as a ``builtin_interfaces/Time`` (to the nanosecond, whole seconds kept exact)."""
    sec = math.floor(seconds)
    nanosec = round((seconds - sec) * 1e9)
    return Time(sec=sec + nanosec // 1_000_000_000, nanosec=nanosec % 1_000_000_000)


def event_msg(event: SafetyEvent, origin: str, episode: Any = None) -> hb.SafetyEvent:
    """A contract safety event as ``homiebot_msgs/SafetyEvent``, from node ``origin``."""
    return hb.SafetyEvent(stamp=wall_stamp(event.stamp), origin=origin, episode=episode_text(episode), kind=event.kind,
                          round=hb.SafetyEvent.NO_ROUND if event.round is None else event.round, message=event.message,
                          details=pairs_msg(event.details))


def event_from_msg(msg: hb.SafetyEvent) -> SafetyEvent:
    """The contract's SafetyEvent (WireError for an unknown kind or a round below NO_ROUND)."""
    if msg.kind not in SAFETY_KINDS:
        raise WireError(f"unknown safety event kind {msg.kind!r} (expected one of {', '.join(SAFETY_KINDS)})")
    if msg.round < hb.SafetyEvent.NO_ROUND:
        raise WireError(f"round {msg.round} is neither a round nor NO_ROUND (-1)")
    try:
        return SafetyEvent(kind=msg.kind, stamp=msg.stamp.sec + msg.stamp.nanosec / 1e9, message=msg.message,
                           round=None if msg.round == hb.SafetyEvent.NO_ROUND else msg.round, details=pairs_from_msg(msg.details))
    except ValidationError as err:
        raise WireError(describe(err)) from None


def request_msg(rid: str, request: ApprovalRequest, timeout: float) -> hb.ApprovalRequest:
    """An approval request as ``homiebot_msgs/ApprovalRequest`` with id ``rid``."""
    return hb.ApprovalRequest(id=rid, round=max(0, request.round), subtask=subtask_msg(request.subtask), model=request.model or "",
                              instruction=request.instruction, timeout=float(timeout))


def decision_msg(rid: str, decision: Decision) -> hb.ApprovalDecision:
    """An operator's decision on request ``rid`` as ``homiebot_msgs/ApprovalDecision``."""
    return hb.ApprovalDecision(id=rid, decision=decision.verdict, reason=decision.reason,
                               subtask=decision.subtask.text() if decision.subtask else "")


def decision_from_msg(msg: hb.ApprovalDecision) -> Decision:
    """The Decision an ApprovalDecision carries (WireError: no id, an unknown decision, an unreadable edit)."""
    if not msg.id or len(msg.id) > MAX_ID_CHARS:
        raise WireError(f"an approval decision needs an id of 1 to {MAX_ID_CHARS} characters")
    if msg.decision not in VERDICTS:
        raise WireError(f"decision must be approve, reject or edit, not {msg.decision!r}")
    subtask = None
    if msg.decision == hb.ApprovalDecision.EDIT:
        try:
            subtask = parse_subtask_text(msg.subtask)
        except (FormatError, ValueError) as err:
            raise WireError(f"an edit needs a subtask like [Open, drawer]: {err}") from None
    default = "the operator rejected it" if msg.decision == hb.ApprovalDecision.REJECT else ""
    return Decision(msg.decision, msg.reason or default, subtask)


__all__ = ["SAFETY_KINDS", "VERDICTS", "decision_from_msg", "decision_msg", "episode_text", "event_from_msg",
           "event_msg", "request_msg"]
