"""Build the ``sif`` suite: situated tasks (SIF) with a person, an exploration phase and SPL paths.

    python -m homiebot.builders.suites.sif [--out DIR]

Every home gets one task of each group, in the kinds of the SIF paper:

* ``PnP``: put an object somewhere; nothing relevant moves (the person walks off elsewhere);
* ``S_obj``: before the task, unseen by the robot (after its exploration), the person moves the object to
  another room; the instruction remarks on it directly ("I left it on the brown table": clear) or by what
  they were doing there ("I was using it while I watched tv": ambiguous);
* ``S_hum``: the person walks to another room as the task starts and wants the object brought to them;
  they say where ("I'll be in the bathroom": clear) or what they will be doing ("I'll be washing my face":
  ambiguous).

Homes: the demo home and generated homes ``seen`` (seeds ``SEEN``) and ``unseen`` (seeds ``UNSEEN``): the
heuristic planner's people rules were tried on the demo home while they were written, the generated homes
were not looked at. A task is kept only if the oracle planner,
with perfect skills, satisfies its goal and matches a keypath; the metres it drove are the task's shortest
path (SPL's L*). Tasks are self-contained YAML files (scene, person script and all).
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable
from pathlib import Path

from homiebot.bench.keypaths import keypaths
from homiebot.bench.suite import BUILTIN
from homiebot.builders.suites.home import Home, _aliases, words, write_suite
from homiebot.core.resources import config_dir
from homiebot.core.tasks import Exploration, ObjectAt, PersonHas, Situated, Task
from homiebot.worlds.home.generate import generate_scene
from homiebot.worlds.home.scene import SceneSpec, load_scene, scene_json

SUITE_DIR = BUILTIN / "sif"
SEEN = (8101, 8104)
UNSEEN = (8203, 8207)
EXPLORE = Exploration(max_stops=30)
# what the person does in a room, for remarks that only imply the place
DOING = {"kitchen": ("I used it while I cooked", "I'll be making some tea"),
         "living_room": ("I was using it while I watched tv", "I'll be watching tv"),
         "bedroom": ("I had it with me while getting ready for bed", "I'll be getting ready for bed"),
         "bathroom": ("I took it along when I washed my face", "I'll be washing my face"),
         "dining_room": ("I had it at dinner", "I'll be having dinner"),
         "office": ("I used it while I worked", "I'll be working for a while")}

Draft = tuple[str, list, list[list[str]], dict]  # instruction, goal, keypaths, person


def _room_type(h: Home, room: str) -> str:
    return next(r.type for r in h.spec.rooms if r.name == room)


def _movable(h: Home) -> list[str]:
    """Objects on open furniture (not in a closed container), the person can carry them."""
    return sorted(o for o, spec in h.objs.items() if spec.on is not None and not h.closed(spec.on))


def _elsewhere(h: Home, obj: str) -> list[str]:
    """Open surfaces in other rooms than the object's, with room for it."""
    return [r for r in h.surfaces(exclude=h.objs[obj].on) if h.recs[r].room != h.room(obj) and h.fits(obj, r)]


def _robot_room(h: Home) -> str:
    x, y = h.spec.robot.position
    return next(r.name for r in h.spec.rooms if r.origin[0] <= x <= r.origin[0] + r.size[0]
                and r.origin[1] <= y <= r.origin[1] + r.size[1])


def pick_and_place(h: Home, hint: str) -> Draft | None:
    objs = _movable(h)
    if not objs:
        return None
    obj = h.rng.choice(objs)
    dests = _elsewhere(h, obj)
    if not dests:
        return None
    dest = h.rng.choice(dests)
    away = h.rng.choice([r.name for r in h.spec.rooms if r.name not in (h.room(obj), h.recs[dest].room)] or [h.room(obj)])
    person = {"room": _robot_room(h), "script": [{"walk": away}]}
    goal = [ObjectAt(object=obj, receptacle=dest)]
    return f"put the {words(obj)} {h.rel(dest)} the {words(dest)}", goal, keypaths([h.move(obj, dest)]), person


