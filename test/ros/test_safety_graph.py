"""The safety layer through the ROS 2 graph, driven by a plain rclpy client (it does not import homiebot):
an e-stop on /homiebot/estop pauses the episode until it is released, a cancel on /homiebot/cancel
ends one with its record saved, approvals are asked and answered on the approval topics
(homiebot_msgs ApprovalRequest and ApprovalDecision), and the safety events and heartbeats it hears
are typed (homiebot_msgs SafetyEvent and Heartbeat).

The graph runs with localhost-only discovery and a ROS_DOMAIN_ID of its own.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from homiebot.core.contracts import ErrorCode  # noqa: E402
from homiebot.core.records import load_episode  # noqa: E402
from homiebot.ros.bringup.graph import graph  # noqa: E402
from homiebot.ros.bringup.up import spawn_all, stop  # noqa: E402
from homiebot.ros.kit.environment import ros_environment  # noqa: E402
from test.ros_domains import domain_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "config" / "tasks" / "demo.yaml"
DOMAIN = domain_of(__name__)

CLIENT = r'''
import json, sys, time
import rclpy
from rclpy.node import Node
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import Bool, String
from rclpy.action import ActionClient
from homiebot_msgs.action import RunTask
from homiebot_msgs.msg import ApprovalDecision, ApprovalRequest, Heartbeat, SafetyEvent, TaskStatus
import threading

task_file, hide_file = sys.argv[1], sys.argv[2]
rclpy.init()
node = Node("safety_client")
reliable = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
status, asked, safety, beats = [], [], [], set()
node.create_subscription(TaskStatus, "/homiebot/task/status", lambda m: status.append((time.time(), {
    "id": m.id, "state": m.state, "round": m.round, "record": m.record, "termination": m.termination,
    "goal_satisfied": m.goal_satisfied == TaskStatus.GOAL_REACHED, "reason": m.reason})), reliable)
node.create_subscription(ApprovalRequest, "/homiebot/approval/request", lambda m: asked.append(
    {"id": m.id, "round": m.round, "action": m.subtask.action, "model": m.model, "timeout": m.timeout}), latched)
node.create_subscription(SafetyEvent, "/homiebot/safety", lambda m: safety.append(
    {"origin": m.origin, "episode": m.episode, "kind": m.kind, "round": m.round, "details": {d.key: d.value for d in m.details}}), reliable)
node.create_subscription(Heartbeat, "/homiebot/heartbeat", lambda m: beats.add((m.node, m.pid > 0, len(m.instance) > 0)), 10)
run_task = ActionClient(node, RunTask, "/homiebot/run_task")
estop = node.create_publisher(Bool, "/homiebot/estop", latched)
cancel = node.create_publisher(String, "/homiebot/cancel", reliable)
answer = node.create_publisher(ApprovalDecision, "/homiebot/approval/response", reliable)
executor = SingleThreadedExecutor()
executor.add_node(node)
spinner = threading.Thread(target=executor.spin, daemon=True)
spinner.start()

def wait(cond, limit, what):
    end = time.time() + limit
    while time.time() < end:
        if cond():
            return
        time.sleep(0.02)
    sys.exit(f"timed out waiting for {what}; last events: {[e for _, e in status[-5:]]}")

wait(lambda: run_task.server_is_ready() and cancel.get_subscription_count() and estop.get_subscription_count() >= 2
     and answer.get_subscription_count(), 120, "the graph")
time.sleep(1.0)  # discovery is not symmetric: let the graph match our publishers too
answered = set()
reject_first = {"reject": True}

def answer_pending():
    for ask in list(asked):
        if ask["id"] in answered:
            continue
        verdict = "reject" if (reject_first["reject"] and run_id == "reject") else "approve"
        if verdict == "reject":
            reject_first["reject"] = False
        answer.publish(ApprovalDecision(id=ask["id"], decision=verdict, reason="not now"))
        answered.add(ask["id"])

def events(rid):
    return [(t, e) for t, e in status if e.get("id") == rid]

def final(rid):
    done = [e for _, e in events(rid) if e["state"] in ("finished", "failed")]
    return done[-1] if done else None

def run(label, on_round=None, path=None):
    global run_id
    run_id = label
    goal = RunTask.Goal(task_file=path or task_file, use_seed=True, seed=0)
    sent = run_task.send_goal_async(goal)
    end = time.time() + 30
    while time.time() < end and not sent.done():
        time.sleep(0.02)
    if not sent.done():  # rclpy's ActionClient registers a goal after sending it: an answer that our spinning thread
        # handled in between was dropped ("Ignoring unexpected goal response"); send it again, as a user would
        print(f"{label}: no answer to the goal in 30 s; sending it again", file=sys.stderr)
        sent = run_task.send_goal_async(goal)
        wait(sent.done, 60, "the goal's acceptance")
    rid = bytes(sent.result().goal_id.uuid).hex()[:12]
    fired = False
    end = time.time() + 240
    while time.time() < end and final(rid) is None:
        answer_pending()
        rounds = [e for _, e in events(rid) if e["state"] == "round"]
        if on_round and rounds and not fired and rounds[-1]["round"] >= 2:
            fired = True
            on_round(rid)
        time.sleep(0.02)
    return final(rid)

out = {}
hold = {}
def press(rid):
    estop.publish(Bool(data=True))
    hold["pressed"] = time.time()
    time.sleep(3.0)  # while it holds, no round may start
    hold["rounds_during"] = [e["round"] for t, e in events(rid) if e["state"] == "round" and t > hold["pressed"] + 1.0]
    estop.publish(Bool(data=False))
out["estop"] = run("estop", press)
out["hold"] = hold
out["cancel"] = run("cancel", lambda rid: cancel.publish(String(data=rid)))
out["reject"] = run("reject", path=hide_file)
out["asked"] = asked
out["safety"] = safety
out["beats"] = sorted(beats)
print(json.dumps(out), flush=True)
executor.shutdown()
spinner.join(timeout=10)
node.destroy_node()
rclpy.try_shutdown()
'''


@pytest.fixture(scope="module")
def outcome(tmp_path_factory):
    """Start the graph (oracle, approval of manipulation), run the client's three episodes, stop the graph."""
    env = ros_environment(DOMAIN)
    out = tmp_path_factory.mktemp("safety_runs")
    cfg = tmp_path_factory.mktemp("cfg") / "safe.yaml"
    cfg.write_text("planner: {name: oracle}\nskill_profile: perfect\n"
                   "world: {name: embedded_home, params: {width: 64, height: 64}}\n"
                   "safety: {approve: manipulation, approval_timeout: 60}\n")
    script = tmp_path_factory.mktemp("client") / "client.py"
    script.write_text(CLIENT)
    hide = tmp_path_factory.mktemp("tasks") / "hide.yaml"  # several containers will do: a rejection leaves others
    hide.write_text(f"id: hide\ninstruction: hide the green can inside something that can be shut\n"
                    f"scene_file: {ROOT / 'config' / 'scenes' / 'demo.yaml'}\n"
                    "goal: [{kind: object_at, object: green_can, receptacle: [fridge, kitchen_cabinet, drawer, bathroom_cabinet]}]\n")
    procs = spawn_all(graph(str(cfg), "", str(out), {"task_manager": {"connect_timeout": 30.0}}, record_bag=False), env)
    try:
        run = subprocess.run([sys.executable, str(script), str(DEMO), str(hide)], cwd="/", env=env, capture_output=True, text=True, timeout=600)
    finally:
        stop(procs)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-4000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_an_estop_on_the_topic_pauses_the_episode_until_released(outcome) -> None:
    final = outcome["estop"]
    assert final["state"] == "finished" and final["goal_satisfied"], final
    assert outcome["hold"]["rounds_during"] == []  # the planner was not asked while it held
    record = load_episode(Path(final["record"]).parent)
    kinds = [e.kind for e in record.safety_events]
    assert "estop" in kinds and "estop_released" in kinds and kinds.index("estop") < kinds.index("estop_released")


