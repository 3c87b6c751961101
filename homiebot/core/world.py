"""The World interface: what the agent loop needs from a simulator or a real robot."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

import numpy as np
from pydantic import BaseModel

from homiebot.core.attempt_checks import AttemptCheck, RobotSignalsCheck
from homiebot.core.contracts import Observation
from homiebot.core.errors import WorldBelief
from homiebot.core.robot import Robot
from homiebot.core.tasks import SceneSource


class PerceptionHints(Protocol):
    """What a simulator can tell mapped perception that a robot cannot."""

    def open_state(self) -> dict[int, bool]:
        """Instance id (of the segmentation images) -> whether that container is open, for simulated
        detectors that report container states."""
        ...

    def bind(self, smap: Any, radius: float) -> dict[str, str]:
        """Map instance id -> the simulator's name of the same thing, so privileged skills can act on
        what the map names (same category, nearest within ``radius`` metres)."""
        ...

    def held_name(self) -> str | None:
        """The simulator's name of the object in the gripper."""
        ...


@dataclass(frozen=True)
class TopDown:
    """A plan view of the world for viewers: occupancy (True = blocked) of cells ``[ix, iy]`` whose
    centres are ``origin + (ix + 0.5, iy + 0.5) * resolution`` in the map frame, room rectangles
    ``(x0, y0, x1, y1)`` and where named things are."""

    occupancy: np.ndarray
    origin: tuple[float, float]
    resolution: float
    rooms: dict[str, tuple[float, float, float, float]] = field(default_factory=dict)
    objects: dict[str, tuple[float, float]] = field(default_factory=dict)


class World(ABC):
    """A place the robot acts in. Skills reach the world through their own, narrower interfaces."""

    name: str = "world"
    # True when nothing but the robot's own actions changes what it would see (a simulator without
    # other agents) and observing changes nothing; then the next observation may be rendered ahead
    # of time, right after an action, and thrown away if unused.
    static_between_actions: bool = False
    # How this world's scenes are read and mirrored; None for a world without scenes (a real robot).
    scenes: SceneSource | None = None
    #: the parameters model of its ``params:`` (a pydantic model, extra="forbid"); None: derived from the constructor
    Params: ClassVar[type[BaseModel] | None] = None
    # True when the robot is reached through its driver (ROS topics and services), so that any process
    # can build its own instance of this world and command the same robot: the graph's executor node
    # then runs the skills itself, through a bridge of its own.
    reached_through_driver: bool = False
    # True for a simulator whose moving state another process can read (``ground_truth().dynamic()``) and
    # hand back (``ground_truth().apply_dynamic``) on a copy of the same scene: the graph's executor node
    # then runs the skills on a copy of its own and the world node takes over the state they left.
    state_copyable: bool = False

    @abstractmethod
    def reset(self) -> None:
        """Put the world back into its initial state for a new episode."""

    @abstractmethod
    def observe(self, round_index: int) -> Observation:
        """Capture the four views (front, left, back, right), the pose and the inventory."""

    @property
    @abstractmethod
    def belief(self) -> WorldBelief:
        """The state the error detector checks against (truth in simulation, a belief on robots)."""

    _guard: Callable[[Robot], Robot] | None = None
    _guarded: Robot | None = None

    @property
    def robot(self) -> Robot | None:
        """The robot that skills command: the world's own (``own_robot``), behind the safety layer once
        one is installed (``install_guard``); None for a world without a robot."""
        own = self.own_robot()
        if own is None or self._guard is None:
            return own
        if self._guarded is None or self._guarded.unwrapped() is not own.unwrapped():
            self._guarded = self._guard(own)
        return self._guarded

    def own_robot(self) -> Robot | None:
        """The world's robot as it is, without the safety layer (worlds with a robot override this)."""
        return None

    def install_guard(self, guard: Callable[[Robot], Robot] | None) -> None:
        """Put every command of ``robot`` through ``guard(own_robot)`` (the safety layer)."""
        self._guard, self._guarded = guard, None

    def floor_plan(self) -> Any | None:
        """Named room rectangles (``name, x0, y0, x1, y1``) of the robot's map frame, the semantic
        map's room prior; None when unknown."""
        return None

    def attempt_check(self) -> AttemptCheck:
        """How skill attempts are judged here. Default: the robot's own signals and ``belief``."""
        return RobotSignalsCheck(self.belief)

    def inventory(self) -> list[str]:
        """Objects in the gripper (one-hand robot: zero or one)."""
        held = self.belief.held_object()
        return [held] if held else []

    def path_length(self) -> float:
        """Metres the base has driven since reset."""
        return 0.0

    def scene_description(self) -> dict[str, Any]:
        """A JSON-able description from which the episode's initial scene can be rebuilt."""
        return {}

    def close(self) -> None:
        """Release renderers, connections and other resources."""

    def __enter__(self) -> World:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
