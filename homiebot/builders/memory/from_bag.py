"""A demonstration from a ROS 2 bag of a teleoperated run (the same record ``record`` writes in the home).

The operator drives a real robot (or the graph on any world) while ``ros2 bag record`` or homiebot's
own recorder keeps its topics. From the bag:

- **frames**: one camera's images (``sensor_msgs/Image`` rgb8, bgr8, mono8, rgba8, bgra8, or
  ``sensor_msgs/CompressedImage``) sampled at ``fps``, turned upright by the camera's ``rotation_deg``;
- **detections and gaze**: a detector (perception's registry) runs on each frame; the fixated thing is
  the detection under the gaze point (a ``geometry_msgs/PointStamped`` in the published image's pixels,
  the nearest within 0.25 s) or, with no gaze topic, under the image centre (the camera's centre ray);
  the smallest detection holding the point wins, else the nearest within a small fovea. Without a
  detector frames have no detections and no gaze, and speech and visual segmentation still work;
- **holding**: the gripper joint in ``sensor_msgs/JointState``: the jaw stopped part-way closed holds
  something (fully closed closed on nothing), named by what was fixated when it closed;
- **room**: the ``nav_msgs/Odometry`` position in a rooms file (name: [x0, y0, x1, y1], odometry frame);
- **utterances**: a ``std_msgs/String`` transcript topic; a recogniser publishes when speech ends, so
  the start is estimated at 0.3 s per word before it (or the message marks the start: ``speech_stamp``).

Times are the bag's receive times, relative to the first sampled frame. A robot profile gives the
topic names and types as its driver publishes them (``sources_for``); without one the defaults read a
homiebot episode bag.
"""

from __future__ import annotations

import bisect
import functools
import io
import math
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, UnidentifiedImageError

from homiebot.builders.memory.record import FOVEA, room_at
from homiebot.memory.demonstration import (
    FILE_NAME,
    Demonstration,
    DemonstrationError,
    Detection,
    Frame,
    Utterance,
    save_demonstration,
)
from homiebot.perception.detection import Detection as Seen
from homiebot.perception.detection import Detector
from homiebot.robots.camera_rotation import rotate_point, to_upright

SECONDS_PER_WORD = 0.3  # an estimate of speaking time, as the scripted recorder speaks
GAZE_WITHIN = 0.25  # seconds between a gaze sample and the frame it applies to
HOLD_RANGE = (0.15, 0.95)  # the jaw's closed fraction while it holds something (1.0: closed on nothing)
IMAGE_TYPES = ("sensor_msgs/msg/Image", "sensor_msgs/msg/CompressedImage")
RAW_ENCODINGS = {"rgb8": (3, (0, 1, 2)), "bgr8": (3, (2, 1, 0)), "rgba8": (4, (0, 1, 2)), "bgra8": (4, (2, 1, 0)), "mono8": (1, (0, 0, 0))}


@dataclass(frozen=True)
class BagSources:
    """Where each part of a demonstration is in a bag. ``gripper``: (joint name as published, position
    open, position closed). Topics left None are not read."""

    image: str = "/homiebot/camera/front/image"
    rotation_deg: float = 0.0
    odometry: str | None = "/homiebot/odom"
    joint_states: str | None = None
    gripper: tuple[str, float, float] | None = None
    speech: str | None = None
    gaze: str | None = None


def sources_for(profile: Any, camera: str, speech: str | None = None, gaze: str | None = None) -> BagSources:
    """The topics a robot profile's driver publishes for ``camera`` (a key of its ``cameras``)."""
    if camera not in profile.cameras:
        raise DemonstrationError(f"robot '{profile.robot}' has no camera '{camera}'; its cameras: {', '.join(sorted(profile.cameras))}")
    spec = profile.cameras[camera]
    gripper = None
    if profile.gripper_joint is not None:
        name, opened, closed = profile.gripper_joint
        gripper = (profile.joint_name(name), float(opened), float(closed))
    return BagSources(image=profile.topic(spec.image), rotation_deg=spec.rotation_deg, odometry=profile.topic(profile.odometry.name),
                      joint_states=profile.topic(profile.joint_states.name) if profile.joint_states else None,
                      gripper=gripper, speech=speech, gaze=gaze)


