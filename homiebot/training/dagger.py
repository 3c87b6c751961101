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
records followed by the new ones (source ``dagger``), ready for ``homiebot train heads``.
"""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from homiebot import registry, runtime
from homiebot.bench.suite import load_suite
from homiebot.config import RunConfig
from homiebot.planners.base import EpisodeContext, Planner, PlannerReply, PlannerRequest
from homiebot.records import atomic_write_text
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


@contextmanager
def _planner(planner: Planner) -> Iterator[None]:
    """Episodes built by ``runtime.run_episode`` use ``planner`` (the teacher is no registered plugin)."""
    real = runtime.build_planner
    runtime.build_planner = lambda cfg, override=None: planner  # type: ignore[assignment]
    try:
        yield
    finally:
        runtime.build_planner = real  # type: ignore[assignment]


def dagger(model: Path, base: Path, out: Path, suites: Sequence[str], scales: Sequence[float], beta: float = 0.3,
           runs: int = 1, seed: int = 0, max_rounds: int = 20, progress: bool = True) -> dict[str, Any]:
    """Roll the trained planner in ``model`` out over the train split; write base + labelled rounds to ``out``."""
    from homiebot.planners.trained import TrainedPlanner

    stats_file = base / "stats.json"
    if not (base / "data.jsonl").is_file() or not stats_file.is_file() or json.loads(stats_file.read_text()).get("format") != "sft":
        raise TrainError(f"--data {base}: not an SFT export folder (data.jsonl and stats.json of `homiebot export --format sft`)")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise TrainError(f"--out {out}: exists and is not an empty folder; choose a new one")
    if not 0.0 <= beta <= 1.0:
        raise TrainError("--beta must be between 0 and 1")
    learner = TrainedPlanner(path=str(model))
    if not hasattr(learner, "known"):
        raise TrainError(f"--model {model}: dagger needs a folder of `homiebot train heads` (recipe minilm_heads)")
    oracle = registry.load("planners", "oracle")()
    rows: list[dict[str, Any]] = []
    rng = random.Random(seed)
    teacher = Teacher(learner, oracle, beta, rng, rows)
    episodes = 0
    with _planner(teacher):
        for suite in suites:
            tasks = load_suite(suite, "train")
            for scale in scales:
                for run in range(runs):
                    for i, task in enumerate(tasks):
                        cfg = RunConfig.model_validate({"planner": {"name": "trained", "params": {"path": str(model)}},
                                                        "skill_profile": scaled_profile(scale), "max_rounds": max_rounds,
                                                        "seed": seed * 100003 + run * 1009 + i})
                        runtime.run_episode(cfg, task)
                        episodes += 1
                        if progress:
                            print(f"\rdagger: {episodes} episodes, {len(rows)} labelled rounds", end="", flush=True)
    if progress:
        print()
    out.mkdir(parents=True, exist_ok=True)
    shutil.copy(base / "data.jsonl", out / "data.jsonl")
    with (out / "data.jsonl").open("a") as fh:
        for row in rows:
            fh.write(json.dumps(row, sort_keys=True) + "\n")
    stats = json.loads(stats_file.read_text())
    stats = {**stats, "format": "sft", "base_records": stats.get("records", 0), "dagger_records": len(rows),
             "dagger_episodes": episodes, "records": stats.get("records", 0) + len(rows), "beta": beta}
    atomic_write_text(out / "stats.json", json.dumps(stats, indent=2) + "\n")
    return stats
