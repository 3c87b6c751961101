"""Hostile input from a client that knows only rclpy and homiebot_msgs never brings a node down:
RunTask goals that cannot run are aborted with INVALID_TASK and a reason (and a failed status event),
malformed requests to the typed services are answered with an error code and a reason, a reset out of
turn is refused, and after a seeded fuzz of every subscribed topic the graph still runs
a task exactly as before, with every node the same process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from homiebot.core.records import load_episode  # noqa: E402
from homiebot.ros.bringup.graph import graph  # noqa: E402
from homiebot.ros.bringup.up import spawn_all, stop  # noqa: E402
from homiebot.ros.kit.environment import ros_environment  # noqa: E402
from test.ros_domains import domain_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "config" / "tasks" / "demo.yaml"
CLIENT = Path(__file__).with_name("plain_client.py")
DOMAIN = domain_of(__name__)


@pytest.fixture(scope="module")
def env():
    return ros_environment(DOMAIN)


@pytest.fixture(scope="module")
def running_graph(tmp_path_factory, env):
    cfg = tmp_path_factory.mktemp("cfg") / "graph.yaml"
    cfg.write_text("planner: {name: oracle}\nworld: {name: embedded_home, params: {width: 64, height: 64}}\n")
    out = tmp_path_factory.mktemp("runs")
    specs = graph(str(cfg), "", str(out), {"task_manager": {"connect_timeout": 30.0}})
    procs = spawn_all(specs, env)
    try:
        yield {"procs": procs, "out": out}
    finally:
        stop(procs)


def client(env, mode: str, args: dict, timeout: float = 300) -> dict:
    out = subprocess.run([sys.executable, str(CLIENT), mode], input=json.dumps(args), env=env, capture_output=True, text=True,
                         timeout=timeout)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def alive(procs) -> dict[str, int]:
    return {name: p.pid for name, p in procs.items() if p.poll() is None}


def without_timings(record) -> dict:
    data = record.model_dump(mode="json", exclude={"wall_time", "episode_id"})
    for step in data["steps"]:
        step.pop("timings")
    return data


def test_goals_that_cannot_run_are_aborted_with_a_reason_and_the_graph_goes_on(running_graph, env):
    pids = alive(running_graph["procs"])
    hostile = [({"instruction": "a" * 2001}, "at most 2000"), ({"instruction": "b" * 1_100_000}, "at most 2000"),
               ({"instruction": "  "}, "empty"), ({"instruction": "open the fridge", "task_file": str(DEMO)}, "one of"),
               ({"task_yaml": "{unclosed"}, "task_yaml is not YAML"), ({"task_yaml": "- a list"}, "must be a task"),
               ({"task_yaml": "{id: t, instruction: open the fridge, priority: 9}"}, "priority"),
               ({"task_file": "/no/such/task.yaml"}, "/no/such/task.yaml"),
               ({"instruction": "open the fridge", "scene": "/no/such/scene.yaml"}, "/no/such/scene.yaml")]
    runs = client(env, "goals", {"goals": [g for g, _ in hostile] + [{"instruction": "open the fridge", "scene": "7"}]})["goals"]
    for (goal, words), run in zip(hostile, runs[:-1]):
        assert (run["status"], run["code"], run["record"]) == (6, 1, ""), (goal, run)  # ABORTED, INVALID_TASK, nothing recorded
        assert words in run["msg"], (words, run["msg"][:300])
        assert run["events"] and run["events"][-1]["state"] == "failed" and run["events"][-1]["cause"] == "invalid", (goal, run)
    scene7 = runs[-1]
    assert scene7["status"] == 4 and scene7["events"][-1]["state"] == "finished", scene7  # a scene given as digits is a seed
    assert alive(running_graph["procs"]) == pids


def test_a_world_reset_out_of_turn_is_refused_with_an_error_code(running_graph, env):
    from homiebot.worlds.home.generate import generate_scene

    scene = generate_scene(3).model_dump(mode="json", by_alias=True, exclude_none=True)
    r = client(env, "session", {"scene": scene})
    assert r["held"]["code"] == 0, r
    assert r["intruder"]["code"] == 2 and "out of turn" in r["intruder"]["msg"] and "/someone_else" in r["intruder"]["msg"]  # OUT_OF_TURN
    assert r["released"]["code"] == 0 and r["after"]["code"] == 0, r  # released: a reset is in turn again


def test_malformed_service_requests_get_an_error_code_and_a_reason(running_graph, env):
    pids = alive(running_graph["procs"])
    answers = client(env, "services", {})["answers"]
    assert answers["reset_unreadable"]["code"] == 2 and "neither JSON nor YAML" in answers["reset_unreadable"]["msg"]  # INVALID_REQUEST
    assert answers["reset_not_a_task"]["code"] == 2 and "invalid task" in answers["reset_not_a_task"]["msg"]
    assert answers["plan_bad_feedback"]["code"] == 3 and "Z9" in answers["plan_bad_feedback"]["msg"]  # INVALID_REQUEST
    assert answers["check_bad_action"]["code"] == 1 and "Fly" in answers["check_bad_action"]["msg"]  # INVALID_REQUEST
    assert answers["check_bad_capability"]["code"] == 1 and "Teleport" in answers["check_bad_capability"]["msg"]
    assert answers["models"]["code"] == 0 and "Go to" in answers["models"]["models"]["NoMaD"]
    assert answers["world_reset_unreadable"]["code"] == 1 and "not JSON" in answers["world_reset_unreadable"]["msg"]  # INVALID_REQUEST
    assert answers["world_reset_not_a_scene"]["code"] == 1 and "scene" in answers["world_reset_not_a_scene"]["msg"]
    assert answers["world_goal_not_conditions"]["code"] == 1 and "goal" in answers["world_goal_not_conditions"]["msg"]
    assert answers["world_apply_old_episode"]["code"] == 1 and "is over" in answers["world_apply_old_episode"]["msg"]
    bad = answers["execute_bad_action"]
    assert (bad["status"], bad["code"]) == (6, 1) and "Fly" in bad["msg"], bad  # ABORTED, INVALID_REQUEST
    assert alive(running_graph["procs"]) == pids


def test_after_a_seeded_fuzz_of_every_topic_a_task_runs_as_on_a_fresh_graph(running_graph, env):
    procs = running_graph["procs"]
    before = client(env, "task", {"goal": {"task_file": str(DEMO), "use_seed": True, "seed": 3}})["events"][-1]
    assert before["state"] == "finished", before
    pids = alive(procs)
    assert len(pids) == len(procs)
    sent = client(env, "fuzz", {"seed": 14, "count": 600})["sent"]
    assert sum(sent.values()) == 600 and len(sent) == 19  # every per-round, camera, heartbeat and cancel topic was hit
    after = client(env, "task", {"goal": {"task_file": str(DEMO), "use_seed": True, "seed": 3}})["events"][-1]
    assert after["state"] == "finished", after
    assert alive(procs) == pids, "a node died or was replaced"
    first, second = load_episode(before["record"]), load_episode(after["record"])
    assert Path(before["record"]).parent != Path(after["record"]).parent
    assert without_timings(first) == without_timings(second)
