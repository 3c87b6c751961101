"""The ``homiebot`` command line: run episodes, generate scenes, list plugins.

User errors (bad config, scene, task, unknown plugin) print one clear message and exit with
status 2; they never show a traceback. ``run`` and ``submit`` exit with the episode's outcome:
0 goal reached, 1 finished without reaching it, 2 user error, 3 could not run (planner error,
node failure), 74 the disk is full or failed while writing (what finished is kept; the message says
where), 130 interrupted (Ctrl-C or SIGTERM, the record saved).
"""

from __future__ import annotations

import argparse
import errno
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from homiebot import __version__
from homiebot.bench.evaluate import EvalError
from homiebot.bench.executors import EXECUTORS, ExecutorError, InfrastructureFailure
from homiebot.bench.report import ReportError
from homiebot.config import RunConfig, describe_validation_error, load_config
from homiebot.core import registry
from homiebot.core.console import end_reason, step_line, task_line, verdict_line
from homiebot.core.contracts import StepRecord
from homiebot.core.errors import ConfigError
from homiebot.core.extras import missing_extra
from homiebot.core.records import StorageError, finalise_leftovers
from homiebot.core.registry import PluginError
from homiebot.core.scenes import SceneError
from homiebot.core.tasks import Exploration, Task, TaskError, instruction_too_long, load_task
from homiebot.planners.base import PlannerConfigError
from homiebot.skills.failures import PROFILES
from homiebot.training.episodes import ExportError

if TYPE_CHECKING:
    from homiebot.runtime import SkillSet

USER_ERRORS = (ConfigError, SceneError, TaskError, PluginError, PlannerConfigError, EvalError, ReportError, ExportError,
               ExecutorError)
