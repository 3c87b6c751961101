"""Build the user a run configuration names (``RunConfig.user``)."""

from __future__ import annotations

from typing import Any

from homiebot.core import registry
from homiebot.core.errors import ConfigError
from homiebot.core.tasks import Task
from homiebot.people.base import User
from homiebot.people.simulated import SimulatedUser


def make_user(spec: str, task: Task, scene: dict[str, Any] | None, seed: int) -> User:
    """``simulated``, ``persona:<name or file>`` (LLM-backed when the file has an ``llm:`` section) or
    ``ros``; ConfigError when a simulated user has no goal or the persona file is invalid."""
    if spec in registry.available("users"):  # e.g. ``ros``: questions through the ROS graph (homiebot.users)
        return registry.load("users", spec)()
    if task.goal is None:
        raise ConfigError(f"user '{spec}': task '{task.id}' has no goal, so a simulated user has nothing to answer from")
    if spec == "simulated":
        return SimulatedUser(task.instruction, task.goal, scene)
    if spec.startswith("persona:"):
        from homiebot.people.persona import PersonaUser, load_persona

        persona = load_persona(spec.removeprefix("persona:"))
        if persona.llm is not None:  # a language model phrases the answers; the facts stay templated
            from homiebot.people.llm_persona import LLMPersonaUser

            return LLMPersonaUser(persona, task.instruction, task.goal, scene, seed)
        return PersonaUser(persona, task.instruction, task.goal, scene, seed)
    raise ConfigError(f"unknown user '{spec}'; choose none, simulated or persona:<name or file>")
