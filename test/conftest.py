"""Shared fixtures: the demo scene and task, and a quick way to run an episode in-process."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("MUJOCO_GL", "osmesa")
os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")

from homiebot.config import RunConfig  # noqa: E402
from homiebot.runtime import run_episode  # noqa: E402
from homiebot.tasks import Task, load_task  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEMO_TASK = ROOT / "config" / "tasks" / "demo.yaml"


@pytest.fixture
def demo_task() -> Task:
    return load_task(DEMO_TASK)


def small_render() -> dict:
    """World parameters that keep tests fast: small views, no depth or segmentation."""
    return {"name": "embedded_home", "params": {"width": 64, "height": 64, "depth": False, "segmentation": False}}


def replay_config(outputs: list[str], profile: str | dict = "perfect", **overrides) -> RunConfig:
    return RunConfig.model_validate({"planner": {"name": "replay", "params": {"outputs": outputs}},
                                     "skill_profile": profile, "world": small_render(), **overrides})


def oracle_config(profile: str | dict = "perfect", **overrides) -> RunConfig:
    return RunConfig.model_validate({"planner": {"name": "oracle"}, "skill_profile": profile, "world": small_render(), **overrides})


def run(cfg: RunConfig, task: Task, out: Path | None = None):
    record, _ = run_episode(cfg, task, out)
    return record
