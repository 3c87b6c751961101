"""Conversions between homiebot data and standard ROS messages, and the topic names of the graph."""

from __future__ import annotations

import functools
import math
import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
from builtin_interfaces.msg import Time
from homiebot_msgs import msg as hb
from nav_msgs.msg import OccupancyGrid, Odometry
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import CameraInfo, Image

from homiebot.core.contracts import VIEW_NAMES, Action, ErrorCode, Feedback, PersonSeen, PlannerOutput, Pose2D, Status, Subtask
from homiebot.planners.base import ModelInfo

# image kind -> (encoding, numpy dtype, channels)
IMAGE_KINDS = {"image": ("rgb8", np.uint8, 3), "depth": ("32FC1", np.float32, 1), "segmentation": ("32SC1", np.int32, 1)}
# the per-round topics (under /homiebot/): the world's, and the mapper's
ROUND_TOPICS: dict[str, Any] = {"observation": hb.RoundObservation, "world/belief": hb.Belief, "world/state": hb.SimState,
                                "belief": hb.Belief, "map/summary": hb.SemanticMap}
MAP_GRID_TOPIC = "map/occupancy"  # the semantic map's grid (mapped perception), kept for late joiners
PEOPLE_TOPIC = "people"  # the persons in view each round (homiebot_msgs/PeopleSeen)
# every round's decision and result, what happens to each submission, and who was seen, typed
TYPED_TOPICS = {"subtask": "homiebot_msgs/msg/PlannerOutput", "feedback": "homiebot_msgs/msg/Feedback",
                "task/status": "homiebot_msgs/msg/TaskStatus", PEOPLE_TOPIC: "homiebot_msgs/msg/PeopleSeen"}
# what happens to each subtask's goal (accepted, executing, succeeded, ...): an action's own status topic
EXECUTE_STATUS_TOPIC = "executor/execute/_action/status"
# the last message is kept for subscribers that join later
RELIABLE = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST,
                      durability=DurabilityPolicy.VOLATILE)  # the graph's events: none lost while both sides run
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
PLANNER_BACKEND_TOPIC = "planner/backend"  # the planner node's backend name (std_msgs/String), kept for late joiners


def person_msg(person: PersonSeen) -> hb.PersonSeen:
    """A person in view, typed."""
    return hb.PersonSeen(name=person.name, x=float(person.x), y=float(person.y), distance=float(person.distance),
                         holding=person.holding or "", room=person.room or "")


def person_from_msg(msg: hb.PersonSeen) -> PersonSeen:
    """The contract's PersonSeen (ValueError when the message is not a valid one)."""
    return PersonSeen(name=msg.name, x=msg.x, y=msg.y, distance=msg.distance, holding=msg.holding or None, room=msg.room or None)


def image_topic(view: str, kind: str) -> str:
    return f"camera/{view}/{kind}"


def camera_info_topic(view: str) -> str:
    """A view's pinhole geometry (sensor_msgs/CameraInfo), stamped as its images are, as ROS camera drivers do."""
    return f"camera/{view}/camera_info"


def all_topics() -> dict[str, str]:
    """Every /homiebot topic of the graph -> its message type (for recording)."""
    topics = {image_topic(v, k): "sensor_msgs/msg/Image" for v in VIEW_NAMES for k in IMAGE_KINDS}
    topics |= {camera_info_topic(v): "sensor_msgs/msg/CameraInfo" for v in VIEW_NAMES}
    topics["odom"] = "nav_msgs/msg/Odometry"
    topics["tf"] = "tf2_msgs/msg/TFMessage"  # odom -> base_link -> cameras (homiebot.ros.messages.transforms)
    topics[MAP_GRID_TOPIC] = "nav_msgs/msg/OccupancyGrid"
    topics |= {f"{t}": f"homiebot_msgs/msg/{cls.__name__}" for t, cls in ROUND_TOPICS.items()}
    topics |= TYPED_TOPICS
    topics[EXECUTE_STATUS_TOPIC] = "action_msgs/msg/GoalStatusArray"
    return topics


def msg_class(msgtype: str) -> Any:
    """The Python class of a message type named like ``sensor_msgs/msg/Image``."""
    pkg, _, name = msgtype.split("/")
    module = __import__(f"{pkg}.msg", fromlist=[name])
    return getattr(module, name)


def homiebot_msgs_share() -> Path:
    """Where homiebot_msgs keeps its definitions: the ament index's prefix (a ROS workspace), else this
    environment's (``make setup`` installs it there)."""
    for prefix in [*os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep), sys.prefix]:
        if prefix and (Path(prefix) / "share" / "homiebot_msgs" / "msg").is_dir():
            return Path(prefix) / "share" / "homiebot_msgs"
    raise FileNotFoundError("homiebot_msgs is not installed: run `make setup` (or tools/build_interfaces.py)")


