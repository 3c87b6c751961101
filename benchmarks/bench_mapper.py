"""Semantic mapper figures on this machine: update time per round (four views) and map quality.

    python benchmarks/bench_mapper.py [--seeds 0 1 2] [--size 256]

For each generated home, an exploration sweep (every room and receptacle, containers opened to look
inside) feeds the map with the ``sim_truth`` detector and with the ``noisy`` one (miss 0.2, false
positives 0.05 per image, confusion 0.05, erosion 1 px). Timing covers ``SemanticMap.update`` only
(back-projection, fusion, miss checks, relations, occupancy), not rendering or detection, which are
printed apart. Quality: precision, recall and x-y position error of the confirmed instances against
the simulator (category + nearest within 0.5 m). Target: median update <= 50 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("MUJOCO_GL", "osmesa")

import numpy as np  # noqa: E402

from homiebot.perception.detectors import NoisyDetector, SimTruthDetector, detect_views  # noqa: E402
from homiebot.perception.semantic_map import SemanticMap  # noqa: E402
from homiebot.worlds.home.generate import generate_scene  # noqa: E402
from homiebot.worlds.home.mapping import evaluate_map, explore_sweep, map_for_home, sim_open_state  # noqa: E402
from homiebot.worlds.home.world import EmbeddedHome  # noqa: E402


class TimedMap(SemanticMap):
    """A SemanticMap that records how long each update took."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.times: list[float] = []

    def update(self, *args, **kwargs):
        t = time.perf_counter()
        out = super().update(*args, **kwargs)
        self.times.append(time.perf_counter() - t)
        return out


def detection_ms(world: EmbeddedHome, detector, rounds: int = 10) -> float:
    """Median milliseconds to run a detector on the four views of the current observation."""
    obs = world.observe(0)
    times = []
    for k in range(rounds):
        t = time.perf_counter()
        detect_views(detector, obs, k, open_state=sim_open_state(world))
        times.append(time.perf_counter() - t)
    return 1000 * statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--size", type=int, default=256)
    args = ap.parse_args()
    detectors = {"sim_truth": lambda s: SimTruthDetector(),
                 "noisy": lambda s: NoisyDetector(SimTruthDetector(), 0.2, 0.05, 0.05, 1, seed=s)}
    rows, all_times = [], {name: [] for name in detectors}
    for seed in args.seeds:
        world = EmbeddedHome(generate_scene(seed), width=args.size, height=args.size)
        for name, make in detectors.items():
            world.reset()
            smap = map_for_home(world)
            timed = TimedMap(rooms=smap.rooms)
            t = time.perf_counter()
            sweep = explore_sweep(world, timed, make(seed))
            wall = time.perf_counter() - t
            ev = evaluate_map(timed, world.state)
            all_times[name] += timed.times
            rows.append((seed, name, sweep.rounds, ev, wall, detection_ms(world, make(seed))))
        world.close()
    print(f"{'home':>4} {'detector':>9} {'rounds':>6} {'prec':>5} {'recall':>6} {'err med':>7} {'err p90':>7} "
          f"{'sweep s':>7} {'detect ms':>9}")
    for seed, name, rounds, ev, wall, det_ms in rows:
        print(f"{seed:>4} {name:>9} {rounds:>6} {ev['precision']:>5.2f} {ev['recall']:>6.2f} {ev['median_error']:>7.3f} "
              f"{ev['p90_error']:>7.3f} {wall:>7.1f} {det_ms:>9.1f}")
    for name, times in all_times.items():
        ms = 1000 * np.array(times)
        print(f"update time, {name}: median {np.median(ms):.1f} ms, p95 {np.percentile(ms, 95):.1f} ms over {len(ms)} rounds "
              f"({args.size}x{args.size}, four views; target <= 50 ms)")


if __name__ == "__main__":
    main()
