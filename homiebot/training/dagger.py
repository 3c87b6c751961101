"""``homiebot dagger``: data from the learner's own rounds, labelled by the privileged planner (DAgger).

A planner trained on the oracle's episodes only ever saw the oracle's states: it never saw a Pick fail
because it stood too far away, nor a target that is not in view yet. Here the trained CPU-recipe planner
drives episodes over the train split; every round the oracle (planning from the simulator's truth, from
whatever state the learner left) says what it would do next, and that answer becomes an SFT record of
the learner's prompt. When the oracle names something the learner has not seen yet, the label becomes
"Go to the room where it is", or once that room was reached "Go to what it lies on" (names the learner
knows), so that the data teaches looking around; when both were reached, the round is not kept. With probability ``beta`` a round executes the
label instead of the learner's choice, so the episodes also reach later stages of the task.

The output folder is an SFT export (``data.jsonl`` and ``stats.json``) holding the base export's
records followed by the new ones (source ``dagger``, in the order of suite, scale, run and task),
ready for ``homiebot train heads``; beside them ``dagger_jobs.jsonl`` (each finished episode's rounds,
written as it ends) and ``dagger.json`` (the settings) let ``--resume`` continue an interrupted run.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

from homiebot import runtime
from homiebot.bench.evaluate import Progress, append_line, changed_settings
from homiebot.bench.executors import LocalExecutor
from homiebot.bench.suite import load_suite
from homiebot.config import RunConfig
from homiebot.core import registry
from homiebot.core.records import atomic_write_text
from homiebot.core.tasks import Task
from homiebot.planners.base import EpisodeContext, Planner, PlannerReply, PlannerRequest
from homiebot.training.bootstrap import scaled_profile
from homiebot.training.train import TrainError


class Teacher(Planner):
    """Runs the learner, asks the oracle for the label of every round, keeps the labelled rounds."""

    needs_views = ("segmentation",)

    def __init__(self, learner: Any, oracle: Planner, beta: float, rng: random.Random, rows: list[dict[str, Any]]) -> None:
        self.learner, self.oracle, self.beta, self.rng, self.rows = learner, oracle, beta, rng, rows
        self.task_id = ""
        self.seed = 0

    def reset(self, context: EpisodeContext) -> None:
        """Both planners start the episode."""
        self.learner.reset(context)
        self.oracle.reset(context)
        self.task_id, self.seed = context.task.id, context.seed

    def _where(self, name: str) -> tuple[str | None, str | None]:
        """(room, receptacle) of ``name`` in the simulator's truth (None where unknown)."""
        state = getattr(self.oracle, "state", None)
        try:
            if state is None or state.lookup(name) is None:
                return None, None
            loc = state.locations.get(name)
            return state.room_of(name), (loc.receptacle if loc is not None else None)
        except (KeyError, AttributeError):
            return None, None

    def _search(self, name: str, known: set[str], history: list[str]) -> list[str] | None:
        """The label for a name not seen yet: its room, then what it lies on; None when both were reached."""
        room, receptacle = self._where(name)
        for place in (room, receptacle):
            reached = any(line.strip().endswith("(success)") and f"[Go to, {place}]" in line for line in history)
            if place and place in known and not reached:
                return ["Go to", place]
        return None

    def plan(self, request: PlannerRequest) -> PlannerReply:
        """The learner's answer (or, with probability beta, the label) goes back; the label is recorded."""
        mine = self.learner.plan(request)
        truth = self.oracle.plan(request)
        label = json.loads(truth.text)
        known = set(self.learner.known)
        parts = [str(p) for p in label["subtask"]]
        unseen = [n for n in parts[1:] if n not in known]
        if unseen:
            search = self._search(unseen[0], known, list(request.history))
            if search is not None:
                model = next((m.name for m in self.learner.models if "Go to" in m.actions and "room" in m.description.lower()),
                             next((m.name for m in self.learner.models if "Go to" in m.actions), None))
                label = {"analysis": f"the {unseen[0]} is not in view; I look for it at the {search[1]}", "subtask": search,
                         "model": model}
            else:
                label = None
        if label is not None:
            self.rows.append({
                "id": f"dagger/{self.task_id}_seed{self.seed}/round_{request.round:02d}", "task_id": self.task_id, "seed": self.seed,
                "round": request.round, "source": ["dagger"], "split": "train", "planner": "trained+oracle",
                "known": sorted(known), "rooms": sorted(self.learner.rooms),
                "messages": [{"role": "system", "content": request.system}, {"role": "user", "content": request.user},
                             {"role": "assistant", "content": json.dumps(label)}]})
        if self.rng.random() < self.beta:
            return PlannerReply(json.dumps(label) if label is not None else truth.text)
        return mine


