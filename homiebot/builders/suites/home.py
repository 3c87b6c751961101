"""Build the ``home100`` task suite: 100 tasks in generated homes, with goals, keypaths and expert lengths.

    python -m homiebot.builders.suites.home [--out DIR] [--count 100]

More tasks of the same families in other homes, as extra training tasks for ``homiebot bootstrap``
(batches of 100, each from its own range of home seeds; no instruction of an ``--avoid`` suite's test
split written again, nor any instruction twice):

    python -m homiebot.builders.suites.home --out gen400 --count 400 --first-seed 20000 --split train --avoid home100

Each task is written as a self-contained YAML file (declarative scene included), so the suite does
not depend on the scene generator staying the same. Expert lengths come from the oracle planner
with perfect skills; a task is kept only if that run reaches TP = 1 and satisfies the goal.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from homiebot.bench.keypaths import Move, keypaths
from homiebot.bench.suite import BUILTIN, load_suite
from homiebot.core.tasks import ContainerState, ObjectAt, Task
from homiebot.worlds.home.catalog import OBJECT_CLASSES, RECEPTACLE_TYPES
from homiebot.worlds.home.generate import generate_scene
from homiebot.worlds.home.scene import ObjectSpec, ReceptacleSpec, SceneSpec, scene_json

SUITE_DIR = BUILTIN / "home100"
ANY_SURFACE = "another_surface"
DRINKS = ("can", "bottle")


def words(name: str) -> str:
    return name.replace("_", " ")


@dataclass
class Home:
    """Convenient facts about a scene for writing tasks."""

    spec: SceneSpec
    rng: random.Random
    recs: dict[str, ReceptacleSpec] = field(init=False)
    objs: dict[str, ObjectSpec] = field(init=False)

    def __post_init__(self) -> None:
        self.recs = {r.name: r for r in self.spec.receptacles}
        self.objs = {o.name: o for o in self.spec.objects}

    def by_class(self) -> dict[str, list[str]]:
        """Object names grouped by class, in the scene's order."""
        groups: dict[str, list[str]] = {}
        for name, obj in self.objs.items():
            groups.setdefault(obj.object_class, []).append(name)
        return groups

    def by_type(self) -> dict[str, list[str]]:
        """Receptacle names grouped by type, in the scene's order."""
        groups: dict[str, list[str]] = {}
        for name, rec in self.recs.items():
            groups.setdefault(rec.type, []).append(name)
        return groups

    def rtype(self, rec: str):
        return RECEPTACLE_TYPES[self.recs[rec].type]

    def closed(self, rec: str) -> bool:
        return self.rtype(rec).articulated and not self.recs[rec].open

    def source_closed(self, obj: str) -> str | None:
        src = self.objs[obj].receptacle
        return src if src and self.closed(src) else None

    def contents(self, rec: str) -> list[str]:
        return sorted(o.name for o in self.spec.objects if o.receptacle == rec)

    def room(self, obj: str) -> str:
        src = self.objs[obj].receptacle
        return self.recs[src].room if src else ""

    def fits(self, obj: str, rec: str, extra: int = 1) -> bool:
        t = self.rtype(rec)
        return t.fits(OBJECT_CLASSES[self.objs[obj].object_class]) and len(self.contents(rec)) + extra <= t.capacity

    def rel(self, rec: str) -> str:
        return self.rng.choice(("in", "into")) if self.rtype(rec).relation == "in" else self.rng.choice(("on", "onto"))

    def at(self, rec: str) -> str:
        """'in' or 'on', for phrases like 'leave it on the table'."""
        return self.rtype(rec).relation

    def move(self, obj: str, dest: str) -> Move:
        return Move(obj, dest, dest_closed=self.closed(dest) if dest in self.recs else False, source_closed=self.source_closed(obj))

    def pick(self, items):
        items = sorted(items)
        return self.rng.choice(items) if items else None

    def surfaces(self, exclude: str | None = None) -> list[str]:
        return sorted(r for r in self.recs if r != exclude and not self.rtype(r).articulated)

    def articulated(self) -> list[str]:
        return sorted(r for r in self.recs if self.rtype(r).articulated)

    def of_class(self, cls: str) -> list[str]:
        return sorted(o.name for o in self.spec.objects if o.object_class == cls)


@dataclass
class Draft:
    instruction: str
    attributes: list[str]
    goal: list
    paths: list[list[str]]
    aliases: dict[str, str] = field(default_factory=dict)


Family = Callable[[Home], Draft | None]


