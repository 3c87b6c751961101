"""The semantic map: object and furniture instances fused from detections, plus occupancy.

Per update (one observation: four views, their detections and camera poses):

1. each detection's mask pixels with depth are back-projected to world points (subsampled, depth
   outliers against the median rejected); geometry is kept as a small voxel set per instance, whose
   robust bounding box gives position and extent;
2. detections are associated with instances by label and distance (a label of the same group is
   accepted when the detection lies inside the instance: detectors confuse lemons and oranges);
   unmatched ones relocate a stale instance of that label, else start a new instance;
3. instances that should have been seen (their centre projects into a view, close enough and not
   hidden behind something nearer) but were not, lose confidence and become ``stale`` after
   ``stale_after`` such misses in a row; a fresh sighting of the label elsewhere takes over;
4. support relations ("on"/"in" a receptacle), rooms (from the floor-plan prior), container states
   and the occupancy grid are refreshed.

An instance counts (``confirmed``) after ``min_sightings`` sightings in different updates, so a
detector's one-off false positives never reach the planner.

Container state: the door or drawer of an articulated receptacle changes its outline in ways that
are hard to read from geometry alone, so the state comes from the detection's ``open`` attribute
when the detector knows it (the simulator's detector does), from ``open_hints`` passed to
``update``, or from ``set_open`` (e.g. after the robot's own Open/Close succeeded).

The map assembles parts with one job each and shares with them one ``InstanceStore`` and one
``MapSettings``: ``ViewLifter`` (views and detections to world points), ``SightingAssociation``
(which instance a sighting is), ``InstanceFusion`` (evidence into instances), ``MissCheck``,
``SupportRelations``, ``RobotBookkeeping`` (the robot's own actions) and ``MapText``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from homiebot.core.contracts import Observation
from homiebot.core.rooms import RoomPrior, room_at, rooms_from
from homiebot.perception.association import SightingAssociation
from homiebot.perception.detection import Detection
from homiebot.perception.instance_fusion import InstanceFusion
from homiebot.perception.instance_store import InstanceStore
from homiebot.perception.map_instance import MapError, MapInstance, Sighting3D, UpdateReport
from homiebot.perception.map_relations import SupportRelations
from homiebot.perception.map_settings import MapSettings, SharedSetting
from homiebot.perception.map_text import MapText
from homiebot.perception.miss_check import MissCheck
from homiebot.perception.occupancy import Frontier, OccupancyGrid
from homiebot.perception.projection import CameraRig
from homiebot.perception.robot_bookkeeping import RobotBookkeeping
from homiebot.perception.sighting_lift import ViewLifter

__all__ = ["MapError", "MapInstance", "SemanticMap", "Sighting3D", "UpdateReport"]


class SemanticMap:
    """Fuses per-view detections with depth into object instances, relations and occupancy.

    ``rooms``: floor-plan prior (see ``perception.rooms.rooms_from``); ``bounds``: the mapped area
    (x0, y0, x1, y1), default the rooms' bounding box plus 1 m (required without rooms).
    """

    min_sightings = SharedSetting()
    stale_after = SharedSetting()
    max_points = SharedSetting()
    occupancy_stride = SharedSetting()
    max_range = SharedSetting()
    min_depth = SharedSetting()
    robot_radius = SharedSetting()
    min_expected_pixels = SharedSetting()

    def __init__(self, rooms: Iterable[Any] | Mapping[str, Any] | None = None, bounds: tuple[float, float, float, float] | None = None,
                 resolution: float = 0.05, min_sightings: int = 2, stale_after: int = 3, max_points: int = 400,
                 occupancy_stride: int = 4, max_range: float = 4.0, min_depth: float = 0.2, robot_radius: float = 0.35,
                 min_expected_pixels: float = 60.0) -> None:
        self.rooms: list[RoomPrior] = rooms_from(rooms)
        if bounds is None:
            if not self.rooms:
                raise MapError("SemanticMap needs rooms (a floor-plan prior) or explicit bounds=(x0, y0, x1, y1)")
            bounds = (min(r.x0 for r in self.rooms) - 1.0, min(r.y0 for r in self.rooms) - 1.0,
                      max(r.x1 for r in self.rooms) + 1.0, max(r.y1 for r in self.rooms) + 1.0)
        self.settings = MapSettings.checked(min_sightings, stale_after, max_points, occupancy_stride, max_range, min_depth,
                                            robot_radius, min_expected_pixels)
        self.occupancy = OccupancyGrid(bounds, resolution)
        self.store = InstanceStore(self.settings)
        self.lifter = ViewLifter(self.settings)
        self.fusion = InstanceFusion(self.store)
        self.association = SightingAssociation(self.store, self.fusion)
        self.miss_check = MissCheck(self.store, self.settings)
        self.relations = SupportRelations(self.store, self.rooms)
        self.bookkeeping = RobotBookkeeping(self.store, self.fusion)
        self.wording = MapText(self.store, self.rooms)
        self.round = -1
        self.robot: tuple[float, float, float] | None = None

    # ---- access ---------------------------------------------------------------------------------
    def instances(self, confirmed: bool = True, include_stale: bool = False) -> list[MapInstance]:
        """Instances in creation order; by default only confirmed, non-stale ones."""
        return self.store.instances(confirmed, include_stale)

    def is_confirmed(self, inst: MapInstance) -> bool:
        """Seen in ``min_sightings`` updates (or in the gripper)."""
        return self.store.is_confirmed(inst)

    def get(self, instance_id: str) -> MapInstance:
        """The instance with this id (MapError listing the known ids otherwise)."""
        return self.store.get(instance_id)

    def __contains__(self, instance_id: object) -> bool:
        return instance_id in self.store

    def held(self) -> MapInstance | None:
        """The instance the robot holds, if any."""
        return self.store.held()

    def contents(self, receptacle_id: str) -> list[MapInstance]:
        """Confirmed objects on or in a receptacle instance."""
        return [i for i in self.instances() if i.support == receptacle_id]

    def room_of_point(self, x: float, y: float) -> str | None:
        """The room of the floor plan at (x, y), or None."""
        return room_at(self.rooms, x, y)

    # ---- the update -------------------------------------------------------------------------------
    def update(self, obs: Observation, detections: Mapping[str, list[Detection]], rig: CameraRig,
               robot_pose: tuple[float, float, float] | None = None, open_hints: Mapping[str, bool] | None = None) -> UpdateReport:
        """Integrate one observation. ``detections``: view -> detections of that view's image;
        ``rig``: intrinsics and world-from-camera pose per view; ``robot_pose``: (x, y, yaw), default
        the observation's pose; ``open_hints``: instance id -> open? for containers."""
        if not isinstance(obs, Observation):
            raise MapError(f"update needs a homiebot Observation, got {type(obs).__name__}")
        unknown_views = sorted(set(detections) - set(obs.views))
        if unknown_views:
            raise MapError(f"detections for views {unknown_views} that the observation does not have ({sorted(obs.views)})")
        self.round = int(obs.round)
        pose = robot_pose if robot_pose is not None else (obs.pose.x, obs.pose.y, obs.pose.yaw)
        self.robot = (float(pose[0]), float(pose[1]), float(pose[2]))
        lifted = self.lifter.lift_views(obs, detections, rig)
        seen, created, relocated = self.association.associate(lifted.sightings, self.robot, self.round)
        merged = self.fusion.merge_duplicates(seen)
        missed, stale, dropped = self.miss_check.check(obs, rig, seen)
        for iid, value in (open_hints or {}).items():
            inst = self.store.find(iid)
            if inst is not None:
                inst.is_open = bool(value)
        held = self.held()
        if held is not None:
            held.position = np.array([self.robot[0], self.robot[1], held.position[2]])
        self.relations.refresh()
        if lifted.depth_points:
            self._integrate_occupancy(lifted.depth_points, lifted.cameras)
        seen = {i for i in seen if i in self.store}
        return UpdateReport(self.round, tuple(sorted(seen)), tuple(i for i in created if i in self.store), tuple(relocated),
                            tuple(missed), tuple(stale), tuple(merged + dropped))

    def _integrate_occupancy(self, points: list[np.ndarray], cameras: list[np.ndarray]) -> None:
        """Depth points into the grid; the robot's own footprint is free, and no point near it counts."""
        assert self.robot is not None  # set by the update
        x, y, _ = self.robot
        ring = np.linspace(0, 2 * np.pi, 16, endpoint=False)
        footprint = np.concatenate([np.stack([x + r * np.cos(ring), y + r * np.sin(ring)], 1)
                                    for r in (0.0, 0.5 * self.robot_radius, self.robot_radius)])
        self.occupancy.integrate(np.concatenate(points), np.concatenate(cameras), keep_free=footprint,
                                 ignore=(x, y, self.robot_radius + 0.35))

    def should_see(self, inst: MapInstance, obs: Observation, rig: CameraRig) -> bool:
        """Whether ``obs`` should show the instance (see ``MissCheck.should_see``)."""
        return self.miss_check.should_see(inst, obs, rig)

    # ---- actions of the robot -------------------------------------------------------------------------------
    def mark_held(self, instance_id: str) -> None:
        """The robot picked this object: it moves with the robot until placed."""
        self.bookkeeping.mark_held(instance_id, self.robot)

    def mark_placed(self, instance_id: str, receptacle_id: str | None) -> None:
        """The robot put the held object on/in a receptacle (or, with None, on the floor beside it);
        its position becomes the receptacle's top centre until it is seen again."""
        self.bookkeeping.mark_placed(instance_id, receptacle_id, self.robot)

    def set_open(self, instance_id: str, is_open: bool) -> None:
        """Record a container's door/drawer state (e.g. after the robot's Open/Close succeeded)."""
        self.bookkeeping.set_open(instance_id, is_open)

    # ---- exploration ------------------------------------------------------------------------------------
    def frontiers(self, room: str | None = None, min_size: int = 4) -> list[Frontier]:
        """Frontier clusters, largest first; ``room`` restricts them to that room's rectangle."""
        region = None
        if room is not None:
            match = [r for r in self.rooms if r.name == room]
            if not match:
                raise MapError(f"unknown room '{room}'; rooms: {', '.join(r.name for r in self.rooms) or 'none'}")
            region = match[0].rect
        return self.occupancy.frontiers(min_size=min_size, region=region)

    def to_occupancy_msg_fields(self, frame_id: str = "map") -> dict:
        """nav_msgs/OccupancyGrid fields (resolution, width, height, origin, int8 data -1/0/100)."""
        return self.occupancy.to_msg_fields(frame_id)

    # ---- text and JSON ----------------------------------------------------------------------------------
    def where(self, inst: MapInstance) -> str:
        """'on the brown table_1 (kitchen)' / 'in the robot's gripper' / 'in the kitchen'."""
        return self.wording.where(inst)

    def description(self, inst: MapInstance) -> str:
        """One line for prompts and grounding messages, e.g. 'white mug mug_1 on the white desk desk_1 (bedroom)'."""
        return self.wording.description(inst)

    def summary(self) -> dict[str, Any]:
        """JSON-able state: instances (confirmed; stale ones flagged), rooms, explored area, frontiers."""
        return {"round": self.round,
                "robot": None if self.robot is None else [round(v, 3) for v in self.robot],
                "instances": [i.to_dict() for i in self.instances(include_stale=True)],
                "rooms": [{"name": r.name, "rect": list(r.rect)} for r in self.rooms],
                "explored_m2": round(self.occupancy.explored_area(), 2),
                "frontiers": [f.to_dict() for f in self.frontiers()[:10]]}

    def describe(self, max_lines: int = 40) -> str:
        """Short text of what the robot has seen, by room, for planner prompts."""
        return self.wording.describe(max_lines)
