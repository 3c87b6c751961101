"""The recorder node: writes every /homiebot topic of an episode into a rosbag2 MCAP file.

It runs in a process of its own (like ``ros2 bag record``), so that writing camera frames never
holds up the agent loop. The task manager calls ``start`` with the episode's bag folder (on this
machine's file system) before the first round and ``stop`` after the last; ``stop`` waits until
the messages still in flight have come in, closes the bag and answers with the count per topic.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from rclpy.node import Node

from homiebot.ros.common import NodeDef, Param, positive, run_node
from homiebot.ros.recorder import BagRecorder
from homiebot.ros.rpc import CallContext, RpcServer


class RecorderNode:
    def __init__(self, node: Node, params: dict[str, Any]) -> None:
        self.recorder = BagRecorder(node)
        self.quiet, self.limit = params["settle_quiet"], params["settle_limit"]
        self.server = RpcServer(node, "recorder", {"start": self.start, "stop": self.stop})

    def start(self, params: dict, ctx: CallContext) -> dict:
        """Begin a bag in ``path`` (a folder that must not exist yet); a bag still open is closed first."""
        path = Path(str(params["path"]))
        if not path.is_absolute():
            raise ValueError(f"the bag folder must be an absolute path, got '{path}'")
        if path.exists():
            raise FileExistsError(f"the bag folder {path} exists already")
        self.recorder.stop()
        self.recorder.start(path)
        return {"path": str(path)}

    def stop(self, params: dict, ctx: CallContext) -> dict:
        """Close the bag once quiet; ``{"counts": {topic: messages}}``."""
        self.recorder.settle(self.quiet, self.limit)
        return {"counts": self.recorder.stop()}

    def close(self) -> None:
        self.recorder.stop()  # an open bag gets its metadata when the node stops


PARAMS = (
    Param("settle_quiet", 0.1, "seconds without messages after which a stopping bag is closed", positive),
    Param("settle_limit", 2.0, "at most this many seconds of waiting for quiet before a bag is closed", positive),
)


NODE = NodeDef("recorder", RecorderNode, PARAMS)


def main(args: list[str] | None = None) -> int:
    return run_node(NODE, args)


if __name__ == "__main__":
    sys.exit(main())
