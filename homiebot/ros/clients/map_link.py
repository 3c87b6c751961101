"""The mapper node's map services (``homiebot_msgs/srv``, mapped perception): their names and clients.

The world node starts each episode's map, hands over its observations and binds and notes skills'
subtasks (homiebot/ros/clients/remote_map.py); the error detector grounds phrases with the map (``resolve``).
The mapper serves them (homiebot/ros/nodes/map_server.py).
"""

from __future__ import annotations

from typing import Any

from homiebot_msgs.srv import MapBind, MapIntegrate, MapNote, MapPlaces, MapReset, NextFrontier, Resolve, RoomOf
from rclpy.node import Node

from homiebot.core.errors import SnapshotBelief
from homiebot.ros.kit.services import ServiceCaller

PREFIX = "map"
SERVICES: dict[str, Any] = {"reset": MapReset, "integrate": MapIntegrate, "bind": MapBind, "note": MapNote, "frontier": NextFrontier,
                            "places": MapPlaces, "resolve": Resolve, "room_of": RoomOf}
WORLD_CALLS = ("reset", "integrate", "bind", "note", "frontier", "places", "resolve", "room_of")  # what the world node calls
FOLLOWER_CALLS = tuple(n for n in WORLD_CALLS if n != "reset")  # the executor node's: it joins the world's episodes


def map_service(name: str) -> str:
    """The ROS name of one of the map's services (``integrate`` -> ``/homiebot/map/integrate``)."""
    return f"{PREFIX}/{name}"


def map_callers(node: Node, names: tuple[str, ...]) -> dict[str, ServiceCaller]:
    """Blocking clients of the named map services."""
    return {n: ServiceCaller(node, SERVICES[n], map_service(n), "mapper") for n in names}


class MapResolvedBelief(SnapshotBelief):
    """A belief snapshot whose ``resolve`` asks the mapper's semantic map (one call per distinct phrase)."""

    def __init__(self, data: dict, resolver: ServiceCaller, episode: int, timeout: float) -> None:
        super().__init__(data)
        self.resolver, self.episode, self.timeout = resolver, episode, timeout
        self._resolved: dict[str, tuple[str | None, str]] = {}

    def update(self, data: dict) -> None:
        """Read a newer snapshot of the same map (what was grounded before is asked again)."""
        SnapshotBelief.__init__(self, data)
        self._resolved.clear()

    def resolve(self, phrase: str) -> tuple[str | None, str]:
        """(name, "") when the map grounds the phrase to one thing, else (None, what to do)."""
        if phrase not in self._resolved:
            r = self.resolver.call(Resolve.Request(phrase=phrase, episode=self.episode), self.timeout, idempotent=True)
            self._resolved[phrase] = (r.id if r.found else None, r.message)
        return self._resolved[phrase]
