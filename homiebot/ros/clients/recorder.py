"""Record every topic of the graph (under its namespace) of an episode into a rosbag2 MCAP file (readable by ros2 bag, Foxglove)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from rosbags.rosbag2 import StoragePlugin, Writer

from homiebot.ros.messages.common import all_topics, msg_class, typestore
from homiebot.ros.messages.wire import safe_callback

QOS = QoSProfile(depth=200, reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST)


class BagRecorder:
    """Subscribes to the graph's topics once; writes the messages of one episode at a time."""

    def __init__(self, node: Node) -> None:
        self.node = node
        self.typestore = typestore()
        self._lock = threading.Lock()
        self._writer: Writer | None = None
        self._connections: dict = {}
        self.counts: dict[str, int] = {}
        self._last_message = time.monotonic()
        group = ReentrantCallbackGroup()
        self.topics = all_topics()
        for topic, msgtype in self.topics.items():
            node.create_subscription(msg_class(msgtype), topic, safe_callback(node, topic, self._callback(topic)), QOS, raw=True,
                                     callback_group=group)

    def _callback(self, topic: str):
        def cb(data: bytes) -> None:
            with self._lock:
                self._last_message = time.monotonic()
                if self._writer is None:
                    return
                self._writer.write(self._connections[topic], self.node.get_clock().now().nanoseconds, data)
                self.counts[topic] = self.counts.get(topic, 0) + 1
        return cb

    def start(self, path: Path) -> None:
        """Begin a bag at ``path`` (a folder that must not exist yet)."""
        with self._lock:
            writer = Writer(path, version=9, storage_plugin=StoragePlugin.MCAP)
            writer.open()
            # the names as the graph resolves them (/<namespace>/...): a bag says which graph it recorded
            self._connections = {t: writer.add_connection(self.node.resolve_topic_name(t), mt, typestore=self.typestore)
                                 for t, mt in self.topics.items()}
            self._writer, self.counts = writer, {}

    def settle(self, quiet: float, limit: float) -> None:
        """Wait until no message has come for ``quiet`` seconds (at most ``limit`` seconds): messages
        published just before a stop are still on their way when the stop request arrives."""
        deadline = time.monotonic() + limit
        while (now := time.monotonic()) < deadline:
            with self._lock:
                idle = now - self._last_message
            if idle >= quiet:
                return
            time.sleep(min(quiet - idle, deadline - now))

    @property
    def recording(self) -> bool:
        """Whether a bag is open."""
        with self._lock:
            return self._writer is not None

    def stop(self) -> dict[str, int]:
        """Close the bag (writing its metadata.yaml); returns the message count per topic."""
        with self._lock:
            writer, self._writer = self._writer, None
            if writer is not None:
                try:
                    writer.close()
                except (OSError, AssertionError) as err:  # the folder went away (its episode was finalised without us)
                    self.node.get_logger().warning(f"a bag could not be closed: {type(err).__name__}: {err}")
            return dict(self.counts)
