"""What each round's perception adds to memory: from the views, the names and categories seen, what rests
on what, where furniture stands and which surfaces were seen from close enough for small things; with mapped
perception, the semantic map's summary replaces what is known (the map is the authority on what exists)."""

from __future__ import annotations

import math

from homiebot.core.vocabulary import OBJECT_CLASSES, RECEPTACLE_TYPES
from homiebot.perception.visible import sightings, standing_in, supports
from homiebot.planners.base import PlannerRequest

from .episode import Episode
from .memory import Memory


def small_thing_reach(obs) -> float:
    """How far (m) a small thing (about 8 cm) still covers a few pixels in these views, with a margin: a
    surface seen from closer than this has shown what rests on it (90 degree views; 64 px: 0.7 m, 256 px: 2.7 m)."""
    widths = [v.segmentation.shape[1] for v in obs.views.values() if v.segmentation is not None]
    return 0.08 * min(widths) / 6.0 * 0.8 if widths else 0.0


def perceive(episode: Episode, request: PlannerRequest) -> None:
    """Fold the round's inventory and perception (views, or the map's summary) into memory."""
    m = episode.mem
    m.held = request.inventory[0] if request.inventory else None
    if request.scene_map is not None:
        read_map(m, request.scene_map, episode.can_explore())
        return
    if request.observation is None:
        return
    seen = sightings(request.observation)
    for name, sights in seen.items():
        if name not in m.forgotten:
            m.known[name] = sights[0].category
    for name in seen:
        if m.known.get(name) in OBJECT_CLASSES and name != m.held:
            under = [s for s in supports(seen, name) if m.known.get(s) in RECEPTACLE_TYPES]
            if under:
                m.support[name] = resting_on(seen, name, under)
    m.room_of.update(standing_in(request.observation, seen, frozenset(RECEPTACLE_TYPES)))
    reach = small_thing_reach(request.observation)
    for name, sights in seen.items():
        depths = [s.depth for s in sights if s.depth is not None]
        if m.known.get(name) in RECEPTACLE_TYPES and depths:
            m.sighted[name] = (request.round, min(depths))
            if min(depths) <= reach:
                m.glimpsed.add(name)
    if request.round == 1:
        floors = sorted(((sum(s.pixels for s in v), n) for n, v in seen.items() if v[0].category == "room"), reverse=True)
        if floors:
            m.rooms_visited.add(floors[0][1])


def resting_on(seen: dict, name: str, under: list[str]) -> str:
    """Of the furniture ``name`` appears to rest on (largest first), the one seen at the depth nearest its own in a
    view showing both: a candle on a table in front of a TV stand is inside both boxes, and the larger one, the
    stand behind it, is not what holds it. The largest where depth does not tell."""

    def gap(support: str) -> float:
        gaps = [abs(o.depth - s.depth) for o in seen[name] for s in seen[support]
                if o.view == s.view and o.depth is not None and s.depth is not None]
        return min(gaps, default=math.inf)

    return min(under, key=lambda support: (gap(support), under.index(support)))


def read_map(m: Memory, summary: dict, can_explore: bool) -> None:
    """Rebuild what is known from the map summary; without Explore, the room the robot stands in counts as searched."""
    m.mapped = True
    m.forgotten.clear()
    rooms = summary.get("rooms", [])
    m.known = {r["name"]: "room" for r in rooms}
    robot = summary.get("robot")
    m.robot_room = None
    m.robot_xy = (float(robot[0]), float(robot[1])) if robot is not None else None
    if robot is not None:
        for r in rooms:
            x0, y0, x1, y1 = r["rect"]
            if x0 <= robot[0] <= x1 and y0 <= robot[1] <= y1:
                m.robot_room = r["name"]
    for inst in summary.get("instances", []):
        if inst.get("stale"):
            continue
        iid = inst["id"]
        m.known[iid] = inst["label"]
        m.colour[iid] = inst.get("colour")
        if inst.get("room"):
            m.map_room[iid] = inst["room"]
        if inst.get("position"):
            m.map_xy[iid] = (float(inst["position"][0]), float(inst["position"][1]))
        if inst["kind"] == "object" and not inst.get("held") and inst.get("support"):
            m.support[iid] = inst["support"]
        if inst["kind"] == "receptacle" and inst.get("is_open") is not None and m.closable(iid):
            if inst["is_open"]:
                m.opened.add(iid)
            else:
                m.opened.discard(iid)
    if not can_explore and m.robot_room:
        m.rooms_visited.add(m.robot_room)  # without Explore, the first look around is the search of this room
