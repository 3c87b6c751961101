"""Task suites: folders of task YAML files. Built-in suites live in ``homiebot/bench/suites/<name>``."""

from __future__ import annotations

from pathlib import Path

from homiebot.core.tasks import Task, TaskError, load_task

BUILTIN = Path(__file__).parent / "suites"
SPLITS = ("train", "dev", "test", "all")


def builtin_suites() -> list[str]:
    """Names of the suites shipped with homiebot."""
    return sorted(p.name for p in BUILTIN.iterdir() if p.is_dir()) if BUILTIN.is_dir() else []


def suite_path(name_or_dir: str | Path) -> Path:
    """The folder of a built-in suite name, or the given folder."""
    path = Path(name_or_dir)
    if path.is_dir():
        return path
    if (BUILTIN / str(name_or_dir)).is_dir():
        return BUILTIN / str(name_or_dir)
    raise TaskError(f"no suite '{name_or_dir}': not a folder, and not a built-in suite ({', '.join(builtin_suites()) or 'none'})")


def load_suite(name_or_dir: str | Path, split: str = "all") -> list[Task]:
    """All tasks of a suite (sorted by id), optionally only one split; every file is validated."""
    if split not in SPLITS:
        raise TaskError(f"unknown split '{split}'; choose one of {', '.join(SPLITS)}")
    folder = suite_path(name_or_dir)
    files = sorted(folder.glob("*.yaml")) + sorted(folder.glob("*.yml"))
    if not files:
        raise TaskError(f"suite folder {folder} holds no task files (*.yaml)")
    tasks: list[Task] = []
    origin: dict[str, Path] = {}
    for path in files:
        task = load_task(path)
        if not task.keypaths:
            raise TaskError(f"{path}: keypaths: a benchmark task needs at least one keypath")
        if task.id in origin:
            raise TaskError(f"{path}: id: '{task.id}' is also the id of {origin[task.id]}")
        origin[task.id] = path
        tasks.append(task)
    tasks.sort(key=lambda t: t.id)
    return [t for t in tasks if split == "all" or t.split == split]
