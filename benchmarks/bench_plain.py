"""Instructions as people say them: SR and TP of the heuristic planner and the oracle on plain200 (written by
someone who saw only the homes and the goals, never a planner; frozen, never tuned on) and on
home100_persona, with 95 % t-intervals over the runs.

    python benchmarks/bench_plain.py --runs 3 --workers 2 --out evals/plain     # runs the evaluations
    python benchmarks/bench_plain.py --out evals/plain --summary-only           # tables from finished folders

Each evaluation goes to OUT/<suite>_<planner> and resumes there (``homiebot eval --resume``), so a stopped
campaign continues where it stopped. Per-phenomenon SR comes from the tags in plain200's task ids.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from homiebot.bench import metrics
from homiebot.bench.metrics import mean_interval
from homiebot.bench.results import read_results

SUITES = ("plain200", "home100_persona")
PLANNERS = ("heuristic", "oracle")


def run(suite: str, planner: str, out: Path, runs: int, workers: int) -> None:
    folder = out / f"{suite}_{planner}"
    cmd = [sys.executable, "-m", "homiebot.cli", "eval", "--suite", suite, "--planner", planner, "--runs", str(runs),
           "--workers", str(workers), "--out", str(folder)] + (["--resume"] if (folder / "results.jsonl").is_file() else [])
    subprocess.run(cmd, check=True, env={**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "osmesa")})


def row(folder: Path) -> tuple[str, str, int, int]:
    """SR and TP with intervals over the runs, the number of runs and of episodes."""
    results = read_results(folder / "results.jsonl").results
    runs = sorted({r.run for r in results})
    per_run = [[r for r in results if r.run == k] for k in runs]
    return (mean_interval([metrics.sr(rs) for rs in per_run]), mean_interval([metrics.mean_tp(rs) for rs in per_run]), len(runs),
            len(results))


def phenomena(folder: Path) -> dict[str, tuple[int, int]]:
    """Successes and episodes per phenomenon tag (the part of a plain200 task id after its home)."""
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in read_results(folder / "results.jsonl").results:
        for tag in r.task_id.split("_", 2)[-1].split("-"):
            out[tag][0] += metrics.is_success(r)
            out[tag][1] += 1
    return {k: (v[0], v[1]) for k, v in sorted(out.items())}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", default="evals/plain")
    ap.add_argument("--summary-only", action="store_true", help="only print the tables of the finished folders")
    args = ap.parse_args()
    out = Path(args.out)
    if not args.summary_only:
        for suite in SUITES:
            for planner in PLANNERS:
                run(suite, planner, out, args.runs, args.workers)
    print("| suite | planner | SR | TP | runs | episodes |\n|---|---|---:|---:|---:|---:|")
    for suite in SUITES:
        for planner in PLANNERS:
            folder = out / f"{suite}_{planner}"
            if (folder / "results.jsonl").is_file():
                sr, tp, runs, episodes = row(folder)
                print(f"| {suite} | {planner} | {sr} | {tp} | {runs} | {episodes} |")
    heuristic = out / "plain200_heuristic"
    if (heuristic / "results.jsonl").is_file():
        print("\nplain200, heuristic, SR per phenomenon:\n\n| phenomenon | SR | episodes |\n|---|---:|---:|")
        for tag, (ok, n) in phenomena(heuristic).items():
            print(f"| {tag} | {100 * ok / n:.1f} | {n} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
