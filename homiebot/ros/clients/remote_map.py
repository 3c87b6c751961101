"""``RemoteKeeper``: the world node's ``MapHost`` (homiebot/perception/map_host.py) in the mapper node.

In the ROS 2 graph the mapper node keeps the semantic map and runs the detector (homiebot/ros/nodes/map_server.py);
the world node's ``PerceivingWorld`` reaches it through this class, one typed call per map operation:
``new_episode`` starts a map session (the floor plan, a simulator's scene), ``integrate`` hands over an
observation with its images and camera rig, ``bind``/``note`` carry a skill's subtask and the
simulator's moving state. What the world node reads between calls (the held object, the belief, the
summary, the persons in view) comes back with the last reply.

The executor node's world (its copy of the simulator, its own robot bridge) reaches the same map through a
``MapFollower``: a keeper that joins the session the world node's episode started, so that the skills
bind, note and look on the map the world node feeds.
"""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Callable
from typing import Any

from homiebot_msgs.srv import MapBind, MapIntegrate, MapNote, MapPlaces, MapReset, NextFrontier, RoomOf, WorldInfo
from rclpy.node import Node

from homiebot.config import RunConfig
from homiebot.core.contracts import Observation, PersonSeen, Subtask
from homiebot.core.map_access import MapAccess, MappedPlace
from homiebot.core.rooms import RoomPrior, rooms_from
from homiebot.core.tasks import scene_source
from homiebot.core.world import PerceptionHints, World
from homiebot.core.world_capabilities import PerceptionHinting, PrivilegedWorld
from homiebot.perception.projection import CameraRig
from homiebot.ros.clients.map_link import FOLLOWER_CALLS, MapResolvedBelief, map_callers
from homiebot.ros.kit.services import ServiceCaller
from homiebot.ros.messages.common import person_from_msg, subtask_from_msg, subtask_msg
from homiebot.ros.messages.map import integrate_request, place_of, rooms_msg
from homiebot.ros.messages.round import snapshot_of, summary_of

EMPTY_BELIEF: dict[str, Any] = {"held": None, "entities": {}}


class RemoteKeeper:
    """The semantic map of ``inner`` (a world with a floor plan) kept by the mapper node.

    ``holding``: whether the gripper holds something now; ``scene``: the simulator's scene as JSON ("" on a
    robot); ``world``: its world plugin; ``episode``: the world node's current episode (what the mapper
    publishes an agent round's belief for); ``timeout``: seconds a call may take (a detection included).
    ``leads``: this keeper starts the map's episodes (the world node's); else it ``join``s the session
    another one started (the executor node's, whose skills act on a copy of the world).
    """

    def __init__(self, callers: dict[str, ServiceCaller], inner: World, floor_plan: Any, holding: Callable[[], bool],
                 scene: str, world: str, episode: Callable[[], int], timeout: float, leads: bool = True) -> None:
        self.calls = callers
        self.inner = inner
        self.rooms: list[RoomPrior] = rooms_from(floor_plan)
        self.holding = holding
        self.hints: PerceptionHints | None = inner.perception_hints() if isinstance(inner, PerceptionHinting) else None
        self.scene, self.world, self.episode, self.timeout = scene, world, episode, timeout
        self.session = ""
        self.leads_episodes = leads
        # the same object all episode long, as a belief kept in-process is; 0: the mapper's current episode
        self._belief = MapResolvedBelief(dict(EMPTY_BELIEF), callers["resolve"], 0, timeout)
        self._reset_view()

    def _reset_view(self) -> None:
        """What the world node knows of a new, empty map."""
        self.update_times: list[float] = []
        self._held: str | None = None
        self._belief.update(dict(EMPTY_BELIEF))
        self._summary: dict[str, Any] = {"round": 0, "robot": None, "instances": [], "rooms": [{"name": r.name, "rect": [r.x0, r.y0, r.x1, r.y1]} for r in self.rooms],
                                         "explored_m2": 0.0, "frontiers": []}
        self._text = ""
        self.people: list[PersonSeen] = []

    def _state(self) -> str:
        """The simulator's moving state as JSON, for binding map ids to its names ("" on a robot)."""
        truth = self.inner.ground_truth() if self.scene and isinstance(self.inner, PrivilegedWorld) else None
        return json.dumps(truth.dynamic()) if truth is not None else ""

    # ---- MapHost ---------------------------------------------------------------------------------
    @property
    def belief(self) -> MapResolvedBelief:
        return self._belief

    def new_episode(self) -> None:
        if self.leads_episodes:
            self.session = uuid.uuid4().hex
            self.calls["reset"].call(MapReset.Request(session=self.session, rooms=rooms_msg(self.rooms), scene=self.scene,
                                                      world=self.world), self.timeout)
        self._reset_view()

    def join(self, session: str) -> None:
        """Follow the map session another keeper started (see ``leads``); what this one knew of the last is dropped."""
        if session != self.session:
            self.session = session
            self._reset_view()

    def refresh(self) -> None:
        """Read what the gripper holds from the map again: another keeper's notes changed it (a subtask on a copy)."""
        reply = self.calls["places"].call(MapPlaces.Request(session=self.session), self.timeout)
        self._held = reply.held or None

    def integrate(self, obs: Observation, rig: CameraRig, agent_round: bool) -> Observation:
        open_state = self.hints.open_state() if self.hints is not None else {}
        request = integrate_request(obs, rig, session=self.session, publish=agent_round, episode=self.episode(), open_state=open_state,
                                    holding=self.holding(), dynamic=None)  # the update binds nothing: no state
        reply: MapIntegrate.Response = self.calls["integrate"].call(request, self.timeout, f"integrate of round {obs.round}")
        self.update_times.append(float(reply.seconds))
        self._held = reply.held or None
        self._belief.update(snapshot_of(reply.belief))
        self._summary, self._text = summary_of(reply.map), reply.map_text
        self.people = [person_from_msg(p) for p in reply.people]
        return obs.model_copy(update={"people": self.people}) if self.people != list(obs.people) else obs

    def held_id(self) -> str | None:
        return self._held if self.holding() else None  # as the map's own: nothing once the gripper let go

    def room_of(self, name: str) -> str | None:
        reply = self.calls["room_of"].call(RoomOf.Request(name=name), self.timeout)
        return reply.room if reply.known else None

    def bind(self, subtask: Subtask) -> Subtask:
        reply = self.calls["bind"].call(MapBind.Request(session=self.session, subtask=subtask_msg(subtask), holding=self.holding(),
                                                        dynamic=self._state()), self.timeout)
        return subtask_from_msg(reply.acted)

    def note(self, subtask: Subtask, success: bool) -> None:
        reply = self.calls["note"].call(MapNote.Request(session=self.session, subtask=subtask_msg(subtask), success=bool(success),
                                                        holding=self.holding(), dynamic=self._state()), self.timeout)
        self._held = reply.held or None
        self._belief.update(snapshot_of(reply.belief))

    def summary(self) -> dict[str, Any]:
        return self._summary

    def text(self) -> str:
        return self._text

    def access(self, look: Callable[[], object]) -> MapAccess:
        return RemoteMapAccess(self, look)

    def close(self) -> None:
        """Nothing to release here: the detector is the mapper node's."""


