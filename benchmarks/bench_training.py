"""Training data and trained planners: bootstrap and export speed; planners on the test splits.

    python benchmarks/bench_training.py [--shard 0/6] [--workers 2] [--runs 5] [--trained] [--heads] [--dagger 2] [--boot DIR]

1. `homiebot bootstrap` (oracle, failure scales 0.5,1,2, one run per task) over a shard of home100's
   train split (SFT with --search-labels): episodes/s and exported rounds/s; then `homiebot export` alone:
   SFT and DPO records/s.
2. SR and TP on the test split, --runs runs per task, with 95 % confidence intervals (Student t over the
   per-run means: each run index is one pass over the test tasks), for the heuristic and the oracle,
   and with --trained for the `trained` planner fine-tuned on the bootstrapped SFT data (the GPU recipe
   on a tiny random Qwen2-VL, constrained decoding: a dry run of the pipeline, not a useful planner),
   and with --heads for the CPU recipe (`train heads`: frozen MiniLM + trained subtask scorer) on the same
   data, followed by --dagger rounds of `homiebot dagger` (the model drives train-split episodes of
   home100 and home100_persona, the oracle labels its rounds) and training again; every planner is
   evaluated on the test splits of home100 and of home100_persona (the persona rewordings).
   --boot DIR reuses an earlier `homiebot bootstrap --search-labels --out DIR` instead of bootstrapping a shard;
   --tasks N evaluates only the first N test tasks (a smaller slice, printed as such).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("MUJOCO_GL", "osmesa")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from homiebot.bench import metrics  # noqa: E402
from homiebot.bench.evaluate import evaluate  # noqa: E402
from homiebot.bench.metrics import mean_interval  # noqa: E402
from homiebot.bench.results import read_results  # noqa: E402
from homiebot.config import RunConfig  # noqa: E402
from homiebot.training.bootstrap import bootstrap  # noqa: E402
from homiebot.training.export import export  # noqa: E402


def compare(name: str, cfg: RunConfig, out: Path, runs: int, workers: int, tasks: int | None = None,
            suite_name: str = "home100") -> str:
    t0 = time.perf_counter()
    suite: str | Path = suite_name
    if tasks:  # a slice: the first N test tasks copied into their own suite folder
        import shutil

        from homiebot.bench.suite import load_suite, suite_path

        suite = out.parent / f"slice{tasks}_{suite_name}"
        if not suite.is_dir():
            suite.mkdir(parents=True)
            for t in load_suite(suite_name, "test")[:tasks]:
                shutil.copy(suite_path(suite_name) / f"{t.id}.yaml", suite)
    evaluate(str(suite), cfg, out, runs=runs, split="test" if not tasks else "all", workers=workers, progress=False)
    wall = time.perf_counter() - t0
    results = read_results(out / "results.jsonl").results
    per_run = [[r for r in results if r.run == k] for k in range(runs)]
    sr = [metrics.sr(rs) for rs in per_run]
    tp = [metrics.mean_tp(rs) for rs in per_run]
    return f"| {name} | {mean_interval(sr)} | {mean_interval(tp)} | {len(results)} | {wall:.0f} s |"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shard", default="0/6", help="part of the train split to bootstrap (default 0/6: 15 tasks)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--trained", action="store_true", help="also train and evaluate the tiny-model trained planner")
    ap.add_argument("--heads", action="store_true", help="also train and evaluate the CPU recipe (MiniLM + heads)")
    ap.add_argument("--epochs", type=int, default=20, help="--heads: training epochs (default 20)")
    ap.add_argument("--dagger", type=int, default=2, help="--heads: DAgger rounds after the first training (default 2)")
    ap.add_argument("--seed", type=int, default=0, help="--heads: training seed (default 0)")
    ap.add_argument("--boot", help="an existing bootstrap folder to use instead of bootstrapping --shard")
    ap.add_argument("--tasks", type=int, help="evaluate only the first N test tasks (a smaller slice)")
    ap.add_argument("--only-heads", action="store_true", help="skip the heuristic and oracle rows")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cfg = RunConfig.model_validate({"planner": {"name": "oracle"}})
        if args.boot:
            return _heads_only(Path(args.boot), root, args)
        t0 = time.perf_counter()
        s = bootstrap(cfg, root / "boot", ["home100"], [0.5, 1, 2], runs=1, workers=args.workers, shard=args.shard, progress=False,
                      search=True)
        wall = time.perf_counter() - t0
        episodes = sum(r["runs"] for r in s["runs"].values())
        sft, dpo = s["exports"]["sft"], s["exports"]["dpo"]
        print(f"bootstrap: {episodes} episodes in {wall:.1f} s ({episodes / wall:.2f} episodes/s, {args.workers} workers), "
              f"{sft['records']} SFT + {dpo['records']} DPO records ({(sft['records'] + dpo['records']) / wall:.1f} records/s end to end)")
        print(f"  SFT counts {sft['counts']}\n  DPO counts {dpo['counts']}")
        for fmt in ("sft", "dpo"):
            t0 = time.perf_counter()
            st = export([root / "boot" / "runs"], fmt, root / f"again_{fmt}")
            wall = time.perf_counter() - t0
            print(f"export {fmt}: {st['records']} records in {wall:.1f} s ({st['records'] / wall:.1f} records/s)")
        print(f"\ntest split of home100 and home100_persona, {args.runs} runs per task, default failure profile; "
              "95 % t-intervals over the runs\n")
        print("| planner, suite | SR | TP | episodes | wall |\n| --- | ---: | ---: | ---: | ---: |")
        _baselines(root, args)
        if args.trained:
            from homiebot.training.train import train

            train("sft", root / "boot" / "sft", "tiny:qwen2_vl", root / "model", steps=20, lora_r=8, lora_alpha=16)
            params = {"path": str(root / "model"), "constrained": True, "max_new_tokens": 16}
            cfg = RunConfig.model_validate({"planner": {"name": "trained", "params": params}})
            print(compare("trained (tiny Qwen2-VL, 20 SFT steps)", cfg, root / "eval_trained", args.runs, args.workers), flush=True)
        if args.heads:
            print("\n".join(_heads_rows(root / "boot", root, args)), flush=True)
    return 0


def _heads_model(boot: Path, root: Path, args: argparse.Namespace) -> Path:
    """train heads on boot/sft, then --dagger rounds of (the model drives, the oracle labels, train again)."""
    from homiebot.training.dagger import dagger
    from homiebot.training.heads import train_heads

    data, model = boot / "sft", root / "heads0"
    for k in range(args.dagger + 1):
        m = train_heads(data, model, epochs=args.epochs, seed=args.seed)
        print(f"train heads ({model.name}): {m['records']} records, {m['texts_embedded']} texts embedded in {m['embed_s']} s, "
              f"{m['epochs']} epochs in {m['train_s']} s, loss {m['losses'][0]} -> {m['losses'][-1]}", flush=True)
        if k == args.dagger:
            break
        t0 = time.perf_counter()
        st = dagger(model, data, root / f"dag{k + 1}", ["home100", "home100_persona"], [1.5], beta=0.3, seed=k + 1, progress=False)
        print(f"dagger round {k + 1}: {st['dagger_episodes']} episodes, {st['dagger_records']} labelled rounds in "
              f"{time.perf_counter() - t0:.0f} s", flush=True)
        data, model = root / f"dag{k + 1}", root / f"heads{k + 1}"
    return model


def _heads_rows(boot: Path, root: Path, args: argparse.Namespace) -> list[str]:
    model = _heads_model(boot, root, args)
    cfg = RunConfig.model_validate({"planner": {"name": "trained", "params": {"path": str(model)}}})
    name = f"trained, CPU recipe (MiniLM + scorer, {args.dagger} DAgger rounds)"
    return [compare(f"{name}, {suite}", cfg, root / f"eval_heads_{suite}", args.runs, args.workers, args.tasks, suite)
            for suite in ("home100", "home100_persona")]


def _baselines(root: Path, args: argparse.Namespace) -> None:
    for suite in ("home100", "home100_persona"):
        for name in ("heuristic", "oracle"):
            print(compare(f"{name}, {suite}", RunConfig.model_validate({"planner": {"name": name}}), root / f"eval_{name}_{suite}",
                          args.runs, args.workers, args.tasks, suite), flush=True)


def _heads_only(boot: Path, root: Path, args: argparse.Namespace) -> int:
    slice_note = f"first {args.tasks} test tasks (a slice)" if args.tasks else "test split"
    print(f"{slice_note} of home100 and home100_persona, {args.runs} runs per task, default failure profile; "
          "95 % t-intervals over the runs\n")
    print("| planner, suite | SR | TP | episodes | wall |\n| --- | ---: | ---: | ---: | ---: |")
    if not args.only_heads:
        _baselines(root, args)
    print("\n".join(_heads_rows(boot, root, args)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
