"""`homiebot up --foxglove` as a Foxglove user meets it: a plain websocket client (no homiebot, no
foxglove package) on loopback sees the graph's channels with their ROS 2 schemas and receives camera
images and subtasks while an episode runs; the saved layout names only served topics.

The graph runs with localhost-only discovery and a ROS_DOMAIN_ID of its own (40-49)."""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("foxglove")
pytest.importorskip("rclpy")
from websockets.sync.client import connect  # noqa: E402

from homiebot.core.contracts import Action  # noqa: E402
from homiebot.ros.kit.environment import ros_environment  # noqa: E402
from test.ros_domains import domain_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "config" / "tasks" / "demo.yaml"
LAYOUT = ROOT / "config" / "foxglove" / "homiebot.json"
DOMAIN = domain_of(__name__)
SUBPROTOCOLS = ["foxglove.sdk.v1", "foxglove.websocket.v1"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def served_topics() -> dict[str, str]:
    """The served topics as the default graph's channels name them (under /homiebot)."""
    from homiebot.ros.clients.foxglove import served_topics as topics

    return {f"/homiebot/{name}": kind for name, kind in topics().items()}


def test_layout_is_json_and_names_only_served_topics():
    layout = json.loads(LAYOUT.read_text())
    named = set()

    def walk(value):
        if isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)
        elif isinstance(value, str) and value.startswith("/homiebot/"):
            named.add(value.split(".")[0])
    walk(layout["configById"])
    assert named and named <= set(served_topics()), named - set(served_topics())
    for key in ("/homiebot/camera/front/image", "/homiebot/subtask", "/homiebot/safety"):
        assert key in named


@pytest.fixture(scope="module")
def graph_with_foxglove(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fox")
    cfg = tmp / "graph.yaml"
    cfg.write_text("planner: {name: oracle}\nworld: {name: embedded_home, params: {width: 64, height: 64}}\n")
    port = free_port()
    env = {**ros_environment(DOMAIN), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "homiebot.cli", "up", "--config", str(cfg), "--out", str(tmp / "runs"), "--no-bag",
                             "--domain-id", str(DOMAIN), "--foxglove", "--foxglove-port", str(port)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the Foxglove server did not come up"
                time.sleep(0.5)
        yield {"port": port, "env": env, "tmp": tmp}
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_a_plain_websocket_client_sees_channels_and_receives_images_and_subtasks(graph_with_foxglove):
    g = graph_with_foxglove
    with connect(f"ws://127.0.0.1:{g['port']}", subprotocols=SUBPROTOCOLS, open_timeout=20, max_size=None) as ws:
        channels: dict[str, dict] = {}
        deadline = time.monotonic() + 30
        while len(channels) < len(served_topics()) and time.monotonic() < deadline:
            msg = ws.recv(timeout=30)
            if isinstance(msg, str):
                data = json.loads(msg)
                if data.get("op") == "advertise":
                    channels |= {c["topic"]: c for c in data["channels"]}
        assert set(channels) == set(served_topics())
        front = channels["/homiebot/camera/front/image"]
        assert front["encoding"] == "cdr" and front["schemaEncoding"] == "ros2msg" and front["schemaName"] == "sensor_msgs/Image"
        assert "uint32 height" in front["schema"]
        wanted = {1: "/homiebot/camera/front/image", 2: "/homiebot/subtask"}
        ws.send(json.dumps({"op": "subscribe", "subscriptions": [{"id": i, "channelId": channels[t]["id"]} for i, t in wanted.items()]}))
        submit = subprocess.Popen([sys.executable, "-m", "homiebot.cli", "submit", "--task", str(DEMO), "--seed", "0", "--timeout", "240"],
                                  env=g["env"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        got: dict[int, list[bytes]] = {1: [], 2: []}
        try:
            deadline = time.monotonic() + 240
            while (not got[1] or not got[2]) and time.monotonic() < deadline:
                try:
                    msg = ws.recv(timeout=5)
                except TimeoutError:
                    continue
                if isinstance(msg, bytes) and msg[0] == 0x01:  # message data: subscription id, log time, payload
                    sub_id = struct.unpack_from("<I", msg, 1)[0]
                    got.setdefault(sub_id, []).append(msg[13:])
        finally:
            submit.wait(300)
        assert got[1] and got[2], {k: len(v) for k, v in got.items()}
        assert len(got[1][0]) > 64 * 64 * 3  # a whole rgb8 frame in CDR
        sub = channels["/homiebot/subtask"]
        assert sub["schemaName"] == "homiebot_msgs/PlannerOutput" and "homiebot_msgs/Subtask subtask" in sub["schema"]
        # A typed PlannerOutput in CDR. Which round arrives first depends on when the bridge's subscription
        # matched the planner's publisher (on a loaded machine the first rounds may be gone), so decode any.
        from homiebot_msgs.msg import PlannerOutput
        from rclpy.serialization import deserialize_message

        out = deserialize_message(got[2][0], PlannerOutput)
        assert out.subtask.action in {a.value for a in Action} and out.subtask.target and out.analysis


def test_without_the_extra_foxglove_is_refused_in_one_line():
    code = "import sys; sys.modules['foxglove'] = None; from homiebot.cli import main; sys.exit(main(['up', '--foxglove']))"
    done = subprocess.run([sys.executable, "-c", code], env={**ros_environment(DOMAIN), "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "homiebot[viz]" in done.stderr and done.stderr.strip().count("\n") == 0
