"""Core runtime figures on this machine: scene build and reset, four-view rendering, privileged skills,
full oracle episodes, and resident memory over many consecutive episodes.

    python benchmarks/bench_core.py [--episodes 200] [--size 256] [--busy 2] [--ratio-only]

Targets: four-view render <= 40 ms; oracle episode (<= 20 rounds) <= 3 s; an oracle episode costs at most
1.15 x the rendering it contains (median over episodes, at low load and with --busy 2 alike); memory flat
over 200 episodes. --busy N runs N processes that keep a core busy each during the measurements (a loaded
machine); --ratio-only measures only the rendering ratio and its profile.
"""

from __future__ import annotations

import argparse
import cProfile
import multiprocessing as mp
import os
import pstats
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("MUJOCO_GL", "osmesa")

ROOT = Path(__file__).resolve().parents[1]

from homiebot.config import RunConfig  # noqa: E402
from homiebot.core.contracts import Action, Subtask  # noqa: E402
from homiebot.core.tasks import load_task  # noqa: E402
from homiebot.runtime import run_episode, scene_for  # noqa: E402
from homiebot.skills.base import SkillContext  # noqa: E402
from homiebot.skills.privileged import PrivilegedManipulation, PrivilegedNavigation  # noqa: E402
from homiebot.worlds.home.world import EmbeddedHome  # noqa: E402


def rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def timed(fn, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def row(name: str, samples: list[float], target: str = "") -> None:
    ms = sorted(1000 * s for s in samples)
    p95 = ms[min(len(ms) - 1, int(0.95 * len(ms)))]
    print(f"| {name:<48} | {statistics.median(ms):9.1f} | {p95:9.1f} | {len(ms):5d} | {target:<10} |")


def slope_per_100(values: list[float]) -> float:
    n = len(values)
    xs = range(n)
    mx, my = (n - 1) / 2, statistics.fmean(values)
    num = sum((x - mx) * (y - my) for x, y in zip(xs, values))
    den = sum((x - mx) ** 2 for x in xs) or 1.0
    return 100 * num / den


def _spin(deadline: float) -> None:
    """A busy process: pure computation until ``deadline`` (it stops by itself)."""
    x = 0
    while time.time() < deadline:
        for i in range(100_000):
            x ^= i


def render_ratio(task, size: int, episodes: int = 12) -> None:
    """Oracle episodes against the rendering they contain: each episode's time over the time its
    observations took to render (the renders it contains), and over rounds x the median four-view render;
    then the five largest costs of the same episodes by own time (cProfile)."""
    cfg = RunConfig.model_validate({"planner": {"name": "oracle"}, "output": {"images": False},
                                    "world": {"name": "embedded_home", "params": {"width": size, "height": size}}})
    world = EmbeddedHome(scene_for(task), size, size)
    world.observe(0)
    render = statistics.median(timed(lambda: world.observe(1), 40))
    world.close()
    run_episode(cfg, task)  # imports and first-use costs are not an episode's
    contained, per_round, times = [], [], []
    for seed in range(episodes):
        t = time.perf_counter()
        rec, _ = run_episode(cfg.model_copy(update={"seed": seed}), task)
        dt = time.perf_counter() - t
        times.append(dt)
        contained.append(dt / sum(step.timings.observe for step in rec.steps))  # each round's observation: the render
        per_round.append(dt / (len(rec.steps) * render))
    print(f"oracle episode vs the rendering it contains ({episodes} episodes, median episode {1000 * statistics.median(times):.0f} ms, "
          f"four-view render {1000 * render:.1f} ms):")
    print(f"  episode / its observations' render time: median {statistics.median(contained):.3f}, max {max(contained):.3f}  "
          "(target <= 1.15)")
    print(f"  episode / (rounds x four-view render):   median {statistics.median(per_round):.3f}, max {max(per_round):.3f}")
    profile = cProfile.Profile()
    profile.enable()
    for seed in range(5):
        run_episode(cfg.model_copy(update={"seed": seed}), task)
    profile.disable()
    stats = pstats.Stats(profile)
    total = sum(v[2] for v in stats.stats.values())  # type: ignore[attr-defined]
    top = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:5]  # type: ignore[attr-defined]
    print("  top five costs by own time over 5 episodes (cProfile):")
    for (file, line, name), (_, calls, own, _, _) in top:
        where = name if file == "~" else f"{Path(file).name}:{line} {name}"
        print(f"    {100 * own / total:5.1f} %  {1000 * own / 5:6.1f} ms/episode  {calls // 5:5d} calls  {where}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--episodes", type=int, default=200, help="episodes for the memory run")
    ap.add_argument("--size", type=int, default=256, help="view width and height in pixels")
    ap.add_argument("--busy", type=int, default=0, help="processes that keep a core busy each while measuring (default: 0)")
    ap.add_argument("--ratio-only", action="store_true", help="measure only the episode / rendering ratio and its profile")
    args = ap.parse_args()

    task = load_task(ROOT / "config" / "tasks" / "demo.yaml")
    scene = scene_for(task)
    busy = [mp.get_context("spawn").Process(target=_spin, args=(time.time() + 1800,), daemon=True) for _ in range(args.busy)]
    for p in busy:
        p.start()
    try:
        return _measure(args, task, scene)
    finally:
        for p in busy:
            p.terminate()
            p.join()


