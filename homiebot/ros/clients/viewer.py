"""The live rerun view of a running graph (``homiebot up --view``): subscribes to the graph's topics
and logs them like the in-process view (``homiebot.viz``): the four views, depth and segmentation,
the robot's pose and path, the map's occupancy and instances (mapped perception), one timeline
entry per round, and safety events. Callbacks only queue; a background thread logs, and camera
frames are dropped when it is behind."""

from __future__ import annotations

import math
from collections.abc import Iterable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from homiebot_msgs.msg import PeopleSeen, RoundObservation, SemanticMap, TaskStatus
from homiebot_msgs.msg import PlannerOutput as PlannerOutputMsg
from homiebot_msgs.msg import SafetyEvent as SafetyEventMsg
from nav_msgs.msg import OccupancyGrid, Odometry
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Image

from homiebot.core.contracts import VIEW_NAMES, Pose2D
from homiebot.core.world import TopDown
from homiebot.ros.clients.run_task import STATUS_QOS, STATUS_TOPIC
from homiebot.ros.kit.safety import EVENTS_TOPIC
from homiebot.ros.messages.common import IMAGE_KINDS, PEOPLE_TOPIC, from_image, image_topic, person_from_msg, subtask_text
from homiebot.ros.messages.round import summary_of
from homiebot.ros.messages.safety import event_from_msg
from homiebot.ros.messages.wire import safe_callback
from homiebot.viz.queue import DropQueue

QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST)


def grid_top_down(msg: OccupancyGrid) -> TopDown:
    """An OccupancyGrid as the viewer's plan view (unknown cells shown as free)."""
    w, h = msg.info.width, msg.info.height
    cells = np.asarray(msg.data, dtype=np.int8).reshape(h, w).T  # [ix, iy]
    o = msg.info.origin.position
    return TopDown(cells >= 50, (float(o.x), float(o.y)), float(msg.info.resolution))


class GraphViewer:
    """Feeds a ``RerunLog`` from the graph's topics on ``node``."""

    def __init__(self, node: Node | None, log: Any, queue_limit: int = 24) -> None:  # two rounds of 12 images
        """``node``: subscribe on it (live); None: messages come through ``feed`` (a bag's replay)."""
        self.log = log  # homiebot.viz.rerun_log.RerunLog (rerun is imported by the caller)
        self.queue = DropQueue(queue_limit)
        self.round = 0
        self.frame = 0  # one per observation, as in the in-process view
        self.seen: dict[str, int] = {}  # messages received per entity
        self.handlers: dict[str, tuple[type, Any]] = {}
        for view in VIEW_NAMES:
            for kind in IMAGE_KINDS:
                self.handlers[image_topic(view, kind)] = (Image, partial(self._image, view, kind))
        self.handlers.update({"odom": (Odometry, self._odom), "observation": (RoundObservation, self._observation),
                              STATUS_TOPIC: (TaskStatus, self._status), "subtask": (PlannerOutputMsg, self._subtask),
                              EVENTS_TOPIC: (SafetyEventMsg, self._safety), "map/occupancy": (OccupancyGrid, self._grid),
                              "map/summary": (SemanticMap, self._summary), PEOPLE_TOPIC: (PeopleSeen, self._people)})
        if node is not None:
            group = ReentrantCallbackGroup()
            for topic, (msg_type, cb) in self.handlers.items():
                # the status topic is latched: a viewer that joins late still gets the rounds it missed
                qos = STATUS_QOS if topic == STATUS_TOPIC else QOS
                node.create_subscription(msg_type, topic, safe_callback(node, topic, cb), qos, callback_group=group)

    def feed(self, topic: str, msg: Any) -> None:
        """One message of ``topic``, as a subscription would deliver it."""
        self.handlers[topic][1](msg)

    def _at(self, apply: Any, droppable: bool = True) -> None:
        r, frame = self.round, self.frame

        def run() -> None:
            self.log.frame = frame
            self.log.rec.set_time("frame", sequence=frame)
            self.log.rec.set_time("round", sequence=r)
            apply()
        self.queue.put(run, droppable)

    def _image(self, view: str, kind: str, msg: Image) -> None:
        array = from_image(msg)
        rr = self.log.rr
        entity = {"image": f"views/{view}", "depth": f"depth/{view}", "segmentation": f"segmentation/{view}"}[kind]
        archetype = {"image": lambda: rr.Image(array), "depth": lambda: rr.DepthImage(array.astype(np.float32), meter=1.0),
                     "segmentation": lambda: rr.SegmentationImage(array.astype(np.uint16))}[kind]
        self.seen[entity] = self.seen.get(entity, 0) + 1
        self._at(lambda: self.log.rec.log(entity, archetype()))

    def _odom(self, msg: Odometry) -> None:
        q = msg.pose.pose.orientation
        pose = Pose2D(x=msg.pose.pose.position.x, y=msg.pose.pose.position.y, yaw=2 * math.atan2(q.z, q.w))
        self._at(lambda: self.log.pose(pose), droppable=False)

    def _observation(self, msg: RoundObservation) -> None:
        self.round = int(msg.round)
        self.frame += 1

    def _people(self, msg: PeopleSeen) -> None:
        people = [person_from_msg(p) for p in msg.people]
        self._at(lambda: self.log.people(people), droppable=False)

    def _subtask(self, msg: PlannerOutputMsg) -> None:
        text = subtask_text(msg.subtask) or "[]"
        model = msg.model or None
        self._at(lambda: self.log.planned(self.round, text, model), droppable=False)

    def _status(self, msg: TaskStatus) -> None:
        if msg.state == TaskStatus.ROUND:
            r, code = int(msg.round), msg.feedback.code
            text = f"round {r}: {subtask_text(msg.subtask) or '[invalid output]'} {code or 'ok'}"
            self._at(lambda: self.log.text("timeline/rounds", text, r, "WARN" if code else "INFO"), droppable=False)
        elif msg.state in (TaskStatus.FINISHED, TaskStatus.FAILED):
            text = f"episode {msg.id}: {msg.state} ({msg.termination})"
            self._at(lambda: self.log.text("timeline/episode", text, self.round, "INFO"), droppable=False)

    def _safety(self, msg: SafetyEventMsg) -> None:
        event = event_from_msg(msg)
        self._at(lambda: self.log.safety(event), droppable=False)

    def _grid(self, msg: OccupancyGrid) -> None:
        top = grid_top_down(msg)
        self._at(lambda: self.log.map_grid(top))

    def _summary(self, msg: SemanticMap) -> None:
        if not msg.mapped:
            return  # oracle perception's labels have no place on the map
        summary = summary_of(msg)
        self._at(lambda: self.log.semantic_map(summary))

    def close(self) -> None:
        self.queue.close(timeout=10)


