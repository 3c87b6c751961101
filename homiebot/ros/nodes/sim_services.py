"""The sim driver's simulator-only services (``homiebot.robots.sim``): typed homiebot_msgs requests
turned into the driver's calls, its answers into responses with an error code (``homiebot.ros.kit.services``).

    /homiebot/sim/truth          SimTruth        the truth message of this instant
    /homiebot/sim/restart        SimRestart      the home back to its initial state
    /homiebot/sim/mode           SimMode         lock-step or real time, and the simulated clock
    /homiebot/sim/step           SimStep         lock-step: advance once the counted commands arrived
    /homiebot/sim/render         SimRender       lock-step: render cameras at the present instant (the last step did not)
    /homiebot/sim/goal           GoalSatisfied   whether task goal conditions hold
    /homiebot/sim/expert/reset   SimExpertReset  start one of the home's expert policies on a subtask
    /homiebot/sim/expert/act     SimExpertAct    its next commands (PolicyCommand[]) and its diagnosis
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from homiebot_msgs.srv import GoalSatisfied, SimExpertAct, SimExpertReset, SimMode, SimRender, SimRestart, SimStep, SimTruth
from pydantic import ValidationError
from rclpy.node import Node

from homiebot.robots.sim import SIM_SERVICES
from homiebot.ros.kit.services import ErrorMapping, TypedServer
from homiebot.ros.messages.common import pairs_from_msg, pairs_msg, subtask_from_msg
from homiebot.ros.messages.policy import command_msg
from homiebot.ros.messages.poses import planar_pose_msg
from homiebot.ros.messages.truth import ground_truth_msg


class Simulating(Protocol):
    """What the services reach in the sim driver."""

    @property
    def lockstep(self) -> bool:
        """Whether only ``step`` moves the simulation."""
        ...

    @property
    def sim_ns(self) -> int:
        """The simulated time (ns)."""
        ...

    def truth_now(self) -> dict[str, Any]: ...
    def restart(self) -> dict[str, float]: ...
    def step(self, seconds: float, after: dict[str, int], until: str | None,
             cameras: list[str] | None = None) -> tuple[int, dict[str, int]]: ...
    def render_now(self, cameras: list[str]) -> int: ...
    def goal_holds(self, goal: Any) -> bool: ...
    def expert_reset(self, name: str, params: dict[str, Any], instruction: str, subtask: Any) -> Any: ...
    def expert_act(self) -> tuple[list[Any], str]: ...


def _json_object(text: str, what: str) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        raise ValueError(f"{what} is not JSON") from None
    if not isinstance(value, dict):
        raise ValueError(f"{what} must be a JSON object")
    return value


def serve_sim_services(node: Node, sim: Simulating) -> list[TypedServer]:
    """Create the services on ``node``; each answers from ``sim``."""
    refused = [ErrorMapping(ValueError, 1), ErrorMapping(ValidationError, 1), ErrorMapping(LookupError, 1)]  # INVALID_REQUEST

    def truth(request: SimTruth.Request) -> SimTruth.Response:
        return SimTruth.Response(truth=ground_truth_msg(sim.truth_now()))

    def restart(request: SimRestart.Request) -> SimRestart.Response:
        pose = sim.restart()
        return SimRestart.Response(pose=planar_pose_msg(pose["x"], pose["y"], pose["yaw"]), stamp=int(pose["stamp"]))

    def mode(request: SimMode.Request) -> SimMode.Response:
        return SimMode.Response(lockstep=sim.lockstep, time=int(sim.sim_ns))

    def step(request: SimStep.Request) -> SimStep.Response:
        try:
            after = {k: int(v) for k, v in pairs_from_msg(request.after).items()}
        except ValueError:
            raise ValueError(f"step: after holds counts that are not whole numbers: {pairs_from_msg(request.after)}") from None
        now, counters = sim.step(float(request.seconds), after, request.until or None,
                                 list(request.cameras) if request.cameras_listed else None)
        return SimStep.Response(time=now, counters=pairs_msg({k: str(v) for k, v in counters.items()}))

    def render(request: SimRender.Request) -> SimRender.Response:
        return SimRender.Response(time=int(sim.render_now(list(request.cameras))))

    def goal(request: GoalSatisfied.Request) -> GoalSatisfied.Response:
        try:
            conditions = json.loads(request.goal)
        except ValueError:
            raise ValueError("goal is not JSON (the task format's list of conditions)") from None
        return GoalSatisfied.Response(known=True, satisfied=sim.goal_holds(conditions))

    def expert_reset(request: SimExpertReset.Request) -> SimExpertReset.Response:
        try:
            subtask = subtask_from_msg(request.subtask)
        except ValueError as err:
            raise ValueError(f"subtask: {err}") from None
        policy = sim.expert_reset(request.policy, _json_object(request.policy_params, "policy_params"), request.instruction, subtask)
        return SimExpertReset.Response(family=policy.family, kind=policy.kind, rate_hz=float(policy.rate_hz))

    def expert_act(request: SimExpertAct.Request) -> SimExpertAct.Response:
        commands, diagnosis = sim.expert_act()
        return SimExpertAct.Response(commands=[command_msg(c) for c in commands], diagnosis=diagnosis)

    plain: list[ErrorMapping] = []  # truth, restart and mode refuse nothing: any error is the driver's failure
    handlers = {"truth": (SimTruth, truth, plain), "restart": (SimRestart, restart, plain), "mode": (SimMode, mode, plain),
                "step": (SimStep, step, refused), "render": (SimRender, render, refused), "goal": (GoalSatisfied, goal, refused),
                "expert/reset": (SimExpertReset, expert_reset, refused), "expert/act": (SimExpertAct, expert_act, refused)}
    return [TypedServer(node, srv, f"{SIM_SERVICES}/{name}", handler, errors, srv.Response.FAILED)
            for name, (srv, handler, errors) in handlers.items()]
