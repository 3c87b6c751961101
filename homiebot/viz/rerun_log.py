"""What the rerun viewer shows, logged to a rerun recording stream.

Entity layout (every view of the default blueprint reads one of these):
``views/<name>`` RGB of each camera, ``depth/<name>`` and ``segmentation/<name>`` its depth and
instance ids, ``map/*`` the plan view in map-grid pixels (occupancy, rooms, things, the semantic
map's instances, the robot and its path), ``timeline/rounds`` one text entry per round (subtask,
model, feedback), ``timeline/subtask`` the subtask while it runs, ``timeline/safety`` safety events.
Time: the ``round`` sequence, and ``frame`` for every logged observation (rounds and control steps).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import rerun as rr
import rerun.blueprint as rrb

from homiebot.core.contracts import VIEW_NAMES, Observation, PersonSeen, Pose2D, SafetyEvent, StepRecord
from homiebot.core.world import TopDown
from homiebot.viz.timeline import round_entry, safety_entry, step_status, step_subtask

APP_ID = "homiebot"


def blueprint() -> rrb.Blueprint:
    """The default layout: the four views and depth/segmentation of the front view on the left,
    the map and the timeline on the right."""
    cams = [rrb.Spatial2DView(origin=f"views/{v}", name=v) for v in VIEW_NAMES]
    extra = [rrb.Spatial2DView(origin="depth/front", name="depth (front)"),
             rrb.Spatial2DView(origin="segmentation/front", name="segmentation (front)")]
    return rrb.Blueprint(
        rrb.Horizontal(
            rrb.Grid(*cams, *extra, grid_columns=2),
            rrb.Vertical(rrb.Spatial2DView(origin="map", name="map"), rrb.TextLogView(origin="timeline", name="timeline"),
                         row_shares=[3, 2]),
            column_shares=[3, 2]),
        collapse_panels=True)


class MapFrame:
    """World metres <-> map-grid pixels (column right = +x, row down = -y), so the occupancy image
    and everything drawn on it share one 2D space."""

    def __init__(self, top: TopDown) -> None:
        self.origin = top.origin
        self.res = top.resolution
        self.rows = top.occupancy.shape[1]

    def px(self, x: float, y: float) -> tuple[float, float]:
        return ((x - self.origin[0]) / self.res, self.rows - (y - self.origin[1]) / self.res)


def occupancy_image(top: TopDown) -> np.ndarray:
    """The occupancy grid as a grey image (free light, blocked dark), north up."""
    img = np.where(top.occupancy.T[::-1], 60, 235).astype(np.uint8)
    return img


class RerunLog:
    """Logs observations, rounds, safety events and the map to one recording stream."""

    rr = rr  # the rerun module, for callers that build archetypes themselves

    def __init__(self, stream: rr.RecordingStream, jpeg_quality: int | None = None) -> None:
        self.rec = stream
        self.jpeg = jpeg_quality
        self.frame = 0
        self.frame_map: MapFrame | None = None
        self.path: list[tuple[float, float]] = []

    def _time(self, round_index: int | None) -> None:
        self.rec.set_time("frame", sequence=self.frame)
        if round_index is not None:
            self.rec.set_time("round", sequence=round_index)

    def map_static(self, top: TopDown | None) -> None:
        """The plan view's occupancy, rooms and things (logged when an episode starts)."""
        if top is None:
            return
        self.frame_map = fm = MapFrame(top)
        self.path = []
        self._time(0)
        self.rec.log("map/occupancy", rr.Image(occupancy_image(top)))
        if top.rooms:
            mins = [fm.px(x0, y1) for x0, _, _, y1 in top.rooms.values()]
            sizes = [((x1 - x0) / fm.res, (y1 - y0) / fm.res) for x0, y0, x1, y1 in top.rooms.values()]
            self.rec.log("map/rooms", rr.Boxes2D(mins=mins, sizes=sizes, labels=list(top.rooms), colors=[90, 140, 220]))
        self.things(top)

    def map_grid(self, top: TopDown) -> None:
        """A new occupancy grid (a map that grows); the path so far is kept."""
        self.frame_map = MapFrame(top)
        self.rec.log("map/occupancy", rr.Image(occupancy_image(top)))

    def text(self, entity: str, text: str, round_index: int | None, level: str = "INFO") -> None:
        """A timeline entry."""
        self._time(round_index)
        self.rec.log(entity, rr.TextLog(text, level=level))

    def things(self, top: TopDown | None) -> None:
        """Where named things are now."""
        if top is None or self.frame_map is None or not top.objects:
            return
        fm = self.frame_map
        self.rec.log("map/things", rr.Points2D([fm.px(*p) for p in top.objects.values()], labels=list(top.objects),
                                               radii=1.5, colors=[230, 150, 40]))

    def semantic_map(self, summary: dict[str, Any] | None) -> None:
        """The semantic map's instances (mapped perception)."""
        if not summary or self.frame_map is None:
            return
        fm = self.frame_map
        inst = [i for i in summary.get("instances", []) if len(i.get("position", [])) >= 2]
        self.rec.log("map/semantic", rr.Points2D([fm.px(i["position"][0], i["position"][1]) for i in inst],
                                                 labels=[f"{i['label']} {i['id']}" for i in inst], radii=2.0,
                                                 colors=[[150, 150, 150] if i.get("stale") else [40, 200, 120] for i in inst]))

    def people(self, people: Sequence[PersonSeen]) -> None:
        """The persons in view on the map, labelled with their name and what they hold (cleared when none)."""
        if self.frame_map is None:
            return
        fm = self.frame_map
        labels = [p.name + (f" ({p.holding})" if p.holding else "") for p in people]
        self.rec.log("map/people", rr.Points2D([fm.px(p.x, p.y) for p in people], labels=labels, radii=2.5, colors=[60, 90, 230]))

    def pose(self, pose: Pose2D) -> None:
        """The robot's pose as an arrow and its path so far."""
        if self.frame_map is None:
            return
        fm = self.frame_map
        if not self.path or math.dist(self.path[-1], (pose.x, pose.y)) > 1e-3:
            self.path.append((pose.x, pose.y))
        origin = fm.px(pose.x, pose.y)
        vec = (math.cos(pose.yaw) * 4.0, -math.sin(pose.yaw) * 4.0)
        self.rec.log("map/robot", rr.Arrows2D(origins=[origin], vectors=[vec], colors=[220, 40, 40], radii=0.8))
        if len(self.path) > 1:
            self.rec.log("map/path", rr.LineStrips2D([[fm.px(x, y) for x, y in self.path]], colors=[220, 40, 40], radii=0.4))

    def observation(self, obs: Observation, round_index: int | None = None, depth: bool = True) -> None:
        """The four views (and depth and segmentation when present) and the pose."""
        self.frame += 1
        self._time(round_index)
        for name in VIEW_NAMES:
            view = obs.views[name]
            img = rr.Image(view.rgb)
            self.rec.log(f"views/{name}", img.compress(jpeg_quality=self.jpeg) if self.jpeg else img)
            if depth and view.depth is not None:
                self.rec.log(f"depth/{name}", rr.DepthImage(np.asarray(view.depth, dtype=np.float32), meter=1.0))
            if depth and view.segmentation is not None:
                self.rec.log(f"segmentation/{name}", rr.SegmentationImage(np.asarray(view.segmentation, dtype=np.uint16)))
        self.pose(obs.pose)
        self.people(obs.people)

    def planned(self, round_index: int, subtask: str, model: str | None) -> None:
        """The subtask the planner chose, while it runs."""
        self._time(round_index)
        self.rec.log("timeline/subtask", rr.TextLog(f"round {round_index}: {subtask} ({model or '-'})", level="DEBUG"))

    def step(self, step: StepRecord) -> None:
        """One entry per round: subtask, model, feedback code and message."""
        self._time(step.round)
        level = "INFO" if step.feedback.success else "WARN"
        self.rec.log("timeline/rounds", rr.TextLog(round_entry(step), level=level))
        self.rec.log("timeline/status", rr.AnyValues(subtask=step_subtask(step), status=step_status(step),
                                                     model=(step.output.model if step.output else None) or "-"))

    def safety(self, event: SafetyEvent) -> None:
        """A safety event on the timeline."""
        self._time(event.round)
        self.rec.log("timeline/safety", rr.TextLog(safety_entry(event), level="ERROR" if event.kind in ("estop", "watchdog_stop") else "WARN"))
