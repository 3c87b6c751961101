"""A planner node of another make in the graph: ``homiebot up --external planner`` leaves the planner out, a
plain rclpy node written here (homiebot_msgs and rclpy only) serves planner/reset and the planner/plan action and drives
the episode, and the record names it; a second server of the same interface makes the graph refuse the task,
naming both; the graph's own planner node, deactivated mid-episode, ends the episode as a graph error (not as
rounds of F1 fed back to the planner).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from homiebot.ros.kit.environment import ros_environment  # noqa: E402
from test.ros_domains import domain_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "config" / "tasks" / "demo.yaml"
DOMAIN = domain_of(__name__)

# A planner for the demo task in a few lines: the next subtask of a fixed plan, another model after a failure.
SCRIPTED_PLANNER = textwrap.dedent("""
    import json, sys
    import rclpy
    from rclpy.action import ActionServer
    from homiebot_msgs.action import PlanSubtask
    from homiebot_msgs.srv import ResetPlanner

    PLAN = [("Go to", "fridge"), ("Open", "fridge"), ("Go to", "green_can"), ("Pick", "green_can"), ("Go to", "fridge"),
            ("Put", "green_can", "fridge"), ("End",)]
    MODELS = {"Go to": ["NoMaD", "PixNav"], "Open": ["RT-1-X", "octo"], "Pick": ["RT-1-X", "octo"], "Put": ["RT-1-X", "octo"]}
    state = {"step": 0, "tries": 0, "plans": 0}

    def reset(request, response):
        state.update(step=0, tries=0)
        response.planner = sys.argv[1]
        return response

    def plan(handle):
        request = handle.request
        state["plans"] += 1
        if request.has_feedback and request.round > 1:
            if request.feedback.success:
                state["step"], state["tries"] = state["step"] + 1, 0
            else:
                state["tries"] += 1
        subtask = PLAN[min(state["step"], len(PLAN) - 1)]
        models = MODELS.get(subtask[0])
        answer = {"analysis": "scripted", "subtask": list(subtask)}
        if models:
            answer["model"] = models[state["tries"] % len(models)]
        print(f"plan {state['plans']}: {json.dumps(answer)}", flush=True)
        handle.succeed()
        return PlanSubtask.Result(text=json.dumps(answer))

    rclpy.init()
    node = rclpy.create_node(sys.argv[1], namespace="/homiebot")
    node.create_service(ResetPlanner, "planner/reset", reset)
    ActionServer(node, PlanSubtask, "planner/plan", plan)
    print("serving", flush=True)
    rclpy.spin(node)
""")



@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    """``homiebot up --external planner`` (no bag): every node but the planner."""
    folder = tmp_path_factory.mktemp("swap")
    env = ros_environment(DOMAIN)
    log = (folder / "up.log").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "homiebot.cli", "up", "--external", "planner", "--no-bag", "--out", str(folder / "runs")],
                            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, text=True)
    try:
        yield {"env": env, "folder": folder, "stopped": []}  # planners the tests have stopped
    finally:
        proc.send_signal(2)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()  # a process this test started
            proc.wait()


class Started:
    """A process this test started, its output in a file; stopped by PID."""

    def __init__(self, args: list[str], env: dict, log: Path, ready: str) -> None:
        self.log = log
        with log.open("w") as sink:
            self.proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + 120
        while ready not in log.read_text():
            assert self.proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def scripted(graph, name: str) -> Started:
    return Started([sys.executable, "-c", SCRIPTED_PLANNER, name], graph["env"], graph["folder"] / f"{name}.log", "serving")


def submit(graph, timeout: int = 300) -> subprocess.CompletedProcess:
    """Submit the demo task; a refusal that names a planner an earlier test stopped is sent again (up to a minute):
    discovery keeps a process's endpoints until it has cleanly left or its lease ran out, and a loaded machine
    may take that long."""
    deadline = time.monotonic() + 60
    while True:
        out = subprocess.run([sys.executable, "-m", "homiebot.cli", "submit", "--task", str(DEMO), "--timeout", str(timeout)],
                             cwd=ROOT, env=graph["env"], capture_output=True, text=True, timeout=timeout + 120)
        lingering = [n for n in graph["stopped"] if f"/homiebot/{n}" in out.stderr]
        if out.returncode != 3 or "nodes serve" not in out.stderr or not lingering or time.monotonic() > deadline:
            return out
        time.sleep(2.0)


def record_of(out: subprocess.CompletedProcess) -> dict:
    line = next(x for x in reversed(out.stdout.splitlines() + out.stderr.splitlines()) if "episode.json" in x)
    return json.loads(Path(re.search(r"(/\S+episode\.json)", line).group(1)).read_text())  # type: ignore[union-attr]


def test_a_planner_node_written_here_drives_the_episode_and_the_record_names_it(graph):
    planner = scripted(graph, "scripted_planner")
    try:
        out = submit(graph)
    finally:
        planner.stop()
        graph["stopped"].append("scripted_planner")
    assert out.returncode == 0, out.stdout + out.stderr
    record = record_of(out)
    assert record["planner"] == "scripted_planner" and record["goal_satisfied"] is True
    plans = planner.log.read_text().count("plan ")
    assert plans == len(record["steps"]) and record["steps"][-1]["output"]["subtask"]["action"] == "End"


BOTH_SEEN = textwrap.dedent("""
    import time
    import rclpy
    rclpy.init()
    node = rclpy.create_node("plain_server_counter")
    end = time.monotonic() + 90
    while node.count_services("/homiebot/planner/plan/_action/send_goal") < 2:
        assert time.monotonic() < end, "the two planners' actions were not both discovered"
        rclpy.spin_once(node, timeout_sec=0.2)
    time.sleep(1.0)  # the task manager's discovery, on the same machine, a moment behind at most
