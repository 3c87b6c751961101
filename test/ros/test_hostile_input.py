"""Hostile input from a client that knows only rclpy never brings a node down: unreadable and
invalid submissions get failed events (with their id when it can be read), a repeated id gets a
``duplicate`` event, a reset out of turn is refused, and after a seeded fuzz of every subscribed
topic the graph still runs a task exactly as before, with every node the same process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from homiebot.records import load_episode  # noqa: E402
from homiebot.ros.graph import graph  # noqa: E402
from homiebot.ros.up import ros_environment, spawn_all, stop  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "config" / "tasks" / "demo.yaml"
CLIENT = Path(__file__).with_name("plain_client.py")
DOMAIN = 150 + os.getpid() % 40


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


def test_hostile_submissions_get_failed_events_and_a_repeated_id_a_duplicate_event(running_graph, env):
    pids = alive(running_graph["procs"])
    raw = [json.dumps({"id": [1]}), '{"id": "trunc-1", "instruction": "open', "null", "[1, 2]", '"text"',
           json.dumps({"id": "long-1", "instruction": "a" * 2001}), json.dumps({"id": "big-1", "instruction": "b" * 1_100_000}),
           json.dumps({"id": "extra-1", "instruction": "open the fridge", "priority": 9}),
           json.dumps({"id": "blank-1", "instruction": "  "}), json.dumps({"id": "seed-1", "instruction": "open the fridge", "seed": "x"}),
           json.dumps({"id": "both-1", "instruction": "open the fridge", "task_file": str(DEMO)})]
    events = client(env, "submissions", {"raw": raw, "task_file": str(DEMO)})["events"]
    failed = {e.get("id"): e["reason"] for e in events if e["state"] == "failed"}
    assert failed[None].startswith("unreadable submission")  # no id can be read from truncated JSON, null, a list, a string
    assert sum(1 for e in events if e["state"] == "failed" and e.get("id") is None) >= 5  # incl. the 1.1 MB one
    assert "over the limit" in " ".join(e["reason"] for e in events if e.get("id") is None)
    for rid, words in [("long-1", "at most 2000"), ("extra-1", "priority"), ("blank-1", "empty"), ("seed-1", "seed"), ("both-1", "one of")]:
        assert rid in failed and words in failed[rid], (rid, failed.get(rid))
    assert not [e for e in events if e.get("id") == "trunc-1"]  # its id could not be read: the event has id None
    dup = [e["state"] for e in events if e.get("id") == "dup-1"]
    assert dup[0] == "accepted" and "duplicate" in dup and dup.count("accepted") == 1 and "finished" in dup
    scene7 = [e for e in events if e.get("id") == "scene-7"]
    assert scene7[-1]["state"] == "finished", scene7  # a scene given as a JSON number is a seed
    assert alive(running_graph["procs"]) == pids


def test_a_world_reset_out_of_turn_is_refused_with_an_error_reply(running_graph, env):
    from homiebot.worlds.home.generate import generate_scene

    scene = generate_scene(3).model_dump(mode="json", by_alias=True, exclude_none=True)
    r = client(env, "session", {"scene": scene})
    assert r["held"]["kind"] == "result"
    assert r["intruder"]["kind"] == "error" and "out of turn" in r["intruder"]["message"] and "/someone_else" in r["intruder"]["message"]
    assert r["after"]["kind"] == "result"  # released: a reset is in turn again


def test_after_a_seeded_fuzz_of_every_topic_a_task_runs_as_on_a_fresh_graph(running_graph, env):
    procs = running_graph["procs"]
    before = client(env, "task", {"submission": {"id": "fresh-1", "task_file": str(DEMO), "seed": 3}})["events"][-1]
    assert before["state"] == "finished", before
    pids = alive(procs)
    assert len(pids) == len(procs)
    sent = client(env, "fuzz", {"seed": 14, "count": 600})["sent"]
    assert sum(sent.values()) == 600 and len(sent) >= 30  # every JSON, request, reply and camera topic was hit
    after = client(env, "task", {"submission": {"id": "fuzzed-1", "task_file": str(DEMO), "seed": 3}})["events"][-1]
    assert after["state"] == "finished", after
    assert alive(procs) == pids, "a node died or was replaced"
    first, second = load_episode(before["record"]), load_episode(after["record"])
    assert Path(before["record"]).parent != Path(after["record"]).parent
    assert without_timings(first) == without_timings(second)