def moved_object(h: Home, hint: str) -> Draft | None:
    objs = _movable(h)
    if not objs:
        return None
    obj = h.rng.choice(objs)
    spots = _elsewhere(h, obj)
    if not spots:
        return None
    spot = h.rng.choice(spots)
    dests = [r for r in _elsewhere(h, obj) if r != spot and h.recs[r].room != h.recs[spot].room]
    if not dests:
        return None
    dest = h.rng.choice(dests)
    room = h.recs[spot].room
    remark = f"I left it on the {words(spot)}" if hint == "clear" else DOING[_room_type(h, room)][0]
    person = {"room": room, "script": [{"round": 0, "pick": obj}, {"round": 0, "place": spot}]}
    goal = [ObjectAt(object=obj, receptacle=dest)]
    return (f"put the {words(obj)} {h.rel(dest)} the {words(dest)}; {remark}", goal, keypaths([h.move(obj, dest)]), person)


def moving_person(h: Home, hint: str) -> Draft | None:
    objs = _movable(h)
    here = _robot_room(h)
    rooms = [r.name for r in h.spec.rooms if r.name != here]
    if not objs or not rooms:
        return None
    obj = h.rng.choice(objs)
    room = h.rng.choice(sorted(rooms, key=lambda r: r == h.room(obj)))  # rarely where the object is
    where = f"I'll be in the {words(room)}" if hint == "clear" else DOING[_room_type(h, room)][1]
    person = {"room": here, "script": [{"say": where}, {"walk": room}]}
    goal = [PersonHas(object=obj)]
    return (f"bring me the {words(obj)}, {where}", goal, [[f"[Pick, {obj}]", f"[Give, {obj}, person]", "[End]"]], person)


GROUPS: tuple[tuple[str, str, Callable[[Home, str], Draft | None]], ...] = (
    ("PnP", "clear", pick_and_place), ("S_obj", "clear", moved_object), ("S_obj", "ambiguous", moved_object),
    ("S_hum", "clear", moving_person), ("S_hum", "ambiguous", moving_person))


def _oracle_path(task: Task) -> float | None:
    """Metres the oracle drives with perfect skills, or None if it does not succeed (goal and keypath)."""
    from homiebot.bench.metrics import is_success
    from homiebot.bench.results import RunResult, summarise_steps
    from homiebot.builders.suites.home import _oracle_config
    from homiebot.runtime import run_episode

    record, _ = run_episode(_oracle_config(), task)
    result = RunResult(task_id=task.id, run=0, seed=0, keypaths=task.keypaths, aliases=task.aliases, steps=summarise_steps(record))
    return round(record.path_length, 3) if is_success(result) and record.goal_satisfied and record.path_length > 0 else None


def homes() -> list[tuple[str, SceneSpec, str]]:
    """(short name, scene, seen or unseen) of the suite's homes."""
    demo = load_scene(config_dir() / "scenes" / "demo.yaml")
    return ([("demo", demo, "seen")] + [(f"h{s}", generate_scene(s), "seen") for s in SEEN]
            + [(f"h{s}", generate_scene(s), "unseen") for s in UNSEEN])


def build_tasks(verbose: bool = False) -> list[Task]:
    """One task per group in every home, each checked solvable by the oracle (deterministic)."""
    tasks: list[Task] = []
    for name, spec, home in homes():
        for kind, hint, draft_of in GROUPS:
            task = None
            for attempt in range(8):  # another draw when the oracle cannot do one
                h = Home(spec, random.Random(f"{name}:{kind}:{hint}:{attempt}"))
                draft = draft_of(h, hint)
                if draft is None:
                    continue
                instruction, goal, paths, person = draft
                candidate = Task(id=f"{name}_{kind}_{hint}".lower(), instruction=instruction, scene=scene_json(spec), goal=goal,
                                 keypaths=paths, aliases=_aliases(h), person=person, explore=EXPLORE,
                                 attributes=["human-style"] if hint == "ambiguous" else [],
                                 situated=Situated(kind=kind, hint=hint, home=home))  # type: ignore[arg-type]
                best = _oracle_path(candidate)
                if best is not None:
                    task = candidate.model_copy(update={"situated": candidate.situated.model_copy(update={"shortest_path": best}),  # type: ignore[union-attr]
                                                        "expert_length": len(paths[0])})
                    break
                if verbose:
                    print(f"  the oracle cannot do: {instruction}", file=sys.stderr)
            if task is None:
                raise RuntimeError(f"no {kind} {hint} task the oracle can do in home {name}")
            tasks.append(task)
    return tasks


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=SUITE_DIR)
    args = ap.parse_args(argv)
    tasks = build_tasks(verbose=True)
    write_suite(tasks, args.out)
    print(f"wrote {len(tasks)} tasks to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
