"""Scenes: what a simulated world is built from, reached by the core only through its world plugin
(``homiebot.core.tasks.SceneSource``, beside the tasks that name scenes).

A task names its scene inline, as a file, or as a generator seed, or not at all (a real home has no
scene). The world plugin's ``scenes`` (a ``SceneSource``) turns that into the world's own scene object;
the runtime, the task manager and the nodes never look inside it. A world without scenes (a robot
bridge) has ``scenes = None``: its tasks carry no scene and goal names are not checked up front.
"""

from __future__ import annotations

DEFAULT_WORLD = "embedded_home"


class SceneError(ValueError):
    """A scene file or scene spec that cannot be built; the message says where and why."""


class NoScene(SceneError):
    """A task names no scene but the world needs one."""


__all__ = ["DEFAULT_WORLD", "NoScene", "SceneError"]
