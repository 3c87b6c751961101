"""The ``homiebot`` command line: run episodes, generate scenes, list plugins.

User errors (bad config, scene, task, unknown plugin) print one clear message and exit with
status 2; they never show a traceback. ``run`` and ``submit`` exit with the episode's outcome:
0 goal reached, 1 finished without reaching it, 2 user error, 3 could not run (planner error,
node failure), 130 interrupted (Ctrl-C or SIGTERM, the record saved).
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path

from pydantic import ValidationError

from homiebot import __version__, registry
from homiebot.bench.evaluate import EvalError
from homiebot.bench.report import ReportError
from homiebot.config import ConfigError, RunConfig, describe_validation_error, load_config
from homiebot.contracts import StepRecord
from homiebot.planners.base import PlannerConfigError
from homiebot.registry import PluginError
from homiebot.scenes import SceneError
from homiebot.skills.failures import PROFILES
from homiebot.tasks import TaskError, load_task

USER_ERRORS = (ConfigError, SceneError, TaskError, PluginError, PlannerConfigError, EvalError, ReportError)
GOAL_REACHED, GOAL_NOT_REACHED, USER_ERROR, COULD_NOT_RUN, INTERRUPTED = 0, 1, 2, 3, 130


def outcome(goal_satisfied: bool | None, ended: bool, termination: str) -> int:
    """The exit status of an episode: its goal when it has one, else whether the planner ended it."""
    if termination == "interrupted":
        return INTERRUPTED
    if termination in ("planner_error", "error"):
        return COULD_NOT_RUN
    if termination == "refused":
        return USER_ERROR
    if termination == "cancelled":
        return INTERRUPTED
    if termination == "reported":  # the planner stopped to say what it could not understand
        return GOAL_NOT_REACHED
    reached = goal_satisfied if goal_satisfied is not None else ended
    return GOAL_REACHED if reached else GOAL_NOT_REACHED


def _out_dir(path: str | Path) -> Path:
    """An output folder that exists or can be made (ConfigError, not a traceback, when it cannot)."""
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out}: exists and is not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ConfigError(f"--out {out}: cannot create the folder: {err.strerror}") from None
    return out


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="homiebot", description="Hierarchical LLM-planned mobile manipulation runtime.")
    p.add_argument("--version", action="version", version=f"homiebot {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run one episode", description="Run one episode and write its record folder.")
    run.add_argument("instruction", nargs="?", help="what the robot should do; omit to use the task generated for --scene SEED")
    where = run.add_mutually_exclusive_group()
    where.add_argument("--scene", help="a seed (integer) for a generated home, or a scene YAML file (default: 0)")
    where.add_argument("--task", help="a task YAML file (instruction, scene, goal)")
    run.add_argument("--config", help="run configuration YAML (default: built-in defaults)")
    run.add_argument("--planner", help="planner backend by name (overrides the config)")
    run.add_argument("--profile", help=f"failure profile of privileged skills: {', '.join(PROFILES)} or a YAML file")
    run.add_argument("--seed", type=int, help="episode seed (overrides the config)")
    run.add_argument("--max-rounds", type=int, help="round limit (overrides the config)")
    run.add_argument("--out", help="folder for episode folders (default: config output.dir, 'runs')")
    run.add_argument("--video", action="store_true", help="also write episode.mp4")
    run.add_argument("--no-images", action="store_true", help="do not save the per-round PNG views")
    run.add_argument("--quiet", action="store_true", help="print only the summary")
    run.add_argument("--ask-me", action="store_true",
                     help="answer the planner's clarifying questions ([Ask, ...]) in this terminal")
    run.add_argument("--ask-timeout", type=float, default=120.0, help="seconds to wait for an answer (--ask-me)")
    run.add_argument("--approve", choices=("every_subtask", "manipulation", "never"),
                     help="ask in this terminal before running subtasks (overrides safety.approve of the config)")

    scene = sub.add_parser("scene", help="print the YAML of a generated home", description="Print a generated scene as YAML.")
    scene.add_argument("seed", type=int)
    scene.add_argument("--task", action="store_true", help="print the generated task (with its scene) instead")

    ev = sub.add_parser("eval", help="evaluate a planner on a task suite (parallel, resumable)",
                        description="Run every task of a suite several times and append results to OUT/results.jsonl.")
    ev.add_argument("--suite", default="home100", help="a built-in suite name or a folder of task YAML files (default: home100)")
    ev.add_argument("--planner", help="planner backend by name (overrides the config)")
    ev.add_argument("--config", help="run configuration YAML")
    ev.add_argument("--profile", help=f"failure profile of privileged skills: {', '.join(PROFILES)} or a YAML file")
    ev.add_argument("--runs", type=int, default=3, help="runs per task (default: 3)")
    ev.add_argument("--max-rounds", type=int, help="round limit per episode (default: config, 20)")
    ev.add_argument("--workers", type=int, default=1, help="worker processes (default: 1)")
    ev.add_argument("--split", default="all", choices=("train", "test", "all"), help="which tasks (default: all)")
    ev.add_argument("--shard", help="i/n: run only every n-th job starting at i, to split a suite over machines")
    ev.add_argument("--out", required=True, help="evaluation folder (results.jsonl, run.json)")
    ev.add_argument("--resume", action="store_true", help="continue an interrupted evaluation in --out")
    ev.add_argument("--save-episodes", action="store_true", help="also write full episode folders under OUT/episodes")

    rep = sub.add_parser("report", help="tables and charts from evaluation folders",
                         description="Write report.md (EMMOE-style tables) and PNG charts for one or more evaluation folders.")
    rep.add_argument("folders", nargs="+", help="evaluation folders; one table row each")
    rep.add_argument("--out", help="report folder (default: FIRST/report)")

    mer = sub.add_parser("merge", help="join the folders of a sharded evaluation")
    mer.add_argument("folders", nargs="+", help="shard folders")
    mer.add_argument("--out", required=True, help="new folder for the merged results")
    mer.add_argument("--allow-partial", action="store_true", help="merge even if shards are missing or unfinished")

    up = sub.add_parser("up", help="start the ROS 2 graph (one process per node)",
                        description="Start world, mapper, planner, detector, executor and task manager nodes; Ctrl-C stops them.")
    up.add_argument("--config", default="", help="run configuration YAML given to every node")
    up.add_argument("--planner", default="", help="planner backend by name (overrides the config)")
    up.add_argument("--out", default="runs", help="folder for episode records (default: runs)")
    up.add_argument("--domain-id", type=int, help="ROS_DOMAIN_ID for the graph (default: the environment's)")
    up.add_argument("--network", action="store_true", help="allow discovery beyond this machine (default: localhost only)")
    up.add_argument("--compose", action="store_true", help="all nodes in one process: calls between them skip the middleware")
    up.add_argument("--no-bag", action="store_true", help="no recorder node: episodes get no MCAP bag")

    sb = sub.add_parser("submit", help="send an instruction to a running graph and wait for its record")
    sb.add_argument("instruction", nargs="?", help="what the robot should do")
    where = sb.add_mutually_exclusive_group()
    where.add_argument("--scene", help="a seed or a scene YAML file (default: 0)")
    where.add_argument("--task", help="a task YAML file")
    sb.add_argument("--seed", type=int, help="episode seed (default: the graph's config)")
    sb.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for the episode (default: 600)")
    sb.add_argument("--no-wait", action="store_true", help="return once the task manager has the task")

    sub.add_parser("estop", help="engage the e-stop of a running graph (everything stops until `homiebot release`)")
    sub.add_parser("release", help="release the e-stop of a running graph")
    cn = sub.add_parser("cancel", help="cancel the running episode of a graph (its record is saved)")
    cn.add_argument("episode", nargs="?", default="", help="the submission id (default: whatever runs)")
    sub.add_parser("approve", help="answer a graph's approval requests (safety.approve) from this terminal")

    sub.add_parser("plugins", help="list registered planners, skills, worlds and detectors")
    return p


def _configure(args: argparse.Namespace) -> RunConfig:
    """The config file with command-line overrides applied."""
    data = load_config(args.config).model_dump(mode="json")
    if args.planner and args.planner != data["planner"]["name"]:
        data["planner"] = {"name": args.planner, "params": {}}
    if args.profile:
        data["skill_profile"] = args.profile
    if args.seed is not None:
        data["seed"] = args.seed
    if args.max_rounds is not None:
        data["max_rounds"] = args.max_rounds
    if getattr(args, "approve", None):
        data["safety"]["approve"] = args.approve
    data["output"]["video"] = data["output"]["video"] or args.video
    data["output"]["images"] = data["output"]["images"] and not args.no_images
    try:
        return RunConfig.model_validate(data)
    except ValidationError as err:
        raise ConfigError(describe_validation_error(err)) from None


def _progress(step: StepRecord) -> None:
    sub = step.output.subtask.text() if step.output else "[invalid output]"
    model = (step.output.model if step.output else None) or "-"
    fb = step.feedback
    status = "ok" if fb.success or fb.code is None else fb.code.value
    line = f"round {step.round:2d} | {sub:<42} | {model:<7} | {status:<3} | {step.timings.total:5.2f}s"
    if not fb.success:
        line += f" | {fb.message}"
    print(line, flush=True)


def _cmd_run(args: argparse.Namespace) -> int:
    from homiebot.runtime import make_task, run_episode  # heavy imports only when running

    if args.instruction is not None and not args.instruction.strip():
        raise TaskError("the instruction is empty; say what the robot should do, or leave it out to use the task generated for --scene")
    cfg = _configure(args)
    task = load_task(args.task) if args.task else make_task(args.instruction, args.scene)
    if args.task and args.instruction:
        task = task.model_copy(update={"instruction": args.instruction})
    out = _out_dir(args.out or cfg.output.dir)
    if not args.quiet:
        print(f"task: {task.instruction}  (planner {cfg.planner.name}, seed {cfg.seed}, profile "
              f"{cfg.skill_profile if isinstance(cfg.skill_profile, str) else 'custom'})", flush=True)
    started = time.perf_counter()
    approver = None
    if cfg.safety.approve != "never":
        from homiebot.safety.approval import TerminalApprover

        approver = TerminalApprover(sys.stdin, sys.stderr)
    user = None
    if getattr(args, "ask_me", False):
        from homiebot.people.terminal import TerminalUser

        user = TerminalUser(timeout=args.ask_timeout, stdin=sys.stdin, stdout=sys.stderr)
    record, folder = run_episode(cfg, task, out, on_step=None if args.quiet else _progress, approver=approver, user=user)
    assert folder is not None  # an output folder was given
    fails = sum(1 for s in record.steps if not s.feedback.success)
    verdict = {True: "goal reached", False: "goal NOT reached", None: "no goal to check"}[record.goal_satisfied]
    print(f"\n{verdict}; {'ended with End' if record.ended else 'ended by ' + record.termination} after "
          f"{len(record.steps)} rounds ({fails} failed), path {record.path_length:.1f} m, {time.perf_counter() - started:.1f} s")
    print(f"episode record: {folder / 'episode.json'}")
    if cfg.output.images:
        print(f"views per round: {folder / 'images'}")
    if record.video:
        print(f"video: {folder / record.video}")
    return outcome(record.goal_satisfied, record.ended, record.termination)


def _cmd_scene(args: argparse.Namespace) -> int:
    import yaml

    from homiebot.worlds.home.generate import generate_scene, generate_task
    from homiebot.worlds.home.scene import dump_scene

    if args.task:
        print(yaml.safe_dump(generate_task(args.seed).model_dump(mode="json", by_alias=True, exclude_none=True), sort_keys=False), end="")
    else:
        print(dump_scene(generate_scene(args.seed)), end="")
    return 0


def _cmd_eval(args: argparse.Namespace) -> int:
    from homiebot.bench.evaluate import config_for_eval, evaluate

    cfg = config_for_eval(load_config(args.config), args.planner, args.max_rounds, args.profile)
    out = _out_dir(args.out)
    print(f"evaluating planner {cfg.planner.name} on suite {args.suite} (split {args.split}, {args.runs} runs per task, "
          f"{args.workers} workers{', shard ' + args.shard if args.shard else ''}) -> {out}", flush=True)
    s = evaluate(args.suite, cfg, out, runs=args.runs, split=args.split, workers=args.workers, resume=args.resume,
                 shard=args.shard, save_episodes=args.save_episodes)
    print(f"\n{s['runs']} runs of {s['tasks']} tasks ({s['new_runs']} new, {s['wall_time']:.1f} s):")
    print("| SR | PLWSR | TP | SRR | SER |\n|---:|---:|---:|---:|---:|")
    print(f"| {s['SR']:.2f} | {s['PLWSR']:.2f} | {s['TP']:.2f} | {s['SRR']:.2f} | {s['SER']:.2f} |")
    if s["peak_rss_mb_per_worker"]:
        print(f"peak memory per worker: {', '.join(f'{m:.0f} MB' for m in s['peak_rss_mb_per_worker'])}")
    print(f"results: {out / 'results.jsonl'}; tables and charts: homiebot report {out}")
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from homiebot.bench.report import write_report
    from homiebot.bench.results import read_results

    for folder in args.folders:
        for problem in read_results(Path(folder) / "results.jsonl").problems:
            print(f"homiebot: warning: {Path(folder) / 'results.jsonl'} {problem}; line skipped", file=sys.stderr)
    path = write_report([Path(f) for f in args.folders], Path(args.out) if args.out else None)
    print(path.read_text())
    print(f"report: {path}")
    return 0


def _cmd_merge(args: argparse.Namespace) -> int:
    from homiebot.bench.evaluate import merge_results

    n = merge_results([Path(f) for f in args.folders], Path(args.out), allow_partial=args.allow_partial)
    print(f"merged {n} runs into {args.out}")
    return 0


def _cmd_up(args: argparse.Namespace) -> int:
    from homiebot.ros.graph import graph
    from homiebot.ros.up import check_ros, ros_environment, run_graph

    check_ros()
    cfg = load_config(args.config or None)  # fail here, once, rather than in every node
    planner = args.planner or cfg.planner.name
    if planner not in registry.available("planners"):
        raise PluginError(f"unknown planner '{planner}'; available: {', '.join(registry.available('planners'))}")
    config = str(Path(args.config).resolve()) if args.config else ""
    env = ros_environment(args.domain_id, localhost=not args.network)
    return run_graph(graph(config, args.planner, str(Path(args.out).resolve()), record_bag=not args.no_bag), env, compose=args.compose)


def _cmd_submit(args: argparse.Namespace) -> int:
    from homiebot.ros.up import check_ros

    check_ros()
    from homiebot.ros.submit import submit

    if args.task:
        request = {"task_file": str(Path(args.task).resolve())}
    else:
        scene = args.scene
        if scene and not scene.lstrip("-").isdigit():
            scene = str(Path(scene).resolve())
        request = {"instruction": args.instruction, "scene": scene}
    if args.seed is not None:
        request["seed"] = args.seed
    if args.instruction is not None and not args.instruction.strip():
        raise TaskError("the instruction is empty; say what the robot should do")
    try:
        final = submit(request, timeout=args.timeout, wait=not args.no_wait)
    except TimeoutError as err:
        print(f"homiebot: error: {err}", file=sys.stderr)
        return COULD_NOT_RUN
    return submit_status(final, wait=not args.no_wait)


def submit_status(final: dict, wait: bool = True) -> int:
    """The exit status of ``homiebot submit`` from the task's last status event."""
    state = final.get("state")
    if state == "finished":
        return outcome(final.get("goal_satisfied"), bool(final.get("ended")), str(final.get("termination")))
    if state in ("failed", "duplicate"):
        if final.get("termination") == "interrupted":
            return INTERRUPTED
        return USER_ERROR if final.get("cause") == "invalid" or state == "duplicate" else COULD_NOT_RUN
    return GOAL_REACHED if not wait else COULD_NOT_RUN