def demonstration_from_bag(bag: str | Path, out: str | Path, sources: BagSources, *, demo_id: str, home: str, user: str = "default",
                           task: str = "", fps: float = 2.0, detector: Detector | None = None,
                           rooms: Mapping[str, Sequence[float]] | None = None, speech_stamp: str = "end",
                           progress: Callable[[str], None] | None = None) -> Demonstration:
    """Read ``bag`` (a rosbag2 folder, MCAP or SQLite) and save the demonstration in ``out`` (a folder
    without a demonstration yet). Raises DemonstrationError naming what is missing or malformed."""
    out = Path(out)
    if (out / FILE_NAME).exists():
        raise DemonstrationError(f"{out / FILE_NAME} exists: choose another --out (a recorded demonstration is never overwritten)")
    if not fps > 0 or not math.isfinite(fps):
        raise DemonstrationError(f"fps must be a positive number, got {fps}")
    if speech_stamp not in ("end", "start"):
        raise DemonstrationError(f"speech_stamp is 'end' or 'start', got '{speech_stamp}'")
    reader = _open(bag)
    try:
        types = {c.topic: c.msgtype for c in reader.connections}
        _require(types, sources)
        side = _side_streams(reader, sources, types)
        (out / "frames").mkdir(parents=True, exist_ok=True)
        frames, t0 = _frames(reader, sources, types, fps, out, detector, side, rooms or {}, progress)
    finally:
        reader.close()
    utterances = _utterances(side["speech"], t0, speech_stamp)
    demo = Demonstration(id=demo_id, home=home, user=user, task=task, frames=_name_holding(frames), utterances=utterances)
    save_demonstration(demo, out)
    return demo


def _open(bag: str | Path) -> Any:
    try:
        from rosbags.rosbag2 import Reader
    except ImportError:
        raise DemonstrationError("reading a bag needs the rosbags package: pip install -e '.[ros]'") from None

    path = Path(bag)
    if not (path / "metadata.yaml").is_file():
        raise DemonstrationError(f"{path}: not a rosbag2 folder (no metadata.yaml); a bag cut off before it closed can be "
                                 "reindexed with `ros2 bag reindex`")
    try:
        reader = Reader(path)
        reader.open()
    except Exception as err:  # rosbags raises its own error types for every storage problem
        raise DemonstrationError(f"{path}: the bag cannot be read ({type(err).__name__}: {err})") from None
    return reader


def _require(types: Mapping[str, str], sources: BagSources) -> None:
    wanted = {"image": (sources.image, IMAGE_TYPES), "joint_states": (sources.joint_states, ("sensor_msgs/msg/JointState",)),
              "odometry": (sources.odometry, ("nav_msgs/msg/Odometry",)), "speech": (sources.speech, ("std_msgs/msg/String",)),
              "gaze": (sources.gaze, ("geometry_msgs/msg/PointStamped",))}
    for role, (topic, allowed) in wanted.items():
        if topic is None:
            continue
        if topic not in types:
            if role in ("odometry", "joint_states"):
                continue  # optional parts of a profile's driver: that record field stays empty
            have = ", ".join(f"{t} ({m})" for t, m in sorted(types.items())) or "none"
            raise DemonstrationError(f"the bag has no {role} topic {topic}; its topics: {have}")
        if types[topic] not in allowed:
            raise DemonstrationError(f"{role} topic {topic} is {types[topic]}, expected {' or '.join(allowed)}")


def _messages(reader: Any, topic: str | None, types: Mapping[str, str]) -> Iterator[tuple[int, Any]]:
    if topic is None or topic not in types:
        return
    store = _typestore()
    for conn, stamp, raw in reader.messages(connections=[c for c in reader.connections if c.topic == topic]):
        try:
            yield stamp, store.deserialize_cdr(raw, conn.msgtype)
        except Exception as err:  # a truncated or foreign message: say which, keep nothing half-read
            raise DemonstrationError(f"a {conn.msgtype} message on {topic} at {stamp} ns cannot be decoded ({type(err).__name__})") from None


@functools.cache
def _typestore() -> Any:
    """The standard messages read here (built once; no ROS installation needed)."""
    from rosbags.typesys import Stores, get_typestore

    return get_typestore(Stores.ROS2_JAZZY)


