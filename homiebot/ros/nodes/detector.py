"""The error detector node: runs the format, logic and distance checks against the current belief.

Serves /homiebot/detector/check (``homiebot_msgs/srv/Check``): the planner output, the round, the model
capabilities and the task aliases in; a failure feedback or the grounded subtask out.

When the round's belief says ``resolves`` (mapped perception: the belief is the mapper's semantic map,
which grounds phrases such as "green can"), the belief used is a ``MapResolvedBelief``: the snapshot,
plus ``resolve`` answered by the mapper node (/homiebot/map/resolve). Oracle snapshots carry no such
flag and cost no extra calls.
"""

from __future__ import annotations

import sys
from typing import Any

from homiebot_msgs import msg as hb
from homiebot_msgs.srv import Check
from rclpy.node import Node

from homiebot.core.errors import ErrorDetector, SnapshotBelief
from homiebot.ros.clients.map_link import MapResolvedBelief, map_callers
from homiebot.ros.kit.common import RUN_CONFIG, NodeDef, Param, positive
from homiebot.ros.kit.process import run_node
from homiebot.ros.kit.services import ErrorMapping, ServiceCaller, TypedServer
from homiebot.ros.messages.common import capabilities_from_msg, feedback_msg, pairs_from_msg, planner_output_from_msg, subtask_msg
from homiebot.ros.messages.observations import ObservationCache
from homiebot.ros.messages.round import snapshot_of


class DetectorNode:
    def __init__(self, node: Node, params: dict[str, Any]) -> None:
        self.cfg = params[RUN_CONFIG]
        self.wait = params["belief_timeout"]
        self.cache = ObservationCache(node, kinds=(), round_topics=("belief",))
        self.node = node
        self._resolver: ServiceCaller | None = None  # oracle mode adds no endpoints
        if self.cfg.perception.mode == "mapped":
            # made now, so that its endpoints are discovered while the graph starts, not inside a round's check
            # (discovery of a new endpoint on a loaded machine can take longer than a call's timeout)
            self.resolver()
        self.server = TypedServer(node, Check, "detector/check", self.check,
                                  (ErrorMapping(BadRequest, Check.Response.INVALID_REQUEST),
                                   ErrorMapping(NoBelief, Check.Response.NO_BELIEF, own_failure=True)), Check.Response.FAILED)

    def resolver(self) -> ServiceCaller:
        """The client of the mapper's ``resolve`` (``homiebot_msgs/srv/Resolve``)."""
        if self._resolver is None:
            self._resolver = map_callers(self.node, ("resolve",))["resolve"]
        return self._resolver

    def check(self, request: Check.Request) -> Check.Response:
        try:
            caps = capabilities_from_msg(request.capabilities)
            output = planner_output_from_msg(request.output)
        except ValueError as err:  # pydantic's ValidationError is a ValueError
            raise BadRequest(f"the output or the capabilities are not the contract's: {str(err).splitlines()[0]}") from None
        episode, round_index = int(request.episode), int(request.round)
        try:
            message = self.cache.wait_round("belief", episode, round_index, self.wait)
        except TimeoutError as err:
            raise NoBelief(str(err)) from None
        snapshot = snapshot_of(message)
        belief = MapResolvedBelief(snapshot, self.resolver(), episode, self.wait) if message.resolves else SnapshotBelief(snapshot)
        d = self.cfg.detector
        detector = ErrorDetector(belief, caps, pairs_from_msg(request.aliases), far=d.far, near=d.near, suggest=d.suggest_names,
                                 unavailable=pairs_from_msg(request.unavailable))
        result = detector.check(output)
        return Check.Response(passed=result.feedback is None,
                              feedback=feedback_msg(result.feedback) if result.feedback else hb.Feedback(),
                              subtask=subtask_msg(result.subtask))

    def interrupt(self) -> None:
        """The process stops: a check waiting for its belief gives up now."""
        self.cache.close()


class BadRequest(ValueError):
    """A request that cannot be checked (the caller's mistake: one line in the log)."""


class NoBelief(TimeoutError):
    """The round's belief did not arrive in time."""


PARAMS = (Param("belief_timeout", 30.0, "seconds to wait for the round's belief (and for the map to ground a phrase with it)", positive),)


# the run configuration's sections this node reads: their settings are its parameters too
CONFIG = ("detector", "perception", "world")
NODE = NodeDef("detector", DetectorNode, PARAMS, config=CONFIG, waiting_handlers=True)


def main(args: list[str] | None = None) -> int:
    return run_node(NODE, args)


if __name__ == "__main__":
    sys.exit(main())
