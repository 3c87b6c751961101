"""The executor node runs a simulated home's skills itself, on its copy of the simulator, and the world node
takes over the state they leave (``/homiebot/world/apply``). Only the world and executor nodes run; a plain
client (rclpy and homiebot_msgs only) resets the world, observes a round, sends one ExecuteSubtask goal, then
reads the world: the robot is where the skill drove it, in the world's info and its next observation, and
the world node serves no attempts.

Localhost-only discovery and a ROS_DOMAIN_ID of its own, one module at a time (test/conftest.py).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from homiebot.ros.graph import graph  # noqa: E402
from homiebot.ros.up import ros_environment, spawn, stop  # noqa: E402
from homiebot.runtime import scene_for  # noqa: E402
from homiebot.tasks import load_task  # noqa: E402
from test.conftest import DEMO_TASK  # noqa: E402
from test.ros_domains import domain_of  # noqa: E402

CLIENT = Path(__file__).with_name("plain_client.py")
DOMAIN = domain_of(__name__)


@pytest.fixture(scope="module")
def world_and_executor(tmp_path_factory):
    """The world and executor nodes of a graph whose skills never fail by chance (small views)."""
    cfg = tmp_path_factory.mktemp("cfg") / "perfect.yaml"
    cfg.write_text("skill_profile: perfect\nworld: {name: embedded_home, params: {width: 32, height: 32, depth: false, segmentation: false}}\n")
    specs = {spec.name: spec for spec in graph(str(cfg), record_bag=False)}
    env = ros_environment(DOMAIN)
    procs = {name: spawn(specs[name], env) for name in ("world", "executor")}  # processes we started
    try:
        yield env
    finally:
        stop(procs)


def test_the_world_takes_over_where_the_executors_copy_left_the_robot(world_and_executor) -> None:
    scene = scene_for(load_task(DEMO_TASK)).model_dump(mode="json", by_alias=True, exclude_none=True)
    args = {"scene": scene, "target": "fridge", "model": "NoMaD"}
    done = subprocess.run([sys.executable, str(CLIENT), "on_the_copy"], input=json.dumps(args), env=world_and_executor,
                          capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["code"] == 0 and seen["success"] and seen["attempts"] == 1, seen
    assert seen["skill"] == "PrivilegedNavigation" and seen["travelled"] > 1.0, seen
    # the result carries the world's own path length once it took the state over; its info and next round agree
    assert seen["has_world_state"] and seen["result_path"] == pytest.approx(seen["travelled"]), seen
    assert seen["world_path"] == pytest.approx(seen["travelled"]) and seen["observed_path"] == pytest.approx(seen["travelled"]), seen
    assert math.dist(seen["before"], seen["after"]) > 1.0, seen  # the world renders the robot where the copy drove it
    assert "/homiebot/world/apply" in seen["world_services"], seen
    assert not {"/homiebot/world/attempt", "/homiebot/world/skills"} & set(seen["world_services"]), seen  # no attempt runs there