def graph_name(topic: str, names: Iterable[str]) -> str | None:
    """The graph-relative name (one of ``names``) of a recorded topic, whatever namespace the graph ran in
    (``/robot1/map/summary`` -> ``map/summary``); the longest match wins; None for a topic not among them."""
    matches = [n for n in names if topic == f"/{n}" or topic.endswith(f"/{n}")]
    return max(matches, key=len) if matches else None


def bag_to_rrd(bag: str | Path, rrd: str | Path) -> int:
    """Replay an episode's bag (the recorder's MCAP rosbag2 folder) into an .rrd file, as ``homiebot up
    --view`` would have shown it live; nothing is dropped. Returns the number of rounds seen.

    ValueError (one line) when the folder is not a readable bag."""
    import rerun as rr
    from rclpy.serialization import deserialize_message
    from rosbags.rosbag2 import Reader

    from homiebot.viz.rerun_log import APP_ID, RerunLog, blueprint

    stream = rr.RecordingStream(APP_ID)
    stream.set_sinks(rr.FileSink(str(rrd)), default_blueprint=blueprint())
    viewer = GraphViewer(None, RerunLog(stream), queue_limit=10**7)
    rounds: set[int] = set()
    try:
        with Reader(Path(bag)) as reader:
            relative = {c.topic: name for c in reader.connections if (name := graph_name(c.topic, viewer.handlers))}
            wanted = [c for c in reader.connections if c.topic in relative]
            for conn, _, raw in reader.messages(connections=wanted):
                topic = relative[conn.topic]
                viewer.feed(topic, deserialize_message(bytes(raw), viewer.handlers[topic][0]))
                if topic == "observation":
                    rounds.add(viewer.round)
    except Exception as err:  # rosbags raises its own errors for a folder that is no bag
        viewer.close()
        raise ValueError(f"{bag}: not a readable episode bag ({type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''})") from None
    viewer.close()
    stream.flush(timeout_sec=30.0)
    stream.disconnect()
    return len(rounds)
