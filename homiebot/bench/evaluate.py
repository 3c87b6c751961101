"""Parallel, resumable evaluation of a planner on a task suite.

Every (task, run) pair is one job with its own deterministic seed. Workers (separate processes) run
jobs and send back compact RunResults, which the parent appends to ``results.jsonl`` one complete
line at a time (flushed and fsynced). ``--resume`` reads that file, drops a line cut off by a kill,
and runs only the jobs that are missing, so nothing is lost and nothing is run twice. ``--shard i/n``
runs every n-th job, so several machines can split a suite; ``merge_results`` joins their folders.
Where the jobs run is a ``JobExecutor`` (``homiebot.bench.executors``): the local process pool by
default, or a Ray cluster; either way only this (driver) process writes ``results.jsonl``.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import resource
import socket
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from homiebot import __version__
from homiebot.bench import metrics
from homiebot.bench.executors import JobExecutor, JobResources, LocalExecutor, Retry
from homiebot.bench.results import RunResult, read_results, summarise_steps
from homiebot.bench.suite import load_suite, suite_path
from homiebot.config import RunConfig
from homiebot.core.errors import ConfigError
from homiebot.core.tasks import Task
from homiebot.planners.base import PlannerConfigError

RESULTS = "results.jsonl"
META = "run.json"
# what must match for --resume to continue a folder
RESUME_KEYS = ("suite", "planner", "planner_params", "split", "runs", "max_rounds", "skill_profile", "base_seed", "shard")


class EvalError(ValueError):
    """An evaluation that cannot start or continue; the message says what to do."""


@dataclass(frozen=True)
class Shard:
    index: int
    count: int

    @classmethod
    def parse(cls, text: str | None) -> Shard:
        if not text:
            return cls(0, 1)
        try:
            i, n = (int(x) for x in text.split("/"))
        except ValueError:
            raise EvalError(f"--shard must look like i/n (e.g. 0/4), got '{text}'") from None
        if not (n >= 1 and 0 <= i < n):
            raise EvalError(f"--shard {text}: need 0 <= i < n")
        return cls(i, n)

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def job_seed(base: int, task_id: str, run: int) -> int:
    """A seed that depends only on the task, the run index and the base seed (not on order or sharding)."""
    digest = hashlib.sha256(f"{base}:{task_id}:{run}".encode()).hexdigest()
    return int(digest[:8], 16)


# ---- worker side ---------------------------------------------------------------------------
_WORKER: dict[str, Any] = {}


def _init_worker(cfg_json: str, episodes_dir: str | None) -> None:
    os.environ.setdefault("MUJOCO_GL", "osmesa")
    _WORKER["cfg"] = RunConfig.model_validate_json(cfg_json)
    _WORKER["episodes"] = episodes_dir


def _worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def run_job(task_json: str, run: int, seed: int) -> tuple[str, str, float]:
    """Run one (task, run) in this process; returns (RunResult JSON, 'host:pid', peak RSS in MB)."""
    from homiebot.runtime import run_episode

    task = Task.model_validate_json(task_json)
    cfg: RunConfig = _WORKER["cfg"].model_copy(update={"seed": seed})
    out = Path(_WORKER["episodes"]) / f"run{run}" if _WORKER.get("episodes") else None
    try:
        record, _ = run_episode(cfg, task, out)
    except PlannerConfigError as err:  # the planner refuses this instruction: a failed run, and the evaluation goes on
        result = RunResult(task_id=task.id, run=run, seed=seed, planner=cfg.planner.name, split=task.split,
                           attributes=list(task.attributes), keypaths=task.keypaths, aliases=task.aliases,
                           expert_length=task.expert_length, termination="refused", goal_satisfied=False, error=str(err),
                           min_questions=task.min_questions, situated=task.situated)
        return result.model_dump_json(), _worker_id(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result = RunResult(
        task_id=task.id, run=run, seed=seed, planner=cfg.planner.name, split=task.split, attributes=list(task.attributes),
        keypaths=task.keypaths, aliases=task.aliases, expert_length=task.expert_length, steps=summarise_steps(record),
        ended=record.ended, termination=record.termination, goal_satisfied=record.goal_satisfied,
        path_length=record.path_length, wall_time=round(record.wall_time, 4),
        safety_events=dict(Counter(e.kind for e in record.safety_events)), min_questions=task.min_questions,
        error=record.error if record.termination == "reported" else None, situated=task.situated,
    )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result.model_dump_json(), _worker_id(), peak


def job_resources(cfg: RunConfig) -> JobResources:
    """What one episode of ``cfg`` needs: one CPU plus what its planner, world and skills declare."""
    specs = [cfg.planner.resources, cfg.world.resources, *(s.resources for s in cfg.skills)]
    return JobResources(num_cpus=1.0 + sum(r.num_cpus for r in specs), num_gpus=sum(r.num_gpus for r in specs),
                        memory_mb=sum(r.memory_mb for r in specs))


# ---- parent side ---------------------------------------------------------------------------
class Progress:
    """A one-line progress bar with rate and ETA (a line per 10% when not on a terminal); ``label`` names
    the stage it measures when a command runs several (``homiebot bootstrap``)."""

    def __init__(self, total: int, done_before: int, stream=sys.stderr, label: str = "") -> None:
        self.total, self.done, self.before = total, 0, done_before
        self.label = f"{label} " if label else ""
        self.successes = 0
        self.started = time.perf_counter()
        self.stream = stream
        self.tty = stream.isatty()
        self._last_decile = -1
        self.retried = 0  # jobs submitted again after their worker or node was lost

    def retry(self, note: str) -> None:
        """Report a job lost to the infrastructure (it runs again; it is not a result)."""
        self.retried += 1
        self.stream.write(("\n" if self.tty and self.done else "") + f"homiebot: {note}\n")
        self.stream.flush()

    def update(self, success: bool) -> None:
        self.done += 1
        self.successes += success
        elapsed = time.perf_counter() - self.started
        rate = self.done / elapsed if elapsed > 0 else 0.0
        eta = (self.total - self.done) / rate if rate > 0 else 0.0
        frac = self.done / self.total if self.total else 1.0
        bar = "#" * int(30 * frac) + "." * (30 - int(30 * frac))
        line = (f"{self.label}[{bar}] {self.done}/{self.total} ({100 * frac:5.1f}%) {rate:5.2f} ep/s "
                f"ETA {int(eta // 60)}m{int(eta % 60):02d}s  SR so far {100 * self.successes / self.done:5.1f}%"
                + (f"  ({self.retried} retried)" if self.retried else ""))
        if self.tty:
            self.stream.write("\r" + line)
            if self.done == self.total:
                self.stream.write("\n")
        elif int(10 * frac) != self._last_decile or self.done == self.total:
            self._last_decile = int(10 * frac)
            self.stream.write(line + "\n")
        self.stream.flush()


def append_line(fh, line: str) -> None:
    """Append one complete line and make it durable before going on (a kill loses at most the line being
    written). A write that fails (a full disk) is taken back whole: no half line is left for readers."""
    fh.flush()
    fd = fh.fileno()
    size = os.fstat(fd).st_size
    data = (line + "\n").encode("utf-8")
    try:
        written = os.write(fd, data)
        if written != len(data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), getattr(fh, "name", None))
        os.fsync(fd)
    except OSError:
        os.ftruncate(fd, size)
        raise


def _metadata(args: dict[str, Any], cfg: RunConfig) -> dict[str, Any]:
    return {
        "suite": str(args["suite"]), "suite_path": str(suite_path(args["suite"])), "planner": cfg.planner.name,
        "planner_params": cfg.planner.params, "split": args["split"], "runs": args["runs"], "max_rounds": cfg.max_rounds,
        "skill_profile": cfg.skill_profile, "base_seed": cfg.seed, "shard": str(args["shard"]),
        "homiebot": __version__, "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "config": cfg.model_dump(mode="json"),
    }


def changed_settings(old: dict[str, Any], new: dict[str, Any], keys: tuple[str, ...]) -> str:
    """``key: was X, now Y`` for every key whose value differs ('' when none does)."""
    return ", ".join(f"{k}: was {old.get(k)!r}, now {new.get(k)!r}" for k in keys if old.get(k) != new.get(k))


def _check_resumable(out: Path, meta: dict[str, Any], resume: bool) -> None:
    existing = out / META
    has_results = (out / RESULTS).is_file() and (out / RESULTS).stat().st_size > 0
    if not resume:
        if has_results:
            raise EvalError(f"{out} already holds results; add --resume to continue it, or choose another --out")
        return
    if not existing.is_file():
        if has_results:
            raise EvalError(f"{out} has results but no {META}; cannot tell what they were run with")
        return
    details = changed_settings(json.loads(existing.read_text()), meta, RESUME_KEYS)
    if details:
        raise EvalError(f"cannot resume {out} with different settings ({details}); use another --out")


def evaluate(suite: str, cfg: RunConfig, out: Path, runs: int = 3, split: str = "all", workers: int = 1,
             resume: bool = False, shard: str | None = None, save_episodes: bool = False,
             on_result: Callable[[RunResult], None] | None = None, progress: bool = True,
             executor: JobExecutor | None = None, label: str = "") -> dict[str, Any]:
    """Run (or continue) an evaluation into ``out``; returns the summary of all results there.

    ``executor`` says where jobs run (default: a local pool of ``workers`` processes)."""
    if runs < 1 or workers < 1:
        raise EvalError("--runs and --workers must be at least 1")
    sh = Shard.parse(shard)
    tasks = load_suite(suite, split)
    if not tasks:
        raise EvalError(f"suite '{suite}' has no tasks in split '{split}'")
    meta = _metadata({"suite": suite, "split": split, "runs": runs, "shard": sh}, cfg)
    out.mkdir(parents=True, exist_ok=True)
    with _exclusive(out):
        return _evaluate(tasks, cfg, out, meta, runs, executor or LocalExecutor(workers), resume, sh, save_episodes, on_result,
                         label if progress else None)


LOCK = ".lock"


@contextmanager
def _exclusive(out: Path) -> Iterator[None]:
    """Hold ``out/.lock`` (an advisory lock the kernel drops when the process dies, however it dies)."""
    fh = open(out / LOCK, "a+")
    try:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            owner = fh.read().strip() or "another process"
            raise EvalError(f"{out} is in use by another evaluation ({owner}); wait for it to end, or choose another --out") from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()}")
        fh.flush()
        yield
    finally:
        fh.close()


def _evaluate(tasks: list[Task], cfg: RunConfig, out: Path, meta: dict[str, Any], runs: int, executor: JobExecutor, resume: bool, sh: Shard,
              save_episodes: bool, on_result: Callable[[RunResult], None] | None, progress: str | None) -> dict[str, Any]:
    """The evaluation proper; ``progress`` is the progress bar's label (None: no bar)."""
    _check_resumable(out, meta, resume)
    if not (out / META).is_file():
        (out / META).write_text(json.dumps(meta, indent=2))

    previous = read_results(out / RESULTS)
    if (out / RESULTS).is_file() and previous.valid_bytes < (out / RESULTS).stat().st_size:
        with open(out / RESULTS, "r+b") as fh:  # drop a line cut off by a kill before appending
            fh.truncate(previous.valid_bytes)
    done = {r.key for r in previous.results}
    jobs = [(t, r) for t in tasks for r in range(runs)]
    jobs = [j for i, j in enumerate(jobs) if i % sh.count == sh.index and (j[0].id, j[1]) not in done]
    payload = [(t.model_dump_json(), r, job_seed(cfg.seed, t.id, r)) for t, r in jobs]

    bar = Progress(len(payload), len(done), label=progress) if progress is not None else None
    peaks: dict[str, float] = {}
    episodes = str(out / "episodes") if save_episodes else None
    started = time.perf_counter()
    retries: list[str] = []

    def on_retry(retry: Retry) -> None:
        task_json, run, _ = payload[retry.index]
        note = (f"job ({Task.model_validate_json(task_json).id}, run {run}) lost to the infrastructure ({retry.reason}); "
                f"submitted again (retry {retry.attempt})")
        retries.append(note)
        if bar:
            bar.retry(note)

    with open(out / RESULTS, "a") as results_fh:
        stream = closing(executor.run(run_job, payload, init=_init_worker, init_args=(cfg.model_dump_json(), episodes),
                                      resources=job_resources(cfg), on_retry=on_retry))
        with stream as finished:  # closing it ends the pool or cancels Ray tasks however the loop ends
            for _, (result_json, worker, peak) in finished:
                append_line(results_fh, result_json)
                peaks[worker] = max(peaks.get(worker, 0.0), peak)
                result = RunResult.model_validate_json(result_json)
                if bar:
                    bar.update(metrics.is_success(result))
                if on_result:
                    on_result(result)
    all_results = read_results(out / RESULTS).results
    summary: dict[str, Any] = metrics.summary(all_results)
    summary.update(new_runs=len(payload), wall_time=round(time.perf_counter() - started, 2),
                   peak_rss_mb_per_worker=sorted(round(v, 1) for v in peaks.values()), executor=executor.name,
                   infrastructure_retries=len(retries))
    return summary


