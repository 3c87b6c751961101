"""The Foxglove node: serves every /homiebot topic over the Foxglove WebSocket protocol
(``homiebot up --foxglove``; open ``ws://127.0.0.1:8765`` in Foxglove with the saved layout)."""

from __future__ import annotations

import sys
from typing import Any

from rclpy.node import Node

from homiebot.ros.clients.foxglove import FoxgloveBridge
from homiebot.ros.kit.common import NodeDef, Param
from homiebot.ros.kit.process import run_node


class FoxgloveNode:
    def __init__(self, node: Node, params: dict[str, Any]) -> None:
        self.bridge = FoxgloveBridge(node, host=params["host"], port=int(params["port"]))
        node.get_logger().info(f"Foxglove WebSocket server on ws://{params['host']}:{self.bridge.port}")

    def close(self) -> None:
        self.bridge.close()


PARAMS = (
    Param("host", "127.0.0.1", "address the Foxglove WebSocket server listens on"),
    Param("port", 8765, "its port (0: a free one)"),
)

NODE = NodeDef("foxglove", FoxgloveNode, PARAMS)


def main(args: list[str] | None = None) -> int:
    return run_node(NODE, args)


if __name__ == "__main__":
    sys.exit(main())