# ---- short-horizon ---------------------------------------------------------------------------
def move_one(h: Home) -> Draft | None:
    obj = h.pick(h.objs)
    dest = h.pick(r for r in h.recs if r != h.objs[obj].receptacle and h.fits(obj, r))
    if not dest:
        return None
    src = h.objs[obj].receptacle
    assert src is not None  # generated scenes put every object on or in a receptacle
    phr = h.rng.choice([
        f"put the {words(obj)} {h.rel(dest)} the {words(dest)}",
        f"move the {words(obj)} from the {words(src)} to the {words(dest)}",
        f"place the {words(obj)} {h.rel(dest)} the {words(dest)}",
        f"carry the {words(obj)} over to the {words(dest)}",
    ])
    return Draft(phr, ["short-horizon"], [ObjectAt(object=obj, receptacle=dest)], keypaths([h.move(obj, dest)]))


def toggle_container(h: Home) -> Draft | None:
    rec = h.pick(h.articulated())
    if not rec:
        return None
    opening = not h.recs[rec].open
    verb = "open" if opening else "close"
    phr = h.rng.choice([f"{verb} the {words(rec)}", f"please {verb} the {words(rec)}", f"go and {verb} the {words(rec)}"])
    node = f"[{'Open' if opening else 'Close'}, {rec}]"
    return Draft(phr, ["short-horizon"], [ContainerState(receptacle=rec, open=opening)], [[node, "[End]"]])


def take_out(h: Home) -> Draft | None:
    obj = h.pick(o for o in h.objs if h.source_closed(o))
    if not obj:
        return None
    src = h.objs[obj].receptacle
    assert src is not None  # generated scenes put every object on or in a receptacle
    dest = h.pick(r for r in h.surfaces() if h.fits(obj, r))
    if not dest:
        return None
    phr = h.rng.choice([f"take the {words(obj)} out of the {words(src)} and leave it on the {words(dest)}",
                        f"get the {words(obj)} from inside the {words(src)} and set it on the {words(dest)}"])
    return Draft(phr, ["short-horizon"], [ObjectAt(object=obj, receptacle=dest)], keypaths([h.move(obj, dest)]))


# ---- long-horizon ----------------------------------------------------------------------------
def gather(h: Home) -> Draft | None:
    dest = h.pick(r for r in h.recs if h.rtype(r).capacity - len(h.contents(r)) >= 3)
    if not dest:
        return None
    pool = sorted(o for o in h.objs if h.objs[o].receptacle != dest and h.fits(o, dest, extra=3))
    if len(pool) < 3:
        return None
    objs = h.rng.sample(pool, 3)
    close = h.closed(dest) and h.rng.random() < 0.5
    listing = f"the {words(objs[0])}, the {words(objs[1])} and the {words(objs[2])}"
    phr = h.rng.choice([f"collect {listing} and put them all {h.rel(dest)} the {words(dest)}",
                        f"bring {listing} to the {words(dest)}",
                        f"gather {listing} {h.rel(dest)} the {words(dest)}"])
    goal: list = [ObjectAt(object=o, receptacle=dest) for o in objs]
    if close:
        phr += ", then close it"
        goal.append(ContainerState(receptacle=dest, open=False))
    return Draft(phr, ["long-horizon"], goal, keypaths([h.move(o, dest) for o in objs], close_at_end=(dest,) if close else ()))


def two_places(h: Home) -> Draft | None:
    boxes = h.articulated()
    if len(boxes) < 2:
        return None
    d1, d2 = h.rng.sample(boxes, 2)
    a = h.pick(o for o in h.objs if h.objs[o].receptacle not in (d1, d2) and h.fits(o, d1))
    b = h.pick(o for o in h.objs if o != a and h.objs[o].receptacle not in (d1, d2) and h.fits(o, d2))
    if not a or not b:
        return None
    phr = (f"put the {words(a)} in the {words(d1)} and the {words(b)} in the {words(d2)}, "
           f"and make sure both are closed when you are done")
    goal = [ObjectAt(object=a, receptacle=d1), ObjectAt(object=b, receptacle=d2),
            ContainerState(receptacle=d1, open=False), ContainerState(receptacle=d2, open=False)]
    return Draft(phr, ["long-horizon"], goal, keypaths([h.move(a, d1), h.move(b, d2)], close_at_end=(d1, d2)))