# ---- jobs ------------------------------------------------------------------------------------
JOBS = "dagger_jobs.jsonl"  # one line per finished episode: its key and labelled rounds (what --resume keeps)
META = "dagger.json"  # the settings; --resume must use the same
RESUME_KEYS = ("model", "data", "suites", "scales", "beta", "runs", "seed", "max_rounds")


def _job_key(suite: str, scale: float, run: int, task_id: str) -> str:
    return f"{suite}|x{scale:g}|run{run}|{task_id}"


def _jobs(suites: Sequence[str], scales: Sequence[float], runs: int, seed: int) -> list[tuple[str, str, float, int]]:
    """Every episode as (key, task JSON, failure scale, episode seed), in the order of the output."""
    jobs = []
    for suite in suites:
        tasks = load_suite(suite, "train")
        for scale in scales:
            for run in range(runs):
                for i, task in enumerate(tasks):
                    jobs.append((_job_key(suite, scale, run, task.id), task.model_dump_json(), scale, seed * 100003 + run * 1009 + i))
    return jobs


_WORKER: dict[str, Any] = {}


def _init_worker(model: str, beta: float, seed: int, max_rounds: int) -> None:
    """Per worker process: the learner and the oracle are loaded once, for all its episodes."""
    from homiebot.planners.trained import TrainedPlanner

    os.environ.setdefault("MUJOCO_GL", "osmesa")
    _WORKER.clear()
    _WORKER.update(model=model, beta=beta, seed=seed, max_rounds=max_rounds)
    try:
        _WORKER.update(learner=TrainedPlanner(path=model), oracle=registry.load("planners", "oracle")())
    except Exception as err:  # noqa: BLE001 - a pool restarts a worker whose initialiser raises, forever: the job reports it
        _WORKER["error"] = err


def run_dagger_job(key: str, task_json: str, scale: float, episode_seed: int) -> tuple[str, list[str], bool, int]:
    """One episode driven by the teacher; returns (key, its labelled rounds as JSON lines, goal reached, rounds)."""
    if "error" in _WORKER:
        raise _WORKER["error"]
    rows: list[dict[str, Any]] = []
    rng = random.Random(f"{_WORKER['seed']}:{key}")  # the beta draws depend on the episode only, not on the worker
    teacher = Teacher(_WORKER["learner"], _WORKER["oracle"], _WORKER["beta"], rng, rows)
    cfg = RunConfig.model_validate({"planner": {"name": "trained", "params": {"path": _WORKER["model"]}},
                                    "skill_profile": scaled_profile(scale), "max_rounds": _WORKER["max_rounds"], "seed": episode_seed})
    record, _ = runtime.run_episode(cfg, Task.model_validate_json(task_json), planner=teacher)
    return key, [json.dumps(row, sort_keys=True) for row in rows], bool(record.goal_satisfied), len(record.steps)


# ---- driver --------------------------------------------------------------------------------
def _check_inputs(model: Path, base: Path, out: Path, beta: float, workers: int, resume: bool, meta: dict[str, Any]) -> None:
    from homiebot.planners.trained import read_manifest

    stats_file = base / "stats.json"
    if not (base / "data.jsonl").is_file() or not stats_file.is_file() or json.loads(stats_file.read_text()).get("format") != "sft":
        raise TrainError(f"--data {base}: not an SFT export folder (data.jsonl and stats.json of `homiebot export --format sft`)")
    if not 0.0 <= beta <= 1.0:
        raise TrainError("--beta must be between 0 and 1")
    if workers < 1:
        raise TrainError("--workers must be at least 1")
    if out.exists() and not out.is_dir():
        raise TrainError(f"--out {out}: is a file; choose a new folder")
    if resume:
        if (out / META).is_file():
            details = changed_settings(json.loads((out / META).read_text()), meta, RESUME_KEYS)
            if details:
                raise TrainError(f"cannot resume {out} with different settings ({details}); use another --out")
        elif out.is_dir() and any(out.iterdir()):
            raise TrainError(f"--out {out}: holds no dagger run to resume ({META} is missing); choose a new folder")
    elif out.is_dir() and any(out.iterdir()):
        raise TrainError(f"--out {out}: exists and is not an empty folder; add --resume to continue a dagger run there, or choose a new one")
    if read_manifest(model).get("recipe") != "minilm_heads":
        raise TrainError(f"--model {model}: dagger needs a folder of `homiebot train heads` (recipe minilm_heads)")


