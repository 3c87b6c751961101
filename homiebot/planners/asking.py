"""The phrases of a plan that may fit several things in a home ("the sponge", "the shelf", "a piece of
fruit"): each is a slot a planner settles from what it sees (``planners/candidates.py``) or by asking."""

from __future__ import annotations

from dataclasses import dataclass, field

from homiebot.planners.instructions import Fetch, IfEmpty, Move


@dataclass
class Slot:
    """One phrase to settle: an object (``objects``) or a place, with what asking about it gave so far."""

    objects: bool
    phrase: str  # the phrase as it stands in the plan (replaced by a name once settled)
    done: bool = False
    asks: int = 0
    offered: list[str] = field(default_factory=list)  # the candidates the last question named
    excluded: set[str] = field(default_factory=set)  # things an answer ruled out ("no")
    unusable: int = 0  # answers that said nothing usable
    retry: str = ""  # the unusable answer to mention when asking again
    retry_of: str = ""


def open_slots(goals: list) -> list[Slot]:
    """A slot for every object phrase and every destination that names a piece of furniture."""
    slots: list[Slot] = []
    for goal in goals:
        if isinstance(goal, Move):
            slots += [Slot(True, name) for name in goal.things.names]
            if not goal.things.names and goal.things.kind and goal.things.count == 1:  # "a piece of fruit": one of a kind
                slots.append(Slot(True, goal.things.kind))
            if goal.dest and goal.dest_kind is None:
                slots.append(Slot(False, goal.dest))
        elif isinstance(goal, (Fetch, IfEmpty)):
            slots.append(Slot(True, goal.thing))
    seen: set[tuple[bool, str]] = set()
    return [s for s in slots if (s.objects, s.phrase) not in seen and not seen.add((s.objects, s.phrase))]  # type: ignore[func-returns-value]
