"""``MapKeeper``: what mapped perception knows, apart from any world: a semantic map fed by a detector.

Given each observation with the camera rig it was taken from, it runs the detector, places the people it
sees, and fuses the detections into a ``SemanticMap``; its belief (``MappedBelief``) answers the error
detector from that map and grounds phrases. It turns the map's instance ids into the names a simulator's
privileged skills act on (``bind``: same category, nearest position, through the simulator's
``PerceptionHints``; a robot has none and keeps the ids) and keeps the map in step with what the robot
did (``note``: Pick -> held, Put -> placed, Open/Close -> door state).

It reads nothing of a world but what it is handed: the observation and rig, the gripper (``holding``) and
the hints. It is a ``MapHost`` (homiebot/perception/map_host.py): ``homiebot.worlds.perceiving.PerceivingWorld``
feeds it from an inner world in-process, the mapper node from the world node's requests.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from homiebot.core.contracts import PERSON_KIND, Action, Observation, PersonSeen, Subtask
from homiebot.core.errors import Entity
from homiebot.core.map_access import MapAccess
from homiebot.core.world import PerceptionHints
from homiebot.perception.detection import Detector, detect_views
from homiebot.perception.map_access import KeptMap
from homiebot.perception.map_belief import MapBelief
from homiebot.perception.map_grounding import MapGrounder
from homiebot.perception.people import people_seen
from homiebot.perception.projection import CameraRig
from homiebot.perception.semantic_map import MapError, SemanticMap, UpdateReport

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


class MapKeeper:
    """A ``SemanticMap`` over ``rooms`` (its prior) fed by ``detector`` (see the module doc).

    ``holding``: whether the gripper holds something now; ``hints``: the simulator's names for what the map
    holds (None on a robot); ``map_params``: SemanticMap parameters; ``bind_radius``: metres within which a
    map instance is bound to a simulator object of its category.
    """

    leads_episodes = True  # MapHost: the map is this keeper's own

    def __init__(self, detector: Detector, rooms: Any, holding: Callable[[], bool], hints: PerceptionHints | None = None,
                 map_params: Mapping[str, Any] | None = None, bind_radius: float = 0.75) -> None:
        self.detector = detector
        self.rooms = rooms  # as SemanticMap takes them (a floor plan)
        self.holding = holding
        self.hints = hints
        self.map_params = dict(map_params or {})
        self.bind_radius = float(bind_radius)
        self.new_episode()

    def new_episode(self) -> None:
        """An empty map (the rooms known, nothing seen) and a belief over it."""
        try:
            self.map = SemanticMap(rooms=self.rooms, **self.map_params)
        except TypeError as err:
            raise ValueError(f"perception.map: {err}") from None
        self.grounder = MapGrounder(self.map)
        self.belief = MappedBelief(self.map, self.grounder, gripper=self.held_id)
        self.update_times: list[float] = []  # seconds per map update (detection + fusion) this episode
        self._tick = 0

    def update(self, obs: Observation, rig: CameraRig) -> tuple[Observation, UpdateReport]:
        """Detect in ``obs`` (seen through ``rig``) and fuse into the map; ``obs`` with the people seen
        (placed by depth from the detector's persons when the world reports nobody), and what changed."""
        t0 = time.perf_counter()
        frame = self._tick
        self._tick += 1
        open_state = self.hints.open_state() if self.hints is not None else None
        detections = detect_views(self.detector, obs, frame, open_state=open_state)
        if not obs.people:  # a world that reports nobody (a robot): the detector's person, placed by depth
            seen = people_seen(obs, detections, rig, self.map.robot_radius, self.map.room_of_point)
            obs = obs.model_copy(update={"people": seen}) if seen else obs
        self.belief.in_view = {p.name for p in obs.people}  # a person detector's sightings, kept by name
        self.belief.people.update({p.name: p for p in obs.people})
        self._sync_gripper()
        report = self.map.update(obs.model_copy(update={"round": frame}), detections, rig)
        self.update_times.append(time.perf_counter() - t0)
        return obs, report

    def integrate(self, obs: Observation, rig: CameraRig, agent_round: bool) -> Observation:
        """``MapHost.integrate``: ``update`` without its report."""
        return self.update(obs, rig)[0]

    def summary(self) -> dict[str, Any]:
        return self.map.summary()

    def text(self) -> str:
        return self.map.describe()

    def access(self, look: Callable[[], object]) -> MapAccess:
        """``MapAccess`` to this map; ``look`` observes from where the robot stands and updates it."""
        return KeptMap(self, look)

    def warm(self) -> None:
        """Load the grounder's phrase embedder now, so that no episode's first grounding waits for it."""
        if self.grounder.embedder is not None:
            self.grounder.embedder.warm()

    def _sync_gripper(self) -> None:
        """An object the map believes held but the gripper lost (dropped) is somewhere near: it becomes
        stale, so the next sighting of its category relocates it (keeping its id)."""
        held = self.map.held()
        if held is not None and not self.holding():
            held.held, held.stale, held.relation, held.support = False, True, None, None

    def held_id(self) -> str | None:
        """The map id of what the gripper holds (None when it holds nothing)."""
        if not self.holding():
            return None
        held = self.map.held()
        return held.id if held else None

    def room_of(self, name: str) -> str | None:
        if name in self.map:
            return self.map.get(name).room
        return name if name in {r.name for r in self.map.rooms} else None

    def bind(self, subtask: Subtask) -> Subtask:
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

    def note(self, subtask: Subtask, success: bool) -> None:
        """Keep the map in step with what a skill did (or, for a Pick that found nothing, did not find)."""
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

    def close(self) -> None:
        """Release the detector (its model)."""
        self.detector.close()
