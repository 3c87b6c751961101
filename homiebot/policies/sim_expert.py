"""``SimExpertPolicy``: an expert source computed by the sim driver, for a bridged world in simulation.

The embedded home's expert policies (``expert_waypoints``, ``expert_discrete``, ``expert_ee``) read
its truth, which only the simulator has. When the home runs as a robot driver in another process
(``homiebot_sim_driver``), this policy asks that process for each next command over its
``/homiebot/sim/expert/reset`` and ``expert/act`` services (``homiebot.robots.sim.SimDriver``); the
commands are then executed like a learned model's, through
the robot interface and the profile's driver topics. Like every privileged policy it needs the
world's ground truth (a ``ros2_robot`` world with ``sim_truth: true`` next to a sim driver) and
refuses at start-up elsewhere: on a robot, learned models take its place.

    {name: policy_skill, model: NoMaD, params: {policy: sim_expert, policy_params: {expert: expert_waypoints}}}
"""

from __future__ import annotations

from typing import Any

from homiebot.core.contracts import Subtask
from homiebot.core.robot import Robot, RobotUnavailable
from homiebot.core.world_capabilities import PrivilegedWorld
from homiebot.policies.base import Command, PolicyError, PolicyObservation, PrivilegedPolicy

# what each of the home's experts stands in for: (family, kind, image size, control rate)
EXPERTS: dict[str, tuple[str, str, tuple[int, int], float]] = {
    "expert_waypoints": ("nomad", "navigation", (96, 96), 4.0),
    "expert_discrete": ("pixnav", "navigation", (224, 224), 2.0),
    "expert_ee": ("expert", "manipulation", (64, 64), 5.0),
}


class SimExpertPolicy(PrivilegedPolicy):
    """One of the sim driver's experts (``expert``), with its ``expert_params``; ``timeout`` seconds
    per call to the sim driver (a driver that does not answer fails the attempt)."""

    def __init__(self, expert: str = "expert_waypoints", expert_params: dict | None = None, timeout: float = 5.0,
                 rate_hz: float | None = None) -> None:
        if expert not in EXPERTS:
            raise ValueError(f"unknown simulator expert '{expert}'; known: {sorted(EXPERTS)}")
        self.expert, self.expert_params, self.timeout = expert, dict(expert_params or {}), float(timeout)
        self.family, self.kind, self.image_size, default_rate = EXPERTS[expert]
        self.rate_hz = float(rate_hz or default_rate)
        self._driver: Any = None
        self._subtask: Subtask | None = None
        self._diagnosis = ""

    def attach(self, world: Any, robot: Robot, subtask: Subtask) -> None:
        truth = world.ground_truth() if isinstance(world, PrivilegedWorld) else None
        driver = getattr(truth, "driver", None)  # a SimTruth's SimDriver; an in-process home's truth has none
        if driver is None:
            raise TypeError(f"the simulator expert {self.expert} needs a sim driver's truth; {type(world).__name__} has none")
        self._driver, self._subtask = driver, subtask

    def _require_attached(self) -> Any:
        if self._driver is None or self._subtask is None:
            raise RuntimeError("SimExpertPolicy: call attach(world, robot, subtask) before reset/act")
        return self._driver

    def reset(self, instruction: str = "", goal_image: Any = None) -> None:
        driver = self._require_attached()
        self._diagnosis = ""
        try:
            driver.expert_reset(self.expert, self.expert_params, instruction, self._subtask, self.timeout)
        except RobotUnavailable as err:
            raise PolicyError(f"the sim driver's {self.expert} expert did not start: {err}") from None

    def act(self, obs: PolicyObservation) -> list[Command]:
        driver = self._require_attached()
        try:
            commands, self._diagnosis = driver.expert_act(obs.step, self.timeout)
        except RobotUnavailable as err:
            raise PolicyError(f"the sim driver's {self.expert} expert did not answer: {err}") from None
        return commands

    def diagnosis(self) -> str:
        return self._diagnosis


__all__ = ["EXPERTS", "SimExpertPolicy"]
