"""Fault injection on a running graph: kill each node ``homiebot up`` starts, at random moments of an
episode, and measure how the graph copes.

    python benchmarks/bench_faults.py [--kills 3] [--seed 0] [--domain-id 187] [--campaign]

Per node: detection time (kill -> the task manager's failed event naming the node; for the recorder,
its warning; for the task manager itself, kill -> the cut-off record finalised by its successor),
recovery time (kill -> the next task running, i.e. accepted and every node answering; for the
recorder, whose loss does not end the episode, kill -> the recorder restarted), and records saved /
episodes started. Targets: detection <= 5 s, recovery <= 15 s, 100 % of records saved.
With ``--campaign`` (``--kills 0`` for the campaign alone), the faults of ``fault_campaign.py`` follow:
a killed or stopped supervisor, a killed task manager, a hostile chat server, a full disk, oversized
messages; per fault, whether it was survived with nothing lost (target: all) and its figures.
Discovery stays on this machine (ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST) on a domain of its own.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "config" / "tasks" / "demo.yaml"
ROUNDS = 400  # long episodes, so that every kill lands mid-episode


class Graph:
    """``homiebot up`` in a subprocess, its output collected (pids of started and restarted nodes)."""

    def __init__(self, env: dict, cfg: Path, out: Path) -> None:
        self.out = out
        self.proc = subprocess.Popen([sys.executable, "-m", "homiebot.cli", "up", "--config", str(cfg), "--out", str(out)],
                                     cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: list[str] = []
        threading.Thread(target=lambda: [self.lines.append(line) for line in self.proc.stdout], daemon=True).start()

    def pid(self, node: str) -> int | None:
        text = "".join(self.lines)
        restarted = re.findall(rf"restarted node {node} \(pid (\d+)\)", text)
        first = re.search(rf"\b{node} \(pid (\d+)\)", text)
        return int(restarted[-1]) if restarted else int(first.group(1)) if first else None

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(30)


class Client:
    """A submitter and listener on the graph's task topics."""

    def __init__(self) -> None:
        import rclpy
        from homiebot_msgs.action import RunTask
        from homiebot_msgs.msg import TaskStatus
        from rclpy.action import ActionClient
        from rclpy.node import Node
        from rclpy.qos import QoSProfile, ReliabilityPolicy

        from homiebot.ros.kit.common import spin_in_background

        rclpy.init()
        self.RunTask = RunTask
        self.node = Node("bench_faults")
        self.events: list[tuple[float, dict]] = []
        self.node.create_subscription(TaskStatus, "/homiebot/task/status", self._on_status,
                                      QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE))
        self.run_task = ActionClient(self.node, RunTask, "/homiebot/run_task")
        self.executor, _ = spin_in_background(self.node)

    def _on_status(self, msg) -> None:
        self.events.append((time.monotonic(), {"id": msg.id, "state": msg.state, "round": msg.round, "reason": msg.reason}))

    def submit(self) -> str:
        """Send the demo task as a RunTask goal (waiting for the task manager, which may be restarting); its id."""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if not self.run_task.wait_for_server(timeout_sec=5.0):
                continue
            sent = self.run_task.send_goal_async(self.RunTask.Goal(task_file=str(DEMO), use_seed=True, seed=1))
            end = time.monotonic() + 10
            while not sent.done() and time.monotonic() < end:
                time.sleep(0.02)
            if sent.done() and sent.result().accepted:
                return bytes(sent.result().goal_id.uuid).hex()[:12]
        raise TimeoutError("no task manager accepted the goal within 120 s")

    def of(self, rid: str) -> list[tuple[float, dict]]:
        return [(t, e) for t, e in list(self.events) if e.get("id") == rid]

    def wait(self, rid: str, test, timeout: float) -> float | None:
        """When the first event of ``rid`` passing ``test`` came (None if none within ``timeout``)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            hits = [t for t, e in self.of(rid) if test(e)]
            if hits:
                return hits[0]
            time.sleep(0.02)
        return None

    def close(self) -> None:
        import rclpy

        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown()


def finalised(out: Path, since: float, timeout: float) -> float | None:
    """When a record cut off by the task manager's death appeared (its successor finalises it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for path in out.glob("*/episode.json"):
            if path.stat().st_mtime >= since and "task manager stopped" in path.read_text():
                return time.monotonic()
        time.sleep(0.05)
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=3, help="kills per node (default 3; 0: none)")
    parser.add_argument("--campaign", action="store_true", help="then the fault campaign (fault_campaign.py)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--domain-id", type=int, default=187)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    os.environ["ROS_DOMAIN_ID"] = str(args.domain_id)
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    from homiebot.ros.bringup.graph import GRAPH_NODES
    from homiebot.ros.kit.environment import ros_environment

    work = Path(tempfile.mkdtemp(prefix="bench_faults_"))
    if args.kills > 0:
        kill_study(args, rng, work, GRAPH_NODES, ros_environment(args.domain_id))
    if args.campaign:
        from fault_campaign import campaign, table

        print("\nfault campaign (each fault against real processes, plain clients):", file=sys.stderr)
        print("\n" + table(campaign(ros_environment(args.domain_id), work)))
        print(f"(records in {work})")
    return 0


