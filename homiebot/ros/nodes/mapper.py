"""The mapper node: the source of the belief the error detector checks against, and of the map topics.

/homiebot/belief (homiebot_msgs/Belief), per round, comes from where ``homiebot.runtime.belief_site`` says:

* ``mapper``: oracle perception of a simulated home. The mapper builds the belief itself, from the
  simulator's truth: its own mirror of the world node's scene, in the state of each round
  (/homiebot/world/state; homiebot/ros/belief_mirror.py);
* ``world``: the world's own belief, which the world node publishes on /homiebot/world/belief and the
  mapper passes on after checking it: a semantic map's in ``mapped`` perception (the world node hosts
  the detector and the map, since both read its cameras every round), a robot bridge's otherwise (its
  driver's truth in simulation, what it holds on a real robot).

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

from homiebot_msgs.msg import Belief, RoundObservation, SemanticMap, SimState
from nav_msgs.msg import OccupancyGrid
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

from homiebot.ros.belief_mirror import BeliefMirror, MirrorError
from homiebot.ros.common import NodeDef, Param, positive, run_config, run_node
from homiebot.ros.messages import MAP_GRID_TOPIC, WORLD_GRID_TOPIC, ns_of
from homiebot.ros.observations import ROUND_DATA
from homiebot.ros.round_messages import belief_msg, labelled_map_msg
from homiebot.ros.services import ServiceError, ServiceTimeout
from homiebot.ros.sim_thread import SimThread
from homiebot.ros.wire import WireError, safe_callback
from homiebot.runtime import belief_site

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
        cfg = run_config(params["config"])
        # the truth is mirrored on a thread of its own: reading a new episode's scene waits for the world node
        self.mirror = BeliefMirror(node, cfg.world.name, params["world_timeout"]) if belief_site(cfg) == "mapper" else None
        self.worker = SimThread(node) if self.mirror is not None else None
        source: tuple = ((SimState, "/homiebot/world/state", self._state) if self.mirror is not None
                         else (Belief, "/homiebot/world/belief", self._belief))
        for msg_type, topic, callback in (source, (RoundObservation, "/homiebot/observation", self._remember),
                                          (SemanticMap, "/homiebot/world/map", self.summary_pub.publish),
                                          (OccupancyGrid, WORLD_GRID_TOPIC, self._grid)):
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


    def close(self) -> None:
        if self.worker is not None:
            self.worker.close(lambda: None)


PARAMS = (Param("perception", "oracle", "oracle or mapped (the summary follows what the world publishes)"),
          Param("world_timeout", 30.0, "seconds the world node may take to describe its scene (oracle belief of a simulated home)",
                positive))


NODE = NodeDef("mapper", MapperNode, PARAMS)


def main(args: list[str] | None = None) -> int:
    return run_node(NODE, args)


if __name__ == "__main__":
    sys.exit(main())