# ---- open-ended -------------------------------------------------------------------------------
def one_of_class(h: Home) -> Draft | None:
    classes = sorted({o.object_class for o in h.spec.objects if len(h.of_class(o.object_class)) >= 2})
    cls = h.pick(classes)
    if not cls:
        return None
    cands = h.of_class(cls)
    dest = h.pick(r for r in h.recs if all(h.objs[o].receptacle != r for o in cands) and all(h.fits(o, r) for o in cands))
    if not dest:
        return None
    phr = h.rng.choice([f"put one of the {words(cls)}s {h.rel(dest)} the {words(dest)}, whichever you like",
                        f"any {words(cls)} will do: bring one to the {words(dest)}"])
    paths = [p for o in cands for p in keypaths([h.move(o, dest)], limit=6)]
    return Draft(phr, ["open-ended"], [ObjectAt(object_class=cls, receptacle=dest)], paths)


def clear_off(h: Home) -> Draft | None:
    rec = h.pick(r for r in h.surfaces() if 1 <= len(h.contents(r)) <= 3)
    if not rec:
        return None
    items = h.contents(rec)
    others = [r for r in h.surfaces(exclude=rec) if all(h.fits(o, r, extra=len(items)) for o in items)]
    if not others:
        return None
    phr = h.rng.choice([f"clear everything off the {words(rec)}; put the things on any other surface",
                        f"the {words(rec)} should end up empty, move what is on it somewhere else"])
    goal = [ObjectAt(object=o, receptacle=others) for o in items]
    moves = [Move(o, ANY_SURFACE) for o in items]
    return Draft(phr, ["open-ended"], goal, keypaths(moves), {r: ANY_SURFACE for r in others})


def drink_somewhere(h: Home) -> Draft | None:
    drinks = sorted(o for o in h.objs if h.objs[o].object_class in DRINKS)
    table = h.pick(r for r in h.surfaces() if all(h.objs[d].receptacle != r for d in drinks) and all(h.fits(d, r) for d in drinks))
    if not drinks or not table:
        return None
    phr = f"leave something to drink on the {words(table)}"
    goals = [ObjectAt(object_class=c, receptacle=table) for c in DRINKS if h.of_class(c)]
    if len(goals) != 1:  # the oracle goal must be one condition; keep the single-class homes
        return None
    paths = [p for d in drinks for p in keypaths([h.move(d, table)], limit=6)]
    return Draft(phr, ["open-ended"], goals, paths)


# ---- logical -----------------------------------------------------------------------------------
def if_none_then_add(h: Home) -> Draft | None:
    box = h.pick(h.articulated())
    if not box:
        return None
    classes = {o.object_class for o in h.spec.objects}
    several = {c for c in classes if sum(h.objs[o].receptacle != box and h.fits(o, box) for o in h.of_class(c)) >= 2}
    cls = h.pick(several or classes)  # prefer classes that give the robot a choice
    if not cls:
        return None
    inside = [o for o in h.of_class(cls) if h.objs[o].receptacle == box]
    outside = [o for o in h.of_class(cls) if h.objs[o].receptacle != box and h.fits(o, box)]
    phr = f"if there is no {words(cls)} in the {words(box)}, put one in it"
    if inside:
        return Draft(phr + " (otherwise leave everything as it is)", ["logical"], [], [["[End]"]])
    if not outside:
        return None
    paths = [p for o in outside for p in keypaths([h.move(o, box)], limit=6)]
    return Draft(phr, ["logical"], [ObjectAt(object_class=cls, receptacle=box)], paths)


def if_empty_else(h: Home) -> Draft | None:
    box = h.pick(h.articulated())
    if not box:
        return None
    obj = h.pick(o for o in h.objs if h.objs[o].receptacle != box and h.fits(o, box))
    alt = h.pick(r for r in h.surfaces() if obj and r != h.objs[obj].receptacle and h.fits(obj, r))
    if not obj or not alt:
        return None
    phr = f"if the {words(box)} is empty, put the {words(obj)} inside it; if not, put it on the {words(alt)}"
    dest = alt if h.contents(box) else box
    return Draft(phr, ["logical"], [ObjectAt(object=obj, receptacle=dest)], keypaths([h.move(obj, dest)]))


def not_already_there(h: Home) -> Draft | None:
    for cls in sorted({o.object_class for o in h.spec.objects}):
        inst = h.of_class(cls)
        homes = {h.objs[o].receptacle for o in inst}
        if len(inst) >= 3 and len(homes) >= 2:
            dest = h.pick(homes)
            movers = [o for o in inst if h.objs[o].receptacle != dest]
            if len(movers) < 2:
                continue
            if all(h.fits(o, dest, extra=len(movers)) for o in movers):
                phr = f"every {words(cls)} that is not yet {RECEPTACLE_TYPES[h.recs[dest].type].relation} the {words(dest)} belongs there; move them"
                return Draft(phr, ["logical"], [ObjectAt(object=o, receptacle=dest) for o in movers], keypaths([h.move(o, dest) for o in movers]))
    return None


