"""Cost of the live view: the demo episode's wall time with the view off, logging to an .rrd file,
and streaming to a served rerun web viewer; and the time the loop itself spends handing data to the
viewer per round (the viewer's thread does the encoding and sending). The live view sees rounds,
not control steps, so it adds nothing per control step. Video off.

Target: the episode wall time grows by <= 10 % with the view on.

    python benchmarks/bench_viz.py [--repeats 3]
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
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from homiebot.config import RunConfig  # noqa: E402
from homiebot.core.tasks import load_task  # noqa: E402
from homiebot.runtime import run_episode  # noqa: E402
from homiebot.viz.live import LiveView  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


class Timed:
    """Wraps an observer and adds up the time the loop spends in it."""

    def __init__(self, inner: LiveView) -> None:
        self.inner, self.spent, self.calls = inner, 0.0, 0

    def __getattr__(self, name: str):
        method = getattr(self.inner, name)

        def call(*args):
            t0 = time.perf_counter()
            try:
                return method(*args)
            finally:
                self.spent += time.perf_counter() - t0
                self.calls += name in ("observation", "step")
        return call


def episode(mode: str, tmp: Path) -> tuple[float, float, int, int]:
    """(episode wall seconds, loop seconds spent on the view, rounds, frames dropped)."""
    cfg = RunConfig.model_validate({"planner": {"name": "oracle"}, "skill_profile": "default", "seed": 0})
    task = load_task(ROOT / "config" / "tasks" / "demo.yaml")
    view = None
    if mode == "rrd":
        view = LiveView(save=tmp / f"{time.monotonic_ns()}.rrd")
    elif mode == "served":
        view = LiveView(serve=True, save=None)
    timed = Timed(view) if view else None
    try:
        record, _ = run_episode(cfg, task, None, observer=timed)  # type: ignore[arg-type]
    finally:
        if view is not None:
            view.close()
    return record.wall_time, timed.spent if timed else 0.0, len(record.steps), view.queue.dropped if view else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    modes = ("off", "rrd", "served")
    results: dict[str, list[tuple[float, float, int, int]]] = {m: [] for m in modes}
    with tempfile.TemporaryDirectory() as tmp:
        episode("off", Path(tmp))  # warm-up: imports, first render context
        for _ in range(args.repeats):
            for m in modes:  # interleaved, so load on the machine hits every mode alike
                results[m].append(episode(m, Path(tmp)))
    base = statistics.median(r[0] for r in results["off"])
    print(f"demo episode, oracle planner, {args.repeats} runs per mode (median), cores: {os.cpu_count()}")
    print("| view | wall time | vs off | loop time on the view per round | frames dropped |")
    print("|---|---:|---:|---:|---:|")
    for m in modes:
        wall = statistics.median(r[0] for r in results[m])
        per_round = statistics.median(r[1] / max(1, r[2]) for r in results[m]) * 1000
        dropped = sum(r[3] for r in results[m])
        print(f"| {m} | {wall:.2f} s | {100 * (wall / base - 1):+.1f} % | {per_round:.2f} ms | {dropped} |")


if __name__ == "__main__":
    main()