GOAL_REACHED, GOAL_NOT_REACHED, USER_ERROR, COULD_NOT_RUN, INTERRUPTED = 0, 1, 2, 3, 130
STORAGE_FAILED = 74  # sysexits' EX_IOERR
STORAGE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS, errno.EFBIG})
EXPLORE_STOPS: int = Exploration.model_fields["max_stops"].default  # `--explore` without a number


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
    try:  # an existing folder may still refuse files (permissions, a read-only mount): say so before any work
        tempfile.TemporaryFile(dir=out).close()
    except OSError as err:
        raise ConfigError(f"--out {out}: cannot write there ({err.strerror}); give a folder you can write to") from None
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
    run.add_argument("--memory", metavar="DIR", help="demonstration memory folder: recall the user's demonstrations for the "
                     "instruction (overrides the config's memory.root)")
    run.add_argument("--memory-user", metavar="NAME", help="whose demonstrations to recall (overrides memory.user; needs a memory)")
    run.add_argument("--explore", nargs="?", const=EXPLORE_STOPS, type=int, metavar="STOPS",
                     help=f"explore the home before the instruction: drive to the frontiers of the map, at most STOPS stops "
                          f"(default {EXPLORE_STOPS}); needs mapped perception (e.g. --config config/sif_mapped.yaml)")
    run.add_argument("--ask-me", action="store_true",
                     help="answer the planner's clarifying questions ([Ask, ...]) in this terminal")
    run.add_argument("--ask-timeout", type=float, default=120.0, help="seconds to wait for an answer (--ask-me)")
    run.add_argument("--approve", choices=("every_subtask", "manipulation", "never"),
                     help="ask in this terminal before running subtasks (overrides safety.approve of the config)")
    _view_args(run)

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
    ev.add_argument("--workers", type=int, help="worker processes (default: 1); with --executor ray: most jobs at once (default: what the cluster "
                    "fits), or the CPUs of the private instance started without --address")
    ev.add_argument("--executor", default="local", choices=EXECUTORS, help="where jobs run: local processes (default) or a Ray cluster")
    ev.add_argument("--address", help="with --executor ray: the cluster's HOST:PORT, or 'auto' (default: RAY_ADDRESS, else a private local instance)")
    ev.add_argument("--retries", type=int, default=3, help="with --executor ray: times a job lost with its worker or node is run again (default: 3)")
    ev.add_argument("--split", default="all", choices=("train", "dev", "test", "all"),
                    help="which tasks (default: all; the ambiguity suite has a dev half to tune on)")
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

    exp = sub.add_parser("export", help="episode folders -> SFT or DPO training data (Hugging Face datasets)",
                         description="Turn recorded episodes into SFT records or DPO pairs (docs/training.md).")
    exp.add_argument("sources", nargs="+", metavar="SOURCE", help="episode folders, evaluation folders run with --save-episodes, "
                     "or folders holding episode folders")
    exp.add_argument("--format", required=True, choices=("sft", "dpo"), help="sft: conversation records; dpo: preference pairs")
    exp.add_argument("--out", required=True, help="new folder for the dataset")
    exp.add_argument("--split", default="train", choices=("train", "test", "all"), help="tasks of which split (default: train)")
    exp.add_argument("--suite", default="home100", help="suite that tells a task's split when no results.jsonl does (default: home100)")
    exp.add_argument("--sources", dest="keep", help="record sources to keep, comma-separated (sft: success,replan; "
                     "dpo: replan,order_change,action_change,model_change; default: all)")
    exp.add_argument("--keep-unseen", action="store_true", help="also keep rounds that name things not yet seen")
    exp.add_argument("--search-labels", action="store_true", help="sft: label rounds that name things not yet seen "
                     "'Go to' the room (then the receptacle) that holds them instead of leaving them out (docs/training.md)")
    exp.add_argument("--views", default="images", choices=("images", "text"), help="text: the views described in words for "
                     "text-only models (each episode is replayed to detect what its views showed; no images)")

    bs = sub.add_parser("bootstrap", help="run a privileged planner over the train split and export SFT/DPO data",
                        description="Run the oracle over a suite's train split under failure profiles of several strengths "
                        "(resumable and sharded like eval), then export OUT/sft and OUT/dpo (docs/training.md).")
    bs.add_argument("--out", required=True, help="folder for runs/ (evaluation folders with episodes), sft/ and dpo/")
    bs.add_argument("--suites", help="suites, comma-separated (default: home100, and home100_persona when installed)")
    bs.add_argument("--failure-scales", default="0.5,1,2", help="multipliers of the default failure profile, one run set "
                    "each (0: perfect skills; default: 0.5,1,2)")
    bs.add_argument("--runs", type=int, default=2, help="runs (seeds) per task and scale (default: 2)")
    bs.add_argument("--planner", default="oracle", help="the planner that makes the data (default: oracle)")
    bs.add_argument("--config", help="run configuration YAML")
    bs.add_argument("--seed", type=int, help="base seed of the job seeds (default: config seed)")
    bs.add_argument("--max-rounds", type=int, help="round limit per episode")
    bs.add_argument("--split", default="train", choices=("train", "test", "all"), help="which tasks (default: train)")
    bs.add_argument("--workers", type=int, default=1, help="worker processes (default: 1)")
    bs.add_argument("--shard", help="i/n: run only every n-th job, as eval does")
    bs.add_argument("--resume", action="store_true", help="continue an interrupted bootstrap in --out")
    bs.add_argument("--no-export", action="store_true", help="only run the episodes")
    bs.add_argument("--search-labels", action="store_true", help="sft/: rounds that name things not yet seen are labelled "
                    "'Go to' where they are instead of left out (as export --search-labels)")

    dg = sub.add_parser("dagger", help="the trained CPU-recipe planner drives train-split episodes; the oracle labels its rounds",
                        description="DAgger: roll a `train heads` model out over the train split, label every round with the "
                        "oracle's next subtask, and write the base SFT export plus these records to OUT (docs/training.md).")
    dg.add_argument("--model", required=True, help="the --out folder of `homiebot train heads`")
    dg.add_argument("--data", required=True, help="the SFT export it was trained on (copied in front of the new records)")
    dg.add_argument("--out", required=True, help="new folder for the combined SFT export")
    dg.add_argument("--suites", default="home100", help="suites, comma-separated (default: home100)")
    dg.add_argument("--failure-scales", default="1", help="multipliers of the default failure profile (default: 1)")
    dg.add_argument("--runs", type=int, default=1, help="runs (seeds) per task and scale (default: 1)")
    dg.add_argument("--beta", type=float, default=0.3, help="chance that a round executes the oracle's label (default: 0.3)")
    dg.add_argument("--seed", type=int, default=0, help="base seed of the episodes and of the beta draws (default: 0)")
    dg.add_argument("--workers", type=int, default=1, help="worker processes (default: 1); the data do not depend on it")
    dg.add_argument("--resume", action="store_true", help="continue an interrupted dagger run in --out (same settings)")

    tr = sub.add_parser("train", help="LoRA fine-tuning of a local model on exported SFT or DPO data (TRL + PEFT)",
                        description="Fine-tune a local vision-language model with LoRA on `homiebot export` data; the result "
                        "is used with --planner trained (docs/training.md).")
    tr.add_argument("stage", choices=("sft", "dpo", "heads"), help="sft: supervised on conversations; dpo: preference pairs; "
                    "heads: the CPU recipe, small heads over the frozen MiniLM encoder trained on an SFT export (no --base)")
    tr.add_argument("--data", required=True, action="append", help="an export folder of the same format (homiebot export "
                    "--format sft|dpo); heads: repeat it to train on several SFT exports together")
    tr.add_argument("--base", help="sft/dpo: a local model folder (never downloaded), the --out of an earlier `train sft` "
                    "(its merged model), or tiny:qwen2_vl (a random tiny Qwen2-VL for dry runs)")
    tr.add_argument("--out", required=True, help="new folder for the adapter and its manifest")
    tr.add_argument("--steps", type=int, default=50, help="optimizer steps (default: 50)")
    tr.add_argument("--batch", type=int, help="records per step (default: 1; heads: 32)")
    tr.add_argument("--epochs", type=int, default=40, help="heads: passes over the data (default: 40)")
    tr.add_argument("--hidden", type=int, default=128, help="heads: hidden width (default: 128)")
    tr.add_argument("--negatives", type=int, default=48, help="heads: other subtasks sampled per record and epoch (default: 48)")
    tr.add_argument("--lr", type=float, help="learning rate (default: 5e-4 sft, 5e-6 dpo, as the EMMOE paper; heads: 2e-3)")
    tr.add_argument("--lora-r", type=int, help="LoRA rank (default: 128 sft, 8 dpo)")
    tr.add_argument("--lora-alpha", type=int, help="LoRA alpha (default: 256 sft, 8 dpo)")
    tr.add_argument("--image-size", type=int, default=56, help="views are resized to this many pixels a side (default: 56)")
    tr.add_argument("--beta", type=float, default=0.1, help="DPO beta (default: 0.1)")
    tr.add_argument("--seed", type=int, default=0, help="training seed (default: 0)")
    tr.add_argument("--prompt", default="default", choices=("default", "compact"),
                    help="sft/dpo: the prompt template trained on; compact: the built-in short one, for text-only models "
                    "(the trained planner then prompts with it)")
    tr.add_argument("--time-budget", type=float, metavar="MIN", help="sft/dpo: stop after this many minutes, save and write "
                    "the manifest (the steps done are recorded)")
    tr.add_argument("--save-every", type=int, default=0, metavar="N", help="sft/dpo: keep a resumable checkpoint every N steps")
    tr.add_argument("--resume", action="store_true", help="sft/dpo: continue the interrupted run in --out from its last checkpoint")

    up = sub.add_parser("up", help="start the ROS 2 graph (one process per node)",
                        description="Start world, mapper, planner, detector, executor and task manager nodes; Ctrl-C stops them.")
    up.add_argument("--config", default="", help="run configuration YAML given to every node")
    up.add_argument("--planner", default="", help="planner backend by name (overrides the config)")
    up.add_argument("--out", default="runs", help="folder for episode records (default: runs)")
    up.add_argument("--domain-id", type=int, help="ROS_DOMAIN_ID for the graph (default: the environment's)")
    _namespace_arg(up, "where the graph's nodes and names live: two graphs in two namespaces share a ROS domain")
    up.add_argument("--params-file", metavar="YAML", help="ROS 2 parameters for the graph's nodes (`/homiebot/planner: "
                                                           "{ros__parameters: {backend: oracle}}`); its values win over the config's")
    up.add_argument("--print-params", action="store_true",
                    help="print the parameters each node would get (the config's settings included) as a parameters file, and exit")
    up.add_argument("--lifecycle-manager", action="store_true",
                    help="start the nodes unconfigured and bring them up with a lifecycle manager node, as Nav2 does "
                         "(lifecycle_manager/manage_nodes: startup, pause, resume, reset, shutdown)")
    up.add_argument("--external", action="append", default=[], metavar="NODE",
                    help="a node of the graph that another program provides (e.g. your own planner node serving planner/reset "
                         "and planner/plan): not started here; repeat for several")
    up.add_argument("--network", action="store_true", help="allow discovery beyond this machine (default: localhost only)")
    up.add_argument("--compose", action="store_true", help="all nodes in one process: calls between them skip the middleware")
    up.add_argument("--no-bag", action="store_true", help="no recorder node: episodes get no MCAP bag")
    up.add_argument("--view", action="store_true", help="a viewer node: the graph in the rerun web viewer (viz extra)")
    up.add_argument("--view-host", default="127.0.0.1", help="address the web viewer listens on (default: 127.0.0.1)")
    up.add_argument("--view-port", type=int, default=0, help="web viewer port (default: a free one)")
    up.add_argument("--save-rrd", help="also write the viewer node's view to this .rrd file")
    up.add_argument("--foxglove", action="store_true", help="serve the graph's topics to Foxglove over WebSocket (viz extra)")
    up.add_argument("--foxglove-host", default="127.0.0.1", help="address of the Foxglove server (default: 127.0.0.1)")
    up.add_argument("--foxglove-port", type=int, default=8765, help="port of the Foxglove server (default: 8765)")

    sb = sub.add_parser("submit", help="send an instruction to a running graph and wait for its record")
    sb.add_argument("instruction", nargs="?", help="what the robot should do")
    where = sb.add_mutually_exclusive_group()
    where.add_argument("--scene", help="a seed or a scene YAML file (default: 0)")
    where.add_argument("--task", help="a task YAML file")
    sb.add_argument("--seed", type=int, help="episode seed (default: the graph's config)")
    sb.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for the episode (default: 600)")
    sb.add_argument("--no-wait", action="store_true", help="return once the task manager has the task")
    _namespace_arg(sb, "the namespace of the graph to send it to (as given to `homiebot up --namespace`)")

    es = sub.add_parser("estop", help="engage the e-stop of a running graph (everything stops until `homiebot release`)")
    rl = sub.add_parser("release", help="release the e-stop of a running graph")
    cn = sub.add_parser("cancel", help="cancel the running episode of a graph (its record is saved)")
    cn.add_argument("episode", nargs="?", default="", help="the submission id (default: whatever runs)")
    ap = sub.add_parser("approve", help="answer a graph's approval requests (safety.approve) from this terminal")
    for op in (es, rl, cn, ap):
        _namespace_arg(op, "the namespace of the graph (as given to `homiebot up --namespace`)")

    sub.add_parser("plugins", help="list registered planners, skills, worlds and detectors")

    vd = sub.add_parser("video", help="make the video (episode.mp4, episode.vtt) of a recorded episode folder again",
                        description="Replay the recorded episode (same scene, config, seed and planner answers) and write its video.")
    vd.add_argument("folder", help="an episode folder (with episode.json)")

    vw = sub.add_parser("view", help="replay an episode folder, a graph episode's bag or an .rrd recording in the rerun web viewer (viz extra)")
    vw.add_argument("source", help="an episode folder (with episode.json), its bag folder (<episode>/bag, written by `homiebot up`) "
                                   "or an .rrd file")
    vw.add_argument("--view-host", default="127.0.0.1", help="address the web viewer listens on (default: 127.0.0.1)")
    vw.add_argument("--view-port", type=int, help="web viewer port (default: a free one)")
    vw.add_argument("--save-rrd", help="write the recording to this .rrd file and exit instead of serving it")
    return p


