"""The viewer node of ``homiebot up --view``: the graph's topics in the rerun web viewer (viz extra)."""

from __future__ import annotations

import sys
from typing import Any

from rclpy.node import Node

from homiebot.ros.kit.common import NodeDef, Param
from homiebot.ros.kit.process import run_node


class ViewerNode:
    def __init__(self, node: Node, params: dict[str, Any]) -> None:
        import rerun as rr

        from homiebot.ros.clients.viewer import GraphViewer
        from homiebot.viz.rerun_log import APP_ID, RerunLog, blueprint
        from homiebot.viz.server import WebViewer

        self.server = WebViewer(params["host"], web_port=int(params["port"]) or None) if params["serve"] else None
        self.stream = rr.RecordingStream(APP_ID)
        sinks: list = [rr.GrpcSink(self.server.grpc_url)] if self.server else []
        if params["save_rrd"]:
            sinks.append(rr.FileSink(str(params["save_rrd"])))
        self.stream.set_sinks(*sinks, default_blueprint=blueprint())
        self.viewer = GraphViewer(node, RerunLog(self.stream))
        if self.server is not None:
            node.get_logger().info(f"live view: {self.server.url}")
            print(f"live view: {self.server.url}", flush=True)

    def close(self) -> None:
        self.viewer.close()
        print(f"live view: {self.viewer.queue.done} items logged, {self.viewer.queue.dropped} frames skipped to keep up, "
              f"errors: {self.viewer.queue.errors[:2]}, received {self.viewer.seen}", flush=True)
        self.stream.flush(timeout_sec=10.0)
        self.stream.disconnect()
        if self.server is not None:
            self.server.close()


PARAMS = (
    Param("host", "127.0.0.1", "address the rerun web viewer listens on"),
    Param("port", 0, "web viewer port (0: a free one)"),
    Param("serve", True, "serve the web viewer (false: only save_rrd)"),
    Param("save_rrd", "", "also write the view to this .rrd file"),
)

NODE = NodeDef("viewer", ViewerNode, PARAMS)


def main(args: list[str] | None = None) -> int:
    return run_node(NODE, args)


if __name__ == "__main__":
    sys.exit(main())
