"""Planner latency per round on the demo task, for the local backends; or SR and TP with 95 % intervals
of finished evaluations.

    python benchmarks/bench_planners.py [--episodes 5] [--hf-model PATH] [--openai-base-url URL --openai-model NAME]
    python benchmarks/bench_planners.py --intervals EVAL_FOLDER...

Prints median and p95 of the planner phase of each round (the agent's ``timings.plan``), and the
first-round time separately (model loading happens there); the ``trained`` planner runs with its
shipped weights. ``--intervals`` reads the ``results.jsonl`` of ``homiebot eval`` folders and prints,
per folder, SR and TP as the mean over runs with the 95 % Student-t interval of the per-run figures.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

os.environ.setdefault("MUJOCO_GL", "osmesa")

from homiebot.bench import metrics  # noqa: E402
from homiebot.bench.results import read_results  # noqa: E402
from homiebot.config import RunConfig  # noqa: E402
from homiebot.core.tasks import load_task  # noqa: E402
from homiebot.runtime import run_episode  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEMO_REPLAY = ['{"analysis": "", "subtask": ["Go to", "fridge"], "model": "NoMaD"}', '{"analysis": "", "subtask": ["End"], "model": null}']


def measure(name: str, planner: dict, episodes: int) -> None:
    task = load_task(ROOT / "config" / "tasks" / "demo.yaml")
    firsts, rest = [], []
    for seed in range(episodes):
        cfg = RunConfig.model_validate({"planner": planner, "seed": seed, "output": {"images": False}})
        record, _ = run_episode(cfg, task)
        plans = [s.timings.plan * 1000 for s in record.steps]
        firsts.append(plans[0])
        rest += plans[1:]
    rest.sort()
    p95 = rest[min(len(rest) - 1, int(0.95 * len(rest)))] if rest else float("nan")
    print(f"| {name:<28} | {statistics.median(firsts):10.1f} | {statistics.median(rest) if rest else float('nan'):10.2f} "
          f"| {p95:8.2f} | {len(rest):6d} |")


def intervals(folders: list[str]) -> None:
    """SR and TP of each evaluation folder: mean over runs ± the 95 % t-interval half-width."""
    print("| evaluation | planner | episodes | runs | SR % | TP % |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for folder in folders:
        results = read_results(Path(folder) / "results.jsonl").results
        runs = sorted({r.run for r in results})
        per_run = [[r for r in results if r.run == k] for k in runs]
        sr = [metrics.sr(rs) for rs in per_run]
        tp = [metrics.mean_tp(rs) for rs in per_run]
        planner = results[0].planner if results else "-"
        print(f"| {Path(folder).name} | {planner} | {len(results)} | {len(runs)} | {metrics.mean_interval(sr)} | {metrics.mean_interval(tp)} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--episodes", type=int, default=5)
    ap.add_argument("--hf-model", help="local transformers VLM folder to include")
    ap.add_argument("--openai-base-url", help="OpenAI-compatible endpoint to include, e.g. http://127.0.0.1:8000/v1")
    ap.add_argument("--openai-model", default="local-model")
    ap.add_argument("--intervals", nargs="+", metavar="EVAL_FOLDER", help="only print SR and TP with 95 %% intervals of these folders")
    args = ap.parse_args()
    if args.intervals:
        intervals(args.intervals)
        return 0
    print(f"| {'planner':<28} | {'1st round':>10} | {'median ms':>10} | {'p95 ms':>8} | {'rounds':>6} |")
    print(f"|{'-' * 30}|{'-' * 12}|{'-' * 12}|{'-' * 10}|{'-' * 8}|")
    measure("oracle", {"name": "oracle"}, args.episodes)
    measure("heuristic (MiniLM grounding)", {"name": "heuristic"}, args.episodes)
    measure("heuristic (no embeddings)", {"name": "heuristic", "params": {"embeddings": False}}, args.episodes)
    measure("replay", {"name": "replay", "params": {"outputs": DEMO_REPLAY}}, args.episodes)
    measure("trained (shipped weights)", {"name": "trained"}, args.episodes)
    if args.hf_model:
        measure("hf", {"name": "hf", "params": {"model_path": args.hf_model, "max_new_tokens": 64}}, args.episodes)
    if args.openai_base_url:
        measure("openai", {"name": "openai", "params": {"base_url": args.openai_base_url, "model": args.openai_model}}, args.episodes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
