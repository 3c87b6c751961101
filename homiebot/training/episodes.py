"""Finding the episodes to export, and what each round of them could know.

A SOURCE is an episode folder (holding ``episode.json``), an evaluation folder written with
``--save-episodes`` (its ``results.jsonl`` tells each task's split), or any folder holding episode
folders below it. Unfinished ``.partial`` folders are skipped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from homiebot.core.contracts import EpisodeRecord, StepRecord
from homiebot.core.records import load_episode


class ExportError(ValueError):
    """Sources or options that cannot be exported; the message says what to fix."""


@dataclass
class Episode:
    """One recorded episode and where it came from."""

    record: EpisodeRecord
    folder: Path
    key: str  # stable name inside the export (relative path of the folder below its source)
    split: str  # train, test or unknown
    seen: dict[int, set[str]] = field(default_factory=dict)  # round -> names its views showed (when recorded)

    @property
    def successful(self) -> bool:
        """Goal reached (for a task without a checkable goal: the planner ended it with End)."""
        r = self.record
        return bool(r.goal_satisfied) if r.goal_satisfied is not None else r.ended

    @property
    def profile(self) -> str:
        p = self.record.config.get("skill_profile", "unknown")
        return p if isinstance(p, str) else str(p.get("name", "custom")) if isinstance(p, dict) else "custom"

    def rooms(self) -> set[str]:
        return {str(room.get("name")) for room in self.record.scene.get("rooms", []) if isinstance(room, dict)}

    def known_names(self, step_index: int) -> set[str] | None:
        """Names the planner could have known when deciding step ``step_index`` (0-based): whatever the
        views of this or an earlier round showed, targets and places of earlier subtasks, what it held,
        and the rooms of the floor plan (the map). None when the views' contents were not recorded."""
        steps = self.record.steps
        rounds = [s.round for s in steps[: step_index + 1]]
        if not all(r in self.seen for r in rounds):
            return None
        known = set().union(*(self.seen[r] for r in rounds)) | self.rooms()
        for s in steps[:step_index]:
            if s.output is not None:
                known |= {n for n in (s.output.subtask.target, s.output.subtask.place) if n}
        known |= set(steps[step_index].inventory_before)
        return known


def target_names(step: StepRecord) -> list[str]:
    """The names a step's subtask refers to (target, and place for Put)."""
    if step.output is None:
        return []
    sub = step.output.subtask
    return [n for n in (sub.target, sub.place) if n]


def _split_map(eval_dir: Path) -> dict[str, str]:
    splits: dict[str, str] = {}
    results = eval_dir / "results.jsonl"
    if results.is_file():
        for line in results.read_text().splitlines():
            try:
                row = json.loads(line)
                splits[str(row["task_id"])] = str(row.get("split") or "unknown")
            except (ValueError, KeyError, TypeError):
                continue  # a cut-off line: that run's episode keeps the suite's split
    return splits


def _suite_splits(suite: str | None) -> dict[str, str]:
    if not suite:
        return {}
    from homiebot.bench.suite import load_suite
    from homiebot.core.tasks import TaskError

    try:
        return {t.id: t.split or "unknown" for t in load_suite(suite, "all")}
    except TaskError as err:
        raise ExportError(f"--suite: {err}") from None


def _read_seen(folder: Path, record: EpisodeRecord) -> dict[int, set[str]]:
    seen: dict[int, set[str]] = {}
    for step in record.steps:
        path = folder / "images" / f"round_{step.round:02d}_seen.json"
        try:
            names = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(names, list):
            seen[step.round] = {str(n) for n in names}
    return seen


def find_episodes(sources: list[str | Path], suite: str | None = "home100") -> list[Episode]:
    """Every finished episode under ``sources``, in a stable order (by source, then folder path).

    A task's split comes from the results of the evaluation folder it was found in, else from
    ``suite``; a task in neither is 'unknown'."""
    cache: dict[str, dict[str, str]] = {}

    def suite_split(task_id: str) -> str:
        if "suite" not in cache:  # read only when an episode is not in an evaluation's results (100 task files)
            cache["suite"] = _suite_splits(suite)
        return cache["suite"].get(task_id, "unknown")

    for src in sources:
        if not Path(src).exists():
            raise ExportError(f"source {src}: no such file or folder")
    episodes: list[Episode] = []
    seen_folders: set[Path] = set()
    splits_of: dict[Path, dict[str, str]] = {}
    for n, src in enumerate(sources):
        root = Path(src)
        if not root.exists():
            raise ExportError(f"source {root}: no such file or folder")
        if root.is_file():
            if root.name != "episode.json":
                raise ExportError(f"source {root}: give an episode folder, an evaluation folder or a folder of episodes")
            root = root.parent
        files = [root / "episode.json"] if (root / "episode.json").is_file() else sorted(root.rglob("episode.json"))
        files = [f for f in files if not any(part.endswith(".partial") for part in f.relative_to(root).parts)]
        if not files:
            raise ExportError(f"source {root}: holds no episode.json (was the evaluation run with --save-episodes?)")
        for f in files:
            folder = f.parent.resolve()
            if folder in seen_folders:
                continue
            seen_folders.add(folder)
            try:
                record = load_episode(f)
            except (ValueError, ValidationError) as err:
                raise ExportError(f"{f}: not a readable episode record ({str(err).splitlines()[0]})") from None
            evals = [p for p in [f.parent, *f.parents] if (p / "results.jsonl").is_file()]
            split = "unknown"
            if record.task_id:
                if evals[:1] and evals[0] not in splits_of:
                    splits_of[evals[0]] = _split_map(evals[0])
                split = (splits_of[evals[0]].get(record.task_id) if evals else None) or suite_split(record.task_id)
            rel = f.parent.relative_to(root).as_posix()
            key = f"s{n}/{rel}" if rel != "." else f"s{n}/{root.name}"
            episodes.append(Episode(record, f.parent, key, split, _read_seen(f.parent, record)))
    return episodes
