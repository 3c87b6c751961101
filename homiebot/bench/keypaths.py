"""Enumerate the keypaths of a rearrangement: every order of the necessary subtasks that a one-handed
robot can actually carry out.

Necessary subtasks are Open (a closed destination, or the closed container an object starts in),
Pick + Put per moved object, Close (when the task asks for a container closed at the end) and End.
Go to steps are not part of keypaths: how the robot gets somewhere is up to the planner.
Constraints: a container is opened before anything is taken out of or put into it; the robot holds
one object at a time, so a Put directly follows its Pick; a Close comes after the last Put into that
container; End is last.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_KEYPATHS = 200


@dataclass(frozen=True)
class Move:
    """Move ``obj`` to ``dest`` (a receptacle name, or an alias group name standing for several)."""

    obj: str
    dest: str
    dest_closed: bool = False  # dest must be opened first (only for real receptacle names)
    source_closed: str | None = None  # closed container the object starts in


def _node(*parts: str) -> str:
    return "[" + ", ".join(parts) + "]"


def keypaths(moves: list[Move], close_at_end: tuple[str, ...] = (), open_at_end: tuple[str, ...] = (),
             limit: int = MAX_KEYPATHS) -> list[list[str]]:
    """All valid orders of the necessary subtasks (up to ``limit``), each ending with [End]."""
    opens = sorted({m.dest for m in moves if m.dest_closed} | {m.source_closed for m in moves if m.source_closed} | set(open_at_end))
    items: list[tuple[str, ...]] = [("open", c) for c in opens]
    items += [("move", str(i)) for i in range(len(moves))]
    items += [("close", c) for c in close_at_end]

    def ready(item: tuple[str, ...], done: set[tuple[str, ...]]) -> bool:
        kind, arg = item
        if kind == "move":
            m = moves[int(arg)]
            needs = [c for c in (m.dest if m.dest_closed else None, m.source_closed) if c]
            return all(("open", c) in done for c in needs)
        if kind == "close":
            into = [("move", str(i)) for i, m in enumerate(moves) if m.dest == arg]
            return all(x in done for x in into) and (("open", arg) in done or ("open", arg) not in items)
        return True

    def expand(item: tuple[str, ...]) -> list[str]:
        kind, arg = item
        if kind == "open":
            return [_node("Open", arg)]
        if kind == "close":
            return [_node("Close", arg)]
        m = moves[int(arg)]
        return [_node("Pick", m.obj), _node("Put", m.obj, m.dest)]

    found: list[list[str]] = []

    def walk(order: list[tuple[str, ...]], done: set[tuple[str, ...]]) -> None:
        if len(found) >= limit:
            return
        if len(order) == len(items):
            found.append([node for item in order for node in expand(item)] + [_node("End")])
            return
        for item in items:
            if item not in done and ready(item, done):
                walk(order + [item], done | {item})

    walk([], set())
    return found