def kill_study(args: argparse.Namespace, rng: random.Random, work: Path, graph_nodes: tuple[str, ...], env: dict[str, str]) -> None:
    """SIGKILL of every node at random rounds: detection, recovery, records saved."""
    script = work / "script.json"
    script.write_text(json.dumps(["Analysis: stay.\nSubtask: [Go to, kitchen]\nModel: NoMaD"] * ROUNDS))
    cfg = work / "graph.yaml"
    cfg.write_text(f"planner: {{name: replay, params: {{file: {script}}}}}\nmax_rounds: 1000\nskill_profile: perfect\n"
                   "world: {name: embedded_home, params: {width: 64, height: 64, depth: false, segmentation: false}}\n")
    graph = Graph(env, cfg, work / "runs")
    client = Client()
    detections: dict[str, list[float]] = {node: [] for node in graph_nodes}
    recoveries: dict[str, list[float]] = {node: [] for node in graph_nodes}
    started, n = 0, 0
    pending: tuple[str, float] | None = None  # the last kill whose recovery is measured by the next episode
    try:
        for node in [*(nd for nd in graph_nodes for _ in range(args.kills)), None]:
            n += 1
            rid = client.submit()
            running = client.wait(rid, lambda e: e["state"] == "running", 120)
            if running is None:
                print(f"episode {rid} did not start", file=sys.stderr)
                continue
            started += 1
            if pending is not None:
                recoveries[pending[0]].append(running - pending[1])
                pending = None
            if node is None:
                break  # the last episode only measures the last recovery; stopping the graph interrupts it
            moment = rng.randint(2, 12)  # kill at a random round
            if client.wait(rid, lambda e, m=moment: e["state"] == "round" and e["round"] >= m, 120) is None:
                print(f"{node}: episode {rid} did not reach round {moment}", file=sys.stderr)
                continue
            restarts = len(re.findall(rf"restarted node {node}\b", "".join(graph.lines)))
            wall, killed = time.time(), time.monotonic()
            os.kill(graph.pid(node), signal.SIGKILL)
            if node == "task_manager":
                seen = finalised(graph.out, wall - 1, 60)
            elif node == "recorder":
                seen = client.wait(rid, lambda e: e["state"] == "warning" and "recorder" in e.get("reason", ""), 60)
            else:
                seen = client.wait(rid, lambda e, nd=node: e["state"] == "failed" and f"the {nd} node" in e.get("reason", ""), 60)
            if seen is not None:
                detections[node].append(seen - killed)
            if node == "recorder":  # the episode goes on without its bag: recovered once the recorder is back
                deadline = time.monotonic() + 60
                while len(re.findall(r"restarted node recorder", "".join(graph.lines))) == restarts and time.monotonic() < deadline:
                    time.sleep(0.05)
                recoveries[node].append(time.monotonic() - killed)
                client.wait(rid, lambda e: e["state"] in ("finished", "failed"), 300)
            else:
                pending = (node, killed)
    finally:
        client.close()
        stopping = time.monotonic()
        graph.stop()  # mid-episode: the last episode is running
        shutdown = time.monotonic() - stopping
    rows = [(node, detections[node], recoveries[node]) for node in graph_nodes]
    records = list((work / "runs").glob("*/episode.json"))
    partial = list((work / "runs").glob("*.partial"))
    print(f"\nfault injection: {args.kills} kills per node (SIGKILL at a random round 2-12), a dead process of this machine is seen at once, silence after the 3 s heartbeat timeout\n")
    print("| node | detection median s | detection max s | recovery median s | recovery max s | detected |")
    print("|---|---:|---:|---:|---:|---:|")
    def fmt(xs: list[float], f) -> str:
        return f"{f(xs):.1f}" if xs else "-"

    for node, det, rec in rows:
        print(f"| {node} | {fmt(det, statistics.median)} | {fmt(det, max)} | {fmt(rec, statistics.median)} | {fmt(rec, max)} | "
              f"{len(det)}/{args.kills} |")
    print(f"\nrecords saved / episodes started: {len(records)} / {started}; .partial folders left: {len(partial)}")
    print(f"SIGTERM of homiebot up mid-episode: exited {graph.proc.returncode} after {shutdown:.1f} s; "
          f"tracebacks in its output: {sum('Traceback' in line for line in graph.lines)}")
    print(f"(records in {work / 'runs'})")


if __name__ == "__main__":
    sys.exit(main())
