"""The executor node runs a simulated home's skills itself, on its copy of the simulator, and the world node
takes over the state they leave (``/homiebot/world/apply``). Only the world, executor and mapper nodes run; a
plain client (rclpy and homiebot_msgs only) resets the world, observes a round, sends one ExecuteSubtask goal,
then reads the world: the robot is where the skill drove it, in the world's info and its next observation, and
the world node serves no attempts. The mapper's belief of each round is the truth's, from its own mirror of
the simulator (the world node publishes none), and a forged state of another episode gets none. Then the whole graph of config/sim_expert.yaml, whose policy skills drive the
copy's robot through its real control path: its episode is the in-process runner's, round by round.

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

import yaml  # noqa: E402

from homiebot.config import load_config  # noqa: E402
from homiebot.core.errors import take_snapshot  # noqa: E402
from homiebot.core.records import load_episode  # noqa: E402
from homiebot.core.tasks import load_task  # noqa: E402
from homiebot.ros.bringup.graph import graph  # noqa: E402
from homiebot.ros.bringup.up import spawn, spawn_all, stop  # noqa: E402
from homiebot.ros.kit.environment import ros_environment  # noqa: E402
from homiebot.runtime import build_world, run_episode, scene_for, scene_from_json  # noqa: E402
from test.conftest import DEMO_TASK, ROOT  # noqa: E402
from test.ros_domains import domain_of  # noqa: E402

CLIENT = Path(__file__).with_name("plain_client.py")
DOMAIN = domain_of(__name__)
EXPERT_DOMAIN = domain_of(__name__, 1)


@pytest.fixture(scope="module")
def world_and_executor(tmp_path_factory):
    """The world and executor nodes of a graph whose skills never fail by chance (small views)."""
    cfg = tmp_path_factory.mktemp("cfg") / "perfect.yaml"
    cfg.write_text("skill_profile: perfect\nworld: {name: embedded_home, params: {width: 32, height: 32, depth: false, segmentation: false}}\n")
    specs = {spec.name: spec for spec in graph(str(cfg), record_bag=False)}
    env = ros_environment(DOMAIN)
    procs = {name: spawn(specs[name], env) for name in ("world", "executor", "mapper")}  # processes we started
    try:
        yield env, cfg
    finally:
        stop(procs)


def test_the_world_takes_over_where_the_executors_copy_left_the_robot(world_and_executor) -> None:
    scene = scene_for(load_task(DEMO_TASK)).model_dump(mode="json", by_alias=True, exclude_none=True)
    env, _ = world_and_executor
    args = {"scene": scene, "target": "fridge", "model": "NoMaD", "mapper": True}
    done = subprocess.run([sys.executable, str(CLIENT), "on_the_copy"], input=json.dumps(args), env=env,
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
    _the_mappers_belief_is_the_truth(seen, scene, world_and_executor[1])


def _the_mappers_belief_is_the_truth(seen: dict, scene: dict, cfg: Path) -> None:
    """Round 1's belief equals the snapshot of the same scene in-process; in round 2 the robot stands at the fridge."""
    beliefs = seen["beliefs"]
    assert beliefs["world/belief"] == [], "the world node publishes no belief where the mapper builds it"
    by_round = {b["round"]: b for b in beliefs["belief"]}
    assert sorted(by_round) == [1, 2] and all(b["episode"] == seen["episode"] for b in beliefs["belief"]), beliefs["belief"]
    world = build_world(load_config(cfg), scene_from_json(scene, "embedded_home"))
    try:
        world.reset()
        truth = take_snapshot(world.belief)
    finally:
        world.close()
    first = by_round[1]
    assert first["held"] == (truth["held"] or "") and not first["resolves"]
    assert set(first["entities"]) == set(truth["entities"])
    for name, e in truth["entities"].items():
        kind, articulated, is_open, relation, distance, container = first["entities"][name]
        assert (kind, articulated, relation or None, container or None) == (e["kind"], e["articulated"], e["relation"], e["container"]), name
        assert is_open == (-1 if e["is_open"] is None else int(e["is_open"])) and distance == pytest.approx(e["distance"], abs=1e-6), name
    assert by_round[2]["entities"]["fridge"][4] < 1.5 < first["entities"]["fridge"][4], "the mapper follows the state the skill left"


def test_policy_skills_on_the_copy_give_the_in_process_episode(tmp_path: Path) -> None:
    data = yaml.safe_load((ROOT / "config" / "sim_expert.yaml").read_text())
    data["world"]["params"].update(width=64, height=64)  # the policies read 64x64 images either way
    cfg = tmp_path / "expert.yaml"
    cfg.write_text(yaml.safe_dump(data))
    env = ros_environment(EXPERT_DOMAIN)
    procs = spawn_all(graph(str(cfg), "", str(tmp_path / "graph"), record_bag=False), env)  # processes we started
    try:
        out = subprocess.run([sys.executable, "-m", "homiebot.cli", "submit", "--task", str(DEMO_TASK), "--seed", "0", "--timeout", "400"],
                             cwd=ROOT, env=env, capture_output=True, text=True, timeout=460)
    finally:
        stop(procs)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    line = next(x for x in out.stdout.splitlines() if x.startswith("episode record:"))
    ros = load_episode(Path(line.split(":", 1)[1].strip()))
    local, _ = run_episode(load_config(cfg).model_copy(update={"seed": 0}), load_task(DEMO_TASK))

    def rounds(record) -> list[tuple]:
        return [(s.subtask.text() if s.subtask else None, s.feedback.code, s.skill, s.attempts, s.path_length, s.inventory_after)
                for s in record.steps]

    assert ros.goal_satisfied and {s.skill for s in ros.steps if s.skill} >= {"policy:expert_waypoints", "policy:expert_ee"}
    assert rounds(ros) == rounds(local)
    assert abs(ros.path_length - local.path_length) < 1e-6
