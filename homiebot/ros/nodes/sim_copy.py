"""The executor node's copy of a simulated world: the skills act on it, the world node takes over the result.

A simulator's state lives in the world node, which renders the views. The executor node runs a subtask's
attempts on a copy of the same scene, built from the world's scene description (``/homiebot/world/info``),
put into the world's state of the round (``/homiebot/world/state``, published as the round is observed)
before the subtask, and handed back after it (``/homiebot/world/apply``, ``homiebot_msgs/srv/ApplyState``,
a teleport of the moving parts). One hand-back per subtask, however many attempts it took; the skills,
privileged or driving the copy's robot, run exactly as they do in-process.
"""

from __future__ import annotations

import json
from typing import Any

from homiebot_msgs.srv import ApplyState
from rclpy.node import Node

from homiebot.config import RunConfig
from homiebot.core.world import World
from homiebot.core.world_capabilities import FollowingWorld, PrivilegedWorld
from homiebot.ros.clients.remote_map import MapFollower
from homiebot.ros.clients.world_link import world_callers, world_scene
from homiebot.ros.kit.peers import PeerWatch
from homiebot.ros.messages.observations import ObservationCache
from homiebot.ros.messages.round import dynamic_of
from homiebot.runtime import build_world, scene_from_json


class CopyError(RuntimeError):
    """The copy cannot follow the world node (its scene or state unreadable, or the world refused it)."""


class SimulatorCopy:
    """A copy of the world node's simulator for the skills of one process (see the module doc).

    ``timeout``: seconds a call to the world node may take, and that the round's state may take to arrive."""

    def __init__(self, node: Node, cfg: RunConfig, timeout: float) -> None:
        self.cfg = cfg
        # mapped perception: the copy sees through the mapper's map, following the world node's episode
        self.follower = MapFollower(node, cfg, timeout) if cfg.perception.mode == "mapped" else None
        self.timeout = timeout
        self.calls = world_callers(node, ("info", "apply"))
        self.peers = PeerWatch(node, {"world": self.calls.values()}, timeout)  # a killed world fails 'apply' at once
        self.cache = ObservationCache(node, kinds=(), round_topics=("world/state",))
        self.world: World | None = None
        self._scene_key: str | None = None
        self.episode: int | None = None  # the world node's episode the copy follows

    def prepare(self) -> World:
        """The copy of the scene the world node holds now, reset (rebuilt only when the scene changed)."""
        self.peers.begin()
        try:
            scene = world_scene(self.calls["info"], self.timeout)
        except ValueError as err:
            raise CopyError(str(err)) from None
        if self.world is None or scene.key != self._scene_key:
            self.close()
            remote = self.follower.remote_map if self.follower is not None else None
            self.world = build_world(self.cfg, scene_from_json(scene.data, self.cfg.world.name), remote_map=remote)
            self._scene_key = scene.key
        self.world.reset()
        if self.follower is not None:
            self.follower.join(scene.map_session)
        self.episode = None
        return self.world

    def follow(self, episode: int, round_index: int) -> World:
        """The copy in the world's state of that round (a new episode resets it first)."""
        if self.world is None or (self.episode is not None and episode != self.episode):
            self.prepare()
        self.episode = episode
        assert self.world is not None
        try:
            dynamic = dynamic_of(self.cache.wait_round("world/state", episode, round_index, self.timeout))
        except TimeoutError as err:
            raise CopyError(f"the world node's state of round {round_index} did not arrive: {err}") from None
        except ValueError as err:
            raise CopyError(f"the world node's state of round {round_index} is unreadable: {err}") from None
        self._state().apply_dynamic(dynamic)
        if isinstance(self.world, FollowingWorld):
            self.world.enter_round(round_index)
        return self.world

    def hand_back(self, round_index: int) -> dict[str, Any]:
        """Give the world node the state the attempts left; its inventory and path length after taking it."""
        assert self.episode is not None, "hand_back follows follow"
        r = self.calls["apply"].call(ApplyState.Request(episode=self.episode, round=round_index,
                                                        dynamic=json.dumps(self._state().dynamic())), self.timeout)
        return {"inventory": list(r.inventory), "path_length": r.path_length}

    def _state(self) -> Any:
        assert self.world is not None
        state = self.world.ground_truth() if isinstance(self.world, PrivilegedWorld) else None
        if state is None:
            raise CopyError(f"{type(self.world).__name__} has no simulator state to copy")
        return state

    def close(self) -> None:
        """Release the copy (its renderer, its robot)."""
        if self.world is not None:
            self.world.close()
            self.world = None

    def interrupt(self) -> None:
        """The process is stopping: a wait for the round's state gives up now."""
        self.cache.close()
