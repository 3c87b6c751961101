"""Write the people-in-the-loop suites (deterministic):

* ``ambiguity``: tasks whose instruction leaves the object (several of its kind) or the place (several of
  its type) open, with the hidden goal, K (the open slots) and keypaths; halves ``dev`` and ``test``;
* ``home100_persona``: every home100 task reworded by a persona (same goal, keypaths and split).

    python -m homiebot.worlds.home.build_people_suites

By default the rewordings are templated (``reword``) with the built-in personas, which is how the
shipped suites were made. ``--persona`` picks other personas (names or files) and ``--llm`` lets the
language model of each persona's ``llm:`` section reword instead; a rewording that fails, or that
drops a name of an object or place, falls back to the template. The ambiguity suite is the same
either way.

    python -m homiebot.worlds.home.build_people_suites --persona config/personas/ada_ollama.yaml --llm --out my_suites
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Sequence
from pathlib import Path

from homiebot.bench.keypaths import keypaths
from homiebot.bench.suite import BUILTIN, load_suite
from homiebot.config import ConfigError
from homiebot.people.persona import Persona, builtin_personas, load_persona, reword
from homiebot.people.scene_facts import SceneFacts
from homiebot.people.simulated import open_slots
from homiebot.runtime import scene_json
from homiebot.tasks import ObjectAt, Task
from homiebot.worlds.home.build_suite import Home, _aliases, words, write_suite
from homiebot.worlds.home.generate import generate_scene

AMBIGUITY_SEEDS = range(8000, 8400)


def _ambiguous(h: Home, seed: int) -> tuple[str, list, list[list[str]]] | None:
    by_class: dict[str, list[str]] = {}
    for o in h.objs:
        by_class.setdefault(h.objs[o].object_class, []).append(o)
    by_type: dict[str, list[str]] = {}
    for r in h.recs:
        by_type.setdefault(h.recs[r].type, []).append(r)
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


def ambiguity_tasks(count: int = 64) -> list[Task]:
    tasks: list[Task] = []
    for seed in AMBIGUITY_SEEDS:
        if len(tasks) >= count:
            break
        spec = generate_scene(seed)
        h = Home(spec, random.Random(f"ambiguity:{seed}"))
        made = _ambiguous(h, seed)
        if made is None:
            continue
        instruction, goal, paths = made
        scene = scene_json(spec)
        k = len(open_slots(instruction, goal, SceneFacts.from_scene(scene)))
        if k == 0:
            continue
        n = len(tasks)
        tasks.append(Task(id=f"{n:03d}_ambiguous", instruction=instruction, attributes=["human-style", "short-horizon"],
                          split="dev" if n % 2 == 0 else "test", scene=scene, goal=goal, keypaths=paths,
                          aliases=_aliases(h), intent=f"put {words(goal[0].object)} {h.at(goal[0].receptacle)} the "
                                                      f"{words(goal[0].receptacle)}", min_questions=k))
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
