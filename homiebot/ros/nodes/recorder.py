"""The recorder node: writes every /homiebot topic of an episode into a rosbag2 MCAP file.

It runs in a process of its own (like ``ros2 bag record``), so that writing camera frames never
holds up the agent loop. The task manager calls /homiebot/recorder/start (``homiebot_msgs/srv/StartBag``)
with the episode's bag folder (on this machine's file system) before the first round and
/homiebot/recorder/stop (``StopBag``) after the last; stopping waits until the messages still in flight
have come in, closes the bag and answers with the count per topic. Deactivated mid-episode, it closes the open
bag at once (the episode goes on unrecorded, with a warning).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from homiebot_msgs.msg import Measure
from homiebot_msgs.srv import StartBag, StopBag
from rclpy.node import Node

from homiebot.ros.clients.recorder import BagRecorder
from homiebot.ros.kit.common import NodeDef, Param, positive
from homiebot.ros.kit.process import run_node
from homiebot.ros.kit.services import ErrorMapping, TypedServer


class BadPath(ValueError):
    """A bag folder that is relative or exists already (the caller's to fix)."""


class NoBagOpen(RuntimeError):
    """StopBag with no bag open: it was closed when the recorder was deactivated (or never started)."""


class RecorderNode:
    def __init__(self, node: Node, params: dict[str, Any]) -> None:
        self.node, self.recorder = node, BagRecorder(node)
        self.quiet, self.limit = params["settle_quiet"], params["settle_limit"]
        self.servers = (
            TypedServer(node, StartBag, "recorder/start", self.start, (ErrorMapping(BadPath, StartBag.Response.INVALID_REQUEST),),
                        StartBag.Response.FAILED),
            TypedServer(node, StopBag, "recorder/stop", self.stop, (ErrorMapping(NoBagOpen, StopBag.Response.FAILED),),
                        StopBag.Response.FAILED))
        self.cut = False  # the open bag was closed by a deactivation: the next StopBag says so

    def start(self, request: StartBag.Request) -> StartBag.Response:
        """Begin a bag in ``path`` (a folder that must not exist yet); a bag still open is closed first."""
        path = Path(request.path)
        if not path.is_absolute():
            raise BadPath(f"the bag folder must be an absolute path, got '{request.path[:300]}'")
        if path.exists():
            raise BadPath(f"the bag folder {path} exists already")
        self.recorder.stop()
        self.recorder.start(path)
        self.cut = False
        return StartBag.Response()

    def stop(self, request: StopBag.Request) -> StopBag.Response:
        """Close the bag once quiet, with the number of messages per topic."""
        if not self.recorder.recording:
            cut, self.cut = self.cut, False
            raise NoBagOpen("the recorder was deactivated during the episode and closed its bag then: the rounds after "
                            "that are not in it" if cut else "no bag is being recorded")
        self.recorder.settle(self.quiet, self.limit)
        return StopBag.Response(messages=[Measure(name=t, value=float(n)) for t, n in sorted(self.recorder.stop().items())])

    def deactivate(self) -> None:
        """Deactivated (lifecycle): the open bag is closed now, complete up to this instant, and nothing more goes
        into it; no bag starts until the node is active again (StartBag is refused meanwhile, and the episode
        says so). Before, the bag stayed open and the next episode was recorded into it."""
        if self.recorder.recording:
            counts, self.cut = self.recorder.stop(), True
            self.node.get_logger().warning(f"deactivated: the open bag was closed ({sum(counts.values())} messages)")

    def close(self) -> None:
        self.recorder.stop()  # an open bag gets its metadata when the node stops


PARAMS = (
    Param("settle_quiet", 0.1, "seconds without messages after which a stopping bag is closed", positive),
    Param("settle_limit", 2.0, "at most this many seconds of waiting for quiet before a bag is closed", positive),
)


NODE = NodeDef("recorder", RecorderNode, PARAMS, waiting_handlers=True)  # stopping waits while messages come in


def main(args: list[str] | None = None) -> int:
    return run_node(NODE, args)


if __name__ == "__main__":
    sys.exit(main())
