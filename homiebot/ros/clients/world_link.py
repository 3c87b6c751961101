"""The world node's typed services (``homiebot_msgs/srv``): their names, and what both sides convert.

The task manager resets, observes and queries the world; the executor reads the scene (``info``) for its
copy of the simulator and hands the state its attempts left back (``apply``). Each caller makes only the clients it uses, so that the graph shows who calls what.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from homiebot_msgs.srv import (
    ApplyState,
    GoalSatisfied,
    Observe,
    ReleaseWorld,
    ResetWorld,
    RoomOf,
    Route,
    WorldInfo,
)
from rclpy.node import Node

from homiebot.ros.kit.services import ServiceCaller

PREFIX = "world"
SERVICES: dict[str, Any] = {
    "reset": ResetWorld, "release": ReleaseWorld, "observe": Observe, "info": WorldInfo, "goal": GoalSatisfied,
    "room_of": RoomOf, "route": Route, "apply": ApplyState,
}

EPISODE_CALLS = ("reset", "release", "observe", "info", "goal", "room_of", "route")  # what the task manager's episodes call


def service_name(name: str) -> str:
    """The ROS name of one of the world's services (``reset`` -> ``/homiebot/world/reset``)."""
    return f"{PREFIX}/{name}"


def world_callers(node: Node, names: tuple[str, ...]) -> dict[str, ServiceCaller]:
    """Blocking clients of the named world services."""
    return {n: ServiceCaller(node, SERVICES[n], service_name(n), "world") for n in names}


class WorldScene(NamedTuple):
    """The scene the world node holds: its episode, its description, and a key (equal keys, equal scenes)."""

    episode: int
    data: Any
    key: str
    map_session: str  # mapped perception: the map session of that episode (empty otherwise)


def world_scene(info: ServiceCaller, timeout: float) -> WorldScene:
    """Ask the world node (``info``) for the scene it holds; ValueError when its description is not JSON."""
    reply = info.call(WorldInfo.Request(scene=True), timeout, idempotent=True)
    try:
        data = json.loads(reply.scene_description)
    except ValueError as err:
        raise ValueError(f"the world node's scene description is not JSON: {err}") from None
    return WorldScene(int(reply.episode), data, json.dumps(data, sort_keys=True), reply.map_session)


def scene_text(scene: dict[str, Any] | None) -> str:
    """A scene description for ResetWorld (empty: the world's own)."""
    return "" if scene is None else json.dumps(scene, sort_keys=True)
