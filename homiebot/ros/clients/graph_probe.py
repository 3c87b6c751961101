"""Whether a homiebot graph already runs in a namespace of this ROS domain, from its nodes' heartbeats.

``homiebot up`` runs this in a process of its own before it starts a graph (so that its own process never holds
a ROS participant while it forks the nodes): two graphs in one namespace would serve every call twice, and
each one's task manager would take the other's nodes for its own. Heartbeats, not discovery, tell: a graph that
was killed a moment ago stays in discovery for a while, but beats no more.

    python -m homiebot.ros.clients.graph_probe NAMESPACE SECONDS NODE [NODE ...]

prints one JSON line: the first of the named nodes heard beating in NAMESPACE within SECONDS
(``{"node": ..., "pid": ...}``), or ``{}``.
"""

from __future__ import annotations

import json
import os
import sys
import time

# homiebot.ros.kit.common's HEARTBEAT_TOPIC and HEARTBEAT_QOS's depth (not imported: this process starts in half the time)
HEARTBEAT_TOPIC = "heartbeat"
HEARTBEAT_DEPTH = 10
NOBODY_AFTER = 1.5  # s after which no heartbeat publisher in discovery means no graph (a graph's nodes are found within ~0.5 s)


def heard(namespace: str, wait: float, wanted: set[str]) -> dict[str, object]:
    """The first heartbeat of a ``wanted`` node under ``namespace`` within ``wait`` seconds ({} if none)."""
    import rclpy
    from homiebot_msgs.msg import Heartbeat
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node
    from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy

    rclpy.init(args=[])
    found: dict[str, object] = {}
    try:
        node = Node(f"homiebot_up_probe_{os.getpid()}", use_global_arguments=False)
        topic = f"{namespace.rstrip('/')}/{HEARTBEAT_TOPIC}"

        def beat(msg: Heartbeat) -> None:
            if msg.node in wanted and not found:
                found.update(node=str(msg.node), pid=int(msg.pid))

        node.create_subscription(Heartbeat, topic, beat, QoSProfile(depth=HEARTBEAT_DEPTH, reliability=ReliabilityPolicy.RELIABLE,
                                                                     history=HistoryPolicy.KEEP_LAST))
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        started = time.monotonic()
        while not found and time.monotonic() - started < wait:
            executor.spin_once(timeout_sec=0.05)
            if time.monotonic() - started > NOBODY_AFTER and node.count_publishers(topic) == 0:
                break  # discovery shows no node beating there: no graph
        executor.shutdown()
        node.destroy_node()
    finally:
        rclpy.try_shutdown()
    return found


def main(argv: list[str]) -> int:
    namespace, wait, wanted = argv[0], float(argv[1]), set(argv[2:])
    print(json.dumps(heard(namespace, wait, wanted)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
