"""The planner node's mirror of the simulator: every episode in a home starts from its initial state."""

from __future__ import annotations

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from homiebot.core.tasks import Task, load_task  # noqa: E402
from homiebot.ros.nodes.planner import _InitialStates  # noqa: E402
from test.conftest import DEMO_TASK  # noqa: E402


def test_the_mirror_starts_each_episode_in_the_initial_state():
    states, task = _InitialStates("embedded_home"), load_task(DEMO_TASK)
    mirror = states.of(task)
    state = mirror.ground_truth()
    initial = state.dynamic()
    moved = {**initial, "robot": [1.0, 1.0, 0.5], "held": "green_can", "path_length": 7.5,
             "is_open": {k: not v for k, v in initial["is_open"].items()}}
    mirror.mirror.apply_dynamic(moved)  # what the world node's state messages do during an episode
    assert state.dynamic() == moved

    again = states.of(task).ground_truth()
    assert again is state and again.dynamic() == initial  # reset in place, not rebuilt

    assert states.of(Task(instruction="x", scene_seed=5)).ground_truth() is not state  # another home: built from its scene
    assert states.of(Task(instruction="somewhere real")) is None  # a task without a scene has no mirror