def _cmd_plugins(_: argparse.Namespace) -> int:
    for group in registry.GROUPS:
        print(f"{group}: {', '.join(registry.available(group)) or '(none)'}")
    return 0


def _cmd_operator(args: argparse.Namespace) -> int:
    """``estop``, ``release``, ``cancel`` and ``approve`` on a running graph."""
    from homiebot.ros import operator

    try:
        if args.command == "approve":
            return operator.approve_loop()
        if args.command == "cancel":
            print(operator.cancel(args.episode))
        else:
            print(operator.estop(args.command == "estop"))
    except TimeoutError as err:
        print(f"homiebot: error: {err}", file=sys.stderr)
        return COULD_NOT_RUN
    return 0


def _interrupt(signum, frame) -> None:
    agent = sys.modules.get("homiebot.agent")  # loaded when an episode runs in this process
    if agent is not None:
        agent.STOP_SIGNALLED.set()
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `homiebot run ... | head` should not raise
    signal.signal(signal.SIGTERM, _interrupt)  # a SIGTERM saves what was recorded, as Ctrl-C does
    signal.signal(signal.SIGINT, _interrupt)
    args = _parser().parse_args(argv)
    handler = {"run": _cmd_run, "scene": _cmd_scene, "eval": _cmd_eval, "report": _cmd_report, "merge": _cmd_merge,
               "up": _cmd_up, "submit": _cmd_submit, "plugins": _cmd_plugins, "estop": _cmd_operator, "release": _cmd_operator,
               "cancel": _cmd_operator, "approve": _cmd_operator}[args.command]
    try:
        return handler(args)
    except (*USER_ERRORS, ImportError) as err:
        print(f"homiebot: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("homiebot: interrupted; what was recorded so far has been saved", file=sys.stderr)
        return INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
