"""Issue 62's faults (items 2, 3 and 5) from a plain client (rclpy and homiebot_msgs only, test/ros/fault_client.py
and plain_client.py): hostile RunTask goals are refused with INVALID_TASK and a reason before anything runs (an
empty goal, /dev/zero or a FIFO as task_file, deep nesting, a blank instruction, a seed of 500 digits), a burst of
301 goals is answered whole, heartbeats of nodes that are not the graph's do not block later tasks, a world reset
that the world refuses takes no session, and a second graph in the same namespace refuses to start.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from homiebot.ros.bringup.graph import graph  # noqa: E402
from homiebot.ros.bringup.up import spawn_all, stop  # noqa: E402
from homiebot.ros.kit.environment import ros_environment  # noqa: E402
from test.ros_domains import domain_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "config" / "tasks" / "demo.yaml"
HERE = Path(__file__).parent
DOMAIN = domain_of(__name__)
ABORTED, SUCCEEDED, INVALID_TASK = 6, 4, 1


@pytest.fixture(scope="module")
def env():
    return ros_environment(DOMAIN)


@pytest.fixture(scope="module")
def running_graph(tmp_path_factory, env):
    cfg = tmp_path_factory.mktemp("cfg") / "graph.yaml"
    cfg.write_text("planner: {name: oracle}\nworld: {name: embedded_home, params: {width: 64, height: 64}}\n")
    out = tmp_path_factory.mktemp("runs")
    specs = graph(str(cfg), "", str(out), {"task_manager": {"connect_timeout": 30.0}}, record_bag=False)
    procs = spawn_all(specs, env)
    try:
        yield {"procs": procs, "out": out, "cfg": cfg}
    finally:
        stop(procs)


def client(env, script: str, mode: str, args: dict, timeout: float = 400) -> dict:
    out = subprocess.run([sys.executable, str(HERE / script), mode], input=json.dumps(args), env=env, capture_output=True, text=True,
                         timeout=timeout)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def alive(procs) -> dict[str, int]:
    return {name: p.pid for name, p in procs.items() if p.poll() is None}


def test_hostile_goals_are_refused_with_invalid_task_and_a_reason_before_anything_runs(running_graph, env, tmp_path):
    pids = alive(running_graph["procs"])
    fifo = tmp_path / "task.fifo"
    os.mkfifo(fifo)
    big = tmp_path / "big.yaml"
    big.write_text("instruction: open the fridge\n# " + "x" * (2 << 20) + "\n")
    blank = tmp_path / "blank.yaml"
    blank.write_text("instruction: ''\nscene_seed: 3\n")
    hostile = [({}, "empty"), ({"instruction": ""}, "empty"), ({"use_seed": True, "seed": 3}, "empty"),
               ({"task_file": "/dev/zero"}, "device"), ({"task_file": str(fifo)}, "FIFO"), ({"task_file": str(tmp_path)}, "directory"),
               ({"task_file": str(big)}, "bytes"), ({"task_file": str(blank)}, "instruction is empty"),
               ({"task_yaml": "{instruction: " * 2000 + "x" + "}" * 2000}, "nested too deeply"),
               ({"task_yaml": "instruction: a\nscene: " + "[" * 200 + "]" * 200}, "nested too deeply"),
               ({"task_yaml": "{instruction: ''}"}, "instruction is empty"),
               ({"task_yaml": "{instruction: '   ', scene_seed: 3}"}, "instruction is empty"),
               ({"instruction": "open the fridge", "scene": "9" * 500}, "not a seed"),
               ({"task_yaml": "{instruction: open the fridge, scene_seed: " + "9" * 500 + "}"}, "not a seed")]
    runs = client(env, "plain_client.py", "goals", {"goals": [g for g, _ in hostile] + [{"instruction": "open the fridge", "scene": "7"}]})
    for (goal, words), run in zip(hostile, runs["goals"][:-1]):
        shown = {k: (v[:60] if isinstance(v, str) else v) for k, v in goal.items()}
        assert (run["status"], run["code"], run["record"]) == (ABORTED, INVALID_TASK, ""), (shown, run["msg"][:300])
        assert words in run["msg"], (shown, words, run["msg"][:300])
        assert run["events"] and run["events"][-1]["state"] == "failed" and run["events"][-1]["cause"] == "invalid", (shown, run["events"])
        assert words in run["events"][-1]["reason"], (shown, run["events"][-1])
    assert runs["goals"][-1]["status"] == SUCCEEDED, runs["goals"][-1]  # the graph goes on
    assert alive(running_graph["procs"]) == pids, "a node died or was replaced"


def test_a_burst_of_301_goals_is_answered_whole(running_graph, env):
    """Every goal of a burst gets its answer (accepted, then aborted with the reason: these are empty goals), none
    is dropped unanswered."""
    seen = client(env, "fault_client.py", "burst", {"count": 301, "goal": {}, "timeout": 240.0})
    assert seen["answered"] == seen["accepted"] == seen["ended"] == 301, seen
    assert seen["codes"] == [INVALID_TASK] and all("empty" in m for m in seen["messages"]), seen
    # the status topic keeps its last 100 events: a client reading it slower than they come may miss some
    assert seen["failed_events"] > 0 and seen["causes"] == ["invalid"], seen


def test_heartbeats_of_nodes_that_are_not_the_graphs_do_not_block_later_tasks(running_graph, env):
    seen = client(env, "fault_client.py", "ghost", {"names": ["ghost", "{", "NaN"], "silence": 4.0,
                                                    "goal": {"task_file": str(DEMO), "use_seed": True, "seed": 2}})
    assert seen["result"]["status"] == SUCCEEDED and seen["events"][-1]["state"] == "finished", seen
    assert "ghost" not in json.dumps(seen["events"])
    assert seen["seconds"] < 25.0, seen  # not held up by a wait for the ghost (connect_timeout is 30 s)


def test_a_refused_world_reset_of_another_owner_takes_no_session(running_graph, env):
    seen = client(env, "fault_client.py", "intruder", {"scene": {"rooms": 5}, "goal": {"task_file": str(DEMO), "use_seed": True, "seed": 2}})
    assert seen["reset"] is not None and seen["reset"]["code"] == 1, seen  # INVALID_REQUEST: not a scene
    assert seen["result"]["status"] == SUCCEEDED and seen["events"][-1]["state"] == "finished", seen  # not "out of turn"


def test_a_second_graph_in_the_same_namespace_refuses_to_start_naming_the_first(running_graph, env, tmp_path):
    pids = alive(running_graph["procs"])
    try:
        second = subprocess.run([sys.executable, "-m", "homiebot.cli", "up", "--config", str(running_graph["cfg"]), "--out", str(tmp_path),
                                 "--no-bag"], env=env, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("a second graph started beside the first")
    assert second.returncode == 3, (second.returncode, second.stderr[-2000:])
    lines = [line for line in second.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "already running in namespace /homiebot" in lines[0], second.stderr[-2000:]
    pid = int(re.search(r"pid (\d+)", lines[0]).group(1))
    assert pid in pids.values(), (lines[0], pids)
    assert "Traceback" not in second.stderr
    assert alive(running_graph["procs"]) == pids
