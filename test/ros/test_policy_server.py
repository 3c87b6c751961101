"""A policy in its own process: a PolicySkill drives the robot through a policy server, and a server
killed mid-skill makes the executor report E1 with a clear message within its timeout.

The servers run with localhost-only discovery and a ROS_DOMAIN_ID of their own; so does this process.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from homiebot.core.contracts import Action, ErrorCode, Subtask  # noqa: E402
from homiebot.executor import Executor  # noqa: E402
from homiebot.ros.clients.remote_policy import RemotePolicy, server_command  # noqa: E402
from homiebot.ros.kit.environment import ros_environment  # noqa: E402
from homiebot.skills.policy_skill import PolicySkill  # noqa: E402
from homiebot.worlds.home.scene import load_scene  # noqa: E402
from homiebot.worlds.home.world import EmbeddedHome  # noqa: E402
from test.conftest import ROOT  # noqa: E402
from test.ros_domains import domain_of  # noqa: E402

DOMAIN = domain_of(__name__)
FORWARD = {"commands": [{"kind": "waypoints", "points": [[0.5, 0.0]]}], "repeat": True, "family": "nomad"}
TIMEOUT = 2.0
ATTEMPTS = 3


@pytest.fixture(scope="module")
def env():
    env = ros_environment(DOMAIN)
    saved = {k: os.environ.get(k) for k in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE")}
    os.environ["ROS_DOMAIN_ID"] = str(DOMAIN)  # the clients of this process join the servers' domain
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    yield env
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture(scope="module")
def world():
    w = EmbeddedHome(load_scene(ROOT / "config" / "scenes" / "demo.yaml"), width=32, height=32, depth=False, segmentation=False)
    yield w
    w.close()


def start_server(env, service: str, params: dict) -> subprocess.Popen:
    name = "policy_" + service.rsplit("/", 1)[-1]
    return subprocess.Popen(server_command(sys.executable, name, "scripted", params, service), env=env)


def stop_server(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def served_skill(service: str, params: dict, policy: RemotePolicy | None = None) -> PolicySkill:
    if policy is not None:
        return PolicySkill("NoMaD", policy=policy, actions=["Go to"], max_steps=60)
    return PolicySkill("NoMaD", policy="scripted", policy_params=params, max_steps=60,
                       process={"service": service, "timeout": TIMEOUT, "connect_timeout": 30.0, "spawn": False})


def test_a_served_policy_drives_a_skill_to_success(env, world) -> None:
    service = f"policy/forward_{os.getpid()}"
    server = start_server(env, service, FORWARD)
    skill = served_skill(service, FORWARD)
    try:
        assert skill.name == "policy:scripted@server"
        assert skill.availability() is None  # waits for the server to be discovered and answer describe
        assert skill.image_size == (32, 32) and skill.rate_hz == 4.0
        world.reset()
        run = Executor({"NoMaD": skill}, max_attempts=ATTEMPTS).execute(Subtask(action=Action.GO_TO, target="kitchen"),
                                                                         "NoMaD", world, 0, 1)
        assert run.feedback.status == "success", run.feedback.message
        assert run.skill == "policy:scripted@server" and run.attempts == 1
        assert world.ground_truth().robot_room() == "kitchen"
    finally:
        skill.close()
        stop_server(server)


class Watched(RemotePolicy):
    """Signals after its first answered ``act``."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.first_act = threading.Event()

    def act(self, obs):
        commands = super().act(obs)
        self.first_act.set()
        return commands


def test_a_server_killed_mid_skill_gives_e1_with_a_clear_message_within_the_timeout(env, world) -> None:
    service = f"policy/slow_{os.getpid()}"
    slow = {**FORWARD, "delay": 0.3}
    server = start_server(env, service, slow)
    policy = Watched("scripted", slow, service=service, timeout=TIMEOUT, label="NoMaD (scripted)", spawn=False)
    skill = served_skill(service, slow, policy)
    try:
        assert skill.availability() is None
        world.reset()
        box: list = []
        executor = Executor({"NoMaD": skill}, max_attempts=ATTEMPTS)
        worker = threading.Thread(target=lambda: box.append(executor.execute(
            Subtask(action=Action.GO_TO, target="fridge"), "NoMaD", world, 0, 1)), daemon=True)
        worker.start()
        assert policy.first_act.wait(30), "the server never answered act"
        server.send_signal(signal.SIGKILL)
        killed = time.monotonic()
        limit = TIMEOUT * ATTEMPTS + 10.0
        worker.join(limit)
        elapsed = time.monotonic() - killed
        assert not worker.is_alive(), f"the executor was still waiting {limit:g} s after the server died"
        run = box[0]
        assert run.feedback.status == "fail" and run.feedback.code is ErrorCode.E1 and run.attempts == ATTEMPTS
        msg = run.feedback.message
        assert f"the NoMaD (scripted) policy server did not answer within {TIMEOUT:g} s; is it running?" in msg, msg
        assert elapsed < limit
    finally:
        skill.close()
        stop_server(server)


