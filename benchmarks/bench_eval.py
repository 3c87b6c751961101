"""Whole-suite evaluation speed: home100 x 3 runs, oracle planner, default failure profile.

    python benchmarks/bench_eval.py [--workers 2] [--runs 3] [--suite home100]

Target on a 2-core machine with --workers 2: <= 10 minutes. Prints wall time, episodes per second,
peak resident memory per worker and the resulting Table 2 row.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("MUJOCO_GL", "osmesa")

from homiebot.bench.evaluate import evaluate  # noqa: E402
from homiebot.config import RunConfig  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", default="home100")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--profile", default="default")
    args = ap.parse_args()
    cfg = RunConfig.model_validate({"planner": {"name": "oracle"}, "skill_profile": args.profile})
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        s = evaluate(args.suite, cfg, Path(tmp) / "eval", runs=args.runs, workers=args.workers)
        wall = time.perf_counter() - t0
    print(f"\nsuite {args.suite}: {s['runs']} episodes ({s['tasks']} tasks x {args.runs} runs), oracle, profile {args.profile}, "
          f"{args.workers} workers, 256x256 RGB+depth+segmentation views")
    print(f"wall time {wall:.1f} s ({wall / 60:.2f} min; target <= 10 min), {s['runs'] / wall:.2f} episodes/s")
    print(f"peak RSS per worker: {', '.join(f'{m:.0f} MB' for m in s['peak_rss_mb_per_worker'])}")
    print(f"SR {s['SR']:.2f}  PLWSR {s['PLWSR']:.2f}  TP {s['TP']:.2f}  SRR {s['SRR']:.2f}  SER {s['SER']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
