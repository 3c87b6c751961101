"""The simulator's privileged calls computed from the home's truth: its expert policies (for the ``sim_expert``
policy of a bridged world; their commands come back through the profile's topics) and task goal checks."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from homiebot.core.contracts import Subtask
from homiebot.core.tasks import Task
from homiebot.policies.base import Command, PolicyObservation, PrivilegedPolicy


class ExpertPolicies:
    """The expert policy running on the home (``expert``: None until ``reset``)."""

    def __init__(self, world: Any, robot: Any, lock: threading.Lock, counters: dict[str, int]) -> None:
        self.world, self.robot, self._lock, self.counters = world, robot, lock, counters
        self.expert: PrivilegedPolicy | None = None

    def reset(self, name: str, params: dict[str, Any], instruction: str, subtask: Subtask) -> PrivilegedPolicy:
        """Start an expert policy (``name``: a registered expert, e.g. expert_waypoints) on a subtask."""
        from homiebot.skills.policy_skill import make_policy

        policy = make_policy(name, **params)
        if not isinstance(policy, PrivilegedPolicy):
            raise ValueError(f"'{name}' is not an expert policy of the simulator")
        with self._lock:
            policy.attach(self.world, self.robot, subtask)
            policy.reset(instruction, None)
            self.expert = policy
        return policy

    def act(self) -> tuple[list[Command], str]:
        """The expert's next commands from the home's present truth, and why it cannot plan (or "")."""
        with self._lock:
            if self.expert is None:
                raise LookupError("no expert: call expert/reset first")
            commands = self.expert.act(PolicyObservation(rgb=np.zeros((1, 1, 3), dtype=np.uint8)))
            self.counters["expert_acts"] += 1
            return commands, self.expert.diagnosis()

    def goal_holds(self, goal: Any) -> bool:
        """Whether the task goal conditions ``goal`` (the task format's list) hold in the home now."""
        task = Task.model_validate({"instruction": "-", "scene_seed": 0, "goal": goal})
        with self._lock:
            return bool(self.world.goal_satisfied(task.goal or []))

    def forget(self) -> None:
        """The home restarted: no expert runs (under the lock)."""
        self.expert = None