def _missing_shards(metas: list[dict[str, Any]], counts: list[int]) -> list[str]:
    """What a set of shard folders lacks: shards never given, and shards with runs still to do."""
    problems: list[str] = []
    parsed = [Shard.parse(m["shard"]) if str(m.get("shard", "")).count("/") == 1 else None for m in metas]
    shards = [s for s in parsed if s is not None]
    if len(shards) != len(parsed) or not shards:
        return problems
    total = shards[0].count
    given = {s.index for s in shards if s.count == total}
    problems += [f"shard {i}/{total} is not among them" for i in range(total) if i not in given]
    for meta, shard, count in zip(metas, shards, counts):
        try:
            jobs = len(load_suite(meta["suite"], meta["split"])) * int(meta["runs"])
        except Exception:  # the suite cannot be read here: only the shard count is checked
            continue
        expected = len(range(shard.index, jobs, shard.count))
        if count < expected:
            problems.append(f"shard {shard} has {count} of its {expected} runs (resume it with `homiebot eval ... --resume`)")
    return problems


def merge_results(sources: list[Path], out: Path, allow_partial: bool = False) -> int:
    """Join shard folders into ``out`` (first copy of each (task, run) wins); returns the run count.

    Refuses (EvalError) a set of shards that is incomplete (a shard missing, or one with runs still to
    do) unless ``allow_partial``."""
    metas = []
    counts = []
    merged: dict[tuple[str, int], RunResult] = {}
    for src in sources:
        if not (src / RESULTS).is_file():
            raise EvalError(f"{src}: no {RESULTS}; is this a folder written by `homiebot eval --out`?")
        results = read_results(src / RESULTS).results
        for r in results:
            merged.setdefault(r.key, r)
        if (src / META).is_file():
            metas.append(json.loads((src / META).read_text()))
            counts.append(len(results))
    keys = [k for k in RESUME_KEYS if k != "shard"]
    if metas and any(any(m.get(k) != metas[0].get(k) for k in keys) for m in metas[1:]):
        raise EvalError("these folders were run with different settings (suite, planner, split, runs, rounds, profile or seed)")
    if not allow_partial and (missing := _missing_shards(metas, counts)):
        raise EvalError(f"incomplete set of shards: {'; '.join(missing)}; add --allow-partial to merge them anyway")
    out.mkdir(parents=True, exist_ok=True)
    if (out / RESULTS).exists():
        raise EvalError(f"{out} already holds results; merge into an empty folder")
    with open(out / RESULTS, "w") as fh:
        for key in sorted(merged):
            fh.write(merged[key].model_dump_json() + "\n")
    if metas:
        (out / META).write_text(json.dumps({**metas[0], "shard": "merged", "merged_from": [str(s) for s in sources]}, indent=2))
    return len(merged)


def config_for_eval(cfg: RunConfig, planner: str | None, max_rounds: int | None, profile: str | None) -> RunConfig:
    """Apply eval command-line overrides; evaluation never writes per-round images unless asked."""
    data = cfg.model_dump(mode="json")
    if planner and planner != data["planner"]["name"]:
        data["planner"] = {"name": planner, "params": {}}
    if max_rounds is not None:
        data["max_rounds"] = max_rounds
    if profile:
        data["skill_profile"] = profile
    data["output"]["video"] = False
    try:
        return RunConfig.model_validate(data)
    except ValueError as err:
        raise ConfigError(str(err)) from None
