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
* ``explore_step`` observes and updates the map without an agent round (the Explore skill calls
  it at each stop).

The camera rig comes from the inner world's robot (``camera_info`` of the four views and its odometry),
the room prior from its ``floor_plan``. Goal checks, path length, scene description, ground truth and
the robot are the inner world's.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from homiebot.attempt_checks import AttemptCheck
from homiebot.contracts import PERSON_KIND, VIEW_NAMES, Action, Observation, PersonSeen, Subtask, ViewImage
from homiebot.errors import Entity
from homiebot.perception.detection import Detector, detect_views
from homiebot.perception.map_belief import MapBelief
from homiebot.perception.map_grounding import MapGrounder
from homiebot.perception.people import people_seen
from homiebot.perception.projection import CameraRig
from homiebot.perception.semantic_map import MapError, SemanticMap, UpdateReport
from homiebot.robot import Robot
from homiebot.worlds.base import World
from homiebot.worlds.exploration_phase import explore_home

OUT_OF_VIEW = 99.0  # metres: the distance of a person seen before but not in the latest observation


class MappedBelief(MapBelief):
    """A MapBelief that also grounds phrases (``resolve``), so the detector's F2 comes from the map, and
    knows the people the cameras saw (``people``: name -> the latest sighting; ``in_view``: the names the
    latest observation shows). A person's distance is that of a sighting in the latest observation; one
    out of view counts as far away (Give: D1, go to them first)."""

    def __init__(self, smap: SemanticMap, grounder: MapGrounder, **kwargs: Any) -> None:
        super().__init__(smap, **kwargs)
        self.grounder = grounder
        self.people: dict[str, PersonSeen] = {}
        self.in_view: set[str] = set()

    def names(self) -> list[str]:
        return [*super().names(), *self.people]

    def lookup(self, name: str) -> Entity | None:
        if name in self.people:
            return Entity(name, PERSON_KIND)
        return super().lookup(name)

    def distance_to(self, name: str) -> float:
        if name in self.people:
            return self.people[name].distance if name in self.in_view else OUT_OF_VIEW
        return super().distance_to(name)

    def resolve(self, phrase: str) -> tuple[str | None, str]:
        """(instance id or room, "") when the phrase names one confirmed thing; else (None, what to do)."""
        key = phrase.strip()
        if key and self.lookup(key) is not None:
            return key, ""
        result = self.grounder.ground(phrase)
        if result.ok and result.target is not None and self.lookup(result.target) is not None:
            return result.target, ""
        if result.ok:  # grounded to something not confirmed yet
            return None, f"'{phrase}' has been glimpsed but not confirmed yet; look again or explore the room."
        return None, result.message


