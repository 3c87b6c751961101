"""The mapper's map reached the way the world node reaches it: ``RemoteKeeper`` -> typed requests ->
``MapServer`` -> typed responses, every message built and read as on the wire (no transport). A mapped
episode run so equals the in-process one (the same subtasks, models, feedback and inventories), and the
images and camera rig arrive as they were sent."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

pytest.importorskip("homiebot_msgs", reason="ROS 2 is an extra: pip install -e .[ros]")

from homiebot import runtime  # noqa: E402
from homiebot.config import RunConfig  # noqa: E402
from homiebot.core.contracts import VIEW_NAMES  # noqa: E402
from homiebot.core.rooms import rooms_from  # noqa: E402
from homiebot.core.tasks import load_task  # noqa: E402
from homiebot.ros.clients.remote_map import RemoteKeeper  # noqa: E402
from homiebot.ros.kit.services import ServiceError  # noqa: E402
from homiebot.ros.messages.map import integrate_request, observation_of, rig_of, rooms_msg, rooms_of  # noqa: E402
from homiebot.ros.nodes.map_server import MapServer  # noqa: E402
from homiebot.worlds.home.generate import generate_scene  # noqa: E402
from homiebot.worlds.home.mapping import rig_from_home  # noqa: E402
from homiebot.worlds.home.world import EmbeddedHome  # noqa: E402

CFG = {"planner": {"name": "heuristic"}, "perception": {"mode": "mapped", "detector": {"name": "sim_truth"}},
       "world": {"name": "embedded_home", "params": {"width": 96, "height": 96}}, "seed": 3}


class LoopBack:
    """A ServiceCaller's ``call`` that hands the request to a MapServer handler in this process."""

    def __init__(self, handler: Any) -> None:
        self.handler = handler

    def call(self, request: Any, timeout: float, what: str = "") -> Any:
        try:
            return self.handler(request)
        except ValueError as err:  # what the TypedServer answers INVALID_REQUEST with
            raise ServiceError(f"mapper: {err}", 1) from None


def test_a_mapped_episode_through_the_map_services_equals_the_in_process_one(monkeypatch, tmp_path):
    cfg = RunConfig.model_validate(CFG)
    task = load_task("config/tasks/demo.yaml")
    local, _ = runtime.run_episode(cfg, task)

    published: list[tuple[int, int]] = []
    server = MapServer(cfg, lambda: runtime.build_detector(cfg), lambda b, s, g: published.append((b.episode, b.round)), lambda _: None)
    callers = {name: LoopBack(handler) for name, handler in server.handlers().items()}
    build_world = runtime.build_world

    def remote(inner, floor_plan, holding):
        return RemoteKeeper(callers, inner, floor_plan, holding, scene=json.dumps(inner.scene_description()), world="embedded_home",
                            episode=lambda: 5, timeout=30.0)

    monkeypatch.setattr(runtime, "build_world", lambda c, scene, remote_map=None: build_world(c, scene, remote_map=remote))
    served, _ = runtime.run_episode(cfg, task)

    def trace(record):
        return [(s.subtask.text() if s.subtask else None, s.output.model if s.output else None, s.feedback.code, s.inventory_after)
                for s in record.steps]

    assert trace(served) == trace(local) and served.goal_satisfied == local.goal_satisfied
    assert any(s.subtask and s.subtask.action.value == "Explore" for s in served.steps)
    assert published == [(5, r) for r in range(1, len(served.steps) + 1)]  # one belief per agent round, none per exploration step


def test_images_and_the_camera_rig_arrive_as_they_were_sent():
    home = EmbeddedHome(generate_scene(0), width=48, height=48)
    try:
        home.reset()
        obs = home.observe(2)
        rig = rig_from_home(home)
        request = integrate_request(obs, rig, session="s", publish=False, episode=1, open_state={3: True}, holding=False, dynamic=None)
        back, back_rig = observation_of(request), rig_of(request)
    finally:
        home.close()
    for view in VIEW_NAMES:
        for kind in ("rgb", "depth", "segmentation"):
            sent, got = getattr(obs.views[view], kind), getattr(back.views[view], kind)
            assert (sent is None) == (got is None)
            if sent is not None:
                assert got.dtype == sent.dtype and np.array_equal(got, sent), (view, kind)
        assert np.allclose(back_rig.pose(view), rig.pose(view), atol=1e-12)  # geometry_msgs/Pose: through a quaternion
    assert back_rig.intrinsics == rig.intrinsics
    assert (back.round, back.labels, back.people) == (obs.round, obs.labels, obs.people)
    assert (back.pose.x, back.pose.y) == (obs.pose.x, obs.pose.y) and back.pose.yaw == pytest.approx(obs.pose.yaw, abs=1e-12)


def test_a_floor_plan_arrives_as_it_was_sent():
    home = EmbeddedHome(generate_scene(0), width=16, height=16)
    try:
        plan = home.floor_plan()
    finally:
        home.close()
    assert rooms_of(rooms_msg(plan)) == rooms_from(plan)