def _namespace_arg(p: argparse.ArgumentParser, text: str) -> None:
    p.add_argument("--namespace", default="", metavar="NAME", help=f"{text} (default: homiebot)")


def _namespace(args: argparse.Namespace) -> str:
    from homiebot.ros.kit.names import NamespaceError, namespace

    try:
        return namespace(args.namespace)
    except NamespaceError as err:
        raise ConfigError(f"--namespace: {err}") from None


def _view_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--view", action="store_true", help="watch live in the rerun web viewer (viz extra)")
    p.add_argument("--view-host", default="127.0.0.1", help="address the web viewer listens on (default: 127.0.0.1)")
    p.add_argument("--view-port", type=int, help="web viewer port (default: a free one)")
    p.add_argument("--save-rrd", help="also write the live view to this .rrd file (viz extra)")


def _live_view(args: argparse.Namespace):  # -> homiebot.viz.live.LiveView | None
    """The live viewer that ``--view`` / ``--save-rrd`` ask for (ImportError naming the extra without it)."""
    if not (args.view or args.save_rrd):
        return None
    from homiebot.viz import require_rerun

    require_rerun()
    from homiebot.viz.live import LiveView

    try:
        view = LiveView(serve=args.view, host=args.view_host, save=args.save_rrd, web_port=args.view_port)
    except OSError as err:
        raise ConfigError(f"--view: {err}") from None
    if view.url:
        print(f"live view: {view.url}", flush=True)
    return view


