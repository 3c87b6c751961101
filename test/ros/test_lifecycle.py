"""The graph's nodes are ROS 2 managed (lifecycle) nodes: a plain client that knows only rclpy, lifecycle_msgs and
homiebot_msgs brings a world node started with ``autostart:=false`` through configure, activate, deactivate,
cleanup and configure again, and sees its services refuse while it is not active and answer while it is.
A node started as ``homiebot up`` starts it (autostart) is active at once. Processes run with localhost-only
discovery and a ROS_DOMAIN_ID of their own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from homiebot.core.tasks import load_task  # noqa: E402
from homiebot.ros.bringup.up import stop  # noqa: E402
from homiebot.ros.clients.world_link import scene_text  # noqa: E402
from homiebot.ros.kit.environment import ros_environment  # noqa: E402
from homiebot.runtime import scene_for  # noqa: E402
from test.conftest import DEMO_TASK  # noqa: E402
from test.ros_domains import domain_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DOMAIN = domain_of(__name__)

CLIENT = r'''
import json, sys, time
import rclpy
from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState, GetState
from homiebot_msgs.msg import Heartbeat
from homiebot_msgs.srv import ResetWorld

rclpy.init()
node = rclpy.create_node("lifecycle_client")
seen = []


def call(kind, name, request, timeout=90.0):
    client = node.create_client(kind, name)
    if not client.wait_for_service(timeout_sec=timeout):
        return None
    future = client.call_async(request)
    rclpy.spin_until_future_complete(node, future, timeout_sec=timeout)
    node.destroy_client(client)
    return future.result()


def state():
    return call(GetState, "/homiebot/world/get_state", GetState.Request()).current_state.label


def change(transition):
    return call(ChangeState, "/homiebot/world/change_state", ChangeState.Request(transition=Transition(id=transition))).success


def reset():
    r = call(ResetWorld, "/homiebot/world/reset", ResetWorld.Request(scene=open(sys.argv[2]).read()), timeout=float(sys.argv[1]))
    return None if r is None else [r.error_code, r.error_msg]


def has_reset():
    deadline = time.time() + 5
    while time.time() < deadline:
        names = [n for n, _ in node.get_service_names_and_types()]
        if "/homiebot/world/reset" in names:
            return True
        rclpy.spin_once(node, timeout_sec=0.1)
    return False


beats, states = [], []
node.create_subscription(Heartbeat, "/homiebot/heartbeat", lambda m: beats.append(m.node) or states.append((m.node, m.state)), 10)


def beat_state():
    """The lifecycle state the world's next heartbeat carries (None if none comes within 5 s)."""
    states.clear()
    deadline = time.time() + 5
    while time.time() < deadline:
        rclpy.spin_once(node, timeout_sec=0.05)
        said = [st for n, st in states if n == "world"]
        if said:
            return said[-1]
    return None


seen.append(["start", state(), has_reset()])
for name, transition in (("configure", Transition.TRANSITION_CONFIGURE), ("activate", Transition.TRANSITION_ACTIVATE),
                         ("deactivate", Transition.TRANSITION_DEACTIVATE), ("cleanup", Transition.TRANSITION_CLEANUP),
                         ("configure", Transition.TRANSITION_CONFIGURE), ("activate", Transition.TRANSITION_ACTIVATE)):
    ok = change(transition)
    label = state()
    seen.append([name, ok, label, reset() if label != "unconfigured" else has_reset(), beat_state()])
beats.clear()
deadline = time.time() + 10
while time.time() < deadline and "world" not in beats:
    rclpy.spin_once(node, timeout_sec=0.1)
seen.append(["beats after cleanup and configure", "world" in beats])
finalized = change(Transition.TRANSITION_ACTIVE_SHUTDOWN)
label = state()
deadline = time.time() + 0.5  # beats already on their way
while time.time() < deadline:
    rclpy.spin_once(node, timeout_sec=0.05)
beats.clear()
deadline = time.time() + 2.0  # four heartbeat periods
while time.time() < deadline:
    rclpy.spin_once(node, timeout_sec=0.05)
