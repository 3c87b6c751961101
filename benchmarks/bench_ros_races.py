"""Discovery races of the ROS 2 graph: replies lost to a client that was not matched yet, and goals lost in a burst.

    python benchmarks/bench_ros_races.py [--clients 40] [--burst 301] [--busy 2] [--skip-burst]

1. Fresh clients. A server process answers ``std_srvs/Trigger``; a client process makes ``--clients`` new
   participants one after the other, each waits for the service, calls it once and waits up to 15 s for the
   reply. Run twice: the server with Fast DDS's defaults, then with homiebot's profile (homiebot/ros/kit/fastdds.xml,
   whose writers wait up to 10 s for the client's reply reader, homiebot/ros/kit/dds_profile.py). Prints the replies
   lost and how long discovery took (from a new client to ``service_is_ready``, the client's side of it).
2. A burst of goals. The graph is started (oracle planner, no bag); one plain rclpy process sends ``--burst``
   RunTask goals at once, without waiting for replies, and counts the goal replies that come within 120 s, once
   with rclpy's default action client and once with a client whose goal replies are queued as deep as the
   burst. Every goal accepted is then cancelled, and the results that came within 240 s are counted (the default
   client's writers keep 10 requests too: most of its cancels are lost, and those goals run as episodes).

``--busy N`` runs N busy processes beside it all (a loaded machine). Nothing but this machine is reached: every
process has ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST and a ROS_DOMAIN_ID of its own.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SERVER = r"""
import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from std_srvs.srv import Trigger
rclpy.init()
node = Node("race_server")
node.create_service(Trigger, "/race/trigger", lambda request, response: response)
try:
    rclpy.spin(node)
except (KeyboardInterrupt, ExternalShutdownException):
    pass
"""

FRESH_CLIENTS = r"""
import json, sys, time
import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from std_srvs.srv import Trigger
out = []
for i in range(int(sys.argv[1])):
    context = Context()
    rclpy.init(context=context)
    node = Node(f"race_client_{i}", context=context)
    client = node.create_client(Trigger, "/race/trigger")
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    start = time.monotonic()
    while not client.service_is_ready() and time.monotonic() - start < 60:
        executor.spin_once(timeout_sec=0.01)
    discovered = time.monotonic() - start
    future = client.call_async(Trigger.Request())
    sent = time.monotonic()
    while not future.done() and time.monotonic() - sent < 15:
        executor.spin_once(timeout_sec=0.01)
    out.append({"discovery": discovered, "answered": future.done(), "reply": time.monotonic() - sent})
    executor.shutdown()
    node.destroy_node()
    rclpy.shutdown(context=context)
print(json.dumps(out))
"""

BURST = r"""
import json, sys, time
import rclpy
from rclpy.action import ActionClient
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from homiebot_msgs.action import RunTask
count, deep, task_file = int(sys.argv[1]), sys.argv[2] == "deep", sys.argv[3]
rclpy.init()
node = Node("race_burst")
deep_queue = QoSProfile(depth=count, reliability=ReliabilityPolicy.RELIABLE)
qos = {f"{kind}_service_qos_profile": deep_queue for kind in ("goal", "result", "cancel")} if deep else {}
client = ActionClient(node, RunTask, "/homiebot/run_task", **qos)
if not client.wait_for_server(timeout_sec=120):
    sys.exit("no RunTask server")
futures = [client.send_goal_async(RunTask.Goal(task_file=task_file, use_seed=True, seed=i)) for i in range(count)]
start = time.monotonic()
while time.monotonic() - start < 120 and not all(f.done() for f in futures):
    rclpy.spin_once(node, timeout_sec=0.05)
handles = [f.result() for f in futures if f.done()]
accepted = [h for h in handles if h.accepted]
for h in accepted:
    h.cancel_goal_async()
results = [h.get_result_async() for h in accepted]
while time.monotonic() - start < 240 and not all(r.done() for r in results):
    rclpy.spin_once(node, timeout_sec=0.05)
print(json.dumps({"sent": count, "answered": len(handles), "accepted": len(accepted), "ended": sum(r.done() for r in results),
                  "seconds": time.monotonic() - start}))