def _cmd_video(args: argparse.Namespace) -> int:
    from homiebot.builders.rebuild import rebuild_video

    path, differ = rebuild_video(args.folder)
    for line in differ:
        print(f"homiebot: warning: the replay differs from the record: {line}", file=sys.stderr)
    print(f"video: {path}\ncaptions: {path.with_suffix('.vtt')}")
    return 0


def _bag_to_rrd(bag: Path, rrd: Path) -> int:
    """A graph episode's bag replayed into an .rrd (needs ROS 2 to read its messages)."""
    try:
        from homiebot.ros.clients.viewer import bag_to_rrd
    except ImportError as err:
        raise ConfigError(f"view: replaying a bag needs ROS 2 (rclpy): {err}") from None
    try:
        return bag_to_rrd(bag, rrd)
    except ValueError as err:
        raise ConfigError(f"view: {err}") from None


def _cmd_view(args: argparse.Namespace) -> int:
    from homiebot.viz import require_rerun

    require_rerun()
    import tempfile

    from homiebot.viz.replay import episode_to_rrd
    from homiebot.viz.server import WebViewer

    src = Path(args.source)
    if not src.exists():
        raise ConfigError(f"{src}: no such episode folder, bag or .rrd file")
    with tempfile.TemporaryDirectory() as tmp:
        if src.is_dir():
            rrd = Path(args.save_rrd) if args.save_rrd else Path(tmp) / "episode.rrd"
            is_bag = (src / "metadata.yaml").is_file()  # a graph episode's bag (<episode>/bag), else an episode folder
            rounds = _bag_to_rrd(src, rrd) if is_bag else episode_to_rrd(src, rrd)
            print(f"{rounds} rounds of {src}" + (f" -> {rrd}" if args.save_rrd else ""), flush=True)
        elif src.suffix == ".rrd":
            rrd = src
        else:
            raise ConfigError(f"{src}: give an episode folder, its bag folder or an .rrd file")
        if args.save_rrd:
            return 0
        try:
            viewer = WebViewer(args.view_host, web_port=args.view_port, source=str(rrd.resolve()))
        except OSError as err:
            raise ConfigError(f"view: {err}") from None
        print(f"viewer: {viewer.url.split('?')[0]}  (Ctrl-C to stop)", flush=True)
        try:
            viewer.proc.wait()
        finally:
            viewer.close()
    return 0


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
    _memory_overrides(args, data)
    data["output"]["video"] = data["output"]["video"] or args.video
    data["output"]["images"] = data["output"]["images"] and not args.no_images
    try:
        return RunConfig.model_validate(data)
    except ValidationError as err:
        raise ConfigError(describe_validation_error(err)) from None


