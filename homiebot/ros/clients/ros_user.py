"""Questions through the ROS graph: ``ask`` carries the question, ``answer`` (under the graph's namespace) the
answer (both ``std_msgs/String`` holding JSON: ``{"round": 3, "question": "..."}`` and
``{"round": 3, "answer": "..."}``; a plain-text answer is accepted too). With no answer within the
timeout, nobody answered."""

from __future__ import annotations

import json
import queue
import time
from typing import Any

from homiebot.core.contracts import Exchange
from homiebot.people.base import User

ASK_TOPIC, ANSWER_TOPIC = "ask", "answer"


class RosUser(User):
    """Publishes each question and waits for the answer to that round (answers to other rounds are dropped)."""

    name = "ros"

    def __init__(self, timeout: float = 60.0, node: Any = None) -> None:
        """``node``: a spun rclpy node to ask through (a graph node's own); None: a node of its own."""
        from rclpy.node import Node
        from rclpy.qos import QoSDurabilityPolicy, QoSProfile, QoSReliabilityPolicy
        from std_msgs.msg import String

        from homiebot.ros.kit.common import init, spin_in_background
        from homiebot.ros.kit.names import process_namespace

        self.timeout = timeout
        self._string = String
        self._own = node is None
        if self._own:
            init(None)
            node = Node("homiebot_ask", namespace=process_namespace())
        self.node = node
        qos = QoSProfile(depth=10, reliability=QoSReliabilityPolicy.RELIABLE, durability=QoSDurabilityPolicy.TRANSIENT_LOCAL)
        self.pub = self.node.create_publisher(String, ASK_TOPIC, qos)
        self.answers: queue.Queue[tuple[int | None, str]] = queue.Queue()
        self.node.create_subscription(String, ANSWER_TOPIC, self._on_answer, 10)
        if self._own:
            spin_in_background(self.node)

    def _on_answer(self, msg) -> None:
        try:
            data = json.loads(msg.data)
            self.answers.put((data.get("round"), str(data.get("answer", ""))) if isinstance(data, dict) else (None, str(data)))
        except json.JSONDecodeError:
            self.answers.put((None, msg.data))

    def answer(self, question: str, round_index: int) -> Exchange:
        self.pub.publish(self._string(data=json.dumps({"round": round_index, "question": question})))
        deadline = time.monotonic() + self.timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                r, text = self.answers.get(timeout=left)
            except queue.Empty:
                break
            if r in (None, round_index) and text.strip():
                return Exchange(question=question, answer=text.strip(), answerer=self.name)
        return Exchange(question=question, answer=None, answerer=self.name)

    def close(self) -> None:
        if self._own:
            self.node.destroy_node()
