"""RunTask goals checked before anything runs (homiebot/ros/clients/goal_checks.py), without a graph: empty goals,
task files that are not regular files or are too big, nesting, blank instructions, seeds out of range."""

from __future__ import annotations

import os
import time

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from homiebot_msgs.action import RunTask  # noqa: E402

from homiebot.ros.clients.goal_checks import MAX_TASK_BYTES, GoalError, check_seed, parse_task, task_file_data  # noqa: E402
from homiebot.ros.clients.run_task import goal_to_request  # noqa: E402


def refused(**fields) -> str:
    with pytest.raises(GoalError) as err:
        request = goal_to_request(RunTask.Goal(**fields))
        if "task_file" in request:  # as the RunTask server reads it, at once
            task_file_data(request["task_file"])
    return str(err.value)


def test_an_empty_goal_is_refused():
    assert "empty" in refused()
    assert "empty" in refused(instruction="")
    assert "empty" in refused(use_seed=True, seed=4)
    assert goal_to_request(RunTask.Goal(scene="3")) == {"scene": 3}  # the task generated for seed 3, as `run --scene 3`


def test_a_task_file_must_be_a_small_regular_file_and_is_never_read_whole(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    started = time.monotonic()
    assert "FIFO" in refused(task_file=str(fifo))  # no writer: an open that blocked would hang here
    assert "device" in refused(task_file="/dev/zero")
    assert "directory" in refused(task_file=str(tmp_path))
    assert time.monotonic() - started < 5
    big = tmp_path / "big.yaml"
    big.write_bytes(b"instruction: x\n#" + b"x" * MAX_TASK_BYTES)
    assert "bytes" in refused(task_file=str(big))
    assert "No such file" in refused(task_file=str(tmp_path / "none.yaml"))
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"\xff\xfe\x00")
    assert "not a text file" in refused(task_file=str(binary))
    good = tmp_path / "good.yaml"
    good.write_text("instruction: open the fridge\nscene_seed: 3\n")
    assert task_file_data(str(good)) == {"instruction": "open the fridge", "scene_seed": 3}


def test_deep_or_huge_yaml_and_blank_instructions_are_refused_with_a_reason():
    assert "nested too deeply" in refused(task_yaml="{a: " * 2000 + "1" + "}" * 2000)
    assert "nested too deeply" in refused(task_yaml="{a: " * 400 + "1" + "}" * 400)
    assert "nested too deeply" in refused(task_yaml="instruction: x\nscene: " + "[" * 100 + "]" * 100)
    laughs = "a: &a [1,1,1,1,1,1,1,1,1]\n" + "".join(f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n" for p, n in zip("abcdef", "bcdefg"))
    assert "values" in refused(task_yaml=laughs + "instruction: x\n")
    assert "instruction is empty" in refused(task_yaml="{instruction: ''}")
    assert "instruction is empty" in refused(task_yaml="instruction: '  '\nscene_seed: 2")
    assert "must be a task" in refused(task_yaml="[1, 2]")
    assert "is not YAML" in refused(task_yaml="{unclosed")
    with pytest.raises(GoalError, match="more than"):
        parse_task("instruction: x\n#" + "y" * MAX_TASK_BYTES, "task_yaml")


def test_seeds_out_of_range_are_refused_without_converting_them():
    assert check_seed("4294967295") == 2**32 - 1
    assert check_seed("007") == 7
    assert "not a seed" in refused(instruction="open the fridge", scene="9" * 500)
    assert "not a seed" in refused(instruction="open the fridge", scene="9" * 5000)  # more digits than Python converts
    assert "not a seed" in refused(instruction="open the fridge", scene="4294967296")
    assert "not a seed" in refused(task_yaml="{instruction: x, scene_seed: " + "9" * 500 + "}")
    assert "not a seed" in refused(task_yaml="{instruction: x, scene_seed: -1}")


def test_the_task_manager_watches_every_node_the_graph_starts():
    from homiebot.ros.bringup.graph import GRAPH_NODES
    from homiebot.ros.nodes.task_manager import graph_node

    assert all(graph_node(n) for n in GRAPH_NODES if n != "task_manager")
    assert graph_node("sim_driver") and graph_node("policy_octo")
    assert not any(graph_node(n) for n in ("ghost", "NaN", "viewer", "plain_client"))


def test_goals_beyond_the_limit_are_rejected_where_the_client_sees_it():
    import threading
    from collections import deque
    from types import SimpleNamespace

    from rclpy.action import GoalResponse

    from homiebot.ros.clients.run_task import MAX_GOALS, RunTaskServer

    logged = []
    server = object.__new__(RunTaskServer)  # its goal callback alone: no node, no action server
    server._lock, server._goals, server._pending = threading.Lock(), {}, deque()
    server.node = SimpleNamespace(get_logger=lambda: SimpleNamespace(warning=lambda text, **_: logged.append(text)))
    answers = [server._on_goal(RunTask.Goal()) for _ in range(MAX_GOALS + 3)]
    assert answers.count(GoalResponse.ACCEPT) == MAX_GOALS and answers[-3:] == [GoalResponse.REJECT] * 3
    assert logged and f"{MAX_GOALS} goals are queued or running" in logged[0]


def test_the_graph_probe_listens_where_the_nodes_beat():
    from homiebot.ros.clients import graph_probe
    from homiebot.ros.kit.common import HEARTBEAT_QOS, HEARTBEAT_TOPIC

    assert (graph_probe.HEARTBEAT_TOPIC, graph_probe.HEARTBEAT_DEPTH) == (HEARTBEAT_TOPIC, HEARTBEAT_QOS.depth)
