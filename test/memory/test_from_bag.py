"""A demonstration from a ROS 2 bag: the hand-built mug demonstration (test/memory/fixture.py) is played
as a teleoperated Spot run would be recorded: the hand camera, joint_states with the gripper's jaw and
odometry under the names and types spot_ros2 publishes (config/robots/spot.yaml), a transcript topic,
written with rosbags into an MCAP bag. Converted back, it gives the same frames, gaze, holding, rooms,
speech and segments (with categories for names: a detector does not know instances). Bad bags and
arguments are refused with one line.

The detector is a stand-in for a learned one: it reports, for the frame whose index the image carries
in its first pixel, the fixture's things as boxes (the fixated one on the image centre)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("rosbags")
from rosbags.rosbag2 import StoragePlugin, Writer  # noqa: E402
from rosbags.typesys import Stores, get_typestore  # noqa: E402

from homiebot.builders.memory.from_bag import BagSources, demonstration_from_bag, fixated, sources_for  # noqa: E402
from homiebot.memory.__main__ import main  # noqa: E402
from homiebot.memory.demonstration import DemonstrationError, load_demonstration  # noqa: E402
from homiebot.memory.segmentation import boundaries, segment  # noqa: E402
from homiebot.perception.detection import Detection, Detector  # noqa: E402
from homiebot.robots.camera_rotation import to_upright  # noqa: E402
from homiebot.robots.profile import load_profile  # noqa: E402
from test.memory import fixture  # noqa: E402

STORE = get_typestore(Stores.ROS2_JAZZY)
H, W = 48, 64
CATEGORY = {d.name: d.category for d in fixture.DESK + fixture.SINK}
ARM = ["arm_sh0", "arm_sh1", "arm_el0", "arm_el1", "arm_wr0", "arm_wr1", "arm_f1x"]
JAW = {False: -1.57, True: -0.6}  # open; stopped part-way closed on the mug's handle
ROOMS_YAML = "bedroom: [0, 0, 4, 4]\nkitchen: [6, 0, 10, 4]\n"
ROBOT_X = [1.0 if r == "bedroom" else 8.0 if r == "kitchen" else 5.0 for r in fixture.ROOM]  # 5.0: the hall between
SPEECH = "/speech_recognition/final_result"


class RecordedDetector(Detector):
    """The fixture's things in frame ``image[0, 0, 0]``, by category; the fixated one on the centre."""

    name = "recorded"

    def detect(self, rgb: np.ndarray, depth: np.ndarray | None = None) -> list[Detection]:
        i = int(rgb[0, 0, 0])
        things = [] if fixture.ROOM[i] is None else fixture.DESK if fixture.ROOM[i] == "bedroom" else fixture.SINK
        out = []
        for k, thing in enumerate(things):
            if thing.name == fixture.GAZE[i]:
                box = (H // 2 - 6, W // 2 - 6, H // 2 + 6, W // 2 + 6)
            else:
                box = (0, 4 + 14 * k, 8, 14 + 14 * k)  # along the top edge, far from the centre
            out.append(Detection(CATEGORY[thing.name], 0.9, box))
        return out


def _header(store, t: int, frame: str):
    Header, Time = store.types["std_msgs/msg/Header"], store.types["builtin_interfaces/msg/Time"]
    return Header(stamp=Time(sec=t // 10**9, nanosec=t % 10**9), frame_id=frame)


def image_msg(pixels: np.ndarray, encoding: str, t: int):
    channels = 1 if pixels.ndim == 2 else pixels.shape[2]
    return STORE.types["sensor_msgs/msg/Image"](header=_header(STORE, t, "hand_color_image_sensor"), height=pixels.shape[0],
                                                width=pixels.shape[1], encoding=encoding, is_bigendian=0,
                                                step=pixels.shape[1] * channels, data=pixels.reshape(-1).astype(np.uint8))


def write_bag(path: Path, speech_at: str = "start", images: bool = True) -> Path:
    """The mug fixture as a Spot bag: images at 4 Hz (each fixture frame four times), joint_states and
    odometry at 10 Hz, one transcript per utterance stamped at its start or end."""
    s = 10**9
    types = {"/spot/camera/hand/image": "sensor_msgs/msg/Image", "/spot/joint_states": "sensor_msgs/msg/JointState",
             "/spot/odometry": "nav_msgs/msg/Odometry", SPEECH: "std_msgs/msg/String"}
    messages: list[tuple[int, str, object]] = []
    for i, grey in enumerate(fixture.GREY):
        pixels = np.full((H, W, 3), grey, dtype=np.uint8)
        pixels[0, 0, 0] = i  # the stand-in detector's key
        for q in range(4):
            t = i * s + q * s // 4
            if images:
                messages.append((t, "/spot/camera/hand/image", image_msg(pixels, "rgb8", t)))
    for tick in range(len(fixture.GREY) * 10):
        t, i = tick * s // 10, tick // 10
        joints = STORE.types["sensor_msgs/msg/JointState"](header=_header(STORE, t, ""), name=[f"spot/{j}" for j in ARM],
                                                          position=np.array([0.0] * 6 + [JAW[fixture.HOLDING[i] is not None]]),
                                                          velocity=np.zeros(7), effort=np.zeros(7))
        messages.append((t, "/spot/joint_states", joints))
        odom = STORE.types["nav_msgs/msg/Odometry"]
        pose = STORE.types["geometry_msgs/msg/PoseWithCovariance"](
            pose=STORE.types["geometry_msgs/msg/Pose"](position=STORE.types["geometry_msgs/msg/Point"](x=ROBOT_X[i], y=2.0, z=0.0),
                                                       orientation=STORE.types["geometry_msgs/msg/Quaternion"](x=0.0, y=0.0, z=0.0, w=1.0)),
            covariance=np.zeros(36))
        twist = STORE.types["geometry_msgs/msg/TwistWithCovariance"](
            twist=STORE.types["geometry_msgs/msg/Twist"](linear=STORE.types["geometry_msgs/msg/Vector3"](x=0.0, y=0.0, z=0.0),
                                                         angular=STORE.types["geometry_msgs/msg/Vector3"](x=0.0, y=0.0, z=0.0)),
            covariance=np.zeros(36))
        messages.append((t, "/spot/odometry", odom(header=_header(STORE, t, "odom"), child_frame_id="body", pose=pose, twist=twist)))
    for u in fixture.UTTERANCES:
        at = u.start if speech_at == "start" else u.end
        messages.append((int(at * s), SPEECH, STORE.types["std_msgs/msg/String"](data=u.text)))
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        conns = {topic: writer.add_connection(topic, msgtype, typestore=STORE) for topic, msgtype in types.items()}
        for t, topic, msg in sorted(messages, key=lambda m: m[0]):
            writer.write(conns[topic], t, STORE.serialize_cdr(msg, types[topic]))
    return path


@pytest.fixture()
def rooms(tmp_path: Path) -> dict:
    return {"bedroom": (0.0, 0.0, 4.0, 4.0), "kitchen": (6.0, 0.0, 10.0, 4.0)}


def spot_sources() -> BagSources:
    return sources_for(load_profile("spot"), "hand", speech=SPEECH)


def test_spot_profile_names_the_drivers_topics() -> None:
    src = spot_sources()
    assert (src.image, src.odometry, src.joint_states) == ("/spot/camera/hand/image", "/spot/odometry", "/spot/joint_states")
    assert src.gripper == ("spot/arm_f1x", -1.57, 0.0) and src.rotation_deg == 0.0
    assert sources_for(load_profile("spot"), "frontleft").rotation_deg == -78.0


def test_the_bag_gives_back_the_demonstration(tmp_path: Path, rooms: dict) -> None:
    bag = write_bag(tmp_path / "bag")
    demo = demonstration_from_bag(bag, tmp_path / "demo", spot_sources(), demo_id="mug_teleop", home="demo", user="alex",
                                  fps=1.0, detector=RecordedDetector(), rooms=rooms, speech_stamp="start")
    assert demo == load_demonstration(tmp_path / "demo")
    truth = fixture.mug_demonstration(tmp_path / "truth")
    assert [f.time for f in demo.frames] == [f.time for f in truth.frames]  # 4 Hz sampled down to 1 Hz
    assert [f.gaze for f in demo.frames] == [CATEGORY.get(g) if g else None for g in fixture.GAZE]
    assert [f.holding for f in demo.frames] == [CATEGORY.get(h) if h else None for h in fixture.HOLDING]
    assert [f.room for f in demo.frames] == fixture.ROOM
    assert [(u.start, u.text) for u in demo.utterances] == [(u.start, u.text) for u in fixture.UTTERANCES]
    assert [d.name for d in demo.frames[2].detections] == ["mug", "book", "desk"]  # largest first, as the home's recorder lists them
    for method in ("gaze", "speech", "gaze+speech", "visual"):
        assert boundaries(demo, method, tmp_path / "demo") == boundaries(truth, method, tmp_path / "truth"), method
    segs = segment(demo, "gaze+speech", tmp_path / "demo")
    truth_segs = segment(truth, "gaze+speech", tmp_path / "truth")
    assert [s.put for s in segs] == [[(CATEGORY[o], CATEGORY[p]) for o, p in t.put] for t in truth_segs]
    assert [s.key_frames for s in segs] == [t.key_frames for t in truth_segs]
    assert segs[-1].put == [("mug", "sink")] and segs[-1].caption.startswith('In the kitchen. Put the mug in the sink. Looked at the sink.')


def test_transcripts_stamped_at_the_end_of_speech_start_words_earlier(tmp_path: Path) -> None:
    demo = demonstration_from_bag(write_bag(tmp_path / "bag", speech_at="end"), tmp_path / "demo", spot_sources(),
                                  demo_id="d", home="demo", fps=1.0)
    # 0.3 s a word before the transcript arrived, never before the first frame or the previous utterance's end
    assert [(u.start, u.end) for u in demo.utterances] == [(0.0, 1.5), (pytest.approx(3.1), 5.5), (pytest.approx(9.4), 11.5)]
    assert all(f.gaze is None and not f.detections for f in demo.frames)  # no detector: nothing fixated
    assert {f.holding for f in demo.frames} == {None, "object"}  # held, but what is not known


def test_a_turned_camera_is_made_upright_and_the_gaze_point_turns_with_it(tmp_path: Path) -> None:
    raw = np.zeros((H, W), dtype=np.uint8)
    raw[2:10, 3:20] = 255  # a bright bar in the published (mounted) image's top-left
    gaze_at = (10.0, 5.0)  # on the bar, in the published image's pixels (x right, y down)
    types = {"/spot/camera/right/image": "sensor_msgs/msg/Image", "/gaze": "geometry_msgs/msg/PointStamped"}
    point = STORE.types["geometry_msgs/msg/PointStamped"](header=_header(STORE, 0, "right"),
                                                          point=STORE.types["geometry_msgs/msg/Point"](x=gaze_at[0], y=gaze_at[1], z=0.0))
    with Writer(tmp_path / "bag", version=9, storage_plugin=StoragePlugin.MCAP) as w:
        c = {t: w.add_connection(t, m, typestore=STORE) for t, m in types.items()}
        w.write(c["/spot/camera/right/image"], 0, STORE.serialize_cdr(image_msg(raw, "mono8", 0), types["/spot/camera/right/image"]))
        w.write(c["/gaze"], 1000, STORE.serialize_cdr(point, types["/gaze"]))

    class Bright(Detector):
        def detect(self, rgb: np.ndarray, depth: np.ndarray | None = None) -> list[Detection]:
            rows, cols = np.nonzero(rgb[:, :, 0] > 128)
            return [Detection("book", 1.0, (int(rows.min()), int(cols.min()), int(rows.max()), int(cols.max())))]

    src = sources_for(load_profile("spot"), "right", gaze="/gaze")
    assert src.rotation_deg == 180.0
    demo = demonstration_from_bag(tmp_path / "bag", tmp_path / "demo", src, demo_id="d", home="demo", detector=Bright())
    from PIL import Image

    upright = np.asarray(Image.open(tmp_path / "demo" / demo.frames[0].image))
    assert np.array_equal(upright[:, :, 0], to_upright(raw, 180.0)) and upright[-5, -11, 0] == 255  # the bar is bottom-right now
    assert demo.frames[0].gaze == "book"


def test_fixated_prefers_the_smallest_thing_under_the_point_then_the_nearest_in_the_fovea() -> None:
    table, mug = Detection("table", 0.9, (10, 10, 40, 60)), Detection("mug", 0.9, (20, 30, 28, 38))
    assert fixated([table, mug], (33.0, 24.0), (48, 64)) == "mug"
    assert fixated([table, mug], (15.0, 35.0), (48, 64)) == "table"
    assert fixated([mug], (42.0, 24.0), (48, 64)) == "mug"  # 4 px right of the mug's box, inside the fovea
    assert fixated([mug], (62.0, 2.0), (48, 64)) is None


def test_bad_bags_and_arguments_are_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bag = write_bag(tmp_path / "bag", images=False)
    def run(*args: str) -> str:
        assert main(["from-bag", *args]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("error: ") and "\n" not in err, err
        return err

    assert "not a rosbag2 folder" in run(str(tmp_path), "--out", str(tmp_path / "o"), "--home", "h")
    assert "no readable image on /spot/camera/hand/image" in run(str(bag), "--robot", "spot", "--camera", "hand",
                                                                  "--out", str(tmp_path / "o"), "--home", "h")
    assert "no image topic /homiebot/camera/front/image; its topics: /speech_recognition/final_result (std_msgs/msg/String)" in run(str(bag), "--out", str(tmp_path / "o"),
                                                                                                "--home", "h")
    assert "speech topic /spot/odometry is nav_msgs/msg/Odometry" in run(str(bag), "--robot", "spot", "--speech", "/spot/odometry",
                                                                          "--out", str(tmp_path / "o"), "--home", "h")
    assert "has no camera 'head'" in run(str(bag), "--robot", "spot", "--camera", "head", "--out", str(tmp_path / "o"), "--home", "h")
    assert "unknown detector 'yolo'" in run(str(bag), "--detector", "yolo", "--out", str(tmp_path / "o"), "--home", "h")
    (tmp_path / "rooms.yaml").write_text("kitchen: [3, 0, 1, 4]\n")
    assert "x0 < x1" in run(str(bag), "--rooms", str(tmp_path / "rooms.yaml"), "--out", str(tmp_path / "o"), "--home", "h")


def test_the_cli_converts_and_never_overwrites_a_demonstration(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bag = write_bag(tmp_path / "bag", speech_at="end")
    (tmp_path / "rooms.yaml").write_text(ROOMS_YAML)
    args = ["from-bag", str(bag), "--robot", "spot", "--camera", "hand", "--speech", SPEECH, "--rooms", str(tmp_path / "rooms.yaml"),
            "--home", "demo", "--user", "alex", "--out", str(tmp_path / "demo")]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "'bag' from" in out and "26 frames over 12.5 s from /spot/camera/hand/image" in out and "3 utterances" in out
    before = (tmp_path / "demo" / "demonstration.json").read_bytes()
    assert main(args) == 2
    assert "is never overwritten" in capsys.readouterr().err
    assert (tmp_path / "demo" / "demonstration.json").read_bytes() == before
    assert main(["segment", str(tmp_path / "demo"), "--method", "speech"]) == 0
    assert "In the kitchen." in capsys.readouterr().out
    with pytest.raises(DemonstrationError, match="fps must be a positive number"):
        demonstration_from_bag(bag, tmp_path / "other", spot_sources(), demo_id="d", home="demo", fps=0.0)