def _side_streams(reader: Any, sources: BagSources, types: Mapping[str, str]) -> dict[str, list]:
    """The small topics, read whole: gripper closedness, positions, transcripts, gaze points."""
    closed: list[tuple[int, float]] = []
    if sources.gripper is not None:
        joint, opened, shut = sources.gripper
        for t, msg in _messages(reader, sources.joint_states, types):
            if joint in msg.name:
                pos = float(msg.position[list(msg.name).index(joint)])
                closed.append((t, (pos - opened) / (shut - opened) if shut != opened else 0.0))
    poses = [(t, msg.pose.pose.position.x, msg.pose.pose.position.y) for t, msg in _messages(reader, sources.odometry, types)]
    speech = [(t, " ".join(msg.data.split())) for t, msg in _messages(reader, sources.speech, types) if msg.data.strip()]
    gaze = [(t, float(msg.point.x), float(msg.point.y)) for t, msg in _messages(reader, sources.gaze, types)]
    return {"closed": closed, "poses": poses, "speech": speech, "gaze": gaze}


def _frames(reader: Any, sources: BagSources, types: Mapping[str, str], fps: float, out: Path, detector: Detector | None,
            side: dict[str, list], rooms: Mapping[str, Sequence[float]], progress: Callable[[str], None] | None) -> tuple[list[Frame], int]:
    period = int(1e9 / fps)
    frames: list[Frame] = []
    t0 = next_at = None
    skipped: list[str] = []
    for t, msg in _messages(reader, sources.image, types):
        if next_at is not None and t < next_at:
            continue
        try:
            raw = image_pixels(msg)
        except ValueError as err:
            skipped.append(f"{t} ns: {err}")
            continue
        t0 = t if t0 is None else t0
        next_at = t + period if next_at is None else max(next_at + period, t)
        rgb = to_upright(raw, sources.rotation_deg) if sources.rotation_deg else raw
        name = f"frames/{len(frames):05d}.png"
        Image.fromarray(rgb).save(out / name, compress_level=1)
        point = _gaze_point(side["gaze"], t, raw.shape[:2], rgb.shape[:2], sources.rotation_deg)
        seen = detector.detect(rgb) if detector is not None else []
        pose = _last(side["poses"], t)
        frames.append(Frame(time=round((t - t0) / 1e9, 6), image=name, gaze=fixated(seen, point, rgb.shape[:2]) if point else None,
                            detections=_detections(seen, rgb.shape[:2]), holding="?" if _holds(side["closed"], t) else None,
                            room=room_at(rooms, pose[1], pose[2]) if pose and rooms else None))
        if progress and len(frames) % 100 == 0:
            progress(f"{len(frames)} frames, {(t - t0) / 1e9:.0f} s of the bag")
    if not frames:
        why = f"; the first unreadable one: {skipped[0]}" if skipped else ""
        raise DemonstrationError(f"no readable image on {sources.image} ({len(skipped)} unreadable){why}")
    if skipped and progress:
        progress(f"{len(skipped)} images could not be read and were left out, the first: {skipped[0]}")
    assert t0 is not None
    return frames, t0


def image_pixels(msg: Any) -> np.ndarray:
    """An Image or CompressedImage message as HxWx3 uint8 RGB (ValueError when it cannot be read)."""
    if hasattr(msg, "format"):  # CompressedImage
        try:
            with Image.open(io.BytesIO(bytes(msg.data))) as im:
                return np.asarray(im.convert("RGB"))
        except (UnidentifiedImageError, OSError) as err:
            raise ValueError(f"compressed image ({msg.format[:20]}) cannot be decoded: {err}") from None
    if msg.encoding not in RAW_ENCODINGS:
        raise ValueError(f"unsupported encoding '{msg.encoding[:20]}' (readable: {', '.join(RAW_ENCODINGS)}, or a CompressedImage)")
    channels, order = RAW_ENCODINGS[msg.encoding]
    if msg.height <= 0 or msg.width <= 0 or msg.step < msg.width * channels or len(msg.data) < msg.step * msg.height:
        raise ValueError(f"{msg.encoding} image of {msg.width}x{msg.height} with step {msg.step} and {len(msg.data)} bytes")
    rows = np.frombuffer(bytes(msg.data), dtype=np.uint8)[:msg.step * msg.height].reshape(msg.height, msg.step)
    pixels = rows[:, :msg.width * channels].reshape(msg.height, msg.width, channels)
    return np.ascontiguousarray(pixels[:, :, list(order)])


