"""Per-action success of expert-driven policy skills vs the privileged kinematic skills, and stepping speed.

For each of the first N distinct homes of a benchmark suite (default: the built-in home100; or the demo
home and N generated homes with ``--suite ''``) the same task list runs twice, once with each skill
set, from the same start state: Go to every receptacle; after going to it, Pick each object on/in it
(opening its door or drawer first when closed), Put it back, and Open/Close each articulated
receptacle. Prints a table like EMMOE's Table 4 (per action: attempts, successes, rate) and the
control rate (policy steps per second of wall time) per skill, with and without rendering the
policy's camera.

    .venv/bin/python benchmarks/bench_skills.py [--suite home100] [--scenes 5] [--size 96]
"""

from __future__ import annotations

import argparse
import os
import time
import zlib
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("MUJOCO_GL", "osmesa")

from homiebot.core.contracts import Action, Subtask  # noqa: E402
from homiebot.skills.base import Skill, SkillContext  # noqa: E402
from homiebot.skills.policy_skill import PolicySkill  # noqa: E402
from homiebot.skills.privileged import PrivilegedManipulation, PrivilegedNavigation  # noqa: E402
from homiebot.worlds.home.generate import generate_scene  # noqa: E402
from homiebot.worlds.home.scene import load_scene  # noqa: E402
from homiebot.worlds.home.world import EmbeddedHome  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CTX = SkillContext(episode_seed=0, round=1, attempt=1, max_attempts=1)


def skill_sets(size: int, render: bool = True, camera: str = "training") -> dict[str, dict[str, Skill]]:
    """name -> {"nav": skill, "nav2": skill, "manip": skill, "manip2": skill}. With ``camera="training"`` each
    expert skill sees its model's training camera (NoMaD 4:3 wide, PixNav Habitat's, Octo and RT-1-X
    Bridge's), else a ``size`` square at the home's 90 degree field of view."""
    def cam(family: str) -> dict:
        return {"training_camera": family} if camera == "training" else {"image_size": (size, size)}

    return {
        "privileged": {"nav": PrivilegedNavigation("privileged", profile="perfect"),
                       "manip": PrivilegedManipulation("privileged", profile="perfect")},
        "expert": {"nav": PolicySkill("NoMaD", policy="expert_waypoints", render=render, rate_hz=4.0, **cam("nomad")),
                   "nav2": PolicySkill("PixNav", policy="expert_discrete", render=render, **cam("pixnav")),
                   "manip": PolicySkill("RT-1-X", policy="expert_ee", render=render, rate_hz=5.0, **cam("rt1x")),
                   "manip2": PolicySkill("Octo", policy="expert_ee", render=render, rate_hz=5.0, **cam("octo"))},
    }


def tasks(world: EmbeddedHome) -> list[list[Subtask]]:
    """Short task sequences; each starts from the initial state of the home."""
    st = world.state
    out = []
    for rec_name, rec in st.layout.receptacles.items():
        seq = [Subtask(action=Action.GO_TO, target=rec_name)]
        closed = rec.type.articulated and not st.is_open[rec_name]
        if rec.type.articulated:
            seq.append(Subtask(action=Action.OPEN if closed else Action.CLOSE, target=rec_name))
            if not closed:
                seq.append(Subtask(action=Action.OPEN, target=rec_name))
        for obj in st.objects_at(rec_name)[:2]:
            seq += [Subtask(action=Action.PICK, target=obj), Subtask(action=Action.PUT, target=obj, place=rec_name)]
        if rec.type.articulated:
            seq.append(Subtask(action=Action.CLOSE, target=rec_name))
        out.append(seq)
    return out