def hide_inside(h: Home) -> Draft | None:
    obj = h.pick(h.objs)
    boxes = [r for r in h.articulated() if h.closed(r) and r != h.objs[obj].receptacle and h.fits(obj, r)]
    if len(boxes) < 2 or h.source_closed(obj):
        return None
    phr = h.rng.choice([f"hide the {words(obj)} inside something that can be shut, and leave it shut",
                        f"put the {words(obj)} away behind a door or in a drawer, closed afterwards"])
    goal: list = [ObjectAt(object=obj, receptacle=boxes)] + [ContainerState(receptacle=b, open=False) for b in boxes]
    paths = [p for b in boxes for p in keypaths([h.move(obj, b)], close_at_end=(b,))]
    return Draft(phr, ["logical"], goal, paths)


# ---- human-style -------------------------------------------------------------------------------
def casual_request(h: Home) -> Draft | None:
    base = move_one(h)
    if base is None:
        return None
    goal = base.goal[0]
    obj, dest = goal.object, goal.receptacle
    phr = h.rng.choice([
        f"hey, could you grab my {words(obj)} and drop it {h.rel(dest)} the {words(dest)}? thanks!",
        f"ugh, the {words(obj)} is in the wrong place again... it goes {h.at(dest)} the {words(dest)}",
        f"i'll need the {words(obj)} later, leave it {h.at(dest)} the {words(dest)} for me please",
        f"would you mind putting the {words(obj)} {h.rel(dest)} the {words(dest)}",
    ])
    return Draft(phr, ["human-style", "short-horizon"], base.goal, base.paths)


def casual_chores(h: Home) -> Draft | None:
    base = gather(h)
    if base is None:
        return None
    objs = [g.object for g in base.goal if isinstance(g, ObjectAt) and g.object is not None]  # gather names each object
    dest = base.goal[0].receptacle
    phr = (f"guests are coming over soon! can you tidy up? the {words(objs[0])}, {words(objs[1])} and "
           f"{words(objs[2])} all go {h.at(dest)} the {words(dest)}")
    if any(isinstance(g, ContainerState) for g in base.goal):
        phr += ", and shut it afterwards"
    return Draft(phr, ["human-style", "long-horizon"], base.goal, base.paths)


def thirsty(h: Home) -> Draft | None:
    seat = h.pick(r for r in h.recs if h.recs[r].type in ("sofa", "table", "desk", "bed"))
    drinks = sorted(o for o in h.objs if h.objs[o].object_class in DRINKS and h.objs[o].receptacle != seat)
    cls = {h.objs[d].object_class for d in drinks}
    if not seat or len(cls) != 1 or not all(h.fits(d, seat) for d in drinks):
        return None
    phr = f"i'm so thirsty... could you bring me something to drink? i'm at the {words(seat)}"
    paths = [p for d in drinks for p in keypaths([h.move(d, seat)], limit=6)]
    return Draft(phr, ["human-style", "open-ended"], [ObjectAt(object_class=cls.pop(), receptacle=seat)], paths)


QUOTAS: list[tuple[Family, int]] = [
    (move_one, 14), (toggle_container, 6), (take_out, 8),
    (gather, 8), (two_places, 7),
    (one_of_class, 7), (clear_off, 6), (drink_somewhere, 3),
    (if_none_then_add, 7), (if_empty_else, 4), (not_already_there, 3), (hide_inside, 5),
    (casual_request, 10), (casual_chores, 5), (thirsty, 7),
]


def _aliases(h: Home) -> dict[str, str]:
    """Short names a planner may use: the class for unique objects, the type for unique receptacles."""
    out: dict[str, str] = {}
    for names, key in ((h.objs, lambda n: h.objs[n].object_class), (h.recs, lambda n: h.recs[n].type)):
        groups: dict[str, list[str]] = {}
        for n in names:
            groups.setdefault(key(n), []).append(n)
        out.update({k: v[0] for k, v in groups.items() if len(v) == 1 and k != v[0]})
    return out


def _oracle_config():
    from homiebot.config import RunConfig

    return RunConfig.model_validate({"planner": {"name": "oracle"}, "skill_profile": "perfect",
                                     "world": {"name": "embedded_home", "params": {"width": 32, "height": 32, "depth": False, "segmentation": False}}})


