"""Local process pool vs Ray on this machine: evaluation throughput and per-job scheduling overhead.

    python benchmarks/bench_ray.py [--workers 2] [--runs 3] [--suite home100] [--repeat 1] [--address HOST:PORT]

1. Throughput (episodes/s) of the whole suite x runs with the oracle (default failure profile, the
   default 256x256 views), once through the local pool and once through Ray with as many jobs at once
   as the pool has workers. Target: Ray within 15 % of the pool.
2. Scheduling overhead per job: a batch of trivial jobs (a seed computation) through each executor;
   wall time per job is what the executor itself costs.
Without --address a private single-machine Ray instance of --workers CPUs is started on 127.0.0.1 (no dashboard).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("MUJOCO_GL", "osmesa")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

from homiebot.bench.evaluate import evaluate, job_seed  # noqa: E402
from homiebot.bench.executors import JobExecutor, LocalExecutor, RayExecutor  # noqa: E402
from homiebot.config import RunConfig  # noqa: E402


def _overhead(executor: JobExecutor, jobs: int) -> tuple[float, float]:
    """(start-up seconds, seconds per further job) of a batch of trivial jobs: the executor's own cost."""
    payload = [(0, f"task{i}", i) for i in range(jobs)]
    for _ in executor.run(job_seed, payload[:1]):  # warm-up: Ray starts its workers once per cluster
        pass
    t0 = time.perf_counter()
    for _ in executor.run(job_seed, payload[:1]):
        pass
    one = time.perf_counter() - t0
    t0 = time.perf_counter()
    n = sum(1 for _ in executor.run(job_seed, payload))
    return one, max(0.0, time.perf_counter() - t0 - one) / (n - 1)


def _throughput(executor: JobExecutor, suite: str, runs: int, profile: str) -> tuple[float, int, float]:
    cfg = RunConfig.model_validate({"planner": {"name": "oracle"}, "skill_profile": profile})
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        s = evaluate(suite, cfg, Path(tmp) / "eval", runs=runs, executor=executor)
        wall = time.perf_counter() - t0
    return s["runs"] / wall, s["runs"], s["SR"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", default="home100")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--profile", default="default")
    ap.add_argument("--address", help="an existing Ray cluster (default: a private local instance)")
    ap.add_argument("--overhead-jobs", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=1, help="alternate the two executors this many times (median)")
    ap.add_argument("--skip-episodes", action="store_true", help="only measure the scheduling overhead")
    args = ap.parse_args()

    local = LocalExecutor(args.workers)
    # as `homiebot eval --executor ray --workers N`: a cluster's jobs at once capped, or a private instance of N CPUs
    ray_ex = RayExecutor(args.address, max_in_flight=args.workers) if args.address else RayExecutor(None, local_cpus=args.workers)
    print(f"executors: local ({local.describe()}) and {ray_ex.describe()}")
    (start_local, per_local), (start_ray, per_ray) = _overhead(local, args.overhead_jobs), _overhead(ray_ex, args.overhead_jobs)
    print(f"scheduling overhead ({args.overhead_jobs} trivial jobs): local pool {1e3 * per_local:.3f} ms per job "
          f"(+ {start_local:.2f} s start-up per evaluation), Ray {1e3 * per_ray:.3f} ms per job (+ {start_ray:.2f} s)")
    if not args.skip_episodes:
        samples: dict[str, list[float]] = {"local": [], "ray": []}
        for _ in range(args.repeat):  # alternated, so that a change in the machine's load hits both alike
            for name, ex in (("local", local), ("ray", ray_ex)):
                rate, n, sr = _throughput(ex, args.suite, args.runs, args.profile)
                samples[name].append(rate)
                print(f"{name:>5}: {n} episodes ({args.suite} x {args.runs}, oracle, profile {args.profile}) "
                      f"{rate:.3f} episodes/s, SR {sr:.2f}", flush=True)
        rates = {k: statistics.median(v) for k, v in samples.items()}
        print(f"median episodes/s: local {rates['local']:.3f}, Ray {rates['ray']:.3f}")
        gap = 100 * (rates["local"] - rates["ray"]) / rates["local"]
        print(f"Ray is {abs(gap):.1f} % {'slower' if gap > 0 else 'faster'} than the local pool (target: within 15 %)")
    ray_ex.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
