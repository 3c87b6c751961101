"""The mapper node: the belief the error detector checks against, and the map topics.

/homiebot/belief (homiebot_msgs/Belief), per round, comes from where ``homiebot.runtime.belief_site`` says:

* ``map`` (mapped perception): the semantic map this node keeps and serves under /homiebot/map
  (homiebot/ros/nodes/map_server.py). The world node hands it every observation with its images and camera
  rig; the detector runs here. Each agent round it publishes the belief, the map's summary on
  /homiebot/map/summary (homiebot_msgs/SemanticMap) and its occupancy grid on /homiebot/map/occupancy
  (nav_msgs/OccupancyGrid, kept for late joiners as a map server's);
* ``truth`` (oracle perception of a simulated home): the simulator's truth, from this node's own mirror
  of the world node's scene, in the state of each round (/homiebot/world/state;
  homiebot/ros/nodes/belief_mirror.py);
* ``world`` (a robot bridge): the world's own belief, which the world node publishes on
  /homiebot/world/belief and this node passes on after checking it.

Outside mapped perception /homiebot/map/summary lists every instance the cameras labelled so far this
episode (id, category, first and last round seen), from the observations; ``mapped`` is false.
"""

from __future__ import annotations

import sys
from typing import Any

from homiebot_msgs.msg import Belief, RoundObservation, SemanticMap, SimState
from nav_msgs.msg import OccupancyGrid
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

from homiebot.ros.kit.common import RUN_CONFIG, NodeDef, Param, positive
from homiebot.ros.kit.process import run_node
from homiebot.ros.kit.services import ServiceError, ServiceTimeout
from homiebot.ros.kit.sim_thread import SimThread
from homiebot.ros.messages.common import MAP_GRID_TOPIC, ns_of
from homiebot.ros.messages.observations import ROUND_DATA
from homiebot.ros.messages.round import belief_msg, labelled_map_msg
from homiebot.ros.messages.wire import WireError, safe_callback
from homiebot.ros.nodes.belief_mirror import BeliefMirror, MirrorError
from homiebot.ros.nodes.map_server import MapServer
from homiebot.runtime import belief_site, build_detector

# the latest grid stays available to late subscribers (like a map server's)
MAP_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)


class MapperNode:
    def __init__(self, node: Node, params: dict[str, Any]) -> None:
        self.node = node
        self.seen: dict[str, tuple[str, int, int]] = {}  # name -> (category, first round, last round)
        self.episode = -1
        self.belief_pub = node.create_publisher(Belief, "belief", ROUND_DATA)
        self.summary_pub = node.create_publisher(SemanticMap, "map/summary", ROUND_DATA)
        self.grid_pub = node.create_publisher(OccupancyGrid, MAP_GRID_TOPIC, MAP_QOS)
        cfg = params[RUN_CONFIG]
        site = belief_site(cfg)
        # the detector is made as the first episode starts (one that cannot run here fails that episode, saying why)
        self.map = MapServer(cfg, lambda: build_detector(cfg), self._publish_map, node.get_logger().warning) if site == "map" else None
        if self.map is not None:
            self.map.serve(node)
        # the truth is mirrored on a thread of its own: reading a new episode's scene waits for the world node
        self.mirror = BeliefMirror(node, cfg.world.name, params["world_timeout"]) if site == "truth" else None
        self.worker = SimThread(node) if self.mirror is not None else None
        subscriptions: list[tuple] = [(RoundObservation, "observation", self._remember)]
        if self.mirror is not None:
            subscriptions.append((SimState, "world/state", self._state))
        elif site == "world":
            subscriptions.append((Belief, "world/belief", self._belief))
        for msg_type, topic, callback in subscriptions:
            node.create_subscription(msg_type, topic, safe_callback(node, topic, callback), ROUND_DATA)

    def _state(self, msg: SimState) -> None:
        assert self.worker is not None
        self.worker.later(lambda: self._mirror_round(msg))

    def _mirror_round(self, msg: SimState) -> None:
        """The belief of the round whose simulator state ``msg`` carries, from the mirror of the truth."""
        assert self.mirror is not None
        try:
            snapshot = self.mirror.snapshot(msg)
        except (MirrorError, ServiceError, ServiceTimeout) as err:  # that round's check waits, then says so
            self.node.get_logger().error(f"no belief for round {msg.round} of episode {msg.episode}: {err}")
            return
        if snapshot is not None:
            self.belief_pub.publish(belief_msg(snapshot, episode=msg.episode, round_index=msg.round,
                                               stamp_ns=ns_of(msg.header.stamp), resolves=False))

    def _belief(self, msg: Belief) -> None:
        names = [e.name for e in msg.entities]
        if len(set(names)) != len(names) or not all(names):
            raise WireError(f"belief of round {msg.round}: its entities need distinct, non-empty names")
        self.belief_pub.publish(msg)

    def _remember(self, msg: RoundObservation) -> None:
        """Oracle perception: the summary of every labelled instance seen in this episode."""
        if msg.mapped:
            return  # the semantic map's summary goes out with each agent round
        if msg.episode != self.episode or msg.round <= 1:  # a new episode (of this world, or of a restarted one)
            self.seen.clear()
            self.episode = msg.episode
        for label in msg.labels:
            first = self.seen.get(label.name, (label.category, msg.round, msg.round))[1]
            self.seen[label.name] = (label.category, first, msg.round)
        self.summary_pub.publish(labelled_map_msg(self.seen, episode=msg.episode, round_index=msg.round, stamp_ns=ns_of(msg.header.stamp)))

    def _publish_map(self, belief: Belief, summary: SemanticMap, grid: OccupancyGrid | None) -> None:
        self.belief_pub.publish(belief)
        self.summary_pub.publish(summary)
        if grid is not None:
            self.grid_pub.publish(grid)

    def close(self) -> None:
        if self.worker is not None:
            self.worker.close(lambda: None)
        if self.map is not None:
            self.map.close()


PARAMS = (Param("world_timeout", 30.0, "seconds the world node may take to describe its scene (oracle belief of a simulated home)",
                positive),)


# the run configuration's sections this node reads: their settings are its parameters too
CONFIG = ("perception", "world")
NODE = NodeDef("mapper", MapperNode, PARAMS, config=CONFIG)


def main(args: list[str] | None = None) -> int:
    return run_node(NODE, args)


if __name__ == "__main__":
    sys.exit(main())
