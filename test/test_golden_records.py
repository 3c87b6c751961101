"""Episode records that must not change when the runtime gets faster.

Each case runs one episode in-process and compares its ``episode.json`` with the one stored under
``test/data/golden/`` byte for byte, after leaving out what depends on the machine (timings, wall time,
where the record was written). Paths planned, renders seen by the planners, failures drawn: any change
to them shows up here. After an intended change of behaviour, write the files again with
``HOMIEBOT_WRITE_GOLDEN=1 python -m pytest test/test_golden_records.py`` and say why in the commit.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from homiebot.bench.suite import load_suite
from homiebot.config import RunConfig, load_config
from homiebot.core.tasks import Task, load_task
from homiebot.runtime import run_episode

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = Path(__file__).resolve().parent / "data" / "golden"
WRITE = os.environ.get("HOMIEBOT_WRITE_GOLDEN") == "1"
VOLATILE = ("timings", "wall_time", "planner_usage", "stamp")


def comparable(record: dict[str, Any]) -> str:
    """The record as canonical JSON without what depends on the machine or the moment."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in VOLATILE}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    data = strip(record)
    data.get("config", {}).get("output", {}).pop("dir", None)
    data.pop("video", None)
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


def _small_world(cfg: RunConfig, segmentation: bool = True) -> RunConfig:
    world = cfg.world.model_copy(update={"params": {**cfg.world.params, "width": 96, "height": 96, "depth": segmentation,
                                                    "segmentation": segmentation}})
    return cfg.model_copy(update={"world": world, "output": cfg.output.model_copy(update={"images": False})})


def _demo() -> Task:
    return load_task(ROOT / "config" / "tasks" / "demo.yaml")


def _home100(index: int) -> Task:
    return load_suite("home100", "test")[index]


def _config(name: str, planner: str | None = None, profile: str = "default") -> RunConfig:
    cfg = load_config(ROOT / "config" / name)
    data = cfg.model_dump(mode="json")
    if planner:
        data["planner"] = {"name": planner, "params": {}}
    data["skill_profile"] = profile
    return RunConfig.model_validate(data)


# (case name, config, task, seed): different homes, planners, failure draws and skill kinds
CASES = {
    "oracle_demo_seed0": lambda: (_config("sim.yaml", "oracle"), _demo(), 0),
    "oracle_demo_seed1": lambda: (_config("sim.yaml", "oracle"), _demo(), 1),
    "heuristic_demo_seed0": lambda: (_config("sim.yaml"), _demo(), 0),
    "heuristic_demo_seed4": lambda: (_config("sim.yaml"), _demo(), 4),
    "oracle_home100_0": lambda: (_config("sim.yaml", "oracle"), _home100(0), 11),
    "oracle_home100_4": lambda: (_config("sim.yaml", "oracle"), _home100(4), 12),
    "heuristic_home100_7": lambda: (_config("sim.yaml"), _home100(7), 13),
    "experts_demo_seed0": lambda: (_config("sim_expert.yaml", "oracle", "perfect"), _demo(), 0),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_episode_record_is_unchanged(case: str, tmp_path: Path) -> None:
    cfg, task, seed = CASES[case]()
    run_episode(_small_world(cfg).model_copy(update={"seed": seed}), task, tmp_path)
    produced = comparable(json.loads(next(tmp_path.glob("*/episode.json")).read_text()))
    golden = GOLDEN / f"{case}.json"
    if WRITE:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(produced)
    assert golden.is_file(), f"{golden} is missing: write it with HOMIEBOT_WRITE_GOLDEN=1"
    expected = golden.read_text()
    if produced != expected:
        diff = next(i for i, (a, b) in enumerate(zip(produced.splitlines(), expected.splitlines())) if a != b)
        lines = produced.splitlines()
        pytest.fail(f"{case}: the record differs from {golden.name} first at line {diff + 1}: "
                    f"{lines[diff] if diff < len(lines) else '(end)'!r} vs {expected.splitlines()[diff]!r}")
