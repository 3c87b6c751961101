"""Ask through the ROS graph: a plain rclpy answerer (no homiebot import) answers /homiebot/ask on
/homiebot/answer; with nobody listening the question times out. Each test has a ROS domain of its own."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from test.ros_domains import domain_of

ANSWERER = textwrap.dedent("""
    import json, rclpy
    from rclpy.qos import QoSProfile, QoSDurabilityPolicy, QoSReliabilityPolicy
    from std_msgs.msg import String
    rclpy.init()
    node = rclpy.create_node("plain_answerer")
    pub = node.create_publisher(String, "/homiebot/answer", 10)
    done = []
    asked = []
    def on_ask(msg):
        asked.append(json.loads(msg.data))
    qos = QoSProfile(depth=10, reliability=QoSReliabilityPolicy.RELIABLE, durability=QoSDurabilityPolicy.TRANSIENT_LOCAL)
    node.create_subscription(String, "/homiebot/ask", on_ask, qos)
    for _ in range(600):
        rclpy.spin_once(node, timeout_sec=0.1)
        if asked and not done and pub.get_subscription_count() > 0:  # an answer before the match would reach nobody
            pub.publish(String(data=json.dumps({"round": asked[0]["round"], "answer": "the red one, on the desk"})))
            done.append(1)
        if done and len(done) >= 1:
            for _ in range(20):
                rclpy.spin_once(node, timeout_sec=0.05)
            break
""")

ASKER = textwrap.dedent("""
    import sys
    from homiebot.ros.clients.ros_user import RosUser
    user = RosUser(timeout=float(sys.argv[1]))
    ex = user.answer("Which mug do you mean?", 2)
    print("ANSWER", ex.answer)
""")


def _env(domain: int) -> dict[str, str]:
    return {**os.environ, "ROS_DOMAIN_ID": str(domain), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}


def test_a_plain_rclpy_client_answers_the_question() -> None:
    answerer = subprocess.Popen([sys.executable, "-c", ANSWERER], env=_env(domain_of(__name__)))
    try:
        out = subprocess.run([sys.executable, "-c", ASKER, "60"], env=_env(domain_of(__name__)), capture_output=True, text=True, timeout=120)
    finally:
        answerer.wait(timeout=60)
    assert "ANSWER the red one, on the desk" in out.stdout, out.stderr[-2000:]


def test_nobody_answering_times_out() -> None:
    out = subprocess.run([sys.executable, "-c", ASKER, "1.5"], env=_env(domain_of(__name__, 1)), capture_output=True, text=True, timeout=120)
    assert "ANSWER None" in out.stdout, out.stderr[-2000:]
