"""The mapper node: the source of the belief the error detector checks against, and of the map topics.

It passes the world's belief snapshot on from /homiebot/world/belief to /homiebot/belief: in
``oracle`` perception that is the simulator's truth, in ``mapped`` perception the world's semantic
map (the world node hosts the detector and the map, since both read its cameras every round).

/homiebot/map/summary, JSON with ``episode`` and ``round``:

* mapped perception: ``summary`` is the semantic map's summary (instances, rooms, explored area,
  frontiers) as the world publishes it on /homiebot/world/map; the map's occupancy grid goes out as
  a nav_msgs/OccupancyGrid on /homiebot/map/occupancy (-1 unknown, 0 free, 100 occupied);
* oracle perception: ``instances`` lists every instance seen so far (name, category, last round seen),
  from the observations' labels.

Which one applies follows the world (its observations say ``mapped``), so the same mapper serves both.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from nav_msgs.msg import OccupancyGrid
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

from homiebot.ros.common import NodeDef, Param, run_node
from homiebot.ros.messages import to_occupancy_grid
from homiebot.ros.observations import ROUND_DATA
from homiebot.ros.wire import MapMessage, ObservationMeta, Stamped, message_limit, parse, safe_callback

# the latest grid stays available to late subscribers (like a map server's)
MAP_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
PERCEPTION = ("oracle", "mapped")


class MapperNode:
    def __init__(self, node: Node, params: dict[str, Any]) -> None:
        if params["perception"] not in PERCEPTION:
            raise ValueError(f"perception '{params['perception']}' is not available; use one of {', '.join(PERCEPTION)}")
        self.node = node
        self.seen: dict[str, dict] = {}
        self.belief_pub = node.create_publisher(String, "/homiebot/belief", ROUND_DATA)
        self.summary_pub = node.create_publisher(String, "/homiebot/map/summary", ROUND_DATA)
        self.grid_pub = node.create_publisher(OccupancyGrid, "/homiebot/map/occupancy", MAP_QOS)
        self.limit = message_limit(node)
        for topic, callback in (("/homiebot/world/belief", self._relay), ("/homiebot/observation", self._remember),
                                ("/homiebot/world/map", self._map)):
            node.create_subscription(String, topic, safe_callback(node, topic, callback), ROUND_DATA)

    def _relay(self, msg: String) -> None:
        parse(Stamped, msg.data, self.limit)  # only well-formed beliefs go on to the detector
        self.belief_pub.publish(msg)

    def _remember(self, msg: String) -> None:
        """Oracle perception: the summary of every labelled instance seen in this episode."""
        meta = parse(ObservationMeta, msg.data, self.limit)
        if meta.mapped:
            return  # the world's map has the summary (see _map)
        if meta.round == 1:
            self.seen.clear()  # a new episode
        for label in meta.labels.values():
            self.seen[label.name] = {"category": label.category, "last_seen": meta.round}
        self.summary_pub.publish(String(data=json.dumps({"episode": meta.episode, "round": meta.round, "instances": self.seen})))

    def _map(self, msg: String) -> None:
        """Mapped perception: the world's map summary, and its occupancy grid as an OccupancyGrid."""
        data = parse(MapMessage, msg.data, self.limit)
        self.summary_pub.publish(String(data=json.dumps({"episode": data.episode, "round": data.round, "summary": data.summary})))
        if data.occupancy:
            try:
                self.grid_pub.publish(to_occupancy_grid(data.occupancy, time.time_ns()))
            except (KeyError, ValueError, TypeError, AttributeError) as err:
                self.node.get_logger().warning(f"occupancy grid of round {data.round} not published: {err}")


PARAMS = (Param("perception", "oracle", "oracle or mapped (the summary follows what the world publishes)"),)


NODE = NodeDef("mapper", MapperNode, PARAMS)


def main(args: list[str] | None = None) -> int:
    return run_node(NODE, args)


if __name__ == "__main__":
    sys.exit(main())
