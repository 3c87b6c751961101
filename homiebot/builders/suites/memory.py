"""Build the ``remembered`` suite: tasks that only a demonstration makes doable, and the memory they need.

    python -m homiebot.builders.suites.memory [--out DIR]            # the suite's task files
    python -m homiebot.builders.suites.memory --memory memory         # record the demonstrations, remember them

Every task takes place in the demo home (``config/scenes/demo.yaml``, inline in the task) and refers to
one of the example demonstrations (``homiebot.builders.memory.scripts``) instead of naming a place: "put the toy
block away like I showed you". Its goal is the place that demonstration shows: a personal place for a
thing (toys, mug), a step of a routine (the cereal goes on the counter in the morning) or a preference
(the remote on the sofa). A task's id starts with its demonstration's script id. Without the memory
the words do not say where; with it, the demonstration does. The memory is the demonstrations'
segments (gaze+speech) in ``ROOT/demo/default/`` (home ``demo``, the scripts' user).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from homiebot.bench.keypaths import keypaths
from homiebot.bench.suite import BUILTIN
from homiebot.core.resources import config_dir
from homiebot.core.tasks import ObjectAt, Task

SUITE_DIR = BUILTIN / "remembered"
HOME = "demo"
# (script, variant, instruction, what the demonstration shows)
TASKS = (
    ("toys", "showed", "put the toy block away like I showed you", "a personal place"),
    ("toys", "belongs", "could you put the toy where it belongs", "a personal place"),
    ("mug", "belongs", "put my mug where it belongs", "a personal place"),
    ("mug", "showed", "clear the cup away like I showed you", "a personal place"),
    ("cereal", "morning", "get the cereal out like I do every morning", "a step of a routine"),
    ("cereal", "goes", "put the cereal box where it goes in the morning", "a step of a routine"),
    ("remote", "like", "put the remote where I like it", "a preference"),
    ("remote", "belongs", "bring the tv remote back where it belongs", "a preference"),
)


def demonstrated_place(script_id: str) -> tuple[str, str]:
    """(object, place) of the script's last Put step: what its demonstration shows."""
    from homiebot.builders.memory.scripts import SCRIPTS

    put = [s for s in SCRIPTS[script_id].steps if s.action == "Put"][-1]
    assert put.target is not None and put.place is not None
    return put.target, put.place


def build_tasks() -> list[Task]:
    """The suite's tasks, in a fixed order (deterministic: no randomness, no episodes run)."""
    from homiebot.builders.suites.home import Home, _aliases
    from homiebot.worlds.home.scene import load_scene, scene_json

    spec = load_scene(config_dir() / "scenes" / "demo.yaml")
    home = Home(spec, rng=None)  # type: ignore[arg-type]  # no draws: only facts about the scene
    tasks = []
    for script, variant, instruction, shows in TASKS:
        obj, place = demonstrated_place(script)
        tasks.append(Task(id=f"{script}_{variant}", instruction=instruction, scene=scene_json(spec),
                          goal=[ObjectAt(object=obj, receptacle=place)], keypaths=keypaths([home.move(obj, place)]),
                          aliases=_aliases(home), expert_length=len(keypaths([home.move(obj, place)])[0]),
                          intent=f"the {obj.replace('_', ' ')} goes {home.at(place)} the {place.replace('_', ' ')} "
                                 f"({shows}, shown in the '{script}' demonstration)"))
    return tasks


def build_memory(root: str | Path, size: int = 64, user: str = "default") -> int:
    """Record every script the suite refers to in the demo home (``size`` pixels a side), segment
    each (gaze+speech) and remember the segments in ``root``; the number of segments."""
    from homiebot.builders.memory.record import record_in_home
    from homiebot.builders.memory.scripts import SCRIPTS
    from homiebot.memory.segmentation import segment
    from homiebot.memory.store import DemonstrationMemory

    memory = DemonstrationMemory(root, HOME, user)
    with tempfile.TemporaryDirectory() as tmp:
        for script in sorted({t[0] for t in TASKS}):
            folder = Path(tmp) / script
            demo = record_in_home(SCRIPTS[script], folder, size=size)
            memory.add(segment(demo, "gaze+speech", folder), demo, folder)
    return len(memory.segments)


def main(argv: list[str] | None = None) -> int:
    """Write the suite's task files, or (``--memory``) build the memory its tasks need."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=SUITE_DIR, help="folder for the task files")
    ap.add_argument("--memory", help="instead: record the demonstrations and remember them in this folder")
    ap.add_argument("--size", type=int, default=64, help="with --memory: view side in pixels (default: 64)")
    args = ap.parse_args(argv)
    if args.memory:
        print(f"{args.memory}: {build_memory(args.memory, args.size)} segments of {len({t[0] for t in TASKS})} demonstrations")
        return 0
    from homiebot.builders.suites.home import write_suite

    tasks = build_tasks()
    write_suite(tasks, args.out)
    print(f"wrote {len(tasks)} tasks to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
