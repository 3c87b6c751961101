"""The policy server node: hosts one low-level ``Policy`` in its own process (and Python environment).

    homiebot_policy_server --ros-args -r __node:=policy_octo -p policy:=octo \\
        -p policy_params:='{"checkpoint": "models/octo/octo-small-1.5"}' -p service:=policy/octo

Typed services under ``/homiebot/<service>/``: ``describe`` (homiebot_msgs/DescribePolicy: policy,
family, image size, control rate, training camera, and ``availability``: empty or what is missing
with the install hint), ``reset`` (ResetPolicy: instruction, goal image) and ``act`` (PolicyAct: the
observation's images and fields in, PolicyCommand[] out). Reset and act are served one at a time;
describe answers while a step runs. A policy that cannot run here still starts, so that clients learn
why from ``describe`` instead of waiting for a timeout. Every result has an error code and message
(``homiebot.ros.kit.services``): UNAVAILABLE, INVALID_REQUEST (a field that cannot be read), FAILED (the
model raised; logged with its traceback).

The graph starts one server per skill configured with ``process`` (``homiebot.ros.bringup.graph``), with
that skill's ``python_executable``; ``RemotePolicy`` is the client.
"""

from __future__ import annotations

import json
import sys
import threading
from typing import Any

from homiebot_msgs.srv import DescribePolicy, PolicyAct, ResetPolicy
from rclpy.node import Node

from homiebot.policies.base import Policy
from homiebot.ros.kit.common import NodeDef, Param
from homiebot.ros.kit.process import run_node
from homiebot.ros.kit.services import ErrorMapping, TypedServer
from homiebot.ros.messages.policy import PolicyMessageError, camera_msg, command_msg, image_array, observation_of


def _json_object(value: Any) -> str | None:
    try:
        return None if isinstance(json.loads(value or "{}"), dict) else "must be a JSON object"
    except ValueError as err:
        return f"not JSON: {err}"


def _nonempty(value: Any) -> str | None:
    return None if str(value).strip() else "name the policy to host (e.g. octo, nomad, expert_waypoints)"


class Unavailable(RuntimeError):
    """The hosted policy cannot run on this server (the message says what is missing)."""


class PolicyServer:
    """Serves ``describe``, ``reset`` and ``act`` for one policy."""

    def __init__(self, node: Node, params: dict[str, Any]) -> None:
        from homiebot.skills.policy_skill import make_policy

        self.name = params["policy"]
        self.policy: Policy = make_policy(self.name, **json.loads(params["policy_params"] or "{}"))
        self.reason = self.policy.availability()
        if self.reason:
            node.get_logger().warning(self.reason)
        self._lock = threading.Lock()  # one reset or step at a time; describe answers meanwhile
        self.acts = 0
        self.service = (params["service"] or f"policy/{self.name}").strip("/")  # under the graph's namespace
        errors = [ErrorMapping(Unavailable, ResetPolicy.Response.UNAVAILABLE), ErrorMapping(PolicyMessageError, ResetPolicy.Response.INVALID_REQUEST)]
        TypedServer(node, DescribePolicy, f"{self.service}/describe", self.describe, [], DescribePolicy.Response.FAILED)
        TypedServer(node, ResetPolicy, f"{self.service}/reset", self.reset, errors, ResetPolicy.Response.FAILED)
        TypedServer(node, PolicyAct, f"{self.service}/act", self.act, errors, PolicyAct.Response.FAILED)

    def describe(self, request: DescribePolicy.Request) -> DescribePolicy.Response:
        p = self.policy
        height, width = (int(n) for n in p.image_size)
        response = DescribePolicy.Response(policy=self.name, family=p.family, kind=p.kind, image_height=height, image_width=width,
                                           rate_hz=float(p.rate_hz), availability=self.reason or "")
        if p.camera is not None:
            response.has_camera, response.camera = True, camera_msg(p.camera)
        return response

    def reset(self, request: ResetPolicy.Request) -> ResetPolicy.Response:
        if self.reason:
            raise Unavailable(self.reason)
        goal = image_array(request.goal_image, "rgb8", "goal_image")
        with self._lock:
            self.policy.reset(request.instruction, goal)
        return ResetPolicy.Response()

    def act(self, request: PolicyAct.Request) -> PolicyAct.Response:
        if self.reason:
            raise Unavailable(self.reason)
        obs = observation_of(request)
        with self._lock:
            commands = self.policy.act(obs)
            self.acts += 1
        return PolicyAct.Response(commands=[command_msg(c) for c in commands])

    def close(self) -> None:
        self.policy.close()


PARAMS = (
    Param("policy", "", "policy to host: a name make_policy knows (nomad, pixnav, octo, rt1x, scripted, ...)", _nonempty),
    Param("policy_params", "{}", "the policy's keyword arguments as a JSON object", _json_object),
    Param("service", "", "where the services are (<namespace>/<service>/describe, reset, act); default policy/<policy>"),
)

NODE = NodeDef("policy_server", PolicyServer, PARAMS, waiting_handlers=True)  # describe while a step runs


def main(args: list[str] | None = None) -> int:
    return run_node(NODE, args)


if __name__ == "__main__":
    sys.exit(main())