@functools.cache
def typestore() -> Any:
    """rosbags' Jazzy types plus homiebot_msgs' (for bags and Foxglove schemas)."""
    from rosbags.typesys import Stores, get_types_from_msg, get_typestore

    store = get_typestore(Stores.ROS2_JAZZY)
    share = homiebot_msgs_share()
    for path in sorted((share / "msg").glob("*.msg")):
        store.register(get_types_from_msg(path.read_text(), f"homiebot_msgs/msg/{path.stem}"))
    return store


def subtask_msg(sub: Subtask | None) -> hb.Subtask:
    """A contract subtask as ``homiebot_msgs/Subtask`` (None: an empty one)."""
    if sub is None:
        return hb.Subtask()
    return hb.Subtask(action=sub.action.value, target=sub.target or "", place=sub.place or "")


def subtask_text(msg: hb.Subtask) -> str | None:
    """``homiebot_msgs/Subtask`` in the bracketed form (``[Put, green_can, fridge]``); None when empty, and the
    planner's own words when they could not be read as a subtask (kept in ``action``)."""
    if not msg.action:
        return None
    parts = [p for p in (msg.action, msg.target, msg.place) if p]
    return "[" + ", ".join(parts) + "]" if msg.target or msg.action == hb.Subtask.END else msg.action


def subtask_from_msg(msg: hb.Subtask) -> Subtask:
    """``homiebot_msgs/Subtask`` as a contract subtask (ValueError when it is not a valid one)."""
    return Subtask(action=Action(msg.action), target=msg.target or None, place=msg.place or None)


def planner_output_msg(out: PlannerOutput) -> hb.PlannerOutput:
    """A round's decision as published on /homiebot/subtask."""
    return hb.PlannerOutput(version=out.version, analysis=out.analysis, subtask=subtask_msg(out.subtask), model=out.model or "")


def planner_output_from_msg(msg: hb.PlannerOutput) -> PlannerOutput:
    return PlannerOutput(version=msg.version, analysis=msg.analysis, subtask=subtask_from_msg(msg.subtask), model=msg.model or None)


def feedback_msg(fb: Feedback) -> hb.Feedback:
    """A round's feedback as published on /homiebot/feedback."""
    return hb.Feedback(version=fb.version, success=fb.success, code=fb.code.value if fb.code else "", message=fb.message,
                       details=[hb.KeyValue(key=k, value=v) for k, v in fb.details.items()])


def feedback_from_msg(msg: hb.Feedback) -> Feedback:
    return Feedback(version=msg.version, status=Status.SUCCESS if msg.success else Status.FAIL,
                    code=ErrorCode(msg.code) if msg.code else None, message=msg.message,
                    details={kv.key: kv.value for kv in msg.details})


def models_msg(models: Iterable[ModelInfo]) -> list[hb.ModelInfo]:
    """The executor's models as ``homiebot_msgs/ModelInfo[]``."""
    return [hb.ModelInfo(name=m.name, actions=list(m.actions), description=m.description) for m in models]


def models_from_msg(msgs: Iterable[hb.ModelInfo]) -> list[ModelInfo]:
    return [ModelInfo(m.name, tuple(m.actions), m.description) for m in msgs]


def capabilities_msg(caps: Mapping[str, Iterable[Action]]) -> list[hb.ModelInfo]:
    """What each model can do (the detector's view of the executor's models)."""
    return [hb.ModelInfo(name=name, actions=[a.value for a in acts]) for name, acts in caps.items()]


def capabilities_from_msg(msgs: Iterable[hb.ModelInfo]) -> dict[str, frozenset[Action]]:
    """ValueError for an action name that is not the contract's."""
    return {m.name: frozenset(Action(a) for a in m.actions) for m in msgs}


def pairs_msg(values: Mapping[str, str]) -> list[hb.KeyValue]:
    return [hb.KeyValue(key=k, value=v) for k, v in values.items()]


def pairs_from_msg(msgs: Iterable[hb.KeyValue]) -> dict[str, str]:
    return {kv.key: kv.value for kv in msgs}


def stamp_of(ns: int) -> Time:
    return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def ns_of(stamp: Time) -> int:
    return stamp.sec * 1_000_000_000 + stamp.nanosec


def to_image(array: np.ndarray, kind: str, stamp_ns: int, frame: str) -> Image:
    encoding, dtype, channels = IMAGE_KINDS[kind]
    a = np.ascontiguousarray(array, dtype=dtype)
    msg = Image(height=a.shape[0], width=a.shape[1], encoding=encoding, is_bigendian=0, step=a.shape[1] * channels * a.itemsize)
    msg.header.stamp = stamp_of(stamp_ns)
    msg.header.frame_id = frame
    msg.data = a.tobytes()
    return msg


