"""The oracle's moves for goals about the person (``PersonHas``): fetch the object, keep up, hand it over.

The oracle knows the person's script through the true state: where they are now, what they hold. It
picks the wanted object wherever it truly is, then keeps up with the person (``[Follow, person]`` when a
model offers Follow, which leaves the robot beside them when the next round begins; else ``[Go to,
person]``) and gives the object once they are within reach.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from homiebot.core.contracts import Action, Subtask
from homiebot.core.tasks import PersonHas
from homiebot.planners.base import ModelInfo
from homiebot.worlds.home.goals import candidates
from homiebot.worlds.home.state import GIVE_REACH, HomeState

MIN_GAP = 0.1  # the detector's D2 below this

Use = Callable[[str, Action, str], tuple[Subtask, str]]  # the oracle's "go there first, else act"


def wanted(state: HomeState, cond: PersonHas) -> list[str]:
    """The objects that would satisfy the condition and are not already in the person's hands."""
    held_by_person = state.person.held if state.person is not None else None
    return [o for o in candidates(state, cond) if o != held_by_person]


def fetch(state: HomeState, cond: PersonHas, use: Use) -> tuple[Subtask, str]:
    """The next step towards holding an object the person wants (the nearest one)."""
    options = wanted(state, cond)
    if not options:
        return Subtask(action=Action.END), f"nothing here can satisfy what the {cond.person} wants"
    obj = min(options, key=lambda o: (math.dist(state.object_poses[o][:2], (state.robot.x, state.robot.y)), o))
    box = state.enclosing_container(obj)
    if box is not None and not state.is_open[box]:
        return use(box, Action.OPEN, f"the {obj} is inside the closed {box}")
    return use(obj, Action.PICK, f"the {cond.person} wants the {obj}")


def hand_over(state: HomeState, held: str, person: str, models: Sequence[ModelInfo]) -> tuple[Subtask, str]:
    """Give the held object when the person is within reach, else keep up with them."""
    gap = state.distance_to(person)
    if MIN_GAP <= gap <= GIVE_REACH:
        return Subtask(action=Action.GIVE, target=held, place=person), f"the {person} is within reach: I hand over the {held}"
    if any(Action.FOLLOW.value in m.actions for m in models):
        return Subtask(action=Action.FOLLOW, target=person), f"the {person} is {gap:.1f} m away; I follow them to hand over the {held}"
    return Subtask(action=Action.GO_TO, target=person), f"the {person} is {gap:.1f} m away; I go to them with the {held}"


def pending(state: HomeState, goal: Sequence[object], held: str | None) -> PersonHas | None:
    """The first unmet PersonHas condition (one the held object serves, when holding something)."""
    from homiebot.worlds.home.goals import condition_holds

    for cond in goal:
        if isinstance(cond, PersonHas) and not condition_holds(state, cond) and (held is None or held in candidates(state, cond)):
            return cond
    return None
