"""Data generation throughput: `homiebot dagger` with one and with several workers, and `homiebot eval`
of the same trained planner for reference, on the same train tasks.

    python benchmarks/bench_dagger.py [--tasks 80] [--workers 2] [--boot-tasks 6] [--keep DIR]

A small CPU-recipe model is made first (oracle bootstrap over --boot-tasks train tasks of home100, then
`train heads` for a few epochs); its quality does not matter here, only what an episode costs. Then the
same --tasks train tasks run as a DAgger round with 1 worker and with --workers workers (each into a new
folder; the two data files must be equal), and as an evaluation with 1 worker (its episodes are longer:
no round executes the oracle's label, so compare rounds/s).
Target: dagger episodes/s with 2 workers >= 1.8 x one worker (on a machine with at least 2 free cores).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("MUJOCO_GL", "osmesa")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from homiebot.bench.suite import load_suite, suite_path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def cli(*args: str) -> float:
    """Run the homiebot CLI; its wall time in seconds (exits on failure with its stderr)."""
    t = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "homiebot.cli", *args], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    if done.returncode != 0:
        sys.exit(f"homiebot {' '.join(args[:2])} failed:\n{done.stderr[-3000:]}")
    return time.perf_counter() - t


def suite_of(folder: Path, ids: list[str]) -> Path:
    folder.mkdir(parents=True)
    for tid in ids:
        shutil.copy(suite_path("home100") / f"{tid}.yaml", folder)
    return folder


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=int, default=80, help="train tasks per DAgger round (default: 80)")
    ap.add_argument("--workers", type=int, default=2, help="workers of the parallel round (default: 2)")
    ap.add_argument("--boot-tasks", type=int, default=6, help="train tasks the small model is bootstrapped from (default: 6)")
    ap.add_argument("--keep", help="keep the folders here instead of a temporary folder")
    args = ap.parse_args()

    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="homiebot-bench-dagger-"))
    train = [t.id for t in load_suite("home100", "train")]
    boot_suite = suite_of(root / "boot_suite", train[: args.boot_tasks])
    suite = suite_of(root / "suite", train[args.boot_tasks: args.boot_tasks + args.tasks])
    print(f"homiebot dagger benchmark: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}, {args.tasks} train tasks, "
          f"folders in {root}")
    t = cli("bootstrap", "--out", str(root / "boot"), "--suites", str(boot_suite), "--failure-scales", "1", "--runs", "1", "--seed", "5")
    t += cli("train", "heads", "--data", str(root / "boot" / "sft"), "--out", str(root / "model"), "--epochs", "4", "--seed", "1")
    print(f"small model made in {t:.0f} s")

    common = ["--model", str(root / "model"), "--data", str(root / "boot" / "sft"), "--suites", str(suite), "--seed", "3"]
    one = cli("dagger", *common, "--out", str(root / "dag1"), "--workers", "1")
    many = cli("dagger", *common, "--out", str(root / "dagN"), "--workers", str(args.workers))
    same = (root / "dag1" / "data.jsonl").read_bytes() == (root / "dagN" / "data.jsonl").read_bytes()
    ev = cli("eval", "--suite", str(suite), "--planner", "trained", "--config", str(write_trained_config(root)), "--runs", "1",
             "--out", str(root / "eval"), "--workers", "1")
    n = args.tasks
    dagger_rounds = json.loads((root / "dag1" / "stats.json").read_text())["dagger_rounds"]
    eval_rounds = sum(len(json.loads(line)["steps"]) for line in (root / "eval" / "results.jsonl").read_text().splitlines())
    print(f"| {'run':<34} | {'episodes/s':>10} | {'rounds/s':>8} | {'wall s':>7} |")
    print(f"|{'-' * 36}|{'-' * 12}|{'-' * 10}|{'-' * 9}|")
    print(f"| {'dagger, 1 worker':<34} | {n / one:10.2f} | {dagger_rounds / one:8.1f} | {one:7.1f} |")
    print(f"| {f'dagger, {args.workers} workers':<34} | {n / many:10.2f} | {dagger_rounds / many:8.1f} | {many:7.1f} |")
    print(f"| {'eval of the learner, 1 worker':<34} | {n / ev:10.2f} | {eval_rounds / ev:8.1f} | {ev:7.1f} |")
    print(f"\ndagger speed-up with {args.workers} workers: {one / many:.2f} x (target >= 1.8 with 2 workers); "
          f"data equal to the 1-worker round: {same}")
    print("(wall times include each command's start-up: Python, the MiniLM encoder, the first world)")
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    return 0 if same else 1


def write_trained_config(root: Path) -> Path:
    path = root / "trained.yaml"
    path.write_text(f"planner: {{name: trained, params: {{path: {root / 'model'}}}}}\n")
    return path


if __name__ == "__main__":
    sys.exit(main())