def expert_length(task: Task) -> int | None:
    """Rounds the oracle needs with perfect skills, or None if it does not reach TP = 1 and the goal."""
    from homiebot.bench.metrics import is_success
    from homiebot.bench.results import RunResult, summarise_steps
    from homiebot.runtime import run_episode

    record, _ = run_episode(_oracle_config(), task)
    result = RunResult(task_id=task.id, run=0, seed=0, keypaths=task.keypaths, aliases=task.aliases, steps=summarise_steps(record))
    return len(record.steps) if is_success(result) and record.goal_satisfied else None


def build_tasks(count: int, verbose: bool = False, first_seed: int = 1000, split: str | None = None,
                avoid: Iterable[str] = ()) -> list[Task]:
    """Write tasks family by family over generated homes, keeping those the oracle solves (deterministic).
    Tasks come in batches of 100 (the families' ``QUOTAS``), batch ``b`` over the homes of seeds
    ``first_seed + 10000 * b`` on. Every tenth task is a test task unless ``split`` names one split for
    all. No instruction is written twice, nor one of ``avoid``."""
    tasks: list[Task] = []
    seen = set(avoid)
    strict = not seen  # with instructions to avoid, a family may run out of new ones: a batch then ends early
    per_batch = sum(q for _, q in QUOTAS)
    batches = -(-count // per_batch)
    for batch in range(3 * batches):
        if len(tasks) >= count:
            break
        tasks += _batch(min(per_batch, count - len(tasks)), first_seed + 10000 * batch, len(tasks), split, seen, verbose,
                        strict)
    if len(tasks) < count:
        raise RuntimeError(f"could write only {len(tasks)} of {count} tasks with new instructions")
    return tasks


def _batch(count: int, first_seed: int, first_index: int, split: str | None, seen: set[str], verbose: bool,
           strict: bool) -> list[Task]:
    made: dict[str, int] = {f.__name__: 0 for f, _ in QUOTAS}
    tasks: list[Task] = []
    seed = last = first_seed
    while len(tasks) < count and seed < first_seed + 4000 and (strict or seed - last < 300):
        spec = generate_scene(seed)
        k = seed % len(QUOTAS)
        for fam, quota in QUOTAS[k:] + QUOTAS[:k]:  # rotate so that families interleave
            if made[fam.__name__] >= quota:
                continue
            h = Home(spec, random.Random(f"{seed}:{fam.__name__}"))
            draft = fam(h)
            if draft is None or draft.instruction in seen or not draft.paths:
                continue
            index = first_index + len(tasks)
            task = Task(id=f"{index:03d}_{fam.__name__}", instruction=draft.instruction, attributes=draft.attributes,
                        scene=scene_json(spec), goal=draft.goal, keypaths=draft.paths, aliases={**_aliases(h), **draft.aliases})
            length = expert_length(task)
            if length is None:
                if verbose:
                    print(f"  skipped (the oracle cannot solve it): {task.instruction}", file=sys.stderr)
                continue
            seen.add(draft.instruction)
            made[fam.__name__] += 1
            where = split or ("test" if index % 10 == 9 else "train")
            tasks.append(task.model_copy(update={"expert_length": length, "split": where}))
            last = seed
            break  # one task per home keeps the suite varied
        seed += 1
    missing = {f.__name__: q - made[f.__name__] for f, q in QUOTAS if made[f.__name__] < q}
    if strict and missing and len(tasks) < count:
        raise RuntimeError(f"could not write enough tasks for {missing}")
    return tasks


def write_suite(tasks: list[Task], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.yaml"):
        old.unlink()
    for task in tasks:
        data = task.model_dump(mode="json", by_alias=True, exclude_none=True)
        (out / f"{task.id}.yaml").write_text(yaml.safe_dump(data, sort_keys=False, width=120))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=SUITE_DIR)
    ap.add_argument("--count", type=int, default=sum(q for _, q in QUOTAS))
    ap.add_argument("--first-seed", type=int, default=1000, help="seed of the first generated home (home100: 1000)")
    ap.add_argument("--split", choices=("train", "test"), help="one split for every task (default: every tenth is test)")
    ap.add_argument("--avoid", action="append", default=[], metavar="SUITE",
                    help="a suite (name or folder) whose test instructions are not written again, even in other homes "
                    "(repeatable)")
    args = ap.parse_args(argv)
    avoid = {t.instruction for name in args.avoid for t in load_suite(name, "test")}
    tasks = build_tasks(args.count, verbose=True, first_seed=args.first_seed, split=args.split, avoid=avoid)
    write_suite(tasks, args.out)
    print(f"wrote {len(tasks)} tasks to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
