"""``PerceivingWorld``: the "mapped" perception mode, a world seen through a detector and a semantic map.

It wraps an inner world (the embedded home) and changes what the agent knows:

* ``observe`` renders the inner world's four views, runs the detector on them and updates the
  semantic map. The observation handed on keeps RGB and depth but carries **no** simulator
  knowledge: ``labels`` is cleared and the segmentation images are dropped (their ids are the
  simulator's). Planners that read scenes get the map instead (``map_summary``, ``describe``);
* ``belief`` is a ``MapBelief`` over that map that also resolves free-form phrases with
  ``MapGrounder`` (the error detector then answers F2 from the map, naming what has been seen);
  names the agent may use are map instance ids (``can_1``), room names and phrases that ground to
  exactly one instance ("green can", "brown table");
* ``skill_subtask`` translates instance ids to the simulator's canonical names through the inner
  world's ``perception_hints`` (same category, nearest position): the privileged skills act on
  simulator objects. On a real robot (no hints) ids pass through: finding the target again in its
  own camera is the skill's business;
* ``note_execution`` keeps the map in step with the robot's own actions (Pick -> held, Put ->
  placed, Open/Close -> door state);
* ``explore_step`` observes and updates the map without an agent round; ``mapping`` hands the map
  to the Explore skill and the exploration phase (``MapAccess``), whose ``look`` is that step.

The map itself, its belief, the binding and the notes are a ``MapHost``'s (homiebot/perception/map_host.py),
which reads nothing of the world; this wrapper feeds it. In one process that is a ``MapKeeper`` running
``detector`` here; the ROS 2 world node passes ``remote`` instead, and the map lives in the mapper node. The camera
rig comes from the inner world's robot (``camera_info`` of the four views and its odometry), the room
prior from its ``floor_plan``. Goal checks, path length, scene description, ground truth and the robot
are the inner world's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from homiebot.core.attempt_checks import AttemptCheck
from homiebot.core.contracts import VIEW_NAMES, Action, Observation, Subtask, ViewImage
from homiebot.core.errors import WorldBelief
from homiebot.core.map_access import MapAccess
from homiebot.core.robot import Robot
from homiebot.core.world import World
from homiebot.core.world_capabilities import (
    GoalJudge,
    PerceptionHinting,
    PhasedWorld,
    PrivilegedWorld,
    RoomAware,
    RoomKeeping,
    ViewableWorld,
)
from homiebot.perception.detection import Detector
from homiebot.perception.map_host import MapHost
from homiebot.perception.map_keeper import MapKeeper
from homiebot.perception.projection import CameraRig
from homiebot.perception.semantic_map import SemanticMap
from homiebot.worlds.exploration_phase import explore_home

# (inner world, its floor plan, whether the gripper holds something now) -> the host of its map
RemoteMap = Callable[[World, Any, Callable[[], bool]], MapHost]


class PerceivingWorld(World):
    """An inner world observed through ``detector`` into a ``SemanticMap`` (see the module doc).

    ``map_params`` are SemanticMap parameters; the floor plan (room rectangles) is the map's prior.
    ``bind_radius``: metres within which a map instance is bound to a simulator object of its category;
    ``describe_in_prompt``: the agent adds the map's text (``map_text``) to each planner prompt.
    ``remote``: the map is kept elsewhere (the mapper node); then ``detector`` is None and the map's own
    parameters are the remote side's.
    """

    name = "perceiving"

    def __init__(self, inner: World, detector: Detector | None, map_params: Mapping[str, Any] | None = None,
                 bind_radius: float = 0.75, describe_in_prompt: bool = False, remote: RemoteMap | None = None) -> None:
        robot = inner.robot
        lacks = None if robot is None else robot.capabilities.missing(camera="front", depth=True)
        if robot is None or lacks or not set(VIEW_NAMES) <= set(robot.capabilities.cameras):
            raise ValueError(f"mapped perception needs a robot with depth cameras named {list(VIEW_NAMES)}; "
                             f"{type(inner).__name__} {'has no robot' if robot is None else 'has ' + str(list(robot.capabilities.cameras))}")
        rooms = inner.floor_plan()
        if rooms is None:
            raise ValueError(f"mapped perception needs a floor plan (named room rectangles); {type(inner).__name__} has none")
        self.inner = inner
        self.robot_ = robot
        holding = lambda: bool(robot.gripper_state().holding)  # noqa: E731
        if (detector is None) == (remote is None):
            raise ValueError("mapped perception needs either a detector (the map kept here) or a remote map, not both")
        self.keeper: MapHost
        if remote is not None:
            self.keeper = remote(inner, rooms, holding)
        else:
            assert detector is not None
            local = MapKeeper(detector, rooms, holding=holding, hints=inner.perception_hints() if isinstance(inner, PerceptionHinting) else None, map_params=map_params, bind_radius=bind_radius)
            local.warm()  # so that no episode's first grounding waits for the model
            self.keeper = local
        self._describe_in_prompt = describe_in_prompt  # the agent appends ``map_text()`` to planner prompts
        self.static_between_actions = False  # every observation updates the map: observe only when asked
        self._access = self.keeper.access(self.explore_step)
        self.exploration_stops = 0  # frontier stops of the last exploration phase (before the task)
        self._exploring = False
        self._round = 0  # the agent round last observed (an exploration step mid-episode belongs to it)

    @property
    def map(self) -> SemanticMap:
        """The map, where it is kept in this process (tests, benchmarks)."""
        if not isinstance(self.keeper, MapKeeper):
            raise AttributeError(f"the semantic map is kept by {type(self.keeper).__name__}, not in this process")
        return self.keeper.map

    def mapping(self) -> MapAccess:
        return self._access

    @property
    def update_times(self) -> list[float]:
        """Seconds per map update (detection + fusion) this episode."""
        return self.keeper.update_times

    # ---- the world interface ---------------------------------------------------------------------
    @property
    def describe_in_prompt(self) -> bool:
        return self._describe_in_prompt

    def own_robot(self) -> Robot | None:
        return self.inner.robot

    def top_down(self) -> Any:
        return self.inner.top_down() if isinstance(self.inner, ViewableWorld) else None

    def motion_snapshot(self) -> Any | None:
        return self.inner.motion_snapshot() if isinstance(self.inner, ViewableWorld) else None

    def in_between(self, before: Any, after: Any, fps: float, max_frames: int = 200) -> Any:
        return self.inner.in_between(before, after, fps, max_frames) if isinstance(self.inner, ViewableWorld) else iter(())

    def room_of(self, name: str) -> str | None:
        return self.keeper.room_of(name)

    def keep_out_rooms(self, rooms: set[str]) -> None:
        if isinstance(self.inner, RoomKeeping):
            self.inner.keep_out_rooms(rooms)

    def route(self, target: str) -> bool | None:
        acted = self.skill_subtask(Subtask(action=Action.GO_TO, target=target)).target
        return self.inner.route(acted) if acted is not None and isinstance(self.inner, RoomAware) else None

    def ground_truth(self) -> Any | None:
        return self.inner.ground_truth() if isinstance(self.inner, PrivilegedWorld) else None

    def attempt_check(self) -> AttemptCheck:
        """The inner world's: in simulation attempts are judged from truth (the map follows what happened)."""
        return self.inner.attempt_check()

    def reset(self) -> None:
        self.inner.reset()
        self.keeper.new_episode()
        self.exploration_stops = 0
        self._round = 0
        phase = self.inner.exploration() if self.keeper.leads_episodes and isinstance(self.inner, PhasedWorld) else None  # a follower's map is explored already
        if phase is not None:
            self._exploring = True  # the world's clock stands before the task (round 0) while exploring
            try:
                self.exploration_stops = explore_home(self._access, self.robot_, phase.max_stops)
            finally:
                self._exploring = False
            if isinstance(self.inner, PhasedWorld):
                self.inner.start_task()

    def exploration(self) -> Any | None:
        return self.inner.exploration() if isinstance(self.inner, PhasedWorld) else None

    def enter_round(self, round_index: int) -> None:
        self._round = round_index

    def start_task(self) -> None:
        if isinstance(self.inner, PhasedWorld):
            self.inner.start_task()

    def observe(self, round_index: int) -> Observation:
        self._round = round_index
        obs = self._observe(round_index, agent_round=True)
        views = {v: ViewImage(rgb=img.rgb, depth=img.depth) for v, img in obs.views.items()}
        return obs.model_copy(update={"views": views, "labels": {}, "inventory": self.inventory()})

    def explore_step(self) -> None:
        """Observe from where the robot stands and update the map (no agent round)."""
        self._observe(0 if self._exploring else self._round, agent_round=False)

    def _observe(self, round_index: int, agent_round: bool) -> Observation:
        return self.keeper.integrate(self.inner.observe(round_index), self._rig(), agent_round)

    def _rig(self) -> CameraRig:
        """The four views' intrinsics and world poses, from the robot's camera info and odometry."""
        base = self.robot_.odometry()
        c, s = np.cos(base.yaw), np.sin(base.yaw)
        world_from_base = np.array([[c, -s, 0.0, base.x], [s, c, 0.0, base.y], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]])
        infos = {v: self.robot_.camera_info(v) for v in VIEW_NAMES}
        return CameraRig(infos["front"].intrinsics, {v: world_from_base @ i.base_from_camera for v, i in infos.items()})

    @property
    def belief(self) -> WorldBelief:
        return self.keeper.belief

    def inventory(self) -> list[str]:
        held = self.keeper.held_id()
        return [held] if held else []

    def skill_subtask(self, subtask: Subtask) -> Subtask:
        """Map instance ids -> the simulator's names (``MapKeeper.bind``)."""
        return self.keeper.bind(subtask)

    def note_execution(self, subtask: Subtask, success: bool) -> None:
        self.keeper.note(subtask, success)

    def map_summary(self) -> dict[str, Any]:
        return self.keeper.summary()

    def map_text(self) -> str:
        """The map's short text for planner prompts."""
        return self.keeper.text()

    def path_length(self) -> float:
        return self.inner.path_length()

    def scene_description(self) -> dict[str, Any]:
        return self.inner.scene_description()

    def goal_satisfied(self, goal: list) -> bool | None:
        return self.inner.goal_satisfied(goal) if isinstance(self.inner, GoalJudge) else None

    def close(self) -> None:
        try:
            if self._guarded is not None:
                self._guarded.close()
            self.keeper.close()
        finally:
            self.inner.close()
