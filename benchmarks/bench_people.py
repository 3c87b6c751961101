"""People in the loop: the instruction reader on the frozen free-form file, (with --suites) the heuristic
planner with a simulated user on the ambiguity suite and on persona rewordings of home100, and (with
--matrix) the heuristic and the oracle with and without a user on the ambiguity suite's test half.

    python benchmarks/bench_people.py                        # reader accuracy on the frozen file
    python benchmarks/bench_people.py --suites               # + ambiguity and persona suites, 64 px views (a few minutes)
    python benchmarks/bench_people.py --suites --runs 3      # three runs (seeds 0-2) of each ambiguity task
    python benchmarks/bench_people.py --suites --size 256    # the same with the default simulator's 256 px views
    python benchmarks/bench_people.py --matrix --runs 3 --size 256   # test half: heuristic and oracle, with and without a user
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

import homiebot.bench
from homiebot.people.scene_facts import SceneFacts
from homiebot.planners.goal_grounding import SceneGrounder, Unsure, same_goal
from homiebot.planners.understanding import understand

FILE = Path(homiebot.bench.__file__).parent / "data" / "freeform_instructions.yaml"


def reader_accuracy(verbose: bool = False) -> dict[str, float]:
    """Understood (goal equal to the written one), unsure (asked or reported) and silently misread."""
    from homiebot.core.tasks import scene_source

    source = scene_source("embedded_home")
    assert source is not None
    data = yaml.safe_load(FILE.read_text())
    right = unsure = wrong = 0
    for g in data["goals"]:
        from homiebot.core.tasks import Task

        scene = source.to_json(source.load(Task(instruction="-", scene_seed=g["scene_seed"])))
        facts = SceneFacts.from_scene(scene)
        grounder = SceneGrounder(facts)
        for text in g["phrasings"]:
            u = understand(text)
            try:
                if u.unsure:
                    raise Unsure("; ".join(u.unsure))
                got = grounder.conditions(u.plan)
            except Unsure as why:
                unsure += 1
                if verbose:
                    print(f"UNSURE {g['id']}: {text!r}: {why}")
                continue
            if same_goal(got, g["goal"], facts):
                right += 1
            else:
                wrong += 1
                if verbose:
                    print(f"WRONG  {g['id']}: {text!r}: read {u.statement()} -> {got}")
    n = right + unsure + wrong
    return {"instructions": n, "accuracy_%": round(100 * right / n, 1), "unsure_%": round(100 * unsure / n, 1),
            "silent_misreadings": wrong}


def suite_results(suite: str, split: str, user: str, size: int = 64, runs: int = 1, planner: str = "heuristic") -> list:
    """A planner (the heuristic by default) on a suite (``runs`` runs per task, seeds 0, 1, ...), with the
    given user and ``size`` px square views: one RunResult per (task, run)."""
    from homiebot.bench.results import RunResult, summarise_steps
    from homiebot.bench.suite import load_suite
    from homiebot.config import RunConfig
    from homiebot.planners.base import PlannerConfigError
    from homiebot.runtime import run_episode

    results = []
    for run in range(runs):
        cfg = RunConfig.model_validate({"user": user, "seed": run, "planner": {"name": planner},
                                        "world": {"name": "embedded_home", "params": {"width": size, "height": size}}})
        for t in load_suite(suite, split):
            try:
                rec, _ = run_episode(cfg, t)
                steps, termination = summarise_steps(rec), rec.termination
            except PlannerConfigError:
                steps, termination = [], "refused"
            results.append(RunResult(task_id=t.id, run=run, seed=run, keypaths=t.keypaths, aliases=t.aliases, steps=steps,
                                     min_questions=t.min_questions, termination=termination))
    return results


def suite_figures(suite: str, split: str, user: str, size: int = 64, runs: int = 1) -> dict[str, float | int]:
    """:func:`suite_results` summarised (SR, ...; ARS and QR over ambiguous tasks, clear tasks apart)."""
    from homiebot.bench import metrics

    return metrics.summary(suite_results(suite, split, user, size, runs))


def by_family(results: list) -> dict[str, str]:
    """ARS (or, for clear tasks, SR and unnecessary questions) per task family (the part of the id after the number)."""
    from homiebot.bench import metrics

    groups: dict[str, list] = {}
    for r in results:
        groups.setdefault(r.task_id.split("_", 1)[1], []).append(r)
    out = {}
    for family, rs in groups.items():
        s = metrics.summary(rs)
        out[family] = (f"{len(rs)} runs, SR {s['SR']:.1f}, ARS {s['ARS']:.1f}, QR {s['QR']:.2f}" if "ARS" in s else
                       f"{len(rs)} runs, SR {s['clear SR']:.1f}, unnecessary questions {s['unnecessary questions']}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--suites", action="store_true")
    ap.add_argument("--runs", type=int, default=1, help="runs per ambiguity task, seeds 0, 1, ... (default 1)")
    ap.add_argument("--size", type=int, default=64, help="view width and height in pixels (default 64; the simulator's default is 256)")
    ap.add_argument("--matrix", action="store_true", help="the ambiguity suite's test half for the heuristic and the oracle, each "
                                                          "with the simulated user and with nobody to ask (--runs runs)")
    args = ap.parse_args(argv)
    if args.runs < 1:
        ap.error(f"--runs must be at least 1, not {args.runs}")
    if not 16 <= args.size <= 1024:
        ap.error(f"--size must be between 16 and 1024 pixels, not {args.size}")
    print("reader on the frozen free-form file:", reader_accuracy(args.verbose))
    if args.suites:
        print(f"views {args.size}x{args.size} px")
        from homiebot.bench import metrics

        for split, note in (("dev", " (tuned on)"), ("test", "")):
            results = suite_results("ambiguity", split, "simulated", args.size, args.runs)
            print(f"ambiguity {split}{note}, simulated user, {args.runs} run(s):", metrics.summary(results))
            for family, text in by_family(results).items():
                print(f"  {family}: {text}")
        persona = suite_figures("home100_persona", "all", "none", args.size)
        original = suite_figures("home100", "all", "none", args.size)
        print("home100_persona:", persona)
        print("home100:", original)
        print(f"persona SR / original SR: {persona['SR'] / original['SR'] if original['SR'] else 0.0:.2f}")
    if args.matrix:
        print(f"ambiguity test half, {args.runs} run(s), views {args.size}x{args.size} px")
        for planner in ("heuristic", "oracle"):
            for user in ("simulated", "none"):
                print(f"  {planner}, user {user}:", matrix_line(suite_results("ambiguity", "test", user, args.size, args.runs, planner),
                                                               args.runs))
    return 0


def matrix_line(results: list, runs: int) -> str:
    """SR, ARS and QR (over ambiguous tasks) with 95 % intervals over runs, clear-task SR and unnecessary questions."""
    from homiebot.bench import metrics

    per_run = [metrics.summary([r for r in results if r.run == run]) for run in range(runs)]

    def figure(key: str) -> str:
        return metrics.mean_interval([float(s[key]) for s in per_run])

    whole = metrics.summary(results)
    return (f"SR {figure('ambiguous SR')}, ARS {figure('ARS')}, QR {whole['QR']:.2f}; clear SR {whole['clear SR']:.1f} "
            f"({whole['clear']} runs), unnecessary questions {whole['unnecessary questions']}")


if __name__ == "__main__":
    sys.exit(main())