class PerceivingWorld(World):
    """An inner world observed through ``detector`` into a ``SemanticMap`` (see the module doc).

    ``map_params`` are SemanticMap parameters; the floor plan (room rectangles) is the map's prior.
    ``bind_radius``: metres within which a map instance is bound to a simulator object of its category;
    ``describe_in_prompt``: the agent adds the map's text (``map_text``) to each planner prompt.
    """

    name = "perceiving"

    def __init__(self, inner: World, detector: Detector, map_params: Mapping[str, Any] | None = None,
                 bind_radius: float = 0.75, describe_in_prompt: bool = False) -> None:
        robot = inner.robot
        lacks = None if robot is None else robot.capabilities.missing(camera="front", depth=True)
        if robot is None or lacks or not set(VIEW_NAMES) <= set(robot.capabilities.cameras):
            raise ValueError(f"mapped perception needs a robot with depth cameras named {list(VIEW_NAMES)}; "
                             f"{type(inner).__name__} {'has no robot' if robot is None else 'has ' + str(list(robot.capabilities.cameras))}")
        if inner.floor_plan() is None:
            raise ValueError(f"mapped perception needs a floor plan (named room rectangles); {type(inner).__name__} has none")
        self.inner = inner
        self.robot_ = robot
        self.hints = inner.perception_hints()
        self.detector = detector
        self.map_params = dict(map_params or {})
        self.bind_radius = float(bind_radius)
        self._describe_in_prompt = describe_in_prompt  # the agent appends ``map_text()`` to planner prompts
        self.static_between_actions = False  # every observation updates the map: observe only when asked
        self.update_times: list[float] = []  # seconds per map update (detection + fusion)
        self.exploration_stops = 0  # frontier stops of the last exploration phase (before the task)
        self._exploring = False
        self._new_map()
        if self.grounder.embedder is not None:
            self.grounder.embedder.warm()  # so that no episode's first grounding waits for the model

    def _new_map(self) -> None:
        try:
            self.map = SemanticMap(rooms=self.inner.floor_plan(), **self.map_params)
        except TypeError as err:
            raise ValueError(f"perception.map: {err}") from None
        self.grounder = MapGrounder(self.map)
        self._belief = MappedBelief(self.map, self.grounder, gripper=self._held_id)
        self._tick = 0

    # ---- the world interface ---------------------------------------------------------------------
    @property
    def describe_in_prompt(self) -> bool:
        return self._describe_in_prompt

    def own_robot(self) -> Robot | None:
        return self.inner.robot

    def top_down(self) -> Any:
        return self.inner.top_down()

    def motion_snapshot(self) -> Any | None:
        return self.inner.motion_snapshot()

    def in_between(self, before: Any, after: Any, fps: float, max_frames: int = 200) -> Any:
        return self.inner.in_between(before, after, fps, max_frames)

    def room_of(self, name: str) -> str | None:
        if name in self.map:
            return self.map.get(name).room
        return name if name in {r.name for r in self.map.rooms} else None

    def keep_out_rooms(self, rooms: set[str]) -> None:
        self.inner.keep_out_rooms(rooms)

    def route(self, target: str) -> bool | None:
        acted = self.skill_subtask(Subtask(action=Action.GO_TO, target=target)).target
        return self.inner.route(acted) if acted is not None else None

    def ground_truth(self) -> Any | None:
        return self.inner.ground_truth()

    def attempt_check(self) -> AttemptCheck:
        """The inner world's: in simulation attempts are judged from truth (the map follows what happened)."""
        return self.inner.attempt_check()

    def reset(self) -> None:
        self.inner.reset()
        self._new_map()
        self.update_times = []
        self.exploration_stops = 0
        phase = self.inner.exploration()
        if phase is not None:
            self._exploring = True  # the world's clock stands before the task (round 0) while exploring
            try:
                self.exploration_stops = explore_home(self, self.robot_, phase.max_stops)
            finally:
                self._exploring = False
            self.inner.start_task()

    def exploration(self) -> Any | None:
        return self.inner.exploration()

    def start_task(self) -> None:
        self.inner.start_task()

    def observe(self, round_index: int) -> Observation:
        obs, _ = self._observe(round_index)
        views = {v: ViewImage(rgb=img.rgb, depth=img.depth) for v, img in obs.views.items()}
        return obs.model_copy(update={"views": views, "labels": {}, "inventory": self.inventory()})

    def explore_step(self) -> UpdateReport:
        """Observe from where the robot stands and update the map (no agent round)."""
        return self._observe(0 if self._exploring else self.map.round)[1]

    def _observe(self, round_index: int) -> tuple[Observation, UpdateReport]:
        obs = self.inner.observe(round_index)
        t0 = time.perf_counter()
        frame = self._tick
        self._tick += 1
        open_state = self.hints.open_state() if self.hints is not None else None
        detections = detect_views(self.detector, obs, frame, open_state=open_state)
        rig = self._rig()
        if not obs.people:  # a world that reports nobody (a robot): the detector's person, placed by depth
            seen = people_seen(obs, detections, rig, self.map.robot_radius, self.map.room_of_point)
            obs = obs.model_copy(update={"people": seen}) if seen else obs
        self._belief.in_view = {p.name for p in obs.people}  # a person detector's sightings, kept by name
        self._belief.people.update({p.name: p for p in obs.people})
        self._sync_gripper()
        report = self.map.update(obs.model_copy(update={"round": frame}), detections, rig)
        self.update_times.append(time.perf_counter() - t0)
        return obs, report

    def _rig(self) -> CameraRig:
        """The four views' intrinsics and world poses, from the robot's camera info and odometry."""
        base = self.robot_.odometry()
        c, s = np.cos(base.yaw), np.sin(base.yaw)
        world_from_base = np.array([[c, -s, 0.0, base.x], [s, c, 0.0, base.y], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]])
        infos = {v: self.robot_.camera_info(v) for v in VIEW_NAMES}
        return CameraRig(infos["front"].intrinsics, {v: world_from_base @ i.base_from_camera for v, i in infos.items()})

    def _holding(self) -> bool:
        return bool(self.robot_.gripper_state().holding)

    def _sync_gripper(self) -> None:
        """An object the map believes held but the gripper lost (dropped) is somewhere near: it becomes
        stale, so the next sighting of its category relocates it (keeping its id)."""
        held = self.map.held()
        if held is not None and not self._holding():
            held.held, held.stale, held.relation, held.support = False, True, None, None

    def _held_id(self) -> str | None:
        if not self._holding():
            return None
        held = self.map.held()
        return held.id if held else None

    @property
    def belief(self) -> MappedBelief:
        return self._belief

    def inventory(self) -> list[str]:
        held = self._held_id()
        return [held] if held else []

    def skill_subtask(self, subtask: Subtask) -> Subtask:
        """Map instance ids -> the simulator's names (unbound ids pass unchanged; the skill then fails)."""
        if self.hints is None:
            return subtask
        binding = self.hints.bind(self.map, self.bind_radius)
        if any(n is not None and n in self.map and n not in binding for n in (subtask.target, subtask.place)):
            # e.g. an object that fell: the map puts it where the robot stood until it is seen again
            wide = self.hints.bind(self.map, 4 * self.bind_radius)
            binding = {**wide, **binding}
        held = self.map.held()
        held_name = self.hints.held_name()
        if held is not None and held_name is not None:
            binding[held.id] = held_name
        target = subtask.target
        if subtask.action is Action.GO_TO and target is not None and target in self.map and target not in binding:
            # a thing that is no longer where the map saw it (someone moved it): go where it was seen,
            # to the furniture it rested on, else its room; looking there shows the map it is gone
            inst = self.map.get(target)
            where = binding.get(inst.support) if inst.support is not None else None
            if where is not None or inst.room is not None:
                return Subtask(action=Action.GO_TO, target=where or inst.room)

        def name(n: str | None) -> str | None:
            return binding.get(n, n) if n is not None else None

        return Subtask(action=subtask.action, target=name(subtask.target), place=name(subtask.place))

    def note_execution(self, subtask: Subtask, success: bool) -> None:
        target = subtask.target
        if (not success and subtask.action is Action.PICK and target is not None and target in self.map
                and self.hints is not None and target not in self.hints.bind(self.map, self.bind_radius)):
            self.map.get(target).stale = True  # reached for it where the map saw it, and nothing is there: moved
            return
        if not success or target is None or target not in self.map:
            return
        try:
            if subtask.action is Action.PICK:
                self.map.mark_held(target)
            elif subtask.action is Action.PUT:
                self.map.mark_placed(target, subtask.place if subtask.place in self.map else None)
            elif subtask.action in (Action.OPEN, Action.CLOSE):
                self.map.set_open(target, subtask.action is Action.OPEN)
        except MapError:
            pass  # the map disagrees with what the skill did; the next observation corrects it

    def map_summary(self) -> dict[str, Any]:
        return self.map.summary()

    def map_text(self) -> str:
        """The map's short text for planner prompts."""
        return self.map.describe()

    def path_length(self) -> float:
        return self.inner.path_length()

    def scene_description(self) -> dict[str, Any]:
        return self.inner.scene_description()

    def goal_satisfied(self, goal: list) -> bool | None:
        return self.inner.goal_satisfied(goal)

    def close(self) -> None:
        try:
            if self._guarded is not None:
                self._guarded.close()
            self.detector.close()
        finally:
            self.inner.close()
