"""Ask through the whole graph (``user: ros``): under ``homiebot up``, the planner's question goes out on
/homiebot/ask and a plain rclpy client (no homiebot import) answers it on /homiebot/answer; the answer
is the round's feedback and lands in the record. The graph has a ROS domain of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from homiebot.core.records import load_episode  # noqa: E402
from test.ros_domains import domain_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "config" / "tasks" / "demo.yaml"
DOMAIN = domain_of(__name__)

ANSWERER = textwrap.dedent("""
    import json, sys, rclpy
    ANSWER = sys.argv[1]
    from rclpy.qos import QoSProfile, QoSDurabilityPolicy, QoSReliabilityPolicy
    from std_msgs.msg import String
    rclpy.init()
    node = rclpy.create_node("plain_answerer")
    pub = node.create_publisher(String, "/homiebot/answer", 10)
    asked = []
    def on_ask(msg):
        asked.append(json.loads(msg.data))
    qos = QoSProfile(depth=10, reliability=QoSReliabilityPolicy.RELIABLE, durability=QoSDurabilityPolicy.TRANSIENT_LOCAL)
    node.create_subscription(String, "/homiebot/ask", on_ask, qos)
    for _ in range(3000):
        rclpy.spin_once(node, timeout_sec=0.1)
        # the latched question can arrive before this publisher is matched to the listener: an answer sent
        # then would reach nobody, so it waits for the match, as any publisher must
        if asked and pub.get_subscription_count() > 0:
            pub.publish(String(data=json.dumps({"round": asked[0]["round"], "answer": ANSWER})))
            for _ in range(40):
                rclpy.spin_once(node, timeout_sec=0.05)
            break
    print(json.dumps(asked), flush=True)
""")


def _ask_through_graph(tmp_path: Path, planner: dict, task: list[str], answer: str) -> tuple[list[dict], object]:
    """Run one task under ``homiebot up`` with ``user: ros`` while a plain client answers the first question
    with ``answer``: the questions it saw and the episode record."""
    cfg = tmp_path / "ask.yaml"
    cfg.write_text(yaml.safe_dump({"planner": planner, "skill_profile": "perfect", "user": "ros",
                                   "world": {"name": "embedded_home", "params": {"width": 64, "height": 64}}}))
    env = {**os.environ, "ROS_DOMAIN_ID": str(DOMAIN), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST", "PYTHONPATH": str(ROOT)}
    out = tmp_path / "runs"
    up = subprocess.Popen([sys.executable, "-m", "homiebot.cli", "up", "--config", str(cfg), "--out", str(out), "--no-bag"],
                          cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    answerer = subprocess.Popen([sys.executable, "-c", ANSWERER, answer], env=env, stdout=subprocess.PIPE, text=True)
    try:
        done = subprocess.run([sys.executable, "-m", "homiebot.cli", "submit", *task, "--timeout", "240"],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        asked = json.loads(answerer.communicate(timeout=120)[0])
    finally:
        for proc in (answerer, up):
            if proc.poll() is None:
                proc.terminate()
                proc.wait(30)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    (record,) = [load_episode(p) for p in out.glob("*/episode.json")]
    return asked, record


def test_a_question_in_the_graph_is_answered_by_a_plain_client(tmp_path) -> None:
    outputs = ['{"analysis": "two cans could be meant", "subtask": ["Ask", "Which can do you mean?"], "model": null}',
               '{"analysis": "nothing more to do here", "subtask": ["End"], "model": null}']
    asked, record = _ask_through_graph(tmp_path, {"name": "replay", "params": {"outputs": outputs}}, ["--task", str(DEMO)],
                                       "the green one, on the brown table")
    assert asked == [{"round": 1, "question": "Which can do you mean?"}]
    ask = record.steps[0]
    assert ask.exchange is not None and ask.exchange.answer == "the green one, on the brown table", ask
    assert ask.feedback.success and "the green one" in ask.feedback.message
    assert record.steps[-1].subtask is not None and record.steps[-1].subtask.action.value == "End"


def test_the_heuristic_planner_in_the_graph_asks_from_the_scene_and_uses_the_answer(tmp_path) -> None:
    """The planner node hears that someone answers: the default planner asks which of the demo home's two
    sinks is meant and puts the mug in the one the plain client's words pick."""
    asked, record = _ask_through_graph(tmp_path, {"name": "heuristic"},
                                       ["put the white mug in the sink", "--scene", str(ROOT / "config" / "scenes" / "demo.yaml")],
                                       "the one in the kitchen")
    assert len(asked) == 1 and "Which sink do you mean" in asked[0]["question"], asked
    (ask,) = [s for s in record.steps if s.exchange is not None]
    assert ask.exchange.answer == "the one in the kitchen"
    puts = [s.subtask for s in record.steps if s.subtask is not None and s.subtask.action.value == "Put" and s.feedback.success]
    assert puts and puts[-1].place == "kitchen_sink", [s.subtask for s in record.steps]
    assert record.goal_satisfied is None or record.termination == "end"
