"""The mapper node's semantic map (mapped perception): a ``MapKeeper`` served over typed services.

The world node renders; the mapper runs the detector and keeps the map. Per episode the world node
starts a map (``reset``: the floor plan and, in simulation, the scene), then hands over every
observation with its images and camera rig (``integrate``); with an agent round's observation the
mapper publishes the round's belief (/homiebot/belief), the map's summary (/homiebot/map/summary) and its
occupancy grid (/homiebot/map/occupancy). Skills' subtasks are bound to a simulator's names (``bind``)
and the map kept in step with what they did (``note``); exploration asks for the next ``frontier`` and
the mapped ``places``; the error detector grounds phrases (``resolve``) and keep-out rules ask
``room_of``. All under /homiebot/map.

In simulation the map's ids are bound to the simulator's names through a mirror of its truth (the
scene's ``truth_mirror``), put in the state each request carries; on a robot there is no mirror and
ids pass through. Only the session the last ``reset`` opened is served: a world node that restarted,
or a mapper that did, resets first.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

from homiebot_msgs.msg import Belief, SemanticMap
from homiebot_msgs.srv import MapBind, MapIntegrate, MapNote, MapPlaces, MapReset, NextFrontier, Resolve, RoomOf
from nav_msgs.msg import OccupancyGrid
from rclpy.node import Node

from homiebot.config import RunConfig
from homiebot.core.errors import take_snapshot
from homiebot.core.registry import PluginError
from homiebot.core.tasks import scene_source
from homiebot.perception.detection import Detector
from homiebot.perception.map_keeper import MapKeeper
from homiebot.ros.clients.map_link import SERVICES, map_service
from homiebot.ros.kit.services import ErrorMapping, TypedServer
from homiebot.ros.messages.common import person_msg, subtask_from_msg, subtask_msg, to_occupancy_grid
from homiebot.ros.messages.map import observation_of, open_state_of, place_msg, rig_of, rooms_of
from homiebot.ros.messages.round import belief_msg, semantic_map_msg
from homiebot.runtime import scene_from_json

BIND_RADIUS = 0.75  # metres: as in one process (PerceivingWorld's default)


class BadMapRequest(ValueError):
    """A request the map cannot serve as given (another session, unreadable images or state)."""


class _RelayedHints:
    """A mirror's hints, with the container states the world node sent with the observation."""

    def __init__(self, mirror_hints: Any) -> None:
        self.mirror_hints = mirror_hints
        self.open: dict[int, bool] = {}

    def open_state(self) -> dict[int, bool]:
        return self.open

    def bind(self, smap: Any, radius: float) -> dict[str, str]:
        return self.mirror_hints.bind(smap, radius)

    def held_name(self) -> str | None:
        return self.mirror_hints.held_name()


# what an agent round's integrate puts out: the belief, the map's summary and its grid (None: not readable)
Publish = Callable[[Belief, SemanticMap, "OccupancyGrid | None"], None]


