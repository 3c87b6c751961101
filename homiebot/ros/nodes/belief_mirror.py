"""The mapper's oracle belief: the simulator's truth, rebuilt from what the world node publishes.

In oracle perception the belief the error detector checks against is the simulator's state. The mapper
keeps its own mirror of it (the world plugin's ``truth_mirror``, no renderer, no physics): built from the
scene the world node holds (``/homiebot/world/info``), put in each round's moving state
(``/homiebot/world/state``, published as the round is observed), and read out as the belief snapshot.
The scene is fetched once per episode, and the mirror rebuilt only when the scene changed; the state of
an episode the world node is not in (late, or forged) is dropped.
"""

from __future__ import annotations

from typing import Any

from homiebot_msgs.msg import SimState
from homiebot_msgs.srv import WorldInfo
from rclpy.node import Node

from homiebot.core.errors import take_snapshot
from homiebot.core.tasks import scene_source
from homiebot.ros.clients.world_link import world_callers, world_scene
from homiebot.ros.messages.round import dynamic_of
from homiebot.runtime import scene_from_json


class MirrorError(RuntimeError):
    """The world node's scene or state cannot be mirrored (unreadable, or not this world's)."""


class BeliefMirror:
    """The truth of the world node's simulator, one round at a time (see the module doc).

    ``timeout``: seconds the call for the scene may take."""

    def __init__(self, node: Node, world: str, timeout: float) -> None:
        source = scene_source(world)
        if source is None or not source.mirrors_truth:
            raise ValueError(f"world '{world}' has no truth mirror; its belief comes from the world node")
        self.source = source
        self.world = world
        self.timeout = timeout
        self.info = world_callers(node, ("info",))["info"]
        self.mirror: Any = None
        self._scene_key: str | None = None
        self.episode: int | None = None  # the world node's episode the mirror follows

    def snapshot(self, msg: SimState) -> dict[str, Any] | None:
        """The belief snapshot of the round whose state ``msg`` carries; None when its episode is over
        already (the world moved on before its scene was read: nobody checks against that episode now)."""
        if msg.episode != self.episode and not self._follow(int(msg.episode)):
            return None
        try:
            self.mirror.apply_dynamic(dynamic_of(msg))
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            self.episode = None  # half applied: rebuilt from the scene's initial state with the next round
            raise MirrorError(f"the state of round {msg.round} is not this scene's: {type(err).__name__}: {err}") from None
        return take_snapshot(self.mirror.state)

    def _follow(self, episode: int) -> bool:
        """Mirror the scene of the world node's current episode, from its initial state; False when the
        world is in another episode than ``episode`` by now."""
        # the episode first (a small reply): a state of another episode, late or forged, costs no scene
        if int(self.info.call(WorldInfo.Request(), self.timeout).episode) != episode:
            return False
        try:
            scene = world_scene(self.info, self.timeout)
        except ValueError as err:
            raise MirrorError(str(err)) from None
        if scene.episode != episode:
            return False
        if self.mirror is None or scene.key != self._scene_key:
            try:
                self.mirror = self.source.truth_mirror(scene_from_json(scene.data, self.world))
            except (ValueError, TypeError, AttributeError) as err:
                raise MirrorError(f"the world node's scene is not a {self.world} scene: {str(err).splitlines()[0]}") from None
            self._scene_key = scene.key
        else:
            self.mirror.reset()
        self.episode = episode
        return True
