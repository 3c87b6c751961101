"""The mapper node: the source of the belief the error detector checks against, and of the map topics.

It passes the world's belief on from /homiebot/world/belief to /homiebot/belief (homiebot_msgs/Belief):
in ``oracle`` perception that is the simulator's truth, in ``mapped`` perception the world's semantic
map's (the world node hosts the detector and the map, since both read its cameras every round).

/homiebot/map/summary (homiebot_msgs/SemanticMap), per round:

* mapped perception: the semantic map's summary (instances, rooms, explored area, frontiers) as the
  world publishes it on /homiebot/world/map; the map's occupancy grid comes from
  /homiebot/world/occupancy and stays on /homiebot/map/occupancy for late joiners (a map server's QoS);
* oracle perception: every instance the cameras labelled so far this episode (id, category, first and
  last round seen), from the observations; ``mapped`` is false.

Which one applies follows the world (its observations say ``mapped``), so the same mapper serves both.
"""

from __future__ import annotations

import sys
from typing import Any

from homiebot_msgs.msg import Belief, RoundObservation, SemanticMap
from nav_msgs.msg import OccupancyGrid
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

from homiebot.ros.common import NodeDef, Param, run_node
from homiebot.ros.messages import MAP_GRID_TOPIC, WORLD_GRID_TOPIC, ns_of
from homiebot.ros.observations import ROUND_DATA
from homiebot.ros.round_messages import labelled_map_msg
from homiebot.ros.wire import WireError, safe_callback

# the latest grid stays available to late subscribers (like a map server's)
MAP_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
PERCEPTION = ("oracle", "mapped")


class MapperNode:
    def __init__(self, node: Node, params: dict[str, Any]) -> None:
        if params["perception"] not in PERCEPTION:
            raise ValueError(f"perception '{params['perception']}' is not available; use one of {', '.join(PERCEPTION)}")
        self.node = node
        self.seen: dict[str, tuple[str, int, int]] = {}  # name -> (category, first round, last round)
        self.episode = -1
        self.belief_pub = node.create_publisher(Belief, "/homiebot/belief", ROUND_DATA)
        self.summary_pub = node.create_publisher(SemanticMap, "/homiebot/map/summary", ROUND_DATA)
        self.grid_pub = node.create_publisher(OccupancyGrid, MAP_GRID_TOPIC, MAP_QOS)
        for msg_type, topic, callback in ((Belief, "/homiebot/world/belief", self._belief), (RoundObservation, "/homiebot/observation", self._remember),
                                          (SemanticMap, "/homiebot/world/map", self.summary_pub.publish),
                                          (OccupancyGrid, WORLD_GRID_TOPIC, self._grid)):
            node.create_subscription(msg_type, topic, safe_callback(node, topic, callback), ROUND_DATA)

    def _belief(self, msg: Belief) -> None:
        names = [e.name for e in msg.entities]
        if len(set(names)) != len(names) or not all(names):
            raise WireError(f"belief of round {msg.round}: its entities need distinct, non-empty names")
        self.belief_pub.publish(msg)

    def _remember(self, msg: RoundObservation) -> None:
        """Oracle perception: the summary of every labelled instance seen in this episode."""
        if msg.mapped:
            return  # the world's map has the summary (see /homiebot/world/map)
        if msg.episode != self.episode or msg.round <= 1:  # a new episode (of this world, or of a restarted one)
            self.seen.clear()
            self.episode = msg.episode
        for label in msg.labels:
            first = self.seen.get(label.name, (label.category, msg.round, msg.round))[1]
            self.seen[label.name] = (label.category, first, msg.round)
        self.summary_pub.publish(labelled_map_msg(self.seen, episode=msg.episode, round_index=msg.round, stamp_ns=ns_of(msg.header.stamp)))

    def _grid(self, msg: OccupancyGrid) -> None:
        if len(msg.data) != msg.info.width * msg.info.height:
            raise WireError(f"occupancy grid of {msg.info.width}x{msg.info.height} cells with {len(msg.data)} values")
        self.grid_pub.publish(msg)


PARAMS = (Param("perception", "oracle", "oracle or mapped (the summary follows what the world publishes)"),)


NODE = NodeDef("mapper", MapperNode, PARAMS)


def main(args: list[str] | None = None) -> int:
    return run_node(NODE, args)


if __name__ == "__main__":
    sys.exit(main())