"""


def environment(domain: int, profile: bool) -> dict[str, str]:
    """This machine only, a domain of its own; homiebot's Fast DDS profile or none (Fast DDS's defaults)."""
    from homiebot.ros.kit.dds_profile import VARIABLES, use_profile

    env = {k: v for k, v in os.environ.items() if k not in VARIABLES}
    env.update(ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", ROS_DOMAIN_ID=str(domain))
    if profile:
        use_profile(env)
    return env


def fresh_clients(domain: int, profile: bool, clients: int, nice: int) -> list[dict]:
    env = environment(domain, profile)
    server = subprocess.Popen([sys.executable, "-c", SERVER], env=env, preexec_fn=lambda: os.nice(nice))  # ours, stopped below
    try:
        run = subprocess.run([sys.executable, "-c", FRESH_CLIENTS, str(clients)], env=environment(domain, False),
                             capture_output=True, text=True, timeout=60 + clients * 90)
        if run.returncode != 0:
            raise SystemExit(f"the client process failed: {run.stderr[-2000:]}")
        return json.loads(run.stdout.strip().splitlines()[-1])
    finally:
        server.terminate()
        server.wait(timeout=30)


def burst(domain: int, count: int) -> dict[str, dict]:
    from homiebot.ros.bringup.graph import graph
    from homiebot.ros.bringup.up import spawn_all, stop
    from homiebot.ros.kit.environment import ros_environment

    env = ros_environment(domain)
    task_file = str(ROOT / "config" / "tasks" / "demo.yaml")
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        sys.stdout.flush()
        shown = os.dup(1)
        with open(Path(tmp) / "graph.log", "w") as log:  # the nodes print every round: not here
            os.dup2(log.fileno(), 1)
            try:
                procs = spawn_all(graph(str(ROOT / "config" / "sim.yaml"), "oracle", tmp, record_bag=False), env)
            finally:
                os.dup2(shown, 1)
                os.close(shown)
        try:
            for kind in ("default", "deep"):
                run = subprocess.run([sys.executable, "-c", BURST, str(count), kind, task_file], env=env, capture_output=True,
                                     text=True, timeout=600)
                if run.returncode != 0:
                    raise SystemExit(f"the burst client failed: {run.stderr[-2000:]}")
                out[kind] = json.loads(run.stdout.strip().splitlines()[-1])
        finally:
            stop(procs)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clients", type=int, default=40, help="fresh clients per server (default 40)")
    ap.add_argument("--burst", type=int, default=301, help="RunTask goals sent at once (default 301)")
    ap.add_argument("--busy", type=int, default=0, help="busy processes beside the measurement (default none)")
    ap.add_argument("--nice", type=int, default=0, help="the Trigger server's niceness: 19 starves it beside --busy processes, "
                    "as a node is starved on a loaded machine (default 0)")
    ap.add_argument("--skip-burst", action="store_true", help="only the fresh clients")
    ap.add_argument("--domain-id", type=int, default=140 + os.getpid() % 40)
    args = ap.parse_args()

    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]  # ours, killed below
    try:
        print(f"{args.busy} busy process(es) beside the measurement, load {os.getloadavg()[0]:.1f}")
        for profile in (False, True):
            seen = fresh_clients(args.domain_id, profile, args.clients, args.nice)
            lost = sum(not s["answered"] for s in seen)
            discovery = sorted(s["discovery"] for s in seen)
            replies = sorted(s["reply"] for s in seen if s["answered"])
            print(f"fresh clients, server with {'homiebot profile' if profile else 'Fast DDS defaults'}: {lost} of {len(seen)} replies "
                  f"lost; discovery median {1000 * statistics.median(discovery):.0f} ms, slowest {1000 * discovery[-1]:.0f} ms; reply "
                  f"median {1000 * statistics.median(replies) if replies else float('nan'):.1f} ms, "
                  f"slowest {1000 * replies[-1] if replies else float('nan'):.0f} ms")
        if not args.skip_burst:
            for kind, seen in burst(args.domain_id, args.burst).items():
                print(f"burst of {seen['sent']} RunTask goals, {kind} client queue: {seen['answered']} answered, {seen['accepted']} accepted, "
                      f"{seen['ended']} ended after their cancel, {seen['seconds']:.1f} s")
    finally:
        for proc in busy:
            proc.kill()
            proc.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
