"""The policy server node: hosts one low-level ``Policy`` in its own process (and Python environment).

    homiebot_policy_server --ros-args -r __node:=policy_octo -p policy:=octo \\
        -p policy_params:='{"checkpoint": "models/octo/octo-small-1.5"}' -p service:=policy/octo

Methods on ``/homiebot/<service>/request`` (``homiebot.ros.rpc``): ``describe`` (policy, family,
image size, control rate, and ``availability``: None or what is missing with the install hint),
``reset`` ({instruction, goal_image}) and ``act`` ({observation} -> list of commands), in the JSON
forms of ``homiebot.skills.policy_wire``. Calls are served one at a time. A policy that cannot run
here still starts, so that clients learn why from ``describe`` instead of waiting for a timeout.

The graph starts one server per skill configured with ``process`` (``homiebot.ros.graph``), with
that skill's ``python_executable``; ``RemotePolicy`` is the client.
"""

from __future__ import annotations

import json
import sys
import threading
from typing import Any

from rclpy.node import Node

from homiebot.ros.common import NodeDef, Param, run_node
from homiebot.ros.rpc import CallContext, RpcServer
from homiebot.skills.policy import Policy
from homiebot.skills.policy_wire import decode_array, decode_observation, encode_commands


def _json_object(value: Any) -> str | None:
    try:
        return None if isinstance(json.loads(value or "{}"), dict) else "must be a JSON object"
    except ValueError as err:
        return f"not JSON: {err}"


def _nonempty(value: Any) -> str | None:
    return None if str(value).strip() else "name the policy to host (e.g. octo, nomad, expert_waypoints)"


class PolicyServer:
    """Serves ``describe``, ``reset`` and ``act`` for one policy."""

    def __init__(self, node: Node, params: dict[str, Any]) -> None:
        from homiebot.skills.policy_skill import make_policy

        self.name = params["policy"]
        self.policy: Policy = make_policy(self.name, **json.loads(params["policy_params"] or "{}"))
        self.reason = self.policy.availability()
        if self.reason:
            node.get_logger().warning(self.reason)
        self._lock = threading.Lock()
        self.acts = 0
        self.service = params["service"] or f"policy/{self.name}"
        self.server = RpcServer(node, self.service, {"describe": self.describe, "reset": self.reset, "act": self.act})

    def describe(self, params: dict, ctx: CallContext) -> dict:
        p = self.policy
        return {"policy": self.name, "family": p.family, "kind": p.kind, "image_size": list(p.image_size), "rate_hz": p.rate_hz,
                "availability": self.reason, "camera": p.camera.to_dict() if p.camera is not None else None}

    def reset(self, params: dict, ctx: CallContext) -> dict:
        if self.reason:
            raise RuntimeError(self.reason)
        with self._lock:
            self.policy.reset(str(params.get("instruction", "")), decode_array(params.get("goal_image")))
        return {}

    def act(self, params: dict, ctx: CallContext) -> list[dict]:
        if self.reason:
            raise RuntimeError(self.reason)
        obs = decode_observation(params["observation"])
        with self._lock:
            ctx.check_cancelled()
            commands = self.policy.act(obs)
            self.acts += 1
        return encode_commands(commands)

    def close(self) -> None:
        self.policy.close()


PARAMS = (
    Param("policy", "", "policy to host: a name make_policy knows (nomad, pixnav, octo, rt1x, scripted, ...)", _nonempty),
    Param("policy_params", "{}", "the policy's keyword arguments as a JSON object", _json_object),
    Param("service", "", "RPC service name (topics /homiebot/<service>/...); default policy/<policy>"),
)

NODE = NodeDef("policy_server", PolicyServer, PARAMS)


def main(args: list[str] | None = None) -> int:
    return run_node(NODE, args)


if __name__ == "__main__":
    sys.exit(main())
