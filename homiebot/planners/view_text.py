"""The four camera views described in words, for language models that cannot see images.

A text-only planner (``vision: false`` on the ``openai`` and ``hf`` planners) is told, per view and in
the order front, left, back, right, what perception detected there: each thing's name, how far it is
(the median depth of its pixels) and where it is (the room its floor shows for furniture, the surface
or container it rests on for small things). Rooms seen through a door are listed as rooms. It reads
only what a detector reports (the observation's segmentation and labels), never the simulator's state.

    You are in the bedroom.
    front: kitchen (room, 3.1 m), kitchen_counter (5.4 m, kitchen)
    left: white_desk (2.0 m, bedroom), bathroom (room, 4.1 m)
    back: white_bed (1.1 m, bedroom), red_book (1.7 m, on white_desk), white_mug (1.9 m, on white_desk)
    right: white_bed (0.9 m, bedroom), drawer (2.1 m)
"""

from __future__ import annotations

from collections.abc import Iterable

from homiebot.core.contracts import VIEW_NAMES, Observation
from homiebot.core.vocabulary import RECEPTACLE_TYPES
from homiebot.perception.visible import Sighting, sightings, standing_in, supports

ROOM = "room"
MAX_PER_VIEW = 10  # nearest first: a small model's context is short
NOTHING = "nothing detected"


def _distance(s: Sighting) -> str:
    return f"{s.depth:.1f} m" if s.depth is not None else "distance unknown"


def current_room(seen: dict[str, list[Sighting]]) -> str | None:
    """The room whose floor fills most of the four views: the one the robot stands in."""
    floors = [(sum(s.pixels for s in sights), name) for name, sights in seen.items() if sights[0].category == ROOM]
    return max(floors)[1] if floors else None


def describe_views(observation: Observation | None, max_per_view: int = MAX_PER_VIEW) -> str:
    """What each view shows, one line per view (front, left, back, right), from the detections."""
    if observation is None:
        return "No camera views this round."
    seen = sightings(observation)
    if not any(view.segmentation is not None for view in observation.views.values()):
        return "No detections this round (the cameras give no instance segmentation)."
    here = current_room(seen)
    furniture = {name for name, sights in seen.items() if sights[0].category in RECEPTACLE_TYPES}
    rooms = standing_in(observation, seen, frozenset(sights[0].category for sights in seen.values()) - {ROOM})
    lines = [f"You are in the {here}." if here else "The room you are in is not visible."]
    for view in VIEW_NAMES:
        items = [s for sights in seen.values() for s in sights if s.view == view and s.name != here]
        items.sort(key=lambda s: (s.depth if s.depth is not None else float("inf"), s.name))
        parts = [_describe(s, seen, rooms, furniture) for s in items[:max_per_view]]
        lines.append(f"{view}: {', '.join(parts) if parts else NOTHING}")
    return "\n".join(lines)


def _describe(s: Sighting, seen: dict[str, list[Sighting]], rooms: dict[str, str], furniture: Iterable[str]) -> str:
    if s.category == ROOM:
        return f"{s.name} (room, {_distance(s)})"
    where = None
    if s.name not in furniture:  # a small thing: what it rests on says more than the floor below it
        under = [n for n in supports(seen, s.name) if n in furniture]
        where = f"on {under[0]}" if under else None
    where = where or rooms.get(s.name)
    return f"{s.name} ({_distance(s)}, {where})" if where else f"{s.name} ({_distance(s)})"