def _measure(args: argparse.Namespace, task, scene) -> int:
    load = os.getloadavg()[0]
    print(f"homiebot core benchmark: {os.cpu_count()} CPUs, MUJOCO_GL={os.environ['MUJOCO_GL']}, views {args.size}x{args.size}, "
          f"{args.busy} busy processes, load average {load:.1f}\n")
    if args.ratio_only:
        render_ratio(task, args.size)
        print(f"load average at the end: {os.getloadavg()[0]:.1f}")
        return 0
    print(f"| {'measurement':<48} | {'median ms':>9} | {'p95 ms':>9} | {'n':>5} | {'target':<10} |")
    print(f"|{'-' * 50}|{'-' * 11}|{'-' * 11}|{'-' * 7}|{'-' * 12}|")

    row("build world (scene, occupancy, MJCF, renderer)", timed(lambda: EmbeddedHome(scene, args.size, args.size).close(), 5))
    world = EmbeddedHome(scene, args.size, args.size)
    row("scene reset", timed(world.reset, 50))
    rgb_only = EmbeddedHome(scene, args.size, args.size, depth=False, segmentation=False)
    rgb_only.observe(0)
    row("four-view render, RGB", timed(lambda: rgb_only.observe(1), 50), "<= 40 ms")
    rgb_only.close()
    world.observe(0)
    row("four-view render, RGB + depth + segmentation", timed(lambda: world.observe(1), 50))

    nav = PrivilegedNavigation("NoMaD", profile="perfect")
    hand = PrivilegedManipulation("RT-1-X", profile="perfect")
    ctx = SkillContext(0, 1, 1, 3)
    trips = [("green_can", "fridge"), ("fridge", "white_mug"), ("white_mug", "blue_sofa"), ("blue_sofa", "green_can")]

    def go_across_rooms():
        for target in trips[go_across_rooms.i % len(trips)]:
            nav.run(Subtask(action=Action.GO_TO, target=target), world, ctx)
        go_across_rooms.i += 1

    go_across_rooms.i = 0
    samples = [s / 2 for s in timed(go_across_rooms, 20)]
    row("privileged Go to (Dijkstra, between rooms)", samples)

    def pick_and_put():
        world.reset()
        world.state.navigate("green_can")
        hand.run(Subtask(action=Action.PICK, target="green_can"), world, ctx)
        hand.run(Subtask(action=Action.PUT, target="green_can", place="brown_table"), world, ctx)

    row("privileged Pick + Put (incl. reset and Go to)", timed(pick_and_put, 20))
    world.close()

    cfg = RunConfig.model_validate({"planner": {"name": "oracle"}, "output": {"images": False}})
    lengths = []

    def episode(seed: int, out=None):
        rec, _ = run_episode(cfg.model_copy(update={"seed": seed}), task, out)
        lengths.append(len(rec.steps))

    row("oracle episode, default profile, no files", [timed(lambda s=s: episode(s), 1)[0] for s in range(10)], "<= 3000 ms")
    tmp = Path(os.environ.get("TMPDIR", "/tmp")) / "homiebot-bench"
    cfg_files = cfg.model_copy(update={"output": cfg.output.model_copy(update={"images": True})})

    def episode_with_pngs(seed: int):
        run_episode(cfg_files.model_copy(update={"seed": seed}), task, tmp)

    row("oracle episode, default profile, with PNG views", [timed(lambda s=s: episode_with_pngs(s), 1)[0] for s in range(5)], "<= 3000 ms")
    print(f"\nrounds per oracle episode: median {statistics.median(lengths)}, max {max(lengths)}\n")
    render_ratio(task, args.size)

    rss = []
    t0 = time.perf_counter()
    for i in range(args.episodes):
        episode(i)
        rss.append(rss_mb())
        if (i + 1) % 50 == 0:
            print(f"  memory run: {i + 1}/{args.episodes} episodes, RSS {rss[-1]:.1f} MB", file=sys.stderr, flush=True)
    tail = rss[len(rss) // 4:]
    print(f"\nmemory over {args.episodes} consecutive episodes ({time.perf_counter() - t0:.0f} s, a new world each episode):")
    print(f"  RSS after episode 1: {rss[0]:.1f} MB, after {args.episodes // 4}: {tail[0]:.1f} MB, "
          f"after {args.episodes}: {rss[-1]:.1f} MB, max {max(rss):.1f} MB")
    print(f"  trend over the last {len(tail)} episodes: {slope_per_100(tail):+.2f} MB per 100 episodes (target: ~0)")
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
