"""SmolLM2-135M-Instruct zero-shot as the planner, against the heuristic, on home100's test split.

    python benchmarks/bench_llm.py --tasks 10 --runs 2 --max-rounds 10            # all variants
    python benchmarks/bench_llm.py --tasks 5 --runs 1 --variants heuristic,llama_grammar

Variants (the model is the GGUF file of the ``llm`` extra; the four views are described to it in words):

* ``heuristic``: the default rule-based planner, for reference;
* ``llama_grammar``: llama.cpp's server with the grammar of one decision, targets among the names perception
  reported (``config/llm_local.yaml``: every answer parses);
* ``llama_free``: the same server, no constraint (the model writes what it likes; F1 when unusable);
* ``hf_free``: transformers in-process on the same file (dequantized to float32), no constraint;
* ``hf_constrained``: transformers with choice-constrained decoding (actions and models chosen by likelihood).

Prints, per variant, SR and TP (EMMOE metrics, %) and the F1 rate (format errors per round, %), each with
its 95 % t-interval over the runs; seconds per planner call with its 95 % interval over the calls and the
median; and the rounds played. Tasks are the
first ``--tasks`` of the test split (sorted by id); seeds depend only on the task and the run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import Counter
from typing import Any

os.environ.setdefault("MUJOCO_GL", "osmesa")
os.environ.setdefault("PYOPENGL_PLATFORM", "osmesa")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from homiebot.bench import metrics  # noqa: E402
from homiebot.bench.evaluate import job_seed  # noqa: E402
from homiebot.bench.metrics import mean_interval  # noqa: E402
from homiebot.bench.results import RunResult, summarise_steps  # noqa: E402
from homiebot.bench.suite import load_suite  # noqa: E402
from homiebot.config import RunConfig  # noqa: E402
from homiebot.core.contracts import EpisodeRecord  # noqa: E402
from homiebot.core.tasks import Task  # noqa: E402
from homiebot.llm_server import LocalServer, smollm2_path  # noqa: E402
from homiebot.planners.base import Planner  # noqa: E402
from homiebot.runtime import build_planner, run_episode  # noqa: E402

VARIANTS = ("heuristic", "llama_grammar", "llama_free", "hf_free", "hf_constrained")
OPENAI = {"model": "smollm2", "api_key_env": None, "vision": False, "temperature": 0.0, "max_tokens": 192, "timeout": 300,
          "retries": 1}


def result_of(task: Task, run: int, seed: int, record: EpisodeRecord) -> RunResult:
    return RunResult(task_id=task.id, run=run, seed=seed, split=task.split, attributes=list(task.attributes),
                     keypaths=task.keypaths, aliases=task.aliases, expert_length=task.expert_length,
                     steps=summarise_steps(record), ended=record.ended, termination=record.termination,
                     goal_satisfied=record.goal_satisfied, path_length=record.path_length)


def planner_spec(variant: str, base_url: str | None, max_new_tokens: int) -> dict[str, Any]:
    if variant == "heuristic":
        return {"name": "heuristic"}
    if variant.startswith("llama"):
        mode = "grammar" if variant == "llama_grammar" else "none"
        return {"name": "openai", "params": {**OPENAI, "base_url": base_url, "response_format": mode,
                                             "constrain_names": mode == "grammar"}}
    return {"name": "hf", "params": {"model_path": str(smollm2_path()), "output_format": "json", "max_new_tokens": max_new_tokens,
                                     "constrained": variant == "hf_constrained"}}


def measure(variant: str, tasks: list[Task], runs: int, max_rounds: int, base_url: str | None,
            max_new_tokens: int) -> tuple[list[list[RunResult]], list[list[float]]]:
    """Per-run results, and per run the seconds of every planner call."""
    spec = planner_spec(variant, base_url, max_new_tokens)
    cfg = RunConfig.model_validate({"planner": spec, "max_rounds": max_rounds, "output": {"images": False}})
    shared: Planner | None = build_planner(cfg) if variant.startswith("hf") else None  # load the weights once
    per_run: list[list[RunResult]] = []
    seconds: list[list[float]] = []
    try:
        for run in range(runs):
            results = []
            seconds.append([])
            for task in tasks:
                seed = job_seed(0, task.id, run)
                record, _ = run_episode(cfg.model_copy(update={"seed": seed}), task, planner=shared)
                results.append(result_of(task, run, seed, record))
                seconds[-1] += [s.timings.plan for s in record.steps]
                print(f"  {variant} run {run} {task.id}: {record.termination}, goal {record.goal_satisfied}, "
                      f"{len(record.steps)} rounds, F1 {sum(s.feedback.code is not None and s.feedback.code.value == 'F1' for s in record.steps)}",
                      file=sys.stderr, flush=True)
            per_run.append(results)
    finally:
        if shared is not None:
            shared.close()
    return per_run, seconds


def f1_rate(results: list[RunResult]) -> float:
    codes = Counter(s.code for r in results for s in r.steps)
    rounds = sum(len(r.steps) for r in results)
    return 100.0 * codes.get("F1", 0) / rounds if rounds else 0.0


def seconds_interval(values: list[float]) -> str:
    """Mean seconds per planner call with the 95 % interval over the calls, then the median (the first call of
    a run loads the model or fills a cache, so the mean and the median differ)."""
    if not values:
        return "-"
    if len(values) < 2:
        return f"{values[0]:.2f}"
    half = metrics.T95.get(len(values) - 1, 1.96) * statistics.stdev(values) / len(values) ** 0.5
    return f"{statistics.fmean(values):.2f} ± {half:.2f} (median {statistics.median(values):.2f})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", type=int, default=10, help="the first N tasks of the test split (default 10)")
    ap.add_argument("--runs", type=int, default=2, help="runs per task (default 2)")
    ap.add_argument("--max-rounds", type=int, default=10, help="round limit per episode (default 10)")
    ap.add_argument("--variants", default=",".join(VARIANTS), help=f"comma-separated, among {', '.join(VARIANTS)}")
    ap.add_argument("--max-new-tokens", type=int, default=96, help="transformers' generation budget per round (default 96)")
    ap.add_argument("--threads", type=int, default=2, help="CPU threads for llama.cpp and torch (default 2)")
    args = ap.parse_args()
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown or args.tasks < 1 or args.runs < 1 or args.max_rounds < 1:
        ap.error(f"unknown variants {unknown}" if unknown else "--tasks, --runs and --max-rounds must be >= 1")
    tasks = load_suite("home100", split="test")[: args.tasks]
    try:
        import torch

        torch.set_num_threads(args.threads)
    except ImportError:
        pass
    server = LocalServer(threads=args.threads, ready_timeout=300) if any(v.startswith("llama") for v in variants) else None
    rows = []
    started = time.perf_counter()
    try:
        if server is not None:
            server.start()
        for variant in variants:
            per_run, seconds = measure(variant, tasks, args.runs, args.max_rounds, server.base_url if server else None,
                                       args.max_new_tokens)
            per_round = [x for s in seconds for x in s]
            rows.append((variant, mean_interval([metrics.sr(r) for r in per_run]), mean_interval([metrics.mean_tp(r) for r in per_run]),
                         mean_interval([f1_rate(r) for r in per_run]), seconds_interval(per_round), sum(map(len, seconds))))
            print("  done: | " + " | ".join(map(str, rows[-1])) + " |", file=sys.stderr, flush=True)  # a row before the table
    finally:
        if server is not None:
            server.stop()
    print(f"home100 test split, first {len(tasks)} tasks x {args.runs} runs, max {args.max_rounds} rounds, "
          f"{args.threads} threads ({time.perf_counter() - started:.0f} s)\n")
    print("| planner | SR % | TP % | F1 % of rounds | s per round | rounds |\n|---|---:|---:|---:|---:|---:|")
    for variant, sr, tp, f1, sec, rounds in rows:
        print(f"| {variant} | {sr} | {tp} | {f1} | {sec} | {rounds} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