MAX_IMAGE_SIDE = 8192


def image_pixels(msg: Image, encoding: str, dtype: Any, channels: int, field: str = "image") -> np.ndarray:
    """The pixels of an Image that must be of ``encoding`` (ValueError naming ``field`` and what is wrong:
    another encoding, a size, step or length that does not fit, big-endian data, values that are not finite)."""
    if msg.encoding != encoding:
        raise ValueError(f"{field}: encoding '{msg.encoding[:20]}', expected {encoding}")
    row = msg.width * channels * np.dtype(dtype).itemsize
    if not (0 < msg.height <= MAX_IMAGE_SIDE and 0 < msg.width <= MAX_IMAGE_SIDE) or msg.step != row \
            or len(msg.data) != row * msg.height or msg.is_bigendian:
        raise ValueError(f"{field}: {msg.width}x{msg.height} {encoding} with step {msg.step} and {len(msg.data)} bytes "
                         f"(expected step {row}, little-endian)")
    a = np.frombuffer(bytes(msg.data), dtype=dtype)
    if a.dtype.kind == "f" and not np.isfinite(a).all():
        raise ValueError(f"{field}: values that are not finite")
    return a.reshape(msg.height, msg.width, channels) if channels > 1 else a.reshape(msg.height, msg.width)


def from_image(msg: Image) -> np.ndarray:
    """The pixels of an Image (ValueError if its encoding, shape or values are not what the graph sends)."""
    for encoding, dtype, channels in IMAGE_KINDS.values():
        if msg.encoding == encoding:
            return image_pixels(msg, encoding, dtype, channels)
    raise ValueError(f"unsupported image encoding '{msg.encoding[:40]}'")


def to_camera_info(height: int, width: int, intrinsics: tuple[float, float, float, float], stamp_ns: int, frame: str) -> CameraInfo:
    """A distortion-free pinhole camera (``intrinsics``: fx, fy, cx, cy in pixels at ``height`` x ``width``)."""
    fx, fy, cx, cy = (float(v) for v in intrinsics)
    msg = CameraInfo(height=int(height), width=int(width), distortion_model="plumb_bob", d=[0.0] * 5,
                     k=[fx, 0.0, cx, 0.0, fy, cy, 0.0, 0.0, 1.0], r=[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
                     p=[fx, 0.0, cx, 0.0, 0.0, fy, cy, 0.0, 0.0, 0.0, 1.0, 0.0])
    msg.header.stamp = stamp_of(stamp_ns)
    msg.header.frame_id = frame
    return msg


def to_odometry(pose: Pose2D, stamp_ns: int, frame: str = "map", child: str = "base_link") -> Odometry:
    msg = Odometry()
    msg.header.stamp = stamp_of(stamp_ns)
    msg.header.frame_id = frame
    msg.child_frame_id = child
    msg.pose.pose.position.x, msg.pose.pose.position.y = pose.x, pose.y
    msg.pose.pose.orientation.z, msg.pose.pose.orientation.w = math.sin(pose.yaw / 2), math.cos(pose.yaw / 2)
    return msg


def to_occupancy_grid(fields: dict, stamp_ns: int) -> OccupancyGrid:
    """An OccupancyGrid from a map's grid fields (``info``, the header's ``frame_id``, and the cells as
    ``data``: -1 unknown, 0 free, 100 occupied)."""
    info = fields["info"]
    msg = OccupancyGrid()
    msg.header.stamp = stamp_of(stamp_ns)
    msg.header.frame_id = fields.get("header", {}).get("frame_id", "map")
    msg.info.map_load_time = stamp_of(stamp_ns)
    msg.info.resolution = float(info["resolution"])
    msg.info.width, msg.info.height = int(info["width"]), int(info["height"])
    position, orientation = info["origin"]["position"], info["origin"]["orientation"]
    msg.info.origin.position.x, msg.info.origin.position.y, msg.info.origin.position.z = (float(position[k]) for k in "xyz")
    (msg.info.origin.orientation.x, msg.info.origin.orientation.y, msg.info.origin.orientation.z,
     msg.info.origin.orientation.w) = (float(orientation[k]) for k in "xyzw")
    data = np.asarray(fields["data"], dtype=np.int8)
    if data.size != msg.info.width * msg.info.height:
        raise ValueError(f"occupancy grid of {msg.info.width}x{msg.info.height} cells with {data.size} values")
    msg.data = data.tolist()
    return msg
