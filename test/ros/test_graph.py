"""The ROS 2 graph across processes: submit and complete, equivalence with `homiebot run`, a killed
node, a plain rclpy client, the MCAP bag, and parameter validation.

Every process runs with localhost-only discovery and a ROS_DOMAIN_ID of its own.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from homiebot.core.contracts import CONTRACT_VERSION  # noqa: E402
from homiebot.core.records import load_episode  # noqa: E402
from homiebot.core.tasks import load_task  # noqa: E402
from homiebot.ros.bringup.graph import NodeSpec, graph  # noqa: E402
from homiebot.ros.bringup.up import spawn, spawn_all, stop  # noqa: E402
from homiebot.ros.kit.environment import ros_environment  # noqa: E402
from homiebot.ros.messages.common import EXECUTE_STATUS_TOPIC, typestore  # noqa: E402
from homiebot.runtime import run_episode  # noqa: E402
from test.ros_domains import domain_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "config" / "tasks" / "demo.yaml"
DOMAIN = domain_of(__name__)
PLAIN_CLIENT = Path(__file__).with_name("plain_client.py")


@pytest.fixture(scope="module")
def env():
    return ros_environment(DOMAIN)


@pytest.fixture(scope="module")
def config_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cfg") / "graph.yaml"
    path.write_text("planner: {name: oracle}\nworld: {name: embedded_home, params: {width: 96, height: 96}}\n")
    return path


@pytest.fixture(scope="module")
def running_graph(tmp_path_factory, env, config_file):
    out = tmp_path_factory.mktemp("graph_runs")
    specs = graph(str(config_file), "", str(out), {"task_manager": {"execute_timeout": 8.0, "connect_timeout": 20.0}})
    procs = spawn_all(specs, env)
    try:
        yield {"procs": procs, "specs": {s.name: s for s in specs}, "out": out}
    finally:
        stop(procs)


def submit(env, *args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "homiebot.cli", "submit", *args, "--timeout", str(timeout)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout + 60)


def record_path(stdout: str) -> Path:
    return Path(next(line for line in stdout.splitlines() if line.startswith("episode record:")).split(":", 1)[1].strip())


def trace(record) -> list[tuple]:
    return [(s.subtask.text() if s.subtask else None, s.output.model if s.output else None, s.feedback.code) for s in record.steps]


def test_submit_runs_an_episode_and_matches_the_in_process_runner(running_graph, env, config_file):
    out = submit(env, "--task", str(DEMO), "--seed", "3")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "goal reached; ended with End" in out.stdout
    ros = load_episode(record_path(out.stdout))
    assert ros.ended and ros.goal_satisfied and ros.planner == "oracle"
    folder = record_path(out.stdout).parent
    assert sorted(p.name for p in (folder / "images").iterdir())[:4] == [f"round_01_{v}.png" for v in ("back", "front", "left", "right")]

    from homiebot.config import load_config

    cfg = load_config(config_file).model_copy(update={"seed": 3})
    local, _ = run_episode(cfg, load_task(DEMO))
    assert trace(ros) == trace(local)
    assert [s.inventory_after for s in ros.steps] == [s.inventory_after for s in local.steps]
    assert [s.path_length for s in ros.steps] == [s.path_length for s in local.steps]  # the same paths, round by round
    assert abs(ros.path_length - local.path_length) < 1e-6


def test_a_situated_episode_sees_the_person_as_in_process_and_the_bag_holds_them(running_graph, env, config_file):
    from rosbags.rosbag2 import Reader

    task = ROOT / "homiebot" / "bench" / "suites" / "sif" / "demo_s_hum_clear.yaml"  # the person walks off and wants the can
    out = submit(env, "--task", str(task), "--seed", "1")
    assert out.returncode == 0, out.stdout + out.stderr
    ros = load_episode(record_path(out.stdout))
    from homiebot.config import load_config

    local, _ = run_episode(load_config(config_file).model_copy(update={"seed": 1}), load_task(task))
    assert trace(ros) == trace(local) and any(s.subtask and s.subtask.action.value == "Give" for s in ros.steps)
    assert [s.people for s in ros.steps] == [s.people for s in local.steps]  # the world's sightings reach the record
    seen_rounds = sum(1 for s in ros.steps if s.people)
    assert seen_rounds > 0
    store = typestore()
    with Reader(record_path(out.stdout).parent / "bag") as reader:
        people = [store.deserialize_cdr(raw, c.msgtype) for c, _, raw in reader.messages() if c.topic == "/homiebot/people"]
    assert len(people) == len(ros.steps)  # one message a round, typed
    assert sum(1 for m in people if m.people) == seen_rounds
    first = next(m for m in people if m.people).people[0]
    assert first.name == next(s for s in ros.steps if s.people).people[0].name and first.distance >= 0.0


def test_the_bag_holds_every_topic_with_the_right_counts(running_graph, env, tmp_path):
    from rosbags.rosbag2 import Reader

    out = submit(env, "--task", str(DEMO), "--seed", "5")
    assert out.returncode == 0, out.stderr
    record = load_episode(record_path(out.stdout))
    rounds = len(record.steps)
    counts: dict[str, int] = {}
    goals: dict[bytes, int] = {}  # subtask goals accepted during the episode -> their last status
    store = typestore()
    with Reader(record_path(out.stdout).parent / "bag") as reader:
        for connection, _, raw in reader.messages():
            counts[connection.topic] = counts.get(connection.topic, 0) + 1
            if connection.topic == "/homiebot/" + EXECUTE_STATUS_TOPIC:
                for status in store.deserialize_cdr(raw, connection.msgtype).status_list:
                    if status.goal_info.stamp.sec * 10**9 + status.goal_info.stamp.nanosec >= reader.start_time:
                        goals[bytes(status.goal_info.goal_id.uuid)] = status.status
    for view in ("front", "left", "back", "right"):
        for kind in ("image", "depth", "segmentation"):
            assert counts[f"/homiebot/camera/{view}/{kind}"] == rounds, (view, kind)
        assert counts[f"/homiebot/camera/{view}/camera_info"] == rounds, view
    assert counts["/homiebot/odom"] == rounds and counts["/homiebot/observation"] == rounds
    assert counts["/homiebot/subtask"] == rounds and counts["/homiebot/feedback"] == rounds
    executed = sum(1 for s in record.steps if s.skill)
    assert len(goals) == executed and set(goals.values()) == {4}, goals  # one ExecuteSubtask goal a subtask, each SUCCEEDED
    assert counts["/homiebot/task/status"] >= rounds + 1
    # the episode's bag read as a demonstration (its defaults are the graph's front camera and odometry)
    demo = subprocess.run([sys.executable, "-m", "homiebot.memory", "from-bag", str(record_path(out.stdout).parent / "bag"),
                           "--out", str(tmp_path / "demo"), "--home", "demo", "--fps", "1000"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert demo.returncode == 0 and f"{rounds} frames over" in demo.stdout, demo.stdout + demo.stderr


def test_the_transforms_follow_odometry_and_place_every_camera_on_the_base(running_graph, env):
    """tf as the graph publishes it (recorded in the episode's bag): odom -> base_link at each odometry message's stamp
    with its pose, base_link -> each camera's optical frame at the same stamp, under the graph's namespace."""
    from rosbags.rosbag2 import Reader

    out = submit(env, "--task", str(DEMO), "--seed", "8")
    assert out.returncode == 0, out.stderr
    store = typestore()
    odom, tf = {}, {}
    with Reader(record_path(out.stdout).parent / "bag") as reader:
        for connection, _, raw in reader.messages():
            if connection.topic in ("/homiebot/odom", "/homiebot/tf"):
                msg = store.deserialize_cdr(raw, connection.msgtype)
                if connection.topic == "/homiebot/odom":
                    odom[(msg.header.stamp.sec, msg.header.stamp.nanosec)] = msg
                else:
                    for t in msg.transforms:
                        tf[(t.header.frame_id, t.child_frame_id, t.header.stamp.sec, t.header.stamp.nanosec)] = t.transform
    assert odom, "no odometry recorded"
    for (sec, nsec), msg in odom.items():
        assert (msg.header.frame_id, msg.child_frame_id) == ("homiebot/odom", "homiebot/base_link")
        base = tf[("homiebot/odom", "homiebot/base_link", sec, nsec)]
        p, q = msg.pose.pose, base.rotation
        assert abs(base.translation.x - p.position.x) < 1e-9 and abs(base.translation.y - p.position.y) < 1e-9
        assert abs(q.z - p.orientation.z) < 1e-9 and abs(q.w - p.orientation.w) < 1e-9
    cameras = {child for parent, child, *_ in tf if parent == "homiebot/base_link"}
    assert cameras == {f"homiebot/{v}_camera" for v in ("front", "left", "back", "right")}, cameras
    front = next(t for (parent, child, *_), t in tf.items() if child == "homiebot/front_camera")
    r = front.rotation
    assert abs(r.x * r.x + r.y * r.y + r.z * r.z + r.w * r.w - 1.0) < 1e-6 and front.translation.z > 0.3  # a camera above the floor


def test_view_replays_the_bag_of_a_graph_episode_into_a_recording(running_graph, env, tmp_path):
    rr_chunk = pytest.importorskip("rerun.chunk")  # the viz extra (make installs it)
    out = submit(env, "--task", str(DEMO), "--seed", "6")
    assert out.returncode == 0, out.stderr
    folder = record_path(out.stdout).parent
    rounds = len(load_episode(folder).steps)
    rrd = tmp_path / "bag.rrd"
    view = subprocess.run([sys.executable, "-m", "homiebot.cli", "view", str(folder / "bag"), "--save-rrd", str(rrd)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert view.returncode == 0, view.stderr
    assert f"{rounds} rounds of" in view.stdout
    rows: dict[str, int] = {}
    for chunk in rr_chunk.RrdReader(str(rrd)).store().stream():
        rows[chunk.entity_path] = rows.get(chunk.entity_path, 0) + chunk.to_record_batch().num_rows
    for view_name in ("front", "left", "back", "right"):
        assert rows.get(f"/views/{view_name}") == rounds, rows
    assert rows.get("/timeline/rounds") == rounds, rows
    bad = subprocess.run([sys.executable, "-m", "homiebot.cli", "view", str(folder / "bag" / "metadata.yaml")],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1, bad.stderr


def test_a_plain_rclpy_client_sees_images_and_typed_rounds_and_can_submit(running_graph, env, tmp_path):
    script = tmp_path / "client.py"
    script.write_text(f'''
import json, time, rclpy
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import CameraInfo, Image
from std_msgs.msg import String
from homiebot_msgs.msg import Feedback, PlannerOutput, TaskStatus
from homiebot_msgs.action import RunTask
from rclpy.action import ActionClient
rclpy.init()
node = Node("plain_client")
qos = QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE)
seen = {{"image": [], "subtask": [], "feedback": [], "status": [], "info": []}}
stamp = lambda m: m.header.stamp.sec * 10**9 + m.header.stamp.nanosec
node.create_subscription(Image, "/homiebot/camera/front/image", lambda m: seen["image"].append((m.width, m.height, m.encoding, stamp(m))), qos)
node.create_subscription(CameraInfo, "/homiebot/camera/front/camera_info", lambda m: seen["info"].append(
    (m.width, m.height, list(m.k), list(m.p), m.header.frame_id, stamp(m))), qos)
node.create_subscription(PlannerOutput, "/homiebot/subtask", lambda m: seen["subtask"].append(
    {{"version": m.version, "action": m.subtask.action, "target": m.subtask.target, "model": m.model}}), qos)
node.create_subscription(Feedback, "/homiebot/feedback", lambda m: seen["feedback"].append(
    {{"success": m.success, "code": m.code, "message": m.message}}), qos)
node.create_subscription(TaskStatus, "/homiebot/task/status", lambda m: seen["status"].append(
    {{"id": m.id, "state": m.state, "record": m.record}}), qos)
run_task = ActionClient(node, RunTask, "/homiebot/run_task")
deadline = time.time() + 60
# discovery is not symmetric: wait until the graph's side is known, and give the graph time to know ours
while time.time() < deadline and (not run_task.server_is_ready() or node.count_publishers("/homiebot/task/status") == 0
                                  or node.count_publishers("/homiebot/camera/front/image") == 0):
    rclpy.spin_once(node, timeout_sec=0.1)
for _ in range(40):
    rclpy.spin_once(node, timeout_sec=0.05)
sent = run_task.send_goal_async(RunTask.Goal(task_file="{DEMO}", use_seed=True, seed=1))
rclpy.spin_until_future_complete(node, sent, timeout_sec=60)
rid = bytes(sent.result().goal_id.uuid).hex()[:12]
while time.time() < deadline and not any(s["id"] == rid and s["state"] in ("finished", "failed") for s in seen["status"]):
    rclpy.spin_once(node, timeout_sec=0.1)
for _ in range(10):
    rclpy.spin_once(node, timeout_sec=0.05)
print(json.dumps({{"images": seen["image"][:1], "n_images": len(seen["image"]), "subtasks": seen["subtask"], "infos": seen["info"],
                  "image_stamps": [i[3] for i in seen["image"]],
                  "feedback": seen["feedback"], "final": [s for s in seen["status"] if s["id"] == rid][-1]}}))
''')
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout.strip().splitlines()[-1])
    assert data["final"]["state"] == "finished"
    assert data["images"][0][:3] == [96, 96, "rgb8"] and data["n_images"] >= 5
    # each round's front image comes with the camera's geometry, stamped alike (as ROS camera drivers publish them)
    infos = {i[5]: i for i in data["infos"]}
    assert set(data["image_stamps"]) <= set(infos), (data["image_stamps"], sorted(infos))
    width, height, k, p, frame, _ = data["infos"][0]
    assert (width, height, frame) == (96, 96, "homiebot/front_camera")
    assert k[0] > 0 and k[4] > 0 and k[2] == pytest.approx(48, abs=1) and k[5] == pytest.approx(48, abs=1) and k[8] == 1.0
    assert p[:3] == k[:3] and p[4:7] == k[3:6] and p[10] == 1.0
    assert data["subtasks"][0]["action"] == "Go to" and data["subtasks"][-1]["action"] == "End" and data["subtasks"][0]["version"] == CONTRACT_VERSION
    assert all(f["success"] and f["code"] == "" for f in data["feedback"]) and len(data["feedback"]) == len(data["subtasks"])


def test_a_plain_rclpy_client_runs_the_demo_through_run_task(running_graph, env, tmp_path):
    """Only rclpy and homiebot_msgs: a RunTask goal, typed feedback per round, a typed result; a goal that
    cannot run is aborted with its error code and the reason. The first feedback of a goal can be lost while
    discovery completes (as for any action); /homiebot/task/status keeps every round for a late match."""
    script = tmp_path / "action_client.py"
    script.write_text(f'''
import json, time, rclpy
from rclpy.action import ActionClient
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from homiebot_msgs.action import RunTask
from homiebot_msgs.msg import TaskStatus
rclpy.init()
node = Node("plain_action_client")
client = ActionClient(node, RunTask, "/homiebot/run_task")
status = []
node.create_subscription(TaskStatus, "/homiebot/task/status", status.append,
                         QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL))
assert client.wait_for_server(timeout_sec=60), "no RunTask server"

def run(goal):
    feedback = []
    sent = client.send_goal_async(goal, feedback_callback=lambda m: feedback.append(m.feedback))
    rclpy.spin_until_future_complete(node, sent, timeout_sec=60)
    handle = sent.result()
    got = handle.get_result_async()
    rclpy.spin_until_future_complete(node, got, timeout_sec=120)
    rid = bytes(handle.goal_id.uuid).hex()[:12]
    end = time.time() + 30  # the status topic and the result travel apart: until the final event is here too
    while time.time() < end and not any(m.id == rid and m.state in ("finished", "failed") for m in status):
        rclpy.spin_once(node, timeout_sec=0.05)
    for _ in range(10):  # and a last feedback
        rclpy.spin_once(node, timeout_sec=0.05)
    r = got.result()
    rounds = [f for f in feedback if f.state == RunTask.Feedback.ROUND]
    mine = [m for m in status if m.id == rid]
    return {{"status": r.status, "code": r.result.error_code, "msg": r.result.error_msg, "goal": r.result.goal_satisfied,
            "record": r.result.record, "rounds": r.result.rounds, "termination": r.result.termination,
            "feedback": [[f.round, f.subtask.action, f.subtask.target, f.feedback.success] for f in rounds],
            "status_rounds": [[m.round, m.subtask.action, m.subtask.target] for m in mine if m.state == TaskStatus.ROUND],
            "final": [m.state for m in mine][-1:]}}

good = run(RunTask.Goal(task_file="{DEMO}", use_seed=True, seed=1))
bad = run(RunTask.Goal(instruction="take the can", task_file="{DEMO}"))
print(json.dumps({{"good": good, "bad": bad}}))
''')
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "homiebot" not in out.stderr
    data = json.loads(out.stdout.strip().splitlines()[-1])
    good, bad = data["good"], data["bad"]
    assert good["status"] == 4 and good["code"] == 0 and good["goal"] == 1 and good["termination"] == "end"  # 4: SUCCEEDED
    steps = [[s.round, s.output.subtask.action.value, s.output.subtask.target or ""] for s in load_episode(good["record"]).steps]
    assert good["status_rounds"] == steps and len(steps) == good["rounds"] and good["final"] == ["finished"]  # every round, typed
    assert good["feedback"] and all(f[:3] in steps and f[3] for f in good["feedback"])  # each feedback is its round's
    assert good["feedback"][-1][:2] == [good["rounds"], "End"]
    assert bad["status"] == 6 and bad["code"] == 1 and "task_file" in bad["msg"] and bad["record"] == ""  # 6: ABORTED, INVALID_TASK


def test_a_killed_executor_is_reported_and_the_graph_recovers(running_graph, env):
    procs, specs = running_graph["procs"], running_graph["specs"]
    follower = subprocess.Popen([sys.executable, "-m", "homiebot.cli", "submit", "--task", str(DEMO), "--seed", "7", "--timeout", "120"],
                                cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = follower.stdout.readline()
        lines.append(line)
        if line.startswith("task: "):  # the episode runs: kill before it can finish (a whole one takes well under a second here)
            break
    procs["executor"].send_signal(signal.SIGKILL)  # a node we started
    procs["executor"].wait()
    started = time.monotonic()
    rest, errors = follower.communicate(timeout=120)
    output = "".join(lines) + rest + errors
    assert follower.returncode == 3, output  # could not run: a node failed
    assert "homiebot: error: the executor node died: its process" in errors, output  # this machine's: known at once
    assert time.monotonic() - started < 8.0 + 10.0, "reported well within the execute timeout"
    record = load_episode(Path(errors.split("what was recorded:")[1].strip().splitlines()[0]))
    assert record.termination == "error" and "executor" in record.error  # what was recorded before the failure is kept

    procs["executor"] = spawn(specs["executor"], env)
    out = submit(env, "--task", str(DEMO), "--seed", "2")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "goal reached; ended with End" in out.stdout


@pytest.mark.parametrize("param, value, message", [
    ("belief_timeout", "-1.0", "must be greater than 0"),
    ("belief_timeout", "soon", "belief_timeout"),
    ("config", "/no/such/config.yaml", "cannot read config file"),
])
def test_invalid_parameters_stop_a_node_at_start_up(env, param, value, message):
    spec = NodeSpec("detector", "homiebot.ros.nodes.detector", "homiebot_detector", {param: value})
    proc = subprocess.Popen([sys.executable, "-m", spec.module, "--ros-args", "-r", "__node:=detector", "-p", f"{param}:={value}"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 2 and message in err and "Traceback" not in err


def test_core_commands_do_not_import_rclpy():
    code = "import sys, homiebot.cli, homiebot.runtime, homiebot.bench.evaluate; print('rclpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False"


def test_composed_graph_gives_the_same_episode_and_runs_without_its_recorder(tmp_path, config_file):
    env = ros_environment(DOMAIN + 1)  # a graph of its own
    specs = [s for s in graph(str(config_file), "", str(tmp_path)) if s.name != "recorder"]  # bags asked for, no recorder
    procs = spawn_all(specs, env, compose=True)
    try:
        out = submit(env, "--task", str(DEMO), "--seed", "3")
        assert out.returncode == 0, out.stdout + out.stderr
    finally:
        stop(procs)
    assert "homiebot: warning: this episode is not recorded into a bag: no recorder node is running" in out.stderr
    assert not (record_path(out.stdout).parent / "bag").exists()
    from homiebot.config import load_config

    local, _ = run_episode(load_config(config_file).model_copy(update={"seed": 3}), load_task(DEMO))
    assert trace(load_episode(record_path(out.stdout))) == trace(local)


def test_three_simultaneous_submissions_in_one_scene_give_three_records(running_graph, env):
    procs = [subprocess.Popen([sys.executable, "-m", "homiebot.cli", "submit", "--task", str(DEMO), "--seed", "4", "--timeout", "240"],
                              cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(3)]
    try:
        outputs = [p.communicate(timeout=300) for p in procs]
    finally:
        for p in procs:  # processes this test started
            if p.poll() is None:
                p.kill()
                p.wait()
    assert [p.returncode for p in procs] == [0, 0, 0], outputs
    folders = {record_path(out).parent for out, _ in outputs}
    assert len(folders) == 3 and all((f / "episode.json").is_file() for f in folders)
    assert sorted(f.name for f in folders) == ["demo_seed4", "demo_seed4_2", "demo_seed4_3"]


def test_a_burst_of_goals_sent_at_once_is_answered_whole_and_cancelled_whole(running_graph, env):
    """40 RunTask goals from one plain client that waits for no reply: the task manager's request queues (rclpy's
    default depth of 10 lost all but ten of a burst) take every one, and every one ends once cancelled."""
    from homiebot_msgs.action import RunTask

    count = 40
    args = {"goal": {"task_file": str(DEMO), "use_seed": True, "seed": 5}, "count": count}
    done = subprocess.run([sys.executable, str(PLAIN_CLIENT), "burst"], input=json.dumps(args), env=env, capture_output=True,
                          text=True, timeout=360)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["answered"] == seen["accepted"] == seen["ended"] == count, seen
    # the first may have run to its end before its cancel came; every other goal was cancelled, queued or running
    assert seen["codes"].count(RunTask.Result.CANCELLED) >= count - 1, seen
    assert set(seen["codes"]) <= {RunTask.Result.CANCELLED, RunTask.Result.NONE}, seen