def _memory_overrides(args: argparse.Namespace, data: dict) -> None:
    """``--memory DIR`` and ``--memory-user NAME`` put into the config's memory section."""
    root, user = getattr(args, "memory", None), getattr(args, "memory_user", None)
    if root is None and user is None:
        return
    memory = dict(data.get("memory") or {})
    if root is not None:
        memory["root"] = root
    if user is not None:
        if "root" not in memory:
            raise ConfigError("--memory-user: give the memory folder too (--memory DIR, or memory.root in the config)")
        memory["user"] = user
    data["memory"] = memory


def _progress(step: StepRecord) -> None:
    print(step_line(step), flush=True)


def _cmd_run(args: argparse.Namespace) -> int:
    from homiebot.runtime import make_task, run_episode  # heavy imports only when running

    if args.instruction is not None and not args.instruction.strip():
        raise TaskError("the instruction is empty; say what the robot should do, or leave it out to use the task generated for --scene")
    cfg = _configure(args)
    task = load_task(args.task) if args.task else make_task(args.instruction, args.scene)
    if args.task and args.instruction:
        task = task.model_copy(update={"instruction": args.instruction})
    too_long = instruction_too_long(task.instruction)
    if too_long:  # refused as the graph's task manager refuses it (its default limit)
        raise TaskError(too_long)
    if args.explore is not None:
        task = _with_exploration(task, cfg, args.explore)
    out = _out_dir(args.out or cfg.output.dir)
    for orphan in finalise_leftovers(out, "the process that ran this episode ended before it did (killed, or the machine "
                                     "stopped); the rounds it finished are kept", orphans_only=True):
        print(f"homiebot: notice: published what an episode whose process died had recorded: {orphan / 'episode.json'}",
              file=sys.stderr)
    if not args.quiet:
        print(task_line(task.instruction, cfg.planner.name, cfg.seed,
                        cfg.skill_profile if isinstance(cfg.skill_profile, str) else "custom"), flush=True)
        if args.explore is not None:
            print(f"exploring the home first (at most {args.explore} frontier stops), then the instruction", flush=True)
    started = time.perf_counter()
    approver = None
    if cfg.safety.approve != "never":
        from homiebot.safety.approval import TerminalApprover

        approver = TerminalApprover(sys.stdin, sys.stderr)
    user = None
    if args.ask_me:
        from homiebot.people.terminal import TerminalUser

        user = TerminalUser(timeout=args.ask_timeout, stdin=sys.stdin, stdout=sys.stderr)
    view = _live_view(args)
    try:
        record, folder = run_episode(cfg, task, out, on_step=None if args.quiet else _progress, approver=approver, observer=view,
                                     user=user, on_skills=_say_stand_ins)
    except BaseException:
        if view is not None:
            view.close()
        raise
    assert folder is not None  # an output folder was given
    fails = sum(1 for s in record.steps if not s.feedback.success)
    print("\n" + verdict_line(record.goal_satisfied, record.ended, record.termination, len(record.steps), fails, record.path_length,
                              time.perf_counter() - started))
    why = end_reason(record)
    if why:
        print(f"why it ended: {why}")
    print(f"episode record: {folder / 'episode.json'}")
    if cfg.output.images:
        print(f"views per round: {folder / 'images'}")
    if record.video:
        print(f"video: {folder / record.video}")
    if view is not None:
        _finish_view(view)
    return outcome(record.goal_satisfied, record.ended, record.termination)


