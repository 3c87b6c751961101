"""The embedded home as a World: privileged state plus headless MuJoCo rendering."""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from homiebot.core.attempt_checks import AttemptCheck
from homiebot.core.contracts import VIEW_NAMES, InstanceLabel, Observation, PersonSeen, Pose2D, ViewImage, ViewName
from homiebot.core.scenes import NoScene
from homiebot.core.tasks import Condition
from homiebot.core.world import TopDown, World
from homiebot.worlds.home.checks import SimTruthCheck
from homiebot.worlds.home.control import HomeControl
from homiebot.worlds.home.goals import goal_holds
from homiebot.worlds.home.navigation import Pose2D as NavPose
from homiebot.worlds.home.person import PERSON_CATEGORY
from homiebot.worlds.home.scene import SceneSpec
from homiebot.worlds.home.scenes import HOME_SCENES
from homiebot.worlds.home.state import HomeState


class HomeParams(BaseModel):
    """The embedded home's ``world.params``: what its cameras render, and its navigation grid."""

    model_config = ConfigDict(extra="forbid", strict=True, arbitrary_types_allowed=True)
    scene: SceneSpec | None = Field(description="given by the run from the task (its scene, scene_file or scene_seed); "
                                                "not a configuration key")
    width: int = Field(256, gt=0, description="camera image width, pixels")
    height: int = Field(256, gt=0, description="camera image height, pixels")
    fovy: float = Field(90.0, gt=0, lt=180, description="vertical field of view of the four cameras, degrees")
    depth: bool = Field(True, description="render depth images (metres)")
    segmentation: bool = Field(True, description="render instance segmentation images")
    nav_resolution: float = Field(0.1, gt=0, description="cell size of the navigation grid, metres")


