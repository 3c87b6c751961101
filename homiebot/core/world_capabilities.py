"""What a world may offer beyond the ``World`` base: capabilities it declares by implementing them.

A robot reached through its driver offers what its driver serves; a simulator also offers its truth; a world
that maps offers its map; a proxy offers what the world behind it answers. Callers check a capability with
``isinstance(world, MappedWorld)`` (the protocols are runtime-checkable), as ros2_control declares a hardware's
interfaces instead of probing them, and use it only where it is there: no world carries stubs for what it lacks.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol, runtime_checkable

from homiebot.core.contracts import Observation, Subtask
from homiebot.core.map_access import MapAccess
from homiebot.core.world import PerceptionHints, TopDown


@runtime_checkable
class PrivilegedWorld(Protocol):
    """A simulator that hands out its privileged state (expert sources, privileged skills, the oracle planner)."""

    def ground_truth(self) -> Any | None:
        """Privileged simulator state for simulation-only components (expert sources, privileged skills,
        the oracle planner); None on a real robot. Its type is the simulator's own."""
        ...


@runtime_checkable
class GoalJudge(Protocol):
    """A world that can tell whether a task's goal conditions hold (a simulator, a robot with a sim driver)."""

    def goal_satisfied(self, goal: list[Any]) -> bool | None:
        """Whether the task's goal conditions hold (a simulator can tell); None where the world cannot."""
        ...


@runtime_checkable
class PerceptionHinting(Protocol):
    """A simulator that helps mapped perception with what a real robot cannot know."""

    def perception_hints(self) -> PerceptionHints | None:
        """Simulator-only help for mapped perception; None on a real robot (see ``PerceptionHints``)."""
        ...


@runtime_checkable
class RoomAware(Protocol):
    """A world whose navigation knows rooms: where named things are and which targets it can reach."""

    def room_of(self, name: str) -> str | None:
        """The room a named thing is in, as far as the world knows; None when unknown."""
        ...

    def route(self, target: str) -> bool | None:
        """Whether the robot's navigation can reach ``target`` (keeping out of forbidden rooms); None
        when the world cannot tell."""
        ...


@runtime_checkable
class RoomKeeping(Protocol):
    """A world whose navigation can keep out of rooms (a safety rule)."""

    def keep_out_rooms(self, rooms: set[str]) -> None:
        """Make the robot's navigation avoid these rooms where it can (a safety rule)."""
        ...


@runtime_checkable
class ViewableWorld(Protocol):
    """A world viewers can draw: a plan view, and the motion between two moments."""

    def top_down(self) -> TopDown | None:
        """The plan view viewers draw (occupancy, rooms, things); None when the world has none."""
        ...

    def motion_snapshot(self) -> Any | None:
        """The moving parts now (opaque), for ``in_between``; None when the world cannot show motion."""
        ...

    def in_between(self, before: Any, after: Any, fps: float, max_frames: int = 200) -> Iterator[Observation]:
        """RGB observations along the motion between two ``motion_snapshot``s, ``fps`` per second of
        motion (videos of skills that jump, such as kinematic ones)."""
        ...


@runtime_checkable
class MapDescribing(Protocol):
    """A world that can put what its map holds into planner prompts."""

    @property
    def describe_in_prompt(self) -> bool:
        """True when planner prompts should carry the map's text (``map_text``): mapped perception, when configured."""
        ...

    def map_text(self) -> str:
        """The world's map in a few lines of text, for planner prompts; "" without a map."""
        ...


@runtime_checkable
class MappedWorld(Protocol):
    """A world that builds a semantic map as it perceives (mapped perception): skills explore with it and act on
    what it names."""

    def mapping(self) -> MapAccess | None:
        """The semantic map this world builds, as skills explore with it (mapped perception); None without one."""
        ...

    def map_summary(self) -> dict[str, Any] | None:
        """What the world's semantic map holds (JSON-able), for planners that read maps; None without one."""
        ...

    def skill_subtask(self, subtask: Subtask) -> Subtask:
        """The subtask with its names as the skills know them (a perceiving world maps its map
        instances to what its skills act on). Default: unchanged."""
        ...

    def note_execution(self, subtask: Subtask, success: bool) -> None:
        """Called after every skill attempt on a checked subtask (a map updates what it believes)."""
        ...


@runtime_checkable
class PhasedWorld(Protocol):
    """A world whose tasks may start with an exploration phase before the instruction."""

    def exploration(self) -> Any | None:
        """The exploration phase the task asks for before its instruction (``tasks.Exploration``), or None."""
        ...

    def start_task(self) -> None:
        """The exploration phase is over: what happens from now on is the task's (its path length starts at 0)."""
        ...


@runtime_checkable
class FollowingWorld(Protocol):
    """A copy of a world that follows another through an episode (the executor node's copy of the world
    node's simulator)."""

    def enter_round(self, round_index: int) -> None:
        """This world is a copy that follows another through an episode (the executor node's copy of the
        world node's simulator), now in agent round ``round_index``: what it observes from now on belongs
        to that round. The default has nothing to keep."""
        ...


__all__ = ["FollowingWorld", "GoalJudge", "MapDescribing", "MappedWorld", "PerceptionHinting", "PhasedWorld", "PrivilegedWorld", "RoomAware", "RoomKeeping", "ViewableWorld"]