def _with_exploration(task: Task, cfg: RunConfig, stops: int) -> Task:
    """The task with an exploration phase of at most ``stops`` frontier stops (``--explore``)."""
    if cfg.perception.mode != "mapped":
        raise ConfigError("--explore builds the map the planner keeps: it needs mapped perception (perception.mode: mapped, "
                          "e.g. --config config/sif_mapped.yaml)")
    try:
        return task.model_copy(update={"explore": Exploration(max_stops=stops)})
    except ValidationError as err:
        raise ConfigError(f"--explore {stops}: {describe_validation_error(err)}") from None


def _say_stand_ins(skills: SkillSet) -> None:
    for line in skills.notices():
        print(f"homiebot: notice: {line}", file=sys.stderr, flush=True)


def _finish_view(view) -> None:  # view: homiebot.viz.live.LiveView
    """Send the rest of the live view; a served viewer stays up until Ctrl-C (the episode is saved)."""
    view.close(keep_serving=True)
    if view.queue.dropped:
        print(f"live view: {view.queue.dropped} frames skipped to keep up with the robot", flush=True)
    if view.viewer is None:
        view.close()
        return
    print(f"the live view stays up at {view.url} ; press Ctrl-C to stop", flush=True)
    try:
        while view.viewer.proc.poll() is None:
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    finally:
        view.close()


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
    from homiebot.bench.executors import make_executor

    cfg = config_for_eval(load_config(args.config), args.planner, args.max_rounds, args.profile)
    out = _out_dir(args.out)
    executor = make_executor(args.executor, args.workers, args.address, args.retries)
    try:
        print(f"evaluating planner {cfg.planner.name} on suite {args.suite} (split {args.split}, {args.runs} runs per task, "
              f"{executor.describe()}{', shard ' + args.shard if args.shard else ''}) -> {out}", flush=True)
        s = evaluate(args.suite, cfg, out, runs=args.runs, split=args.split, resume=args.resume,
                     shard=args.shard, save_episodes=args.save_episodes, executor=executor)
    except InfrastructureFailure as err:
        print(f"homiebot: error: {err}", file=sys.stderr)
        return COULD_NOT_RUN
    finally:
        executor.close()
    if s["infrastructure_retries"]:
        print(f"{s['infrastructure_retries']} job(s) were lost with their worker or node and ran again (not counted as failures)")
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


def _cmd_export(args: argparse.Namespace) -> int:
    from homiebot.training.export import export

    stats = export(args.sources, args.format, Path(args.out), split=args.split, suite=args.suite, keep=args.keep,
                   check_visible=not args.keep_unseen, search=args.search_labels, views=args.views)
    counts = ", ".join(f"{k} {v}" for k, v in stats["counts"].items())
    print(f"{stats['records']} {args.format} records from {stats['episodes']} episodes ({counts}) -> {args.out}")
    return 0


def _cmd_bootstrap(args: argparse.Namespace) -> int:
    from homiebot.bench.evaluate import config_for_eval
    from homiebot.training.bootstrap import bootstrap, default_suites, parse_scales

    cfg = config_for_eval(load_config(args.config), args.planner, args.max_rounds, None)
    data = cfg.model_dump(mode="json")
    data["output"]["images"] = True  # the views are the training images
    if args.seed is not None:
        data["seed"] = args.seed
    cfg = RunConfig.model_validate(data)
    suites = [x.strip() for x in args.suites.split(",") if x.strip()] if args.suites else default_suites()
    scales = parse_scales(args.failure_scales)
    out = _out_dir(args.out)
    print(f"bootstrapping with {cfg.planner.name} on {', '.join(suites)} (split {args.split}, failure scales "
          f"{', '.join(f'{x:g}' for x in scales)}, {args.runs} runs per task) -> {out}", flush=True)
    s = bootstrap(cfg, out, suites, scales, runs=args.runs, split=args.split, workers=args.workers, resume=args.resume,
                  shard=args.shard, export_data=not args.no_export, search=args.search_labels)
    for name, r in s["runs"].items():
        print(f"{name}: {r['runs']} runs ({r['new_runs']} new), SR {r['SR']:.1f}")
    for fmt, st in s["exports"].items():
        print(f"{fmt}: {st['records']} records ({', '.join(f'{k} {v}' for k, v in st['counts'].items())}) -> {out / fmt}")
    return 0