def test_the_graph_starts_one_policy_server_per_served_skill(tmp_path) -> None:
    from homiebot.ros.bringup.graph import graph, ros_args

    cfg = tmp_path / "served.yaml"
    cfg.write_text("skills:\n"
                   "  - {name: policy_skill, model: RT-1-X, params: {policy: rt1x, policy_params: {checkpoint: models/rt1x},\n"
                   "     process: {python_executable: /opt/tf/bin/python, timeout: 5}}}\n"
                   "  - {name: privileged_navigation, model: NoMaD}\n")
    specs = {s.name: s for s in graph(str(cfg))}
    server = specs["policy_rt_1_x"]
    assert server.python == "/opt/tf/bin/python" and server.executable == "homiebot_policy_server"
    assert server.parameters == {"policy": "rt1x", "policy_params": '{"checkpoint": "models/rt1x"}', "service": "policy/rt_1_x"}
    assert "policy_params:='{\"checkpoint\": \"models/rt1x\"}'" in ros_args(server)
    assert all(s.python is None for n, s in specs.items() if n != "policy_rt_1_x")


PLAIN_CLIENT = r'''
import sys
import rclpy
from rclpy.node import Node
from homiebot_msgs.msg import PolicyCommand
from homiebot_msgs.srv import DescribePolicy, PolicyAct, ResetPolicy
from sensor_msgs.msg import Image

base = sys.argv[1]
rclpy.init()
node = Node("plain_policy_client")

def call(kind, name, request):
    client = node.create_client(kind, f"{base}/{name}")
    assert client.wait_for_service(timeout_sec=60), name
    future = client.call_async(request)
    rclpy.spin_until_future_complete(node, future, timeout_sec=60)
    return future.result()

info = call(DescribePolicy, "describe", DescribePolicy.Request())
print("describe", info.policy, info.family, info.image_height, info.image_width, info.rate_hz, repr(info.availability))
reset = call(ResetPolicy, "reset", ResetPolicy.Request(instruction="go to the kitchen"))
print("reset", reset.error_code)
rgb = Image(height=32, width=32, encoding="rgb8", step=96, data=bytes(32 * 32 * 3))
act = call(PolicyAct, "act", PolicyAct.Request(rgb=rgb, step=0))
c = act.commands[0]
print("act", act.error_code, len(act.commands), c.kind == PolicyCommand.WAYPOINTS, list(c.points))
bad = call(PolicyAct, "act", PolicyAct.Request(rgb=Image(height=32, width=32, encoding="rgb8", step=96, data=bytes(10))))
print("bad", bad.error_code == PolicyAct.Response.INVALID_REQUEST, bad.error_msg)
garbage = call(PolicyAct, "act", PolicyAct.Request(rgb=Image(height=2, width=2, encoding="bgr16", step=16, data=bytes(32))))
print("garbage", garbage.error_code == PolicyAct.Response.INVALID_REQUEST, garbage.error_msg)
again = call(PolicyAct, "act", PolicyAct.Request(rgb=rgb, step=1))
print("again", again.error_code, len(again.commands))
'''


def test_a_plain_client_calls_the_typed_services_and_bad_images_are_refused_with_a_code(env, tmp_path) -> None:
    service = f"policy/plain_{os.getpid()}"
    server = start_server(env, service, FORWARD)
    script = tmp_path / "client.py"
    script.write_text(PLAIN_CLIENT)
    try:
        done = subprocess.run([sys.executable, str(script), f"/homiebot/{service}"], env={**env, "PYTHONPATH": ""},
                              capture_output=True, text=True, timeout=180, cwd=tmp_path)  # it imports rclpy and the interfaces only
        assert done.returncode == 0, done.stderr
        lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
        assert lines["describe"] == "scripted nomad 32 32 4.0 ''"
        assert lines["reset"] == "0"
        assert lines["act"] == "0 1 True [0.5, 0.0]"
        assert lines["bad"].startswith("True PolicyMessageError: rgb: 32x32 rgb8 with step 96 and 10 bytes")
        assert lines["garbage"] == "True PolicyMessageError: rgb: encoding 'bgr16', expected rgb8"
        assert lines["again"] == "0 1"  # the server goes on after garbage
        assert server.poll() is None
    finally:
        stop_server(server)
