"""``homiebot up --lifecycle-manager``: the nodes start unconfigured and the lifecycle manager brings them up in
order; a plain client (rclpy, lifecycle_msgs, nav2_msgs, std_srvs: no homiebot import) pauses and resumes the
graph through ``manage_nodes`` as it would Nav2's; a killed node comes back (``up`` restarts it) and the manager
brings it up again (bond-style, from its heartbeat); SHUTDOWN finalizes every node and the graph then stops
without an error.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytest.importorskip("nav2_msgs", reason="nav2_msgs is built by tools/build_interfaces.py (make setup)")

from homiebot.ros.kit.environment import ros_environment  # noqa: E402
from test.ros_domains import domain_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "config" / "tasks" / "demo.yaml"
DOMAIN = domain_of(__name__)
NODES = ["world", "mapper", "planner", "detector", "executor", "task_manager"]

# python -c CLIENT COMMAND: COMMAND is "wait_active", a ManageLifecycleNodes command number, or "states"
CLIENT = textwrap.dedent("""
    import json, sys, time
    import rclpy
    from lifecycle_msgs.srv import GetState
    from nav2_msgs.srv import ManageLifecycleNodes
    from std_srvs.srv import Trigger

    NODES = json.loads(sys.argv[2])
    rclpy.init()
    node = rclpy.create_node("plain_manager_client")

    def call(kind, name, request, timeout=120, tries=3):
        # every request here is idempotent (the manager's commands go from each node's current state), so a
        # reply lost under load is answered by sending again; any copy's answer counts
        client = node.create_client(kind, name)
        assert client.wait_for_service(timeout_sec=timeout), name
        futures = []
        for _ in range(tries):
            futures.append(client.call_async(request))
            deadline = time.monotonic() + timeout / tries
            while time.monotonic() < deadline and not any(f.done() for f in futures):
                rclpy.spin_once(node, timeout_sec=0.1)
            answered = [f for f in futures if f.done()]
            if answered:
                return answered[0].result()
            print(f"no answer from {name} within {timeout / tries:g} s: sending again", file=sys.stderr)
        raise SystemExit(f"no answer from {name} to {len(futures)} requests in {timeout:g} s")

    out = {}
    if sys.argv[1] == "wait_active":
        deadline = time.monotonic() + 240
        while not (active := call(Trigger, "/homiebot/lifecycle_manager/is_active", Trigger.Request()).success):
            if time.monotonic() > deadline:
                break
            time.sleep(0.5)
        out["active"] = active
    elif sys.argv[1] != "states":
        request = ManageLifecycleNodes.Request(command=int(sys.argv[1]))
        out["success"] = call(ManageLifecycleNodes, "/homiebot/lifecycle_manager/manage_nodes", request, 300).success
    out["states"] = {n: call(GetState, f"/homiebot/{n}/get_state", GetState.Request()).current_state.label for n in NODES}
    print(json.dumps(out))
""")
PAUSE, RESUME, SHUTDOWN = 1, 2, 4


def client(env: dict, command: str, log: Path | None = None) -> dict:
    """The plain client's answer to ``command``; on a failure, the graph's log (``log``) is shown with it."""
    done = subprocess.run([sys.executable, "-c", CLIENT, command, json.dumps(NODES)], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:] + ("\n--- the graph's log:\n" + log.read_text()[-4000:] if log else "")
    return json.loads(done.stdout.strip().splitlines()[-1])


def submit(env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "homiebot.cli", "submit", "--task", str(DEMO), "--timeout", "240"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=360)


def test_the_lifecycle_manager_brings_the_graph_up_pauses_resumes_reconnects_and_shuts_it_down(tmp_path):
    env = ros_environment(DOMAIN)
    log = tmp_path / "up.log"
    with log.open("w") as sink:
        up = subprocess.Popen([sys.executable, "-m", "homiebot.cli", "up", "--lifecycle-manager", "--no-bag", "--out", str(tmp_path / "runs")],
                              cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT, text=True)
    try:
        started = client(env, "wait_active", log)
        assert started["active"] and set(started["states"].values()) == {"active"}, (started, log.read_text()[-3000:])
        assert "waiting unconfigured for its lifecycle manager" in log.read_text()  # they did not start themselves

        paused = client(env, str(PAUSE), log)
        assert paused["success"] and set(paused["states"].values()) == {"inactive"}, paused
        refused = submit(env)
        assert refused.returncode != 0 and "not active" in refused.stdout + refused.stderr, refused.stdout + refused.stderr

        resumed = client(env, str(RESUME), log)
        assert resumed["success"] and set(resumed["states"].values()) == {"active"}, resumed
        ran = submit(env)
        assert ran.returncode == 0, ran.stdout + ran.stderr

        planner_pid = int(re.search(r"planner \(pid (\d+)\)", log.read_text()).group(1))  # type: ignore[union-attr]
        subprocess.run(["kill", "-9", str(planner_pid)], check=True)  # a process this test's graph started
        deadline = time.monotonic() + 120
        while "came back (a new process)" not in log.read_text():
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.5)
        back = client(env, "wait_active", log)
        assert back["active"] and back["states"]["planner"] == "active", back
        assert submit(env).returncode == 0

        down = client(env, str(SHUTDOWN), log)
        assert down["success"] and set(down["states"].values()) == {"finalized"}, down
    finally:
        up.send_signal(signal.SIGINT)
        try:
            status = up.wait(timeout=60)
        except subprocess.TimeoutExpired:
            up.kill()
            up.wait()
            status = None
    text = log.read_text()
    assert status == 0 and "Traceback" not in text and "ValueError" not in text, text[-3000:]