def _cmd_dagger(args: argparse.Namespace) -> int:
    from homiebot.training.bootstrap import parse_scales
    from homiebot.training.dagger import dagger, finished_episodes

    suites = [x.strip() for x in args.suites.split(",") if x.strip()]
    out = Path(args.out)
    print(f"dagger: {args.model} over {', '.join(suites)} (train split, {args.runs} runs per task, beta {args.beta:g}, "
          f"{args.workers} worker{'s' if args.workers != 1 else ''}) -> {out}", flush=True)
    try:
        s = dagger(Path(args.model), Path(args.data), out, suites, parse_scales(args.failure_scales), beta=args.beta,
                   runs=args.runs, seed=args.seed, workers=args.workers, resume=args.resume)
    except KeyboardInterrupt:
        kept = finished_episodes(out)
        if kept:
            print(f"homiebot: interrupted; {kept} finished episodes are kept in {out}: continue with the same command and --resume",
                  file=sys.stderr)
        else:
            print("homiebot: interrupted before any episode finished; nothing was recorded", file=sys.stderr)
        return INTERRUPTED
    print(f"dagger: {s['dagger_episodes']} episodes, {s['dagger_records']} labelled rounds + {s['base_records']} base records "
          f"-> {args.out}")
    return 0


def _cmd_train(args: argparse.Namespace) -> int:
    from homiebot.training.train import TrainError, train

    if args.stage == "heads":
        from homiebot.training.heads import train_heads

        if args.base:
            raise TrainError("train heads: --base is not used (the encoder is the shipped MiniLM model); leave it out")
        h = train_heads([Path(d) for d in args.data], Path(args.out), epochs=args.epochs, lr=args.lr or 2e-3, hidden=args.hidden,
                        batch=args.batch or 32, seed=args.seed, negatives=args.negatives)
        print(f"trained heads for {h['epochs']} epochs on {h['records']} records ({h['texts_embedded']} texts embedded in "
              f"{h['embed_s']} s, training {h['train_s']} s; loss {h['losses'][0]} -> {h['losses'][-1]}); {Path(args.out) / h['weights']}")
        print(f"plan with it: homiebot eval --planner trained --config <config with planner.params.path: {args.out}>")
        return 0
    if len(args.data) > 1:
        raise TrainError(f"train {args.stage}: one --data folder (only `train heads` reads several)")
    if not args.base:
        raise TrainError(f"train {args.stage}: --base is required (a local model folder, an earlier --out, or tiny:qwen2_vl)")
    m = train(args.stage, Path(args.data[0]), args.base, Path(args.out), steps=args.steps, lr=args.lr, batch=args.batch or 1,
              lora_r=args.lora_r, lora_alpha=args.lora_alpha, image_size=args.image_size, seed=args.seed, beta=args.beta,
              prompt=args.prompt, budget_min=args.time_budget, save_every=args.save_every, resume=args.resume)
    budget = f", stopped by the {args.time_budget:g} min budget" if m["stopped_by_budget"] else ""
    print(f"trained {args.stage} for {m['steps']} steps on {m['records']} records in {m['train_s']:.0f} s{budget} "
          f"(loss {m['losses'][0] if m['losses'] else '-'} -> {m['losses'][-1] if m['losses'] else '-'}); "
          f"adapter: {Path(args.out) / m['adapter']}")
    print(f"plan with it: homiebot eval --planner trained --config <config with planner.params.path: {args.out}>")
    return 0


def _cmd_up(args: argparse.Namespace) -> int:
    from homiebot.ros.bringup.graph import check_parameter_names, check_params_file, graph
    from homiebot.ros.bringup.up import run_graph
    from homiebot.ros.kit.environment import check_ros, ros_environment

    check_ros()
    cfg = load_config(args.config or None)  # fail here, once, rather than in every node
    planner = args.planner or cfg.planner.name
    if planner not in registry.available("planners"):
        raise PluginError(f"unknown planner '{planner}'; available: {', '.join(registry.available('planners'))}")
    config = str(Path(args.config).resolve()) if args.config else ""
    env = ros_environment(args.domain_id, localhost=not args.network)
    ns = _namespace(args)
    try:
        params_file = check_params_file(args.params_file) if args.params_file else ""
        specs = graph(config, args.planner, str(Path(args.out).resolve()), record_bag=not args.no_bag, namespace=ns,
                      external=tuple(args.external), params_file=params_file, lifecycle_manager=args.lifecycle_manager)
        if params_file:
            check_parameter_names(params_file, specs, config)
    except ValueError as err:
        raise ConfigError(str(err)) from None
    if args.print_params:
        import yaml

        from homiebot.ros.bringup.graph import node_parameters

        print(yaml.safe_dump(node_parameters(specs, config), sort_keys=False, width=120), end="")
        return 0
    if args.foxglove:
        specs.append(_foxglove_node(args.foxglove_host, args.foxglove_port, ns))
    if args.view or args.save_rrd:
        from homiebot.ros.bringup.graph import NodeSpec
        from homiebot.viz import require_rerun

        require_rerun()
        specs.append(NodeSpec("viewer", "homiebot.ros.nodes.viewer", "homiebot_viewer",
                              {"host": args.view_host, "port": args.view_port, "serve": bool(args.view),
                               "save_rrd": str(Path(args.save_rrd).resolve()) if args.save_rrd else ""}, namespace=ns))
    return run_graph(specs, env, compose=args.compose)


