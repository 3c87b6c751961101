"""The live view of an in-process episode: an observer of the loop that logs to rerun on a thread.

The loop only snapshots what it hands over (observations are immutable; the plan view is copied)
and queues it; the viewer thread encodes and sends. Images are dropped when the viewer is behind,
timeline entries never are.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import rerun as rr

from homiebot.core.contracts import EpisodeRecord, Observation, StepRecord
from homiebot.core.world import World
from homiebot.core.world_capabilities import MappedWorld, ViewableWorld
from homiebot.safety.state import SafetyState
from homiebot.viz.queue import DropQueue
from homiebot.viz.rerun_log import APP_ID, RerunLog, blueprint
from homiebot.viz.server import WebViewer


class LiveView:
    """Streams an episode to a rerun web viewer (``serve``) and/or an .rrd file (``save``).

    Implements the runtime's episode observer: ``start``, ``observation``, ``step``, ``end``.
    """

    def __init__(self, serve: bool = False, host: str = "127.0.0.1", save: str | Path | None = None,
                 web_port: int | None = None, depth: bool = True, queue_limit: int = 4) -> None:
        self.viewer = WebViewer(host, web_port=web_port) if serve else None
        self.stream = rr.RecordingStream(APP_ID)
        sinks: list = []
        if self.viewer is not None:
            sinks.append(rr.GrpcSink(self.viewer.grpc_url))
        if save is not None:
            Path(save).parent.mkdir(parents=True, exist_ok=True)
            sinks.append(rr.FileSink(str(save)))
        if sinks:
            self.stream.set_sinks(*sinks, default_blueprint=blueprint())
        self.log = RerunLog(self.stream)
        self.depth = depth
        self.queue = DropQueue(queue_limit)
        self._world: World | None = None
        self._safety: SafetyState | None = None
        self._safety_seen = 0
        self._round = 0
        self._flushed = False

    @property
    def url(self) -> str | None:
        """The web viewer's address, when served."""
        return self.viewer.url if self.viewer else None

    def start(self, world: World, safety: SafetyState | None = None) -> None:
        """A new episode in ``world``: log the plan view."""
        self._world, self._safety, self._safety_seen, self._round = world, safety, 0, 0
        top = world.top_down() if isinstance(world, ViewableWorld) else None
        self.queue.put(lambda: self.log.map_static(top), droppable=False)

    def observation(self, obs: Observation) -> None:
        """An observation of the loop (each round's; control-rate ones too when a world reports them)."""
        world = self._world
        top = world.top_down() if isinstance(world, ViewableWorld) else None
        summary = world.map_summary() if isinstance(world, MappedWorld) else None
        r = obs.round or self._round

        def apply() -> None:
            self.log.observation(obs, r, depth=self.depth)
            self.log.things(top)
            self.log.semantic_map(summary)
        self.queue.put(apply)
        self._drain_safety()

    def step(self, step: StepRecord) -> None:
        """A finished round: one timeline entry."""
        self._round = step.round + 1
        self.queue.put(lambda: self.log.step(step), droppable=False)
        self._drain_safety()

    def _drain_safety(self) -> None:
        if self._safety is None:
            return
        events = list(self._safety.events)  # read without taking: the record takes them at the end
        for event in events[self._safety_seen:]:
            self.queue.put(partial(self.log.safety, event), droppable=False)
        self._safety_seen = max(self._safety_seen, len(events))

    def end(self, record: EpisodeRecord | None) -> None:
        """The episode finished: safety events not seen live, and the outcome."""
        if record is not None:
            for event in record.safety_events[self._safety_seen:]:
                self.queue.put(partial(self.log.safety, event), droppable=False)
            self._safety_seen = len(record.safety_events)
            text = f"episode {record.episode_id}: {record.termination}, goal {record.goal_satisfied}"
            self.queue.put(lambda: self.stream.log("timeline/episode", rr.TextLog(text)), droppable=False)

    def close(self, keep_serving: bool = False) -> None:
        """Send what is queued and flush the sinks (the .rrd file is complete after this); stop
        the web viewer unless ``keep_serving``. Safe to call again."""
        self.queue.close()
        if not self._flushed:
            self.stream.flush(timeout_sec=30.0)
            self._flushed = True
        if not keep_serving:
            self.stream.disconnect()
            if self.viewer is not None:
                self.viewer.close()