""")


def test_two_servers_of_the_planner_make_the_graph_refuse_the_task_naming_both(graph):
    first, second = scripted(graph, "first_planner"), scripted(graph, "second_planner")
    try:
        seen = subprocess.run([sys.executable, "-c", BOTH_SEEN], env=graph["env"], capture_output=True, text=True, timeout=120)
        assert seen.returncode == 0, seen.stderr[-2000:]  # discovery has both before the task is sent
        out = submit(graph, timeout=120)
    finally:
        first.stop()
        second.stop()
        graph["stopped"] += ["first_planner", "second_planner"]
    assert out.returncode == 3, out.stdout + out.stderr
    assert "2 nodes serve /homiebot/planner/plan (/homiebot/first_planner, /homiebot/second_planner)" in out.stderr, out.stderr
    assert "2 nodes serve /homiebot/planner/reset" in out.stderr
    assert "plan " not in first.log.read_text() + second.log.read_text()  # neither was asked anything


LIFECYCLE_CLIENT = textwrap.dedent("""
    import sys, time
    import rclpy
    from homiebot_msgs.msg import TaskStatus
    from lifecycle_msgs.msg import Transition
    from lifecycle_msgs.srv import ChangeState
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

    rclpy.init()
    node = rclpy.create_node("plain_deactivator")
    rounds = []
    # volatile: the events of earlier episodes, which the topic keeps for late joiners, are not this one's
    qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
    sub = node.create_subscription(TaskStatus, "/homiebot/task/status", lambda m: rounds.append(m.round) if m.state == TaskStatus.ROUND else None, qos)
    client = node.create_client(ChangeState, "/homiebot/planner/change_state")
    assert client.wait_for_service(timeout_sec=120)
    while sub.get_publisher_count() == 0:  # matched with the task manager's publisher: no round goes unseen
        rclpy.spin_once(node, timeout_sec=0.1)
    print("watching", flush=True)
    while not rounds:
        rclpy.spin_once(node, timeout_sec=0.1)
    future = client.call_async(ChangeState.Request(transition=Transition(id=Transition.TRANSITION_DEACTIVATE)))
    rclpy.spin_until_future_complete(node, future, timeout_sec=30)
    print(f"deactivated after round {rounds[0]}: {future.result().success}", flush=True)
""")


def test_a_planner_node_deactivated_mid_episode_ends_it_as_a_graph_error_naming_the_node(graph):
    env = graph["env"]
    planner = Started([sys.executable, "-m", "homiebot.ros.nodes.planner", "--ros-args", "-r", "__ns:=/homiebot"], env,
                      graph["folder"] / "planner.log", "planner node ready")
    deactivator = Started([sys.executable, "-c", LIFECYCLE_CLIENT], env, graph["folder"] / "deactivator.log", "watching")
    try:
        out = submit(graph)
        deactivator.proc.wait(timeout=60)
    finally:
        deactivator.stop()
        planner.stop()
    assert "deactivated after round 1: True" in deactivator.log.read_text(), deactivator.log.read_text()
    assert out.returncode == 3, out.stdout + out.stderr
    # said by the refused call, or first by the heartbeat, which carries the node's lifecycle state
    assert re.search(r"/homiebot/planner is not active \(lifecycle\)|the planner node is not active \(lifecycle state: inactive\)",
                     out.stderr), out.stderr
    record = record_of(out)
    assert record["termination"] == "error" and "not active" in record["error"]
    assert [s["feedback"]["code"] for s in record["steps"]].count("F1") == 0, record["steps"]


def test_a_plan_cancelled_mid_generation_ends_the_episode_at_once_and_the_planner_serves_on(graph):
    """The planner node's model (a chat server here that takes two minutes to answer) is generating when the
    user cancels: the episode ends ``cancelled`` without waiting for it, and the planner node stays up."""
    from test.chat_server import Reply, completion, fake_server

    env = graph["env"]
    config = graph["folder"] / "slow_planner.yaml"
    with fake_server() as fake:
        fake.rule = lambda body: Reply(200, completion('{"analysis": "late", "subtask": ["End"]}').body, delay=120.0)
        config.write_text(f"planner: {{name: openai, params: {{model: slow-model, base_url: '{fake.url}', timeout: 300, retries: 0}}}}\n")
        planner = Started([sys.executable, "-m", "homiebot.ros.nodes.planner", "--ros-args", "-r", "__ns:=/homiebot", "-p", f"config:={config}"],
                          env, graph["folder"] / "slow_planner.log", "planner node ready")
        try:
            follow = subprocess.Popen([sys.executable, "-m", "homiebot.cli", "submit", "--task", str(DEMO), "--timeout", "300"],
                                      cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            deadline = time.monotonic() + 120
            while not fake.requests:  # the model is generating
                assert follow.poll() is None and time.monotonic() < deadline, follow.communicate()
                time.sleep(0.1)
            cancelled = time.monotonic()
            sent = subprocess.run([sys.executable, "-m", "homiebot.cli", "cancel"], cwd=ROOT, env=env, capture_output=True, text=True,
                                  timeout=60)
            out, err = follow.communicate(timeout=90)
            ended = time.monotonic() - cancelled
            alive = planner.proc.poll() is None
        finally:
            planner.stop()
    assert sent.returncode == 0, sent.stderr
    assert ended < 60.0, f"the episode waited {ended:.0f} s for the model"  # the model answers after 120 s
    assert len(fake.requests) == 1 and alive, (fake.requests, planner.log.read_text()[-2000:])
    record = record_of(subprocess.CompletedProcess([], follow.returncode, out, err))
    assert record["termination"] == "cancelled" and record["steps"] == [], (out, err)  # the cancelled round is not one
    assert "Traceback" not in planner.log.read_text()