def _foxglove_node(host: str, port: int, namespace: str):  # -> homiebot.ros.bringup.graph.NodeSpec
    """The Foxglove bridge node of ``up --foxglove`` (ImportError naming the extra without it)."""
    from homiebot.ros.bringup.graph import NodeSpec
    from homiebot.viz import VIZ_EXTRA_HINT, VizUnavailable

    try:
        import foxglove  # noqa: F401
    except ImportError:
        raise VizUnavailable(f"--foxglove needs the viz extra: {VIZ_EXTRA_HINT}") from None
    if not 0 <= port <= 65535:
        raise ConfigError(f"--foxglove-port {port}: not a port number")
    return NodeSpec("foxglove", "homiebot.ros.nodes.foxglove", "homiebot_foxglove", {"host": host, "port": port}, namespace=namespace)


def _cmd_submit(args: argparse.Namespace) -> int:
    from homiebot.ros.kit.environment import check_ros

    check_ros()
    from homiebot.ros.clients.submit import TaskManagerLost, submit

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
        final = submit(request, timeout=args.timeout, wait=not args.no_wait, namespace=_namespace(args))
    except (TimeoutError, TaskManagerLost) as err:
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
    from homiebot.ros.clients import operator

    ns = _namespace(args)
    try:
        if args.command == "approve":
            return operator.approve_loop(namespace=ns)
        if args.command == "cancel":
            print(operator.cancel(args.episode, namespace=ns))
        else:
            print(operator.estop(args.command == "estop", namespace=ns))
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
    handled = [signal.SIGTERM, signal.SIGINT] + ([signal.SIGPIPE] if hasattr(signal, "SIGPIPE") else [])
    before = {sig: signal.getsignal(sig) for sig in handled}
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `homiebot run ... | head` should not raise
    signal.signal(signal.SIGTERM, _interrupt)  # a SIGTERM saves what was recorded, as Ctrl-C does
    signal.signal(signal.SIGINT, _interrupt)
    try:
        return _main(argv)
    finally:  # called in-process (tests, scripts): the caller's handlers again, so a broken pipe there stays an exception
        for sig, handler in before.items():
            if handler is not None:
                signal.signal(sig, handler)


_RECORDING = {"run", "submit", "eval", "bootstrap", "up"}  # commands whose records survive an interruption
# Counts checked before a command does anything (a refused count must not leave a folder behind).
_AT_LEAST = {"runs": 1, "max_rounds": 1, "workers": 1, "retries": 0, "steps": 1, "batch": 1, "epochs": 1, "hidden": 1,
             "negatives": 1, "lora_r": 1, "lora_alpha": 1, "image_size": 1}


def _check_counts(args: argparse.Namespace) -> None:
    for name, low in _AT_LEAST.items():
        value = getattr(args, name, None)
        if isinstance(value, int) and value < low:
            raise ConfigError(f"--{name.replace('_', '-')} must be at least {low} (got {value})")


def _main(argv: list[str] | None) -> int:
    args = _parser().parse_args(argv)
    handler = {"run": _cmd_run, "scene": _cmd_scene, "eval": _cmd_eval, "report": _cmd_report, "merge": _cmd_merge,
               "export": _cmd_export, "bootstrap": _cmd_bootstrap, "dagger": _cmd_dagger,
               "train": _cmd_train,
               "up": _cmd_up, "submit": _cmd_submit, "plugins": _cmd_plugins, "estop": _cmd_operator, "release": _cmd_operator,
               "cancel": _cmd_operator, "approve": _cmd_operator, "view": _cmd_view, "video": _cmd_video}[args.command]
    try:
        _check_counts(args)
        return handler(args)
    except (*USER_ERRORS, ImportError) as err:
        hint = missing_extra(err) if isinstance(err, ImportError) else None
        print(f"homiebot: error: {hint or err}", file=sys.stderr)
        return 2
    except StorageError as err:
        print(f"homiebot: error: {err}", file=sys.stderr)
        return STORAGE_FAILED
    except OSError as err:
        if err.errno not in STORAGE_ERRNOS:
            raise
        where = f" {err.filename}" if err.filename else ""
        print(f"homiebot: error: cannot write{where}: {err.strerror}; what finished before is kept", file=sys.stderr)
        return STORAGE_FAILED
    except KeyboardInterrupt:
        saved = "; what was recorded so far has been saved" if args.command in _RECORDING else ""
        print(f"homiebot: interrupted{saved}", file=sys.stderr)
        return INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