class EmbeddedHome(World):
    """A generated or declared home in MuJoCo, with a Fetch-like robot and four body cameras.

    ``state`` is the privileged truth that privileged skills, the oracle planner and the
    error detector use; ``observe`` renders RGB, depth and instance segmentation for each view.
    """

    name = "embedded_home"
    static_between_actions = True
    scenes = HOME_SCENES
    state_copyable = True  # HomeState.dynamic / apply_dynamic
    Params: ClassVar[type[BaseModel] | None] = HomeParams

    def __init__(self, scene: SceneSpec | None, width: int = 256, height: int = 256, fovy: float = 90.0,
                 depth: bool = True, segmentation: bool = True, nav_resolution: float = 0.1) -> None:
        from homiebot.worlds.home.render import HomeRenderer  # imports MuJoCo

        if scene is None:
            raise NoScene("the embedded home needs a scene: give the task a scene, scene_file or scene_seed")
        self.spec = scene
        self._initial = HomeState.from_spec(scene, nav_resolution=nav_resolution)
        self.state = copy.deepcopy(self._initial)
        # a person acts on their own clock between rounds: a view rendered ahead would show them where they were
        self.static_between_actions = self._initial.person is None
        self.renderer = HomeRenderer(self._initial.layout, width=width, height=height, fovy=fovy,
                                     depth=depth, segmentation=segmentation)
        layout = self._initial.layout
        category = {**{n: "room" for n in layout.rooms}, **{n: r.type.name for n, r in layout.receptacles.items()},
                    **{n: o.cls.name for n, o in layout.objects.items()}}
        if layout.person is not None:
            category[layout.person.name] = PERSON_CATEGORY
        self._categories = {i: InstanceLabel(name=n, category=category[n]) for n, i in self.renderer.instance_ids.items()
                            if n in category}
        self._robot: HomeControl | None = None
        self._keep_out: set[str] = set()

    def instance_labels(self) -> dict[int, InstanceLabel]:
        """Every instance id the segmentation images may hold, with its name and category."""
        return dict(self._categories)

    def own_robot(self) -> HomeControl:
        """The home's robot behind the ``Robot`` interface (one per world, made on first use)."""
        if self._robot is None:
            self._robot = HomeControl(self)
        return self._robot

    def ground_truth(self) -> HomeState:
        return self.state

    def attempt_check(self) -> AttemptCheck:
        return SimTruthCheck()

    def floor_plan(self) -> dict:
        return self.state.layout.rooms

    def top_down(self) -> TopDown:
        st = self.state
        assert st.nav is not None
        rooms = {n: (r.x0, r.y0, r.x1, r.y1) for n, r in st.layout.rooms.items()}
        things = {n: (r.x, r.y) for n, r in st.layout.receptacles.items()}
        things.update({n: (p[0], p[1]) for n, p in st.object_poses.items()})
        if st.person is not None:
            things[st.person.name] = (st.person.x, st.person.y)
        return TopDown(st.nav.occupancy.copy(), st.nav.origin, st.nav.resolution, rooms, things)

    def motion_snapshot(self) -> dict:
        return copy.deepcopy(self.state.dynamic())

    def in_between(self, before: Any, after: Any, fps: float, max_frames: int = 200) -> Iterator[Observation]:
        from homiebot.worlds.home.motion import in_between

        try:
            for s in in_between(self.state, before, after, fps, max_frames):
                self.renderer.sync(s)
                rendered = self.renderer.render(VIEW_NAMES)
                views = {v: ViewImage(rgb=rendered[v].rgb) for v in VIEW_NAMES}
                yield Observation(round=0, views=views, pose=Pose2D(x=s.robot.x, y=s.robot.y, yaw=s.robot.yaw))
        finally:
            self.renderer.sync(self.state)

    def perception_hints(self) -> Any:
        from homiebot.worlds.home.mapping import HomePerceptionHints  # perception modules only when mapping

        return HomePerceptionHints(self)

    def reset(self) -> None:
        self.state = copy.deepcopy(self._initial)
        if self._keep_out:
            self.keep_out_rooms(self._keep_out)
        if self._robot is not None:
            self._robot.reset()

    def room_of(self, name: str) -> str | None:
        return self.state.room_of(name) if self.state.lookup(name) is not None else None

    def keep_out_rooms(self, rooms: set[str]) -> None:
        unknown = set(rooms) - set(self.state.layout.rooms)
        if unknown:
            raise ValueError(f"safety.keep_out names rooms this home does not have: {sorted(unknown)}; "
                             f"its rooms: {sorted(self.state.layout.rooms)}")
        self._keep_out = set(rooms)
        assert self.state.nav is not None
        self.state.nav.keep_out([self.state.layout.rooms[r] for r in sorted(rooms)])

    def route(self, target: str) -> bool | None:
        st = self.state
        if st.lookup(target) is None or st.nav is None:
            return None
        r = st.robot
        return st.nav.plan(NavPose(r.x, r.y, r.yaw), st.approach.goal_poses(target)) is not None

    def advance_people(self, until: float) -> None:
        """Let the scene's person act up to their clock time ``until`` (seconds; nothing without a person)."""
        self.state.advance_people(until)

    def observe(self, round_index: int) -> Observation:
        # the person acts between rounds: each round starts ROUND_SECONDS after the one before
        self.state.advance_people(self.state.round_time(round_index))
        self.renderer.sync(self.state)
        rendered = self.renderer.render(VIEW_NAMES)
        views = {v: ViewImage(rgb=rendered[v].rgb, depth=rendered[v].depth, segmentation=rendered[v].segmentation)
                 for v in VIEW_NAMES}
        r = self.state.robot
        labels = self._labels(views)
        return Observation(round=round_index, views=views, pose=Pose2D(x=r.x, y=r.y, yaw=r.yaw), inventory=self.inventory(),
                           labels=labels, people=self._people_seen(labels, views))

    def _people_seen(self, labels: Mapping[int, InstanceLabel], views: Mapping[ViewName, ViewImage]) -> list[PersonSeen]:
        """The person, when in view: in the segmentation when there is one, else within the cameras' sight."""
        p = self.state.person
        if p is None:
            return []
        has_segmentation = any(v.segmentation is not None for v in views.values())
        person_id = self.renderer.instance_ids[p.name]
        if has_segmentation and person_id not in labels:
            return []
        if not has_segmentation and not self._in_sight(p.x, p.y):
            return []
        return [PersonSeen(name=p.name, x=round(p.x, 3), y=round(p.y, 3), distance=round(self.state.distance_to(p.name), 3),
                           holding=p.held, room=self.state.room_of(p.name))]

    def _in_sight(self, x: float, y: float) -> bool:
        """Whether a point is in the same room as the robot or within a few metres of it (no segmentation to tell)."""
        r = self.state.robot
        return self.state.layout.room_at(x, y) == self.state.robot_room() or math.hypot(x - r.x, y - r.y) < 3.0

    def _labels(self, views: Mapping[ViewName, ViewImage]) -> dict[int, InstanceLabel]:
        """Names and categories of the instances visible in this observation (oracle perception)."""
        segs = [v.segmentation for v in views.values() if v.segmentation is not None]
        if not segs:
            return {}
        ids = np.concatenate([s.ravel() for s in segs])
        # instance ids are small non-negative ints: counting them is several times faster than np.unique
        present = np.flatnonzero(np.bincount(ids)) if ids.size and ids.min() >= 0 else np.unique(ids)
        visible = set(present.tolist())
        return {i: self._categories[i] for i in visible if i in self._categories}

    @property
    def belief(self) -> HomeState:
        return self.state

    def path_length(self) -> float:
        return self.state.path_length

    def exploration(self) -> Any | None:
        return self.spec.explore

    def start_task(self) -> None:
        self.state.path_length = 0.0

    def scene_description(self) -> dict[str, Any]:
        return self.spec.model_dump(mode="json", by_alias=True, exclude_none=True)

    def goal_satisfied(self, goal: list[Condition]) -> bool:
        return goal_holds(self.state, goal)

    def close(self) -> None:
        if self._guarded is not None:
            self._guarded.close()
        if self._robot is not None:
            self._robot.close()
        self.renderer.close()
