"""The ROS 2 client of the sim driver's simulator-only services (``homiebot.robots.sim.SimDriver``).

Every call is a typed homiebot_msgs service under ``/homiebot/sim`` with an error code in its
response; a driver that does not answer in time or reports an error raises RobotUnavailable, which a
bridged world turns into a failed attempt or a refused start, as a robot that stopped answering.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from homiebot_msgs.srv import GoalSatisfied, SimExpertAct, SimExpertReset, SimMode, SimRender, SimRestart, SimStep, SimTruth
from rclpy.node import Node

from homiebot.core.contracts import Subtask
from homiebot.core.robot import RobotUnavailable
from homiebot.robots.sim import SIM_SERVICES
from homiebot.ros.kit.services import ServiceCaller, ServiceError, ServiceTimeout
from homiebot.ros.messages.common import pairs_from_msg, pairs_msg, subtask_msg
from homiebot.ros.messages.policy import PolicyMessageError, command_of
from homiebot.ros.messages.truth import truth_of

SERVICES: dict[str, Any] = {"truth": SimTruth, "restart": SimRestart, "step": SimStep, "render": SimRender, "mode": SimMode, "goal": GoalSatisfied,
                            "expert/reset": SimExpertReset, "expert/act": SimExpertAct}


class SimDriverClient:
    """Blocking calls to the sim driver (the node must be spun in another thread)."""

    def __init__(self, node: Node) -> None:
        self._callers = {name: ServiceCaller(node, srv, f"{SIM_SERVICES}/{name}", "sim driver") for name, srv in SERVICES.items()}

    def _call(self, name: str, request: Any, timeout: float) -> Any:
        try:
            return self._callers[name].call(request, timeout)
        except (ServiceError, ServiceTimeout) as err:
            raise RobotUnavailable(f"the sim driver's {name}: {err}") from None

    def truth(self, timeout: float) -> dict[str, Any]:
        reply = self._call("truth", SimTruth.Request(), timeout)
        try:
            return truth_of(reply.truth)
        except ValueError as err:
            raise RobotUnavailable(f"the sim driver's truth is unreadable: {err}") from None

    def restart(self, timeout: float) -> int:
        return int(self._call("restart", SimRestart.Request(), timeout).stamp)

    def mode(self, timeout: float) -> tuple[bool, int]:
        reply = self._call("mode", SimMode.Request(), timeout)
        return bool(reply.lockstep), int(reply.time)

    def step(self, seconds: float, after: Mapping[str, int], until: str | None, timeout: float,
             cameras: list[str] | None = None) -> tuple[int, dict[str, int]]:
        request = SimStep.Request(seconds=float(seconds), after=pairs_msg({k: str(int(v)) for k, v in after.items()}), until=until or "",
                                  cameras_listed=cameras is not None, cameras=list(cameras or ()))
        reply = self._call("step", request, timeout)
        return int(reply.time), {k: int(v) for k, v in pairs_from_msg(reply.counters).items()}

    def render(self, cameras: list[str], timeout: float) -> int:
        return int(self._call("render", SimRender.Request(cameras=list(cameras)), timeout).time)

    def goal(self, conditions: list[Any], timeout: float) -> bool:
        reply = self._call("goal", GoalSatisfied.Request(goal=json.dumps(conditions)), timeout)
        return bool(reply.known and reply.satisfied)

    def expert_reset(self, policy: str, params: Mapping[str, Any], instruction: str, subtask: Subtask, timeout: float) -> None:
        request = SimExpertReset.Request(policy=policy, policy_params=json.dumps(dict(params)), instruction=instruction,
                                         subtask=subtask_msg(subtask))
        self._call("expert/reset", request, timeout)

    def expert_act(self, step: int, timeout: float) -> tuple[list[Any], str]:
        reply = self._call("expert/act", SimExpertAct.Request(step=int(step)), timeout)
        try:
            return [command_of(c) for c in reply.commands], reply.diagnosis
        except PolicyMessageError as err:
            raise RobotUnavailable(f"the sim driver's expert sent a bad command: {err}") from None