def fixated(seen: Sequence[Seen], point: tuple[float, float], shape: tuple[int, int]) -> str | None:
    """The label of the smallest detection whose mask (or box) holds ``point`` (x, y pixels); else the
    nearest one whose box is within the fovea; None when nothing is near."""
    x, y = point
    row, col = int(round(y)), int(round(x))
    inside = [d for d in seen if 0 <= row < shape[0] and 0 <= col < shape[1] and d.pixel_mask(shape)[row, col]]
    if inside:
        return min(inside, key=lambda d: (int(d.pixel_mask(shape).sum()), d.label)).label

    def gap(d: Seen) -> float:
        r0, c0, r1, c1 = d.box
        return math.hypot(max(r0 - y, 0.0, y - r1), max(c0 - x, 0.0, x - c1))

    near = [d for d in seen if gap(d) <= FOVEA * min(shape)]
    return min(near, key=lambda d: (gap(d), d.label)).label if near else None


def _detections(seen: Sequence[Seen], shape: tuple[int, int]) -> list[Detection]:
    size = float(shape[0] * shape[1])
    out = [Detection(name=d.label, category=d.label, area=min(1.0, float(d.pixel_mask(shape).sum()) / size)) for d in seen]
    return sorted(out, key=lambda d: (-d.area, d.name))


def _gaze_point(gaze: list[tuple[int, float, float]], t: int, raw_shape: tuple[int, int], shape: tuple[int, int],
                rotation: float) -> tuple[float, float] | None:
    if not gaze:
        return ((shape[1] - 1) / 2, (shape[0] - 1) / 2)  # the camera's centre ray
    stamp, x, y = _nearest(gaze, t)  # type: ignore[misc]
    if abs(stamp - t) > GAZE_WITHIN * 1e9:
        return None  # the tracker lost the eye: unknown, not the centre
    return rotate_point(x, y, rotation, raw_shape, shape) if rotation else (x, y)


def _last(stream: list[tuple], t: int) -> tuple | None:
    """The last sample at or before ``t`` of a time-ordered stream."""
    i = bisect.bisect_right(stream, t, key=lambda s: s[0])
    return stream[i - 1] if i else None


def _nearest(stream: list[tuple], t: int) -> tuple | None:
    """The sample of a time-ordered stream closest in time to ``t``."""
    i = bisect.bisect_left(stream, t, key=lambda s: s[0])
    near = stream[max(i - 1, 0):i + 1]
    return min(near, key=lambda s: abs(s[0] - t)) if near else None


def _holds(closed: list[tuple[int, float]], t: int) -> bool:
    last = _last(closed, t)
    return last is not None and HOLD_RANGE[0] <= last[1] <= HOLD_RANGE[1]


def _name_holding(frames: list[Frame]) -> list[Frame]:
    """Give each hold the name of what was fixated when the jaw closed (else just before; else 'object')."""
    out: list[Frame] = []
    name: str | None = None
    last_gaze: str | None = None
    for f in frames:
        if f.holding is None:
            name = None
        elif name is None:
            name = f.gaze or last_gaze or "object"
        last_gaze = f.gaze or last_gaze
        out.append(f.model_copy(update={"holding": name}))
    return out


def _utterances(speech: list[tuple[int, str]], t0: int, stamp: str) -> list[Utterance]:
    out: list[Utterance] = []
    for t, text in speech:
        at = (t - t0) / 1e9
        spoken = SECONDS_PER_WORD * len(text.split())
        start, end = (at - spoken, at) if stamp == "end" else (at, at + spoken)
        start = max(start, out[-1].end if out else 0.0, 0.0)
        if end < start:
            print(f"an utterance before the first frame is left out: '{text[:60]}'", file=sys.stderr)
            continue
        out.append(Utterance(start=round(start, 6), end=round(end, 6), text=text))
    return out


def read_rooms(path: str | Path) -> dict[str, tuple[float, float, float, float]]:
    """A rooms file: a YAML mapping of room name to [x0, y0, x1, y1] in the odometry frame (metres)."""
    from homiebot.core.yamlio import read_yaml

    data = read_yaml(Path(path), "rooms file", DemonstrationError)
    if not isinstance(data, dict) or not data:
        raise DemonstrationError(f"{path}: a rooms file maps room names to [x0, y0, x1, y1] (metres, odometry frame)")
    rooms = {}
    for name, box in data.items():
        if (not isinstance(box, list) or len(box) != 4 or not all(isinstance(v, int | float) and math.isfinite(v) for v in box)
                or box[0] >= box[2] or box[1] >= box[3]):
            raise DemonstrationError(f"{path}: room '{name}' must be [x0, y0, x1, y1] with x0 < x1 and y0 < y1, got {box!r}")
        x0, y0, x1, y1 = (float(v) for v in box)
        rooms[str(name)] = (x0, y0, x1, y1)
    return rooms
