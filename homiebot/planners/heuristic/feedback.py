"""What the last subtask's feedback teaches: where the robot is, what is open, what was put where, and, from
typed failures, what to repair (D1/D2/E2: approach again; L3: the container is closed; L4: never that subtask again;
F2: forget the name; S1/S2: never use that thing again; E1: note the failed model, and give up on a thing after MAX_FAILS)."""

from __future__ import annotations

from homiebot.core.contracts import Action, ErrorCode, Feedback, Subtask
from homiebot.core.vocabulary import OBJECT_CLASSES

from .memory import Memory

MAX_FAILS = 3


def learn(m: Memory, last: tuple[Subtask, str | None] | None, fb: Feedback | None) -> None:
    """Fold the feedback on ``last`` (the subtask decided, with the model chosen for it) into memory."""
    if last is None or fb is None:
        return
    sub, model = last
    target = sub.target or ""  # every action but End has a target (Subtask._arity)
    if sub.action is Action.PICK and target in m.guessed and (fb.success or fb.code not in (ErrorCode.F1, ErrorCode.F2)):
        m.known[target] = m.guessed[target]  # the name the user's words gave exists
    if fb.success:
        _succeeded(m, sub, target)
        return
    if sub.action is Action.EXPLORE and fb.code is not None and fb.code.value.startswith(("E", "F", "L")):
        m.rooms_visited.add(target)  # do not insist on a room that cannot be explored
    code = fb.code
    if code in (ErrorCode.D1, ErrorCode.D2, ErrorCode.E2):
        m.near = None
    if code is ErrorCode.L3 and fb.details.get("container"):
        box = fb.details["container"]
        m.opened.discard(box)
        if sub.action is Action.PICK:
            m.support[target] = box
    if code is ErrorCode.F2 and fb.details.get("name"):
        m.forgotten.add(fb.details["name"])
        m.known.pop(fb.details["name"], None)
    if code in (ErrorCode.S1, ErrorCode.S2):  # a safety rule or the operator said no: never use that thing again
        banned = fb.details.get("name") or sub.place or sub.target
        if banned:
            if m.kind(banned) == "room":
                m.rooms_visited.add(banned)  # nothing to search there
            m.banned.add(banned)
    if code is ErrorCode.L4:  # the action does not apply to that thing: asking for it again gets the same answer
        m.inapplicable[sub.text()] = fb.message
    if code is ErrorCode.E2 and fb.details.get("dropped"):
        m.support[fb.details["dropped"]] = None
    if code is ErrorCode.E1:
        failed = m.fails.setdefault(sub.text(), [])
        failed.append(model or "")
        if len(failed) >= 2 and sub.action is not Action.GO_TO:
            m.near = None  # maybe badly placed: approach again before the next try
        if len(failed) >= MAX_FAILS and sub.action is Action.PICK:
            m.given_up.add(target)
        elif len(failed) >= 2 * MAX_FAILS and sub.action is Action.GO_TO and target in m.of(OBJECT_CLASSES):
            m.given_up.add(target)  # no way to it with any model: trying again would fill every remaining round


def _succeeded(m: Memory, sub: Subtask, target: str) -> None:
    """What a subtask that succeeded changed."""
    m.fails.pop(sub.text(), None)
    if sub.action is Action.GO_TO:
        m.near = target
        m.inspected.add(target)
        if m.kind(target) == "room":
            m.rooms_visited.add(target)
    elif sub.action is Action.OPEN:
        m.opened.add(target)
        m.searched.add(target)  # looked into: a search need not open it again if it is closed later
        m.shut.discard(target)
    elif sub.action is Action.CLOSE:
        m.opened.discard(target)
        m.shut.add(target)
    elif sub.action is Action.PICK and m.support.get(target):
        m.picked_from.setdefault(target, m.support[target] or "")
    elif sub.action is Action.PUT:
        assert sub.place is not None  # Put always has a place (Subtask._arity)
        m.done.add((target, sub.place))
        m.support[target] = sub.place
    elif sub.action is Action.EXPLORE:
        m.rooms_visited.add(target)
        m.near = None
