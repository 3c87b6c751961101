"""Write the people-in-the-loop suites (deterministic):

* ``ambiguity``: tasks with the hidden goal, K (the open slots, as the simulated user counts them from
  the scene) and keypaths; halves ``dev`` and ``test`` (even and odd task numbers). Tasks 000-063 leave
  the object (several of its kind) or the place (several of its type) open; then come tasks whose place
  is named by a type two receptacles share (``sink`` and ``bathroom_sink``), *position* tasks (two
  things of one kind and colour on different furniture, the instruction without colour), *category*
  tasks ("a piece of fruit" with several fruits; the goal is one particular), *twins* (``x`` and
  ``x_2``, alike but for where they are) and *clear* tasks (K = 0, to measure unnecessary questions);
* ``home100_persona``: every home100 task reworded by a persona (same goal, keypaths and split).

    python -m homiebot.builders.suites.people

By default the rewordings are templated (``reword``) with the built-in personas, which is how the
shipped suites were made. ``--persona`` picks other personas (names or files) and ``--llm`` lets the
language model of each persona's ``llm:`` section reword instead; a rewording that fails, or that
drops a name of an object or place, falls back to the template. The ambiguity suite is the same
either way.

    python -m homiebot.builders.suites.people --persona config/personas/ada_ollama.yaml --llm --out my_suites
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from homiebot.bench.keypaths import keypaths
from homiebot.bench.suite import BUILTIN, load_suite
from homiebot.builders.suites.home import Home, _aliases, words, write_suite
from homiebot.core.errors import ConfigError
from homiebot.core.tasks import ObjectAt, Task
from homiebot.core.vocabulary import OBJECT_CLASSES
from homiebot.people.persona import Persona, builtin_personas, load_persona, reword
from homiebot.people.scene_facts import SceneFacts
from homiebot.people.simulated import open_slots
from homiebot.runtime import scene_json
from homiebot.worlds.home.generate import generate_scene
from homiebot.worlds.home.scene import ObjectSpec

SHIPPED_SEEDS = (8000, 8002, 8003, 8005, 8006, 8007, 8008, 8009, 8010, 8012, 8013, 8014, 8017, 8018, 8019, 8020, 8021,
                 8022, 8023, 8024, 8025, 8026, 8027, 8028, 8029, 8031, 8033, 8035, 8036, 8037, 8039, 8040, 8041, 8044,
                 8045, 8047, 8048, 8050, 8051, 8052, 8054, 8055, 8056, 8058, 8059, 8061, 8062, 8063, 8065, 8067, 8068,
                 8069, 8070, 8071, 8072, 8074, 8075, 8076, 8077, 8078, 8079, 8080, 8081, 8082)
"""The homes of tasks 000-063, as first shipped (their instructions stay as they were)."""
SHARED_TYPE_SEEDS = (8011, 8032, 8038, 8053)
"""Homes whose task names its place by a type two receptacles share: once left out, K counted from names."""
FAMILY_SEEDS = range(8400, 8800)
FAMILY_COUNT = 8
CATEGORY_PHRASES = {"fruit": "a piece of fruit", "drink": "something to drink", "toy": "a toy", "food": "something to eat"}
VERBS = ("put", "could you put", "please move", "can you bring")


def _ambiguous(h: Home, seed: int) -> tuple[str, list, list[list[str]]] | None:
    by_class, by_type = h.by_class(), h.by_type()
    kind = seed % 3  # 0: which object, 1: which place, 2: both
    classes = sorted(c for c, v in by_class.items() if len(v) > 1)
    types = sorted(t for t, v in by_type.items() if len(v) > 1 and not h.rtype(v[0]).articulated)
    if kind in (0, 2) and not classes or kind in (1, 2) and not types:
        return None
    if kind == 1:
        obj = h.pick(o for o in h.objs if len(by_class[h.objs[o].object_class]) == 1)
    else:
        obj = h.pick(by_class[h.rng.choice(classes)])
    if obj is None:
        return None
    if kind == 0:
        dest = h.pick(r for r in h.recs if len(by_type[h.recs[r].type]) == 1 and r != h.objs[obj].receptacle and h.fits(obj, r))
    else:
        dest = h.pick(r for t in types for r in by_type[t] if r != h.objs[obj].receptacle and h.fits(obj, r))
    if dest is None:
        return None
    cls = words(h.objs[obj].object_class)
    thing = f"the {cls}" if kind != 1 else f"the {words(obj)}"
    place = f"the {words(h.recs[dest].type)}" if kind != 0 else f"the {words(dest)}"
    verb = h.rng.choice(["put", "could you put", "please move", "can you bring"])
    instruction = f"{verb} {thing} {h.at(dest)} {place}" + ("?" if verb.startswith(("could", "can")) else "")
    goal = [ObjectAt(object=obj, receptacle=dest)]
    return instruction, goal, keypaths([h.move(obj, dest)])


Made = tuple[str, list, list[list[str]], Home]


def _instruction(h: Home, thing: str, dest: str, place: str | None = None) -> str:
    verb = h.rng.choice(VERBS)
    return f"{verb} {thing} {h.at(dest)} {place or 'the ' + words(dest)}" + ("?" if verb.startswith(("could", "can")) else "")


def _unique_dest(h: Home, obj: str, avoid: set[str]) -> str | None:
    """A receptacle that is the only one of its type, where ``obj`` fits and is not yet."""
    types = [h.recs[r].type for r in h.recs]
    return h.pick(r for r in h.recs if types.count(h.recs[r].type) == 1 and r not in avoid and h.fits(obj, r))


def _with_sibling(h: Home, obj: str, name: str, seed: int) -> Home | None:
    """The home with a copy of ``obj`` (same class and colour) called ``name`` on another open surface."""
    here = h.objs[obj].receptacle
    room = h.room(obj)
    spots = [r for r in h.surfaces(here) if h.rtype(r).relation == "on" and h.recs[r].room != room and h.fits(obj, r)]
    spot = h.pick(spots)
    if spot is None or name in h.objs or name in h.recs:
        return None
    sibling = ObjectSpec.model_validate({"name": name, "class": h.objs[obj].object_class, "color": h.objs[obj].color, "on": spot})
    spec = h.spec.model_copy(update={"objects": [*h.spec.objects, sibling]})
    return Home(spec, random.Random(f"sibling:{seed}"))


def _alike(h: Home, seed: int, twins: bool) -> Made | None:
    """Position (``twins`` False: the copy named by its room, the instruction without colour) or twins (``x``
    and ``x_2``, the instruction with the colour they share)."""
    obj = h.pick(o for o in h.objs if h.objs[o].receptacle in h.surfaces())
    if obj is None:
        return None
    cls = h.objs[obj].object_class
    name = f"{obj}_2" if twins else f"{h.room(obj)}_{cls}"
    sib = _with_sibling(h, obj, name, seed)
    if sib is None or (not twins and len(sib.of_class(cls)) != 2):
        return None
    meant = sib.rng.choice([obj, name])
    dest = _unique_dest(sib, meant, {r for r in (sib.objs[obj].receptacle, sib.objs[name].receptacle) if r})
    if dest is None:
        return None
    thing = f"the {sib.objs[obj].color} {words(cls)}" if twins else f"the {words(cls)}"
    return _instruction(sib, thing, dest), [ObjectAt(object=meant, receptacle=dest)], keypaths([sib.move(meant, dest)]), sib


def _category(h: Home, seed: int) -> Made | None:
    """'a piece of fruit' (something to drink, a toy, something to eat) with several in the home; one is meant."""
    by_cat: dict[str, list[str]] = {}
    for o in h.objs:
        by_cat.setdefault(OBJECT_CLASSES[h.objs[o].object_class].category, []).append(o)
    cats = sorted(c for c in CATEGORY_PHRASES if len(by_cat.get(c, [])) > 1)
    if not cats:
        return None
    obj = h.pick(by_cat[h.rng.choice(cats)])
    dest = _unique_dest(h, obj, {h.objs[obj].receptacle or ""})
    if dest is None:
        return None
    phrase = CATEGORY_PHRASES[OBJECT_CLASSES[h.objs[obj].object_class].category]
    return _instruction(h, phrase, dest), [ObjectAt(object=obj, receptacle=dest)], keypaths([h.move(obj, dest)]), h


def _clear(h: Home, seed: int) -> Made | None:
    """An instruction that leaves nothing open: the colour and class of the thing, the name of the place."""
    obj = h.pick(h.objs)
    if obj is None:
        return None
    dest = h.pick(r for r in h.recs if r != h.objs[obj].receptacle and h.fits(obj, r))
    if dest is None:
        return None
    thing = f"the {h.objs[obj].color} {words(h.objs[obj].object_class)}"
    return _instruction(h, thing, dest), [ObjectAt(object=obj, receptacle=dest)], keypaths([h.move(obj, dest)]), h


def _task(n: int, family: str, made: Made, k: int) -> Task:
    instruction, goal, paths, h = made
    return Task(id=f"{n:03d}_{family}", instruction=instruction, attributes=["human-style", "short-horizon"],
                split="dev" if n % 2 == 0 else "test", scene=scene_json(h.spec), goal=goal, keypaths=paths,
                aliases=_aliases(h), intent=f"put {words(goal[0].object)} {h.at(goal[0].receptacle)} the "
                                            f"{words(goal[0].receptacle)}", min_questions=k)


def _k(made: Made) -> int:
    return len(open_slots(made[0], made[1], SceneFacts.from_scene(scene_json(made[3].spec))))


def ambiguity_tasks() -> list[Task]:
    """The ambiguity suite: the shipped tasks (K recounted), then the newer families."""
    tasks: list[Task] = []
    for seed in SHIPPED_SEEDS + SHARED_TYPE_SEEDS:
        h = Home(generate_scene(seed), random.Random(f"ambiguity:{seed}"))
        made = _ambiguous(h, seed)
        if made is None:
            raise RuntimeError(f"home {seed} no longer gives its ambiguity task (has the scene generator changed?)")
        full = (*made, h)
        tasks.append(_task(len(tasks), "ambiguous", full, _k(full)))
    families: list[tuple[str, Callable[[Home, int], Made | None], int]] = [
        ("position", lambda h, s: _alike(h, s, twins=False), 1), ("category", _category, 1),
        ("twins", lambda h, s: _alike(h, s, twins=True), 1), ("clear", _clear, 0)]
    seeds = iter(FAMILY_SEEDS)
    for family, make, want in families:
        made_here = 0
        while made_here < FAMILY_COUNT:
            seed = next(seeds)
            got = make(Home(generate_scene(seed), random.Random(f"{family}:{seed}")), seed)
            if got is not None and _k(got) == want:
                tasks.append(_task(len(tasks), family, got, want))
                made_here += 1
    return tasks


def named_in(instruction: str, scene: dict | None) -> list[str]:
    """Names of the scene's objects and receptacles the instruction mentions (in words, longest first)."""
    said = f" {' '.join(instruction.lower().replace(',', ' ').replace('?', ' ').split())} "
    names = [words(n["name"]) for part in ("objects", "receptacles") for n in (scene or {}).get(part, []) if n.get("name")]
    return sorted({n for n in names if f" {n} " in said}, key=lambda n: (-len(n), n))