class RemoteMapAccess:
    """``MapAccess`` to the mapper's map: places and frontiers asked for, the persons in view from the last look."""

    def __init__(self, keeper: RemoteKeeper, look: Callable[[], object]) -> None:
        self.keeper = keeper
        self._look = look

    def rooms(self) -> list[RoomPrior]:
        return list(self.keeper.rooms)

    def places(self) -> list[MappedPlace]:
        reply = self.keeper.calls["places"].call(MapPlaces.Request(session=self.keeper.session), self.keeper.timeout)
        return [place_of(p) for p in reply.places]

    def next_frontier(self, room: str | None = None) -> tuple[float, float] | None:
        reply = self.keeper.calls["frontier"].call(NextFrontier.Request(session=self.keeper.session, room=room or ""), self.keeper.timeout)
        return (float(reply.x), float(reply.y)) if reply.found else None

    def person_near(self, point: tuple[float, float], within: float) -> tuple[float, float] | None:
        for p in sorted(self.keeper.people, key=lambda p: p.name):
            if math.dist((p.x, p.y), point) < within:
                return (p.x, p.y)
        return None

    def look(self) -> None:
        self._look()


def remote_keeper(callers: dict[str, ServiceCaller], cfg: RunConfig, inner: World, floor_plan: Any, holding: Callable[[], bool],
                  episode: Callable[[], int], timeout: float, leads: bool) -> RemoteKeeper:
    """A RemoteKeeper of ``inner``; in simulation with its scene, whose names bind the map's ids."""
    source = scene_source(cfg.world.name)
    scene = json.dumps(inner.scene_description()) if source is not None and source.mirrors_truth else ""
    return RemoteKeeper(callers, inner, floor_plan, holding, scene=scene, world=cfg.world.name if scene else "", episode=episode,
                        timeout=timeout, leads=leads)


class MapFollower:
    """The executor node's way to the mapper's map: the world its skills act on (a copy of the simulator, its
    own bridge to a robot) keeps the map the world node's episode started, never one of its own."""

    def __init__(self, node: Node, cfg: RunConfig, timeout: float) -> None:
        self.cfg, self.timeout = cfg, timeout
        self.calls = map_callers(node, FOLLOWER_CALLS)
        self.keeper: RemoteKeeper | None = None

    def remote_map(self, inner: World, floor_plan: Any, holding: Callable[[], bool]) -> RemoteKeeper:
        """``build_world``'s ``remote_map``: a keeper that follows."""
        self.keeper = remote_keeper(self.calls, self.cfg, inner, floor_plan, holding, episode=lambda: 0, timeout=self.timeout, leads=False)
        return self.keeper

    def join(self, session: str) -> None:
        """Follow the map session of the world node's current episode."""
        if self.keeper is not None:
            self.keeper.join(session)

    def join_world(self, info: ServiceCaller) -> None:
        """Ask the world node which map session its episode holds, and follow it."""
        self.join(info.call(WorldInfo.Request(), self.timeout).map_session)
