"""``MapHost``: what a world that perceives through a semantic map needs of whoever keeps that map.

In one process the map lives beside the world (``MapKeeper``); in the ROS 2 graph it lives in the mapper
node, which runs the detector, and the world node reaches it through the mapper's typed services
(``homiebot.ros.clients.remote_map.RemoteKeeper``). ``PerceivingWorld`` is written against this interface only,
so both run the same episode.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from homiebot.core.contracts import Observation, Subtask
from homiebot.core.errors import WorldBelief
from homiebot.core.map_access import MapAccess
from homiebot.perception.projection import CameraRig


class MapHost(Protocol):
    """A semantic map fed with observations and kept in step with the robot's actions."""

    update_times: list[float]  # seconds per map update (detection + fusion) this episode
    # starts the map's episodes (and the exploration phase before a task); false: follows the episode another
    # world runs on the same map (the executor node's copy of the simulator)
    leads_episodes: bool

    @property
    def belief(self) -> WorldBelief:
        """What the map believes now (what the error detector checks a subtask against)."""
        ...

    def new_episode(self) -> None:
        """An empty map: the rooms known, nothing seen."""
        ...

    def integrate(self, obs: Observation, rig: CameraRig, agent_round: bool) -> Observation:
        """Detect in ``obs`` (seen through ``rig``) and fuse into the map; ``obs`` with the persons in view.
        ``agent_round``: the observation starts an agent round (not an exploration step)."""
        ...

    def held_id(self) -> str | None:
        """The map's id of what the gripper holds (None when it holds nothing)."""
        ...

    def room_of(self, name: str) -> str | None:
        """The room of a mapped thing, or the room a room name names; None when unknown."""
        ...

    def bind(self, subtask: Subtask) -> Subtask:
        """``subtask`` in the names the skills act on (a simulator's; unchanged on a robot)."""
        ...

    def note(self, subtask: Subtask, success: bool) -> None:
        """Keep the map in step with what a skill did."""
        ...

    def summary(self) -> dict[str, Any]:
        """The map's summary (instances, rooms, explored area, frontiers), as ``SemanticMap.summary``."""
        ...

    def text(self) -> str:
        """The map's short text for planner prompts."""
        ...

    def access(self, look: Callable[[], object]) -> MapAccess:
        """The map as skills and the exploration phase read it; ``look`` observes and updates it."""
        ...

    def close(self) -> None:
        """Release what the map holds (a detector's model, a connection)."""
        ...
