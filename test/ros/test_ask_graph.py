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

from homiebot.records import load_episode  # noqa: E402
from test.ros_domains import domain_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "config" / "tasks" / "demo.yaml"
DOMAIN = domain_of(__name__)

ANSWERER = textwrap.dedent("""
    import json, rclpy
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
            pub.publish(String(data=json.dumps({"round": asked[0]["round"], "answer": "the green one, on the brown table"})))
            for _ in range(40):
                rclpy.spin_once(node, timeout_sec=0.05)
            break
    print(json.dumps(asked), flush=True)
""")


def test_a_question_in_the_graph_is_answered_by_a_plain_client(tmp_path) -> None:
    outputs = ['{"analysis": "two cans could be meant", "subtask": ["Ask", "Which can do you mean?"], "model": null}',
               '{"analysis": "nothing more to do here", "subtask": ["End"], "model": null}']
    cfg = tmp_path / "ask.yaml"
    cfg.write_text(yaml.safe_dump({"planner": {"name": "replay", "params": {"outputs": outputs}}, "skill_profile": "perfect", "user": "ros",
                                   "world": {"name": "embedded_home", "params": {"width": 64, "height": 64, "depth": False,
                                                                                  "segmentation": False}}}))
    env = {**os.environ, "ROS_DOMAIN_ID": str(DOMAIN), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST", "PYTHONPATH": str(ROOT)}
    out = tmp_path / "runs"
    up = subprocess.Popen([sys.executable, "-m", "homiebot.cli", "up", "--config", str(cfg), "--out", str(out), "--no-bag"],
                          cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    answerer = subprocess.Popen([sys.executable, "-c", ANSWERER], env=env, stdout=subprocess.PIPE, text=True)
    try:
        done = subprocess.run([sys.executable, "-m", "homiebot.cli", "submit", "--task", str(DEMO), "--timeout", "240"],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        asked = json.loads(answerer.communicate(timeout=120)[0])
    finally:
        for proc in (answerer, up):
            if proc.poll() is None:
                proc.terminate()
                proc.wait(30)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert asked == [{"round": 1, "question": "Which can do you mean?"}]
    (record,) = [load_episode(p) for p in out.glob("*/episode.json")]
    ask = record.steps[0]
    assert ask.exchange is not None and ask.exchange.answer == "the green one, on the brown table", ask
    assert ask.feedback.success and "the green one" in ask.feedback.message
    assert record.steps[-1].subtask is not None and record.steps[-1].subtask.action.value == "End"
