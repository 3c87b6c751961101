"""Learning from a demonstration: record the example scripts (``homiebot.builders.memory.scripts``) in the
embedded home, segment each by every method, score the boundaries against the scripts' subtask starts,
and retrieve segments for the scripts' paraphrased instructions from a memory of each method's segments.

    python benchmarks/bench_memory.py                  # 128 px views, 1 s tolerance
    python benchmarks/bench_memory.py --size 64 --tolerance 0.5
    python benchmarks/bench_memory.py --suite          # SR on the remembered suite with vs without the memory

Boundary precision, recall and F1 are pooled over the demonstrations (matches / predictions, matches /
true boundaries). A retrieval is right when the segment returned contains the last frame of the step
the instruction refers to (the step's outcome).

``--suite`` builds the remembered suite's memory (the four scripts recorded at ``--size`` px, gaze+speech
segments) and evaluates the heuristic planner on the ``remembered`` suite (256 px views, the default
failure profile) without the memory and with it (k = 3): SR per run, the mean over ``--runs`` runs with
the 95 % t-interval, overall and per what the demonstration shows.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from homiebot.bench import metrics
from homiebot.builders.memory.record import record_in_home
from homiebot.builders.memory.scripts import SCRIPTS
from homiebot.memory.demonstration import Demonstration
from homiebot.memory.segmentation import METHODS, Segment, boundaries, boundary_scores, segments_at
from homiebot.memory.store import DemonstrationMemory


def step_outcome_frame(demo: Demonstration, step: int) -> int:
    """Index of the last frame of the script's ``step`` (0-based)."""
    if step + 1 < len(demo.subtasks):
        nxt = demo.subtasks[step + 1].start
        return max(i for i, f in enumerate(demo.frames) if f.time < nxt)
    return len(demo.frames) - 1


def suite_sr(root: Path, runs: int, size: int, workers: int) -> None:
    """SR of the heuristic on the remembered suite without and with the memory built in ``root``."""
    from homiebot.bench.evaluate import evaluate
    from homiebot.bench.results import read_results
    from homiebot.builders.suites.memory import TASKS, build_memory
    from homiebot.config import RunConfig

    segments = build_memory(root / "memory", size)
    shows = {f"{script}_{variant}": what for script, variant, _, what in TASKS}
    print(f"remembered suite: {len(TASKS)} tasks, {runs} runs each; memory of {segments} segments ({size} px key frames)")
    print("| memory | SR % (all) | " + " | ".join(f"SR % ({w})" for w in dict.fromkeys(shows.values())) + " |")
    print("| --- | ---: |" + " ---: |" * len(set(shows.values())))
    for label, extra in (("without", {}), ("with (k = 3)", {"memory": {"root": str(root / "memory"), "home": "demo", "k": 3}})):
        cfg = RunConfig.model_validate({"output": {"images": False}, **extra})
        out = root / ("eval_" + label.split()[0])
        evaluate("remembered", cfg, out, runs=runs, workers=workers, progress=False)
        results = read_results(out / "results.jsonl").results
        cells = []
        for group in [None, *dict.fromkeys(shows.values())]:
            per_run = [[r for r in results if r.run == k and (group is None or shows[r.task_id] == group)]
                       for k in sorted({r.run for r in results})]
            cells.append(metrics.mean_interval([metrics.sr(rs) for rs in per_run]))
        print(f"| {label} | " + " | ".join(cells) + " |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=128, help="view side in pixels")
    parser.add_argument("--tolerance", type=float, default=1.0, help="seconds a boundary may be off")
    parser.add_argument("--out", help="keep the recordings and memories here (default: a temporary folder)")
    parser.add_argument("--suite", action="store_true", help="instead: SR on the remembered suite with vs without the memory")
    parser.add_argument("--runs", type=int, default=3, help="with --suite: runs per task (default: 3)")
    parser.add_argument("--workers", type=int, default=1, help="with --suite: worker processes (default: 1)")
    args = parser.parse_args(argv)
    if args.suite:
        with tempfile.TemporaryDirectory() as tmp:
            suite_sr(Path(args.out or tmp), args.runs, args.size, args.workers)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(args.out or tmp)
        demos = {name: record_in_home(s, root / "demos" / name, size=args.size) for name, s in SCRIPTS.items()}
        print(f"{len(demos)} demonstrations ({sum(len(d.frames) for d in demos.values())} frames, "
              f"{sum(len(d.true_boundaries()) for d in demos.values())} true boundaries), {args.size} px, tolerance {args.tolerance} s")
        queries = [(q, name, step) for name, s in SCRIPTS.items() for q, step in s.queries]
        print(f"{'method':<12} {'P':>5} {'R':>5} {'F1':>5} {'segs':>5} {'top-1':>6} {'top-3':>6}  ({len(queries)} instructions)")
        for method in METHODS:
            matched = predicted = true = 0
            segs: dict[str, list[Segment]] = {}
            for name, d in demos.items():
                found = boundaries(d, method, root / "demos" / name)
                s = boundary_scores(found, d.true_boundaries(), args.tolerance)
                matched, predicted, true = matched + s.matched, predicted + s.predicted, true + s.true
                segs[name] = segments_at(d, found)
            memory = DemonstrationMemory(root / "memory" / method.replace("+", "_"), "demo")
            memory.add([g for gs in segs.values() for g in gs])
            top1 = top3 = 0
            for query, name, step in queries:
                frame = step_outcome_frame(demos[name], step)
                right = [h.segment.demo == name and h.segment.first <= frame <= h.segment.last for h in memory.search(query, k=3)]
                top1 += right[0]
                top3 += any(right)
            p, r = matched / predicted if predicted else 0.0, matched / true if true else 0.0
            f1 = 2 * p * r / (p + r) if p + r else 0.0
            print(f"{method:<12} {p:5.2f} {r:5.2f} {f1:5.2f} {sum(len(g) for g in segs.values()):5d} "
                  f"{top1 / len(queries):6.2f} {top3 / len(queries):6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
