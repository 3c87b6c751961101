"""Scenes: what a simulated world is built from, reached by the core only through its world plugin.

A task names its scene inline, as a file, or as a generator seed, or not at all (a real home has no
scene). The world plugin's ``scenes`` (a ``SceneSource``) turns that into the world's own scene object;
the runtime, the task manager and the nodes never look inside it. A world without scenes (a robot
bridge) has ``scenes = None``: its tasks carry no scene and goal names are not checked up front.
"""

from __future__ import annotations

import functools
import json
from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Any

from homiebot.core import registry

if TYPE_CHECKING:
    from homiebot.core.tasks import Task

DEFAULT_WORLD = "embedded_home"


class SceneSource(ABC):
    """How a world plugin reads, describes and mirrors its scenes."""

    @abstractmethod
    def load(self, task: Task) -> Any:
        """The scene ``task`` takes place in (inline, from its file, or generated from its seed).
        Raises a ``ValueError`` subclass with an actionable message when it is invalid."""

    def key(self, task: Task) -> str:
        """What identifies a task's scene, cheaply: equal keys, equal scenes (a file's key follows its
        size and modification time)."""
        if task.person is not None or task.explore is not None:  # another person's script, another phase: another scene
            plain = self.key(task.model_copy(update={"person": None, "explore": None}))
            return plain + ":person:" + json.dumps(task.person, sort_keys=True) + ":explore:" + (
                task.explore.model_dump_json() if task.explore is not None else "")
        if task.scene is not None:
            return "inline:" + json.dumps(task.scene, sort_keys=True)
        if task.scene_file is not None:
            path = Path(task.scene_file)
            try:
                stat = path.stat()
            except OSError:
                return f"file:{path}"  # load will say what is wrong with it
            return f"file:{path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"
        return f"seed:{task.scene_seed}"

    @abstractmethod
    def names(self, scene: Any) -> set[str]:
        """Every name a goal may refer to in this scene."""

    @abstractmethod
    def to_json(self, scene: Any) -> dict[str, Any]:
        """A JSON-able description the scene can be rebuilt from (``from_json``)."""

    @abstractmethod
    def from_json(self, data: Any, where: str = "") -> Any:
        """The scene from ``to_json`` output or a task's inline ``scene`` (validated; a ``SceneError``
        names each bad field, its path starting with ``where``)."""

    @abstractmethod
    def task_for(self, instruction: str | None, scene: str) -> Task:
        """A task from the command line: ``instruction`` in the scene named by ``scene`` (a seed or a
        file); without an instruction, the scene's own task if it has one."""

    # whether ``truth_mirror`` gives a mirror (known before any scene is loaded: the graph decides by it)
    mirrors_truth = False

    def truth_mirror(self, scene: Any) -> Any | None:
        """Privileged state of the scene in another process (a privileged planner's, the mapper's), kept in
        step through ``apply_dynamic``; its ``state`` is the world's belief in oracle perception. None when
        the world has no such state."""
        return None

    def mirror_hints(self, mirror: Any) -> Any | None:
        """``PerceptionHints`` (homiebot/core/world.py) read from a ``truth_mirror``, for a semantic map kept
        in another process than the simulator (the mapper node's): its ``bind`` and ``held_name``; its
        ``open_state`` is empty (the simulator sends that with each observation). None when the mirror
        cannot bind."""
        return None


class SceneError(ValueError):
    """A scene file or scene spec that cannot be built; the message says where and why."""


class NoScene(SceneError):
    """A task names no scene but the world needs one."""


@functools.lru_cache(maxsize=16)  # an entry-point lookup costs milliseconds; the runtime asks several times per episode
def scene_source(world: str = DEFAULT_WORLD) -> SceneSource | None:
    """The ``scenes`` of the world plugin registered as ``world`` (None for worlds without scenes)."""
    from homiebot.core.world import World

    cls = registry.load("worlds", world)
    if not (isinstance(cls, type) and issubclass(cls, World)):
        raise registry.PluginError(f"world plugin '{world}' is not a homiebot World")
    return cls.scenes


__all__ = ["DEFAULT_WORLD", "NoScene", "SceneError", "SceneSource", "scene_source"]
