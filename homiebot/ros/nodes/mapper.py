"""The mapper node: the source of the belief the error detector checks against.

In ``oracle`` perception (the embedded home's privileged truth) it passes the world's snapshot on
from /homiebot/world/belief to /homiebot/belief, and keeps a summary of every instance seen so far
(name, category, last round seen) on /homiebot/map/summary.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from rclpy.node import Node
from std_msgs.msg import String

from homiebot.ros.common import NodeDef, Param, run_node
from homiebot.ros.rpc import RELIABLE


class MapperNode:
    def __init__(self, node: Node, params: dict[str, Any]) -> None:
        if params["perception"] != "oracle":
            raise ValueError(f"perception '{params['perception']}' is not available yet; use 'oracle'")
        self.seen: dict[str, dict] = {}
        self.belief_pub = node.create_publisher(String, "/homiebot/belief", RELIABLE)
        self.summary_pub = node.create_publisher(String, "/homiebot/map/summary", RELIABLE)
        node.create_subscription(String, "/homiebot/world/belief", self._relay, RELIABLE)
        node.create_subscription(String, "/homiebot/observation", self._remember, RELIABLE)

    def _relay(self, msg: String) -> None:
        self.belief_pub.publish(msg)

    def _remember(self, msg: String) -> None:
        meta = json.loads(msg.data)
        if meta["round"] == 1:
            self.seen.clear()  # a new episode
        for label in meta["labels"].values():
            self.seen[label["name"]] = {"category": label["category"], "last_seen": meta["round"]}
        self.summary_pub.publish(String(data=json.dumps({"round": meta["round"], "instances": self.seen})))


PARAMS = (Param("perception", "oracle", "where the belief comes from: oracle (simulator truth)"),)


NODE = NodeDef("mapper", MapperNode, PARAMS)


def main(args: list[str] | None = None) -> int:
    return run_node(NODE, args)


if __name__ == "__main__":
    sys.exit(main())
