"""Serve the graph's topics over the Foxglove WebSocket protocol (``foxglove-sdk``, the viz extra).

Every /homiebot topic is subscribed to raw (CDR bytes, no decoding) and forwarded to a Foxglove
channel of the same name with its ROS 2 message definition as the schema, so the Foxglove app shows
the graph live with the panels of ``config/foxglove/homiebot.json``. The server binds 127.0.0.1
unless told otherwise.
"""

from __future__ import annotations

import time

from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy

from homiebot.ros.kit.safety import EVENTS_TOPIC
from homiebot.ros.messages.common import all_topics, msg_class, typestore
from homiebot.ros.messages.wire import safe_callback

QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST)


def served_topics() -> dict[str, str]:
    """Every topic served to Foxglove -> its message type: the graph's topics and safety events."""
    return {**all_topics(), EVENTS_TOPIC: "homiebot_msgs/msg/SafetyEvent"}


def message_definition(msgtype: str) -> str:
    """The ROS 2 ``.msg`` text of a type with its dependencies (the ``ros2msg`` schema encoding)."""
    return typestore().generate_msgdef(msgtype, ros_version=2)[0]


class FoxgloveBridge:
    """Forwards the graph's topics to a Foxglove WebSocket server on ``host:port``."""

    def __init__(self, node: Node, host: str = "127.0.0.1", port: int = 8765) -> None:
        import foxglove

        self.node = node
        self.server = foxglove.start_server(name="homiebot", host=host, port=port)
        self.port = self.server.port
        self.channels = {}
        self.counts: dict[str, int] = {}
        group = ReentrantCallbackGroup()
        for topic, msgtype in served_topics().items():
            schema = foxglove.Schema(name=msgtype.replace("/msg/", "/"), encoding="ros2msg", data=message_definition(msgtype).encode())
            self.channels[topic] = foxglove.Channel(node.resolve_topic_name(topic), schema=schema, message_encoding="cdr")
            node.create_subscription(msg_class(msgtype), topic, safe_callback(node, topic, self._forward(topic)), QOS, raw=True,
                                     callback_group=group)

    def _forward(self, topic: str):
        channel = self.channels[topic]

        def cb(data: bytes) -> None:
            channel.log(data, log_time=time.time_ns())
            self.counts[topic] = self.counts.get(topic, 0) + 1
        return cb

    def close(self) -> None:
        """Stop serving."""
        self.server.stop()