seen.append(["shutdown", finalized, label, "world" in beats])
print(json.dumps(seen))
'''


@pytest.fixture(scope="module")
def env():
    return ros_environment(DOMAIN)


@pytest.fixture(scope="module")
def config(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cfg") / "small.yaml"
    path.write_text("world: {name: embedded_home, params: {width: 32, height: 32, depth: false, segmentation: false}}\n")
    return path


def start_world(config: Path, env: dict, autostart: bool) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "homiebot.ros.nodes.world", "--ros-args", "-p", f"config:={config}",
                             "-p", f"autostart:={str(autostart).lower()}"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def run_client(tmp_path: Path, env: dict, reset_timeout: float) -> list:
    script, scene = tmp_path / "client.py", tmp_path / "scene.json"
    script.write_text(CLIENT)
    scene.write_text(scene_text(scene_for(load_task(DEMO_TASK)).model_dump(mode="json", by_alias=True, exclude_none=True)))
    out = subprocess.run([sys.executable, str(script), str(reset_timeout), str(scene)], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_lifecycle_manager_drives_the_world_node_through_every_state(tmp_path, env, config):
    proc = start_world(config, env, autostart=False)
    try:
        seen = run_client(tmp_path, env, 60.0)
    finally:
        stop({"world": proc})
    assert seen[0] == ["start", "unconfigured", False]  # nothing built, no world services yet
    configure, activate, deactivate, cleanup, again, active_again, beating, shutdown = seen[1:]
    # each heartbeat carries the node's lifecycle state (lifecycle_msgs/State ids), so the task manager sees at once a
    # node taken out of service mid-episode
    assert [step[-1] for step in (configure, activate, deactivate, cleanup, again, active_again)] == [2, 3, 2, 1, 2, 3]
    assert configure[:3] == ["configure", True, "inactive"]
    code, message = configure[3]
    assert code != 0 and "not active" in message and "ros2 lifecycle set /homiebot/world activate" in message
    assert activate[:3] == ["activate", True, "active"] and activate[3][0] == 0, activate  # the world resets a scene
    assert deactivate[:3] == ["deactivate", True, "inactive"] and deactivate[3][0] != 0 and "not active" in deactivate[3][1]
    assert cleanup[:4] == ["cleanup", True, "unconfigured", False]  # the component and its services are gone
    assert again[:3] == ["configure", True, "inactive"]
    assert active_again[:3] == ["activate", True, "active"] and active_again[3][0] == 0, active_again
    assert beating == ["beats after cleanup and configure", True]  # the process's heartbeat is not the component's
    assert shutdown == ["shutdown", True, "finalized", False]  # finalized: no heartbeat says it is alive


def test_a_node_started_with_autostart_is_active_at_once(tmp_path, env, config):
    proc = start_world(config, env, autostart=True)
    try:
        script = tmp_path / "state.py"
        script.write_text(
            "import rclpy, json\nfrom lifecycle_msgs.srv import GetState\nrclpy.init()\nnode = rclpy.create_node('probe')\n"
            "c = node.create_client(GetState, '/homiebot/world/get_state')\nassert c.wait_for_service(timeout_sec=90)\n"
            # asked again when no reply comes: one sent before the reply's way back was matched is lost
            "for _ in range(12):\n    f = c.call_async(GetState.Request())\n    rclpy.spin_until_future_complete(node, f, timeout_sec=10)\n"
            "    if f.done():\n        break\n"
            "print(json.dumps(f.result().current_state.label))\n")
        out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=200)
    finally:
        stop({"world": proc})
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == "active"


def test_a_configuration_error_with_autostart_ends_the_process_with_status_2(env, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("world: {name: no_such_world}\n")
    proc = start_world(bad, env, autostart=True)
    try:
        out, _ = proc.communicate(timeout=120)
    finally:
        stop({"world": proc})
    assert proc.returncode == 2, out[-2000:]
    assert "no_such_world" in out and "Traceback" not in out


MISUSE = """
import json, sys
import rclpy
from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState

rclpy.init()
node = rclpy.create_node("plain_misuser")
client = node.create_client(ChangeState, "/homiebot/planner/change_state")
assert client.wait_for_service(timeout_sec=120)
answers = []
for transition in json.loads(sys.argv[1]):
    future = client.call_async(ChangeState.Request(transition=Transition(id=transition)))
    rclpy.spin_until_future_complete(node, future, timeout_sec=60)
    answers.append(future.result().success if future.done() else None)
print(json.dumps(answers))
"""
T = {"configure": 1, "cleanup": 2, "activate": 3, "deactivate": 4}


def test_invalid_transitions_are_refused_and_cleanup_cycles_of_a_node_with_an_action_leave_it_serving(tmp_path, env):
    """Before: configure on an active node, an unknown id or cleanup on an active node raised inside rclpy's handler and
    ended the process (the caller got no answer); a cleanup of the planner node (its planner/plan action) while its
    spin thread built a wait set ended it with "action server pointer is invalid"."""
    log = tmp_path / "planner.log"
    invalid = [T["configure"], 99, T["cleanup"]]
    cycle = [T["deactivate"], T["cleanup"], T["configure"], T["activate"]]
    with log.open("w") as sink:
        planner = subprocess.Popen([sys.executable, "-m", "homiebot.ros.nodes.planner", "--ros-args", "-r", "__ns:=/homiebot"],
                                   cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT)
    try:
        done = subprocess.run([sys.executable, "-c", MISUSE, json.dumps(invalid + cycle * 3 + invalid)], env=env, capture_output=True,
                              text=True, timeout=600)
        alive = planner.poll() is None
    finally:
        planner.terminate()
        status = planner.wait(30)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.splitlines()[-1]) == [False] * 3 + [True] * 12 + [False] * 3, log.read_text()[-3000:]
    assert alive and status == 0 and "Traceback" not in log.read_text(), log.read_text()[-3000:]
    assert "refused transition '99' in state 'active'" in log.read_text()