def test_a_cancel_on_the_topic_ends_the_episode_with_its_record(outcome) -> None:
    final = outcome["cancel"]
    assert final["state"] == "finished" and final["termination"] == "cancelled", final
    record = load_episode(Path(final["record"]).parent)
    assert record.termination == "cancelled" and any(e.kind == "cancel" for e in record.safety_events)


def test_approval_requests_are_answered_on_the_topic_and_a_rejection_is_replanned(outcome) -> None:
    final = outcome["reject"]
    assert final["state"] == "finished" and final["goal_satisfied"], final
    record = load_episode(Path(final["record"]).parent)
    rejected = [s for s in record.steps if s.feedback.code is ErrorCode.S2]
    assert len(rejected) == 1 and "not now" in rejected[0].feedback.message
    decisions = [e.details["decision"] for e in record.safety_events if e.kind == "approval"]
    assert decisions[0] == "reject" and set(decisions[1:]) == {"approve"}
    asked = outcome["asked"]
    assert len(asked) >= len(decisions) and all(a["id"] and a["action"] and a["timeout"] == 60.0 for a in asked)


def test_safety_events_and_heartbeats_are_typed_on_the_graph(outcome) -> None:
    events = outcome["safety"]
    manager = [e for e in events if e["origin"].endswith("task_manager")]
    estops = [e for e in manager if e["kind"] == "estop"]
    assert estops and estops[0]["details"].get("source") == "topic" and estops[0]["episode"], events[:5]
    assert {"estop", "estop_released", "cancel", "approval"} <= {e["kind"] for e in manager}
    assert all(e["round"] >= -1 for e in events)
    beating = {node for node, has_pid, has_instance in outcome["beats"] if has_pid and has_instance}
    assert {"task_manager", "world", "executor", "planner"} <= beating, outcome["beats"]
