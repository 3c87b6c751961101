"""How often the heuristic planner reads a suite's instructions into the task's own goal, without
running episodes (seconds for a suite).

Each instruction is read as the planner reads it at the start of an episode; its goal records are then
resolved against the task's scene with simulator truth (only here, for scoring: a phrase names the scene
things whose class, colour, room and stated place fit it) and compared with the task's goal. A reading
is correct when every goal condition is met by one goal record and no record asks for anything else.
This measures reading only: episodes can still fail at finding or handling things (``homiebot eval``).

    python benchmarks/bench_reading.py --suite plain_tune [--show-wrong] [--limit N]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter

from homiebot.bench.suite import load_suite
from homiebot.core.tasks import ContainerState, ObjectAt
from homiebot.core.vocabulary import OBJECT_CLASSES, RECEPTACLE_TYPES
from homiebot.perception.grounding import singular
from homiebot.planners.instructions import Clear, Fetch, GoTo, IfAbsent, IfEmpty, Keep, Move, Toggle
from homiebot.planners.understanding import describe_goal, understand_request
from homiebot.runtime import scene_for

ROOMS = ("kitchen", "bathroom", "bedroom", "office", "living_room", "dining_room", "hallway")


def _words(phrase: str) -> list[str]:
    return [singular(w) for w in re.findall(r"[a-z]+", phrase.lower().replace("_", " "))]


def _split_location(phrase: str) -> tuple[str, str]:
    parts = re.split(r"\s+(?:on|from|off|in|inside|out of|by|near)\s+(?:the\s+)?", phrase, maxsplit=1)
    return (parts[0], parts[1]) if len(parts) == 2 else (phrase, "")


class Resolver:
    """Scene things a phrase can name (simulator truth; scoring only)."""

    def __init__(self, scene) -> None:
        self.objects = {o.name: o for o in scene.objects}
        self.places = {r.name: r for r in scene.receptacles}

    def _room_of(self, obj) -> str | None:
        where = obj.on or obj.inside
        return self.places[where].room if where in self.places else None

    def places_for(self, phrase: str) -> set[str]:
        ws = _words(phrase)
        joined = "_".join(ws)
        if joined in self.places:
            return {joined}
        kinds = [t for t in RECEPTACLE_TYPES if set(t.split("_")) <= set(ws)]
        rooms = {r for r in ROOMS if set(r.split("_")) <= set(ws) and not any(set(r.split("_")) <= set(k.split("_")) for k in kinds)}
        colours = set(ws) - {w for k in kinds for w in k.split("_")} - {w for r in rooms for w in r.split("_")}
        out = set()
        for name, rec in self.places.items():
            if kinds and rec.type not in kinds:
                continue
            if rooms and rec.room not in rooms:
                continue
            if colours & {"red", "green", "blue", "yellow", "white", "black", "gray", "brown", "beige", "silver", "pink"} and \
                    rec.color not in colours:
                continue
            out.add(name)
        return out if kinds or rooms else set()

    def objects_for(self, phrase: str, kind: str | None = None) -> set[str]:
        head, where = _split_location(phrase)
        ws = _words(kind or head)
        if "_".join(ws) in self.objects:
            return {"_".join(ws)}
        classes = sorted((c for c in OBJECT_CLASSES if set(c.split("_")) <= set(ws)), key=lambda c: -len(c.split("_")))[:1]
        colours = {w for w in ws if w in ("red", "green", "blue", "yellow", "orange", "purple", "pink", "white", "black", "gray",
                                          "brown", "beige", "silver")}
        out = {n for n, o in self.objects.items() if (not classes or o.object_class in classes) and (not colours or o.color in colours)}
        if where:
            at = self.places_for(where)
            rooms = {r for r in ROOMS if set(r.split("_")) <= set(_words(where))}
            narrowed = {n for n in out if (self.objects[n].on or self.objects[n].inside) in at or self._room_of(self.objects[n]) in rooms}
            out = narrowed or out
        return out if classes or colours else set()


def _kind_fits(kind: str | None, cls: str) -> bool:
    """'mug' names the class mug; 'drink' names every class of that category."""
    if not kind:
        return False
    key = "_".join(_words(kind))
    return key == cls or OBJECT_CLASSES[cls].category == key


def _thing_fits(resolver: Resolver, things, cond: ObjectAt) -> bool:
    if cond.object_class is not None:
        return _kind_fits(things.kind, cond.object_class)
    if any(resolver.objects_for(n) == {cond.object} for n in things.names):
        return True
    return bool(things.kind) and resolver.objects_for("", things.kind) == {cond.object}


def correct(task, plan, resolver: Resolver) -> bool:
    """Whether the plan's goal records ask for exactly the task's goal."""
    goal = list(task.goal or [])
    met = [False] * len(goal)
    closing: set[str] = set()  # containers the plan closes at the end (close_after: every closable destination)
    for g in plan.goals:
        hit = False
        for i, cond in enumerate(goal):
            if isinstance(cond, ObjectAt):
                if isinstance(g, Move) and _thing_fits(resolver, g.things, cond):
                    if g.dest_kind == "closable":
                        ok = all(RECEPTACLE_TYPES[resolver.places[r].type].articulated for r in cond.receptacles)
                    else:
                        dests = resolver.places_for(g.dest or "")
                        ok = bool(dests) and dests <= set(cond.receptacles)
                    if ok:
                        met[i] = hit = True
                        closing |= set(cond.receptacles) if plan.close_after else set()
                elif isinstance(g, Clear) and cond.object is not None:
                    obj = resolver.objects[cond.object]
                    if (obj.on or obj.inside) in resolver.places_for(g.source):
                        met[i] = hit = True
                elif isinstance(g, (IfAbsent, Keep)) and _kind_fits(g.kind, cond.object_class or "") and \
                        resolver.places_for(g.container if isinstance(g, IfAbsent) else g.dest) == set(cond.receptacles):
                    met[i] = hit = True
                elif isinstance(g, IfEmpty) and resolver.objects_for(g.thing) == {cond.object}:
                    met[i] = hit = True
            elif isinstance(cond, ContainerState) and isinstance(g, Toggle):
                if resolver.places_for(g.target) == {cond.receptacle} and g.open == cond.open:
                    met[i] = hit = True
        if not hit and not isinstance(g, (Fetch, GoTo)):
            return False
    for i, cond in enumerate(goal):
        if isinstance(cond, ContainerState) and not cond.open and cond.receptacle in closing:
            met[i] = True
    return all(met)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--suite", default="plain_tune")
    ap.add_argument("--split", default="all")
    ap.add_argument("--show-wrong", action="store_true", help="print each instruction read wrongly with its reading")
    ap.add_argument("--limit", type=int, default=0)
    args = ap.parse_args()
    tasks = load_suite(args.suite, args.split)[: args.limit or None]
    started = time.perf_counter()
    right, outcome = 0, Counter()
    for task in tasks:
        read = understand_request(task.instruction)
        ok = not read.unsure and correct(task, read.plan, Resolver(scene_for(task)))
        right += ok
        outcome["correct" if ok else ("unsure" if read.unsure else "wrong goal")] += 1
        if not ok and args.show_wrong:
            print(f"{task.id}: {task.instruction}\n   read: {'; '.join(describe_goal(g) for g in read.plan.goals)}"
                  f"{' | unsure: ' + str(read.unsure) if read.unsure else ''}\n   goal: "
                  f"{[c.model_dump(exclude_none=True, exclude={'kind'}) for c in task.goal or []]}")
    took = time.perf_counter() - started
    print(f"{args.suite} ({args.split}): {right}/{len(tasks)} instructions read into their goal "
          f"({100 * right / max(1, len(tasks)):.1f} %); {dict(outcome)}; {took / max(1, len(tasks)) * 1000:.0f} ms each")
    return 0


if __name__ == "__main__":
    sys.exit(main())