def run_set(world: EmbeddedHome, skills: dict[str, Skill], table: dict, timing: dict, label: str) -> None:
    for seq in tasks(world):
        world.reset()
        for sub in seq:
            if sub.action is Action.GO_TO:
                use = [skills["nav"]] + ([skills["nav2"]] if "nav2" in skills else [])
            else:
                use = [skills["manip"]] + ([skills["manip2"]] if "manip2" in skills else [])
            skill = use[zlib.crc32((sub.target or "").encode()) % len(use)] if len(use) > 1 else use[0]
            t0 = time.perf_counter()
            result = skill.run(sub, world, CTX)
            wall = time.perf_counter() - t0
            key = (label, sub.action.value)
            table[key][0] += 1
            table[key][1] += int(result.success)
            steps = result.stats.get("steps", 0)
            if steps:
                tk = (label, skill.model)
                timing[tk][0] += steps
                timing[tk][1] += wall
            if not result.success:
                break  # the rest of the sequence depends on this step


def suite_scenes(suite: str, count: int) -> list:
    """The first ``count`` distinct homes the suite's tasks take place in."""
    from homiebot.bench.suite import load_suite
    from homiebot.runtime import scene_for

    seen: dict[str, object] = {}
    for task in load_suite(suite):
        spec = scene_for(task)
        key = spec.model_dump_json()
        if key not in seen:
            seen[key] = spec
        if len(seen) >= count:
            break
    return list(seen.values())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", default="home100", help="benchmark suite whose homes are used ('' : the demo home + generated homes)")
    ap.add_argument("--scenes", type=int, default=5, help="distinct homes to use (from the suite, in task order; or generated)")
    ap.add_argument("--size", type=int, default=96, help="policy camera resolution with --camera square")
    ap.add_argument("--camera", choices=("training", "square"), default="training",
                    help="each model's training camera (default) or a square image at the home's 90 degree view")
    args = ap.parse_args()
    specs = suite_scenes(args.suite, args.scenes) if args.suite else (
        [load_scene(ROOT / "config" / "scenes" / "demo.yaml")] + [generate_scene(seed) for seed in range(args.scenes)])
    table: dict = defaultdict(lambda: [0, 0])
    timing: dict = defaultdict(lambda: [0, 0.0])
    timing_blind: dict = defaultdict(lambda: [0, 0.0])
    for spec in specs:
        world = EmbeddedHome(spec, width=32, height=32, depth=False, segmentation=False)
        for label, skills in skill_sets(args.size, camera=args.camera).items():
            run_set(world, skills, table, timing, label)
        run_set(world, skill_sets(args.size, render=False, camera=args.camera)["expert"], defaultdict(lambda: [0, 0]), timing_blind, "expert")
        world.close()
    print(f"Per-action execution success over {len(specs)} homes{f' of suite {args.suite}' if args.suite else ''} (each action counted when reached in its sequence)")
    print(f"{'action':<8} | {'privileged':>22} | {'expert policies':>22}")
    print(f"{'':<8} | {'att':>6} {'succ':>6} {'rate':>8} | {'att':>6} {'succ':>6} {'rate':>8}")
    for action in ("Go to", "Pick", "Put", "Open", "Close"):
        cells = []
        for label in ("privileged", "expert"):
            att, succ = table[(label, action)]
            cells.append(f"{att:>6} {succ:>6} {100 * succ / att if att else 0:>7.1f}%")
        print(f"{action:<8} | {cells[0]} | {cells[1]}")
    print()
    print("Control stepping speed (policy steps per wall second; training camera: RGB + depth, square: RGB + depth + segmentation)")
    print(f"{'skill':<10} {'camera':<22} {'steps':>7} {'with camera':>12} {'blind':>10}")
    experts = skill_sets(args.size, render=False, camera=args.camera)["expert"]
    for (label, model), (steps, wall) in sorted(timing.items()):
        if label != "expert":
            continue
        bs, bw = timing_blind.get((label, model), (0, 0.0))
        skill = next(s for s in experts.values() if s.model == model)
        assert isinstance(skill, PolicySkill)
        spec = skill.training_camera
        cam = f"{spec.frame_size[1]}x{spec.frame_size[0]} hfov {spec.hfov_deg:.0f}" if spec else f"{args.size}x{args.size} vfov 90"
        print(f"{model:<10} {cam:<22} {steps:>7} {steps / wall if wall else 0:>12.0f} {bs / bw if bw else 0:>10.0f}")


if __name__ == "__main__":
    main()