def _finished(path: Path) -> dict[str, dict[str, Any]]:
    """Episodes already labelled in ``path`` by key (a line cut off by a kill is dropped from the file)."""
    done: dict[str, dict[str, Any]] = {}
    if not path.is_file():
        return done
    valid = 0
    with path.open("rb") as fh:
        for line in fh:
            try:
                item = json.loads(line)
                done[item["key"]] = {"rows": list(item["rows"]), "rounds": int(item.get("rounds", 0))}
            except (ValueError, KeyError, TypeError):
                break
            valid += len(line)
    if valid < path.stat().st_size:
        with path.open("r+b") as fh:
            fh.truncate(valid)
    return done


def finished_episodes(out: Path) -> int:
    """How many episodes of the dagger run in ``out`` are recorded (what ``--resume`` keeps)."""
    return len(_finished(out / JOBS))


def dagger(model: Path, base: Path, out: Path, suites: Sequence[str], scales: Sequence[float], beta: float = 0.3,
           runs: int = 1, seed: int = 0, max_rounds: int = 20, progress: bool = True, workers: int = 1,
           resume: bool = False) -> dict[str, Any]:
    """Roll the trained planner in ``model`` out over the train split; write base + labelled rounds to ``out``.

    Episodes run in ``workers`` processes; each finished one is appended to ``out/dagger_jobs.jsonl``
    at once, so an interrupted run keeps them and ``resume`` runs only the rest. The output does not
    depend on the number of workers (each episode's beta draws are seeded by the episode)."""
    meta = {"model": str(model.resolve()), "data": str(base.resolve()), "suites": list(suites), "scales": list(scales), "beta": beta,
            "runs": runs, "seed": seed, "max_rounds": max_rounds}
    _check_inputs(model, base, out, beta, workers, resume, meta)
    jobs = _jobs(suites, scales, runs, seed)
    out.mkdir(parents=True, exist_ok=True)
    if not (out / META).is_file():
        atomic_write_text(out / META, json.dumps(meta, indent=2) + "\n")
    done = _finished(out / JOBS)
    todo = [job for job in jobs if job[0] not in done]
    bar = Progress(len(todo), len(done)) if progress and todo else None
    with (out / JOBS).open("a") as fh:
        stream = LocalExecutor(workers).run(run_dagger_job, todo, init=_init_worker, init_args=(str(model), beta, seed, max_rounds))
        with closing(stream) as finished:  # closing it ends the pool however the loop ends
            for _, (key, rows, reached, rounds) in finished:
                append_line(fh, json.dumps({"key": key, "rows": rows, "rounds": rounds}))
                done[key] = {"rows": rows, "rounds": rounds}
                if bar:
                    bar.update(reached)
    return write_combined(out, base, [key for key, *_ in jobs], done, beta)


def write_combined(out: Path, base: Path, keys: Sequence[str], done: dict[str, dict[str, Any]], beta: float) -> dict[str, Any]:
    """Write ``out``'s SFT export: the base export's records, then the labelled rounds of the episodes
    ``keys`` (in that order) from ``done``; returns its stats. ``combine_finished`` uses it for a run that
    was stopped early."""
    labelled = [row for key in keys for row in done[key]["rows"]]
    shutil.copy(base / "data.jsonl", out / "data.jsonl")
    with (out / "data.jsonl").open("a") as fh:
        fh.writelines(row + "\n" for row in labelled)
    stats = json.loads((base / "stats.json").read_text())
    stats = {**stats, "format": "sft", "base_records": stats.get("records", 0), "dagger_records": len(labelled),
             "dagger_episodes": len(keys), "dagger_rounds": sum(done[key]["rounds"] for key in keys), "records": stats.get("records", 0) + len(labelled), "beta": beta}
    atomic_write_text(out / "stats.json", json.dumps(stats, indent=2) + "\n")
    return stats


def combine_finished(out: Path) -> dict[str, Any]:
    """The export of a dagger run stopped before its end: the base records and the labelled rounds of the
    episodes it finished, in the run's job order (as the full run would write them); ``stats.json`` counts
    the episodes used and ``dagger_episodes_planned`` the run's total."""
    meta = json.loads((out / META).read_text())
    done = _finished(out / JOBS)
    jobs = _jobs(meta["suites"], meta["scales"], meta["runs"], meta["seed"])
    keys = [key for key, *_ in jobs if key in done]
    stats = write_combined(out, Path(meta["data"]), keys, done, float(meta["beta"]))
    stats["dagger_episodes_planned"] = len(jobs)
    atomic_write_text(out / "stats.json", json.dumps(stats, indent=2) + "\n")
    return stats