class MapServer:
    """The semantic map of mapped perception (see the module doc): one handler per service, request in,
    response out; ``serve`` puts them on a node. ``detector``: makes the detector, at the first episode (a
    detector that cannot run here fails that episode's reset, saying why), kept for the server's whole life;
    ``publish`` sends what an agent round's observation produced; ``warn`` logs a problem that fails nothing."""

    def __init__(self, cfg: RunConfig, detector: Callable[[], Detector], publish: Publish, warn: Callable[[str], None]) -> None:
        self.cfg, self.make_detector, self.publish, self.warn = cfg, detector, publish, warn
        self.detector: Detector | None = None
        self.keeper: MapKeeper | None = None
        self.session = ""
        self.published_episode = 0  # the world node's episode the belief was last published for (resolve checks it)
        self._holding = False
        self._mirror: Any = None
        self._mirror_key: str | None = None
        self._hints: _RelayedHints | None = None
        self._lock = threading.Lock()  # one map: one request at a time

    def handlers(self) -> dict[str, Callable[[Any], Any]]:
        """Service name (``SERVICES``) -> its handler; one request at a time."""
        plain: dict[str, Callable[[Any], Any]] = {
            "reset": self.reset, "integrate": self.integrate, "bind": self.bind, "note": self.note, "frontier": self.frontier,
            "places": self.places, "resolve": self.resolve, "room_of": self.room_of}
        return {name: self._locked(handler) for name, handler in plain.items()}

    def serve(self, node: Node) -> list[TypedServer]:
        """Serve every handler under /homiebot/map on ``node``; requests it cannot serve are INVALID_REQUEST."""
        return [TypedServer(node, SERVICES[n], map_service(n), h, [ErrorMapping(BadMapRequest, SERVICES[n].Response.INVALID_REQUEST)],
                            SERVICES[n].Response.FAILED) for n, h in self.handlers().items()]

    def _locked(self, handler: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def serve(request: Any) -> Any:
            with self._lock:
                return handler(request)
        return serve

    # ---- the episode -----------------------------------------------------------------------------
    def reset(self, request: MapReset.Request) -> MapReset.Response:
        """A new, empty map over the request's floor plan; in simulation a mirror of its scene binds the ids."""
        if not request.session:
            raise BadMapRequest("a map session needs a name")
        try:
            rooms = rooms_of(list(request.rooms))
        except ValueError as err:
            raise BadMapRequest(f"the floor plan: {err}") from None
        if not rooms:
            raise BadMapRequest("mapped perception needs a floor plan (named room rectangles); the request has none")
        hints = self._mirror_hints(request.world, request.scene)
        if self.detector is None:
            self.detector = self.make_detector()
        if self.keeper is not None and self.keeper.rooms == rooms and self.keeper.hints is hints:
            self.keeper.new_episode()
        else:  # another home (or the first): the detector stays, the map starts over
            self.keeper = MapKeeper(self.detector, rooms, holding=lambda: self._holding, hints=hints,
                                    map_params=self.cfg.perception.map, bind_radius=BIND_RADIUS)
            self.keeper.warm()
        self.session = request.session
        self._holding = False
        return MapReset.Response()

    def _mirror_hints(self, world: str, scene: str) -> _RelayedHints | None:
        """Hints from a mirror of the simulator's scene (rebuilt only when the scene changes); None on a robot."""
        if not scene:
            self._mirror, self._mirror_key, self._hints = None, None, None
            return None
        try:
            source = scene_source(world)
        except PluginError as err:
            raise BadMapRequest(f"the scene's world: {err}") from None
        if source is None or not source.mirrors_truth:
            raise BadMapRequest(f"world '{world}' has no truth mirror to bind the map's ids with")
        if self._mirror is None or scene != self._mirror_key:
            try:
                mirror = source.truth_mirror(scene_from_json(json.loads(scene), world))
            except (ValueError, TypeError, AttributeError) as err:
                raise BadMapRequest(f"the scene is not a {world} scene: {str(err).splitlines()[0]}") from None
            mirror_hints = source.mirror_hints(mirror)
            if mirror_hints is None:
                raise BadMapRequest(f"world '{world}' cannot bind a map's ids from its truth mirror")
            self._mirror, self._mirror_key, self._hints = mirror, scene, _RelayedHints(mirror_hints)
        else:
            self._mirror.reset()
        return self._hints

    def _keeper(self, session: str) -> MapKeeper:
        if self.keeper is None or session != self.session:
            held = f"session {self.session!r}" if self.keeper is not None else "no session (it started since)"
            raise BadMapRequest(f"the mapper holds {held}, not {session!r}: reset the map (a new episode) first")
        return self.keeper

    def _follow(self, holding: bool, dynamic: str) -> None:
        """Put the mirror in the simulator's moving state and note the gripper, before the map reads them."""
        self._holding = bool(holding)
        if not dynamic:
            return
        if self._mirror is None:
            raise BadMapRequest("a simulator state for a map without a scene (reset with the scene first)")
        try:
            state = json.loads(dynamic)
            self._mirror.apply_dynamic(state)
        except (ValueError, KeyError, TypeError, AttributeError) as err:
            self._mirror.reset()  # half applied would be neither
            raise BadMapRequest(f"the simulator state is not this scene's: {type(err).__name__}: {err}") from None

    # ---- the cameras -----------------------------------------------------------------------------
    def integrate(self, request: MapIntegrate.Request) -> MapIntegrate.Response:
        """Detect and fuse one observation; an agent round's goes out on the map's topics."""
        keeper = self._keeper(request.session)
        try:
            obs, rig, open_state = observation_of(request), rig_of(request), open_state_of(request)
        except ValueError as err:
            raise BadMapRequest(f"the observation: {str(err).splitlines()[0]}") from None
        self._follow(request.holding, request.dynamic)
        if self._hints is not None:
            self._hints.open = open_state
        seen, _ = keeper.update(obs, rig)
        snapshot = take_snapshot(keeper.belief)
        stamp = time.time_ns()
        belief = belief_msg(snapshot, episode=int(request.episode), round_index=int(obs.round), stamp_ns=stamp, resolves=True)
        summary = semantic_map_msg(keeper.summary(), episode=int(request.episode), round_index=int(obs.round), stamp_ns=stamp)
        if request.publish:
            self.published_episode = int(request.episode)
            self.publish(belief, summary, self._grid(keeper, stamp, int(obs.round)))
        return MapIntegrate.Response(people=[person_msg(p) for p in seen.people], held=keeper.held_id() or "", belief=belief, map=summary,
                                     map_text=keeper.text(), seconds=float(keeper.update_times[-1]))

    def _grid(self, keeper: MapKeeper, stamp: int, round_index: int) -> OccupancyGrid | None:
        try:
            return to_occupancy_grid(keeper.map.to_occupancy_msg_fields(), stamp)
        except (KeyError, ValueError, TypeError) as err:
            self.warn(f"occupancy grid of round {round_index} not published: {err}")
            return None

    # ---- the skills --------------------------------------------------------------------------------
    def bind(self, request: MapBind.Request) -> MapBind.Response:
        keeper = self._keeper(request.session)
        subtask = _subtask(request.subtask)
        self._follow(request.holding, request.dynamic)
        return MapBind.Response(acted=subtask_msg(keeper.bind(subtask)))

    def note(self, request: MapNote.Request) -> MapNote.Response:
        keeper = self._keeper(request.session)
        subtask = _subtask(request.subtask)
        self._follow(request.holding, request.dynamic)
        keeper.note(subtask, bool(request.success))
        belief = belief_msg(take_snapshot(keeper.belief), episode=self.published_episode, round_index=keeper.map.round,
                            stamp_ns=time.time_ns(), resolves=True)
        return MapNote.Response(held=keeper.held_id() or "", belief=belief)

    def frontier(self, request: NextFrontier.Request) -> NextFrontier.Response:
        goal = self._keeper(request.session).access(lambda: None).next_frontier(request.room or None)
        return NextFrontier.Response(found=goal is not None, x=float(goal[0]) if goal else 0.0, y=float(goal[1]) if goal else 0.0)

    def places(self, request: MapPlaces.Request) -> MapPlaces.Response:
        keeper = self._keeper(request.session)
        return MapPlaces.Response(places=[place_msg(p) for p in keeper.access(lambda: None).places()], held=keeper.held_id() or "")

    # ---- the detector and keep-out rules ------------------------------------------------------------
    def resolve(self, request: Resolve.Request) -> Resolve.Response:
        """Ground a phrase with the map's belief; ``episode`` (when not 0) must be the one last published."""
        if self.keeper is None:
            raise BadMapRequest("no map yet: the world node has not started an episode")
        if request.episode and int(request.episode) != self.published_episode:
            raise BadMapRequest(f"episode {request.episode} is over (the map is of episode {self.published_episode})")
        found, message = self.keeper.belief.resolve(str(request.phrase))
        return Resolve.Response(found=found is not None, id=found or "", message=message or "")

    def room_of(self, request: RoomOf.Request) -> RoomOf.Response:
        if self.keeper is None:
            raise BadMapRequest("no map yet: the world node has not started an episode")
        room = self.keeper.room_of(str(request.name))
        return RoomOf.Response(known=room is not None, room=room or "")

    def close(self) -> None:
        with self._lock:
            if self.detector is not None:
                self.detector.close()


def _subtask(msg: Any) -> Any:
    try:
        return subtask_from_msg(msg)
    except ValueError as err:
        raise BadMapRequest(f"the subtask is not the contract's: {str(err).splitlines()[0]}") from None
