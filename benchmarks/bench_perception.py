"""Planners under oracle vs mapped perception: SR, PLWSR, TP on a suite split, plus mapper update time.

    python benchmarks/bench_perception.py [--split test] [--runs 3] [--workers 2]
        [--planners heuristic oracle] [--out evals/perception] [--size 256] [--timing-tasks 3]

For every planner x perception setting (oracle = simulator truth; mapped + ``sim_truth`` detector;
mapped + ``noisy`` detector: miss 0.2, false positives 0.05, confusion 0.05, erosion 1 px) the suite
split is evaluated with ``homiebot.bench.evaluate`` (default failure profile, default round limit),
each setting into its own folder under ``--out`` (``<planner>_<perception>``). Folders are resumed,
so a rerun only runs what is missing. If an evaluation raises (a crashed episode stops the pool),
the jobs still missing are run one by one in this process, and a job that fails again is reported
and skipped: one crash never loses the other results.

Mapper update time (detection + back-projection + fusion + occupancy for the four views, as
recorded in ``PerceivingWorld.update_times``; rendering excluded) is measured in a short in-process
run of the heuristic planner on the first ``--timing-tasks`` tasks, since evaluation workers are
separate processes. Target: <= 50 ms per update for four 256x256 views.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

os.environ.setdefault("MUJOCO_GL", "osmesa")

import numpy as np  # noqa: E402

from homiebot import runtime  # noqa: E402
from homiebot.bench import metrics  # noqa: E402
from homiebot.bench.evaluate import RESULTS, _init_worker, evaluate, job_seed, run_job  # noqa: E402
from homiebot.bench.results import RunResult, read_results  # noqa: E402
from homiebot.bench.suite import load_suite  # noqa: E402
from homiebot.config import RunConfig  # noqa: E402

NOISY = {"miss_rate": 0.2, "false_positive_rate": 0.05, "confusion_rate": 0.05, "erosion_px": 1}
PERCEPTION: dict[str, dict[str, Any]] = {
    "oracle": {"mode": "oracle"},
    "mapped_sim_truth": {"mode": "mapped", "detector": {"name": "sim_truth", "params": {}}},
    "mapped_noisy": {"mode": "mapped", "detector": {"name": "noisy", "params": dict(NOISY)}},
}
LABELS = {"oracle": "oracle", "mapped_sim_truth": "mapped, sim_truth", "mapped_noisy": "mapped, noisy"}


def make_config(planner: str, perception: str, size: int, profile: str = "default") -> RunConfig:
    return RunConfig.model_validate({
        "planner": {"name": planner}, "skill_profile": profile, "perception": PERCEPTION[perception],
        "world": {"name": "embedded_home", "params": {"width": size, "height": size}},
        "output": {"dir": "runs", "images": False, "video": False},
    })


def _finish_in_process(suite: str, cfg: RunConfig, out: Path, split: str, runs: int) -> list[str]:
    """Run the (task, run) jobs missing from ``out`` one at a time here; returns the errors."""
    done = {r.key for r in read_results(out / RESULTS).results}
    _init_worker(cfg.model_dump_json(), None)
    errors = []
    with open(out / RESULTS, "a") as fh:
        for task in load_suite(suite, split):
            for run in range(runs):
                if (task.id, run) in done:
                    continue
                try:
                    result_json, _, _ = run_job(task.model_dump_json(), run, job_seed(cfg.seed, task.id, run))
                except Exception as err:  # noqa: BLE001 - report and go on with the other jobs
                    errors.append(f"{task.id} run {run}: {type(err).__name__}: {err}")
                    continue
                fh.write(result_json + "\n")
                fh.flush()
                os.fsync(fh.fileno())
    return errors


def run_setting(suite: str, cfg: RunConfig, out: Path, split: str, runs: int, workers: int) -> dict[str, Any]:
    """Evaluate one setting into ``out``, surviving crashes; returns the metrics and any errors."""
    errors: list[str] = []
    t0 = time.perf_counter()
    try:
        evaluate(suite, cfg, out, runs=runs, split=split, workers=workers, resume=True)
    except Exception as err:  # noqa: BLE001
        errors.append(f"evaluate: {type(err).__name__}: {err}")
        traceback.print_exc()
        try:
            errors += _finish_in_process(suite, cfg, out, split, runs)
        except Exception as err2:  # noqa: BLE001
            errors.append(f"in-process fallback: {type(err2).__name__}: {err2}")
    wall = time.perf_counter() - t0
    results: list[RunResult] = read_results(out / RESULTS).results if (out / RESULTS).is_file() else []
    expected = len(load_suite(suite, split)) * runs
    return {"runs": len(results), "expected": expected, "SR": metrics.sr(results), "PLWSR": metrics.plwsr(results),
            "TP": metrics.mean_tp(results), "SER": metrics.ser(results), "wall_s": round(wall, 1), "errors": errors,
            "rounds": float(np.mean([len(r.steps) for r in results])) if results else 0.0}


def mapper_timing(suite: str, split: str, size: int, n_tasks: int, detector: str) -> dict[str, Any]:
    """Run the heuristic planner in mapped mode in this process and collect PerceivingWorld.update_times."""
    from homiebot.worlds.perceiving import PerceivingWorld

    worlds: list[PerceivingWorld] = []
    original = runtime.build_world

    def capturing(cfg, scene):
        world = original(cfg, scene)
        if isinstance(world, PerceivingWorld):
            worlds.append(world)
        return world

    cfg = make_config("heuristic", detector, size)
    runtime.build_world = capturing
    try:
        for task in load_suite(suite, split)[:n_tasks]:
            runtime.run_episode(cfg.model_copy(update={"seed": job_seed(cfg.seed, task.id, 0)}), task)
    finally:
        runtime.build_world = original
    ms = 1000 * np.array([t for w in worlds for t in w.update_times])
    if not len(ms):
        return {"n": 0}
    return {"n": int(len(ms)), "median_ms": float(np.median(ms)), "p95_ms": float(np.percentile(ms, 95)),
            "max_ms": float(ms.max()), "episodes": len(worlds)}


def _f(x: float) -> str:
    return f"{x:.2f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", default="home100")
    ap.add_argument("--split", default="test", choices=["train", "test", "all"])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--planners", nargs="+", default=["heuristic", "oracle"])
    ap.add_argument("--perception", nargs="+", default=list(PERCEPTION), choices=list(PERCEPTION))
    ap.add_argument("--out", type=Path, default=Path("evals/perception"))
    ap.add_argument("--size", type=int, default=256, help="view width and height in pixels")
    ap.add_argument("--timing-tasks", type=int, default=3, help="tasks for the in-process mapper timing (0: skip)")
    args = ap.parse_args()

    rows: list[tuple[str, str, dict[str, Any]]] = []
    for planner in args.planners:
        for perception in args.perception:
            out = args.out / f"{planner}_{perception}"
            print(f"== {planner} x {LABELS[perception]} -> {out}", file=sys.stderr, flush=True)
            try:
                row = run_setting(args.suite, make_config(planner, perception, args.size), out, args.split, args.runs, args.workers)
            except Exception as err:  # noqa: BLE001 - e.g. a bad config: report it, keep the other settings
                traceback.print_exc()
                row = {"runs": 0, "expected": 0, "SR": 0.0, "PLWSR": 0.0, "TP": 0.0, "SER": 0.0, "wall_s": 0.0,
                       "rounds": 0.0, "errors": [f"{type(err).__name__}: {err}"]}
            rows.append((planner, perception, row))
            (args.out / "summary.json").write_text(json.dumps([{"planner": p, "perception": q, **r} for p, q, r in rows], indent=2))

    timing = {}
    if args.timing_tasks > 0:
        for perception in ("mapped_sim_truth", "mapped_noisy"):
            if perception in args.perception:
                try:
                    timing[perception] = mapper_timing(args.suite, args.split, args.size, args.timing_tasks, perception)
                except Exception as err:  # noqa: BLE001
                    traceback.print_exc()
                    timing[perception] = {"n": 0, "error": f"{type(err).__name__}: {err}"}

    print(f"\nSuite {args.suite}, split {args.split}, {args.runs} runs per task, default failure profile, "
          f"{args.size}x{args.size} views, {args.workers} workers\n")
    print("| planner | perception | runs | SR | PLWSR | TP | SER | mean rounds | wall s |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for planner, perception, r in rows:
        runs = f"{r['runs']}" if r["runs"] == r["expected"] else f"{r['runs']}/{r['expected']}"
        print(f"| {planner} | {LABELS[perception]} | {runs} | {_f(r['SR'])} | {_f(r['PLWSR'])} | {_f(r['TP'])} | "
              f"{_f(r['SER'])} | {r['rounds']:.1f} | {r['wall_s']:.0f} |")
    for planner, perception, r in rows:
        for e in r["errors"]:
            print(f"error in {planner} x {LABELS[perception]}: {e}")
    for perception, t in timing.items():
        if t.get("n"):
            print(f"\nmapper update ({LABELS[perception]}, four {args.size}x{args.size} views, heuristic, "
                  f"{t['episodes']} episodes in-process): median {t['median_ms']:.1f} ms, p95 {t['p95_ms']:.1f} ms, "
                  f"max {t['max_ms']:.1f} ms over {t['n']} updates (target <= 50 ms)")
        else:
            print(f"\nmapper update ({LABELS[perception]}): no measurement {t.get('error', '')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