def persona_tasks(personas: Sequence[Persona] | None = None, llm: bool = False) -> list[Task]:
    """home100 reworded, persona by persona in turn (default: the built-in ones, templated)."""
    chosen = list(personas) if personas else [load_persona(p) for p in builtin_personas()]
    out = []
    by_llm = 0
    for i, task in enumerate(load_suite("home100")):
        persona = chosen[i % len(chosen)]
        if llm and persona.llm is not None:
            from homiebot.people.llm_persona import reword_with_llm

            made = reword_with_llm(task.instruction, persona, i, keep=named_in(task.instruction, task.scene))
            by_llm += made.by_llm
            if not made.by_llm:
                print(f"{task.id}: templated rewording ({made.reason})", file=sys.stderr)
            text = made.text
        else:
            text = reword(task.instruction, persona, i)
        out.append(task.model_copy(update={"id": f"{task.id}_{persona.name}", "instruction": text}))
    if llm:
        print(f"{by_llm} of {len(out)} rewordings by a language model", file=sys.stderr)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=BUILTIN)
    ap.add_argument("--persona", action="append", default=[], metavar="NAME_OR_FILE",
                    help="a persona for the rewordings (repeat for several; default: the built-in ones)")
    ap.add_argument("--llm", action="store_true", help="reword with the language model of each persona's llm: section")
    args = ap.parse_args(argv)
    try:
        personas = [load_persona(p) for p in args.persona]
    except ConfigError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.llm and not any(p.llm is not None for p in personas or [load_persona(n) for n in builtin_personas()]):
        print("error: --llm: none of the personas has an llm: section (e.g. --persona config/personas/ada_ollama.yaml)",
              file=sys.stderr)
        return 2
    write_suite(ambiguity_tasks(), args.out / "ambiguity")
    write_suite(persona_tasks(personas, args.llm), args.out / "home100_persona")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
