"""Middleware overhead: the same episodes in-process and through the ROS 2 graph.

    python benchmarks/bench_ros.py [--episodes 5] [--planner oracle] [--perception mapped]

Starts the graph (its own ROS_DOMAIN_ID, localhost discovery, no bag recording unless ``--bag``), submits the demo task
with several seeds, runs the same episodes with ``homiebot run``'s in-process runner, and prints the
per-round time difference of the same rounds (median, p95) and the wall-time ratio. Targets: median overhead <= 5 ms per
round, ratio <= 1.10 for oracle episodes. With ``--perception mapped`` (the sim_truth detector; use ``--planner
heuristic``) the world node hands every observation to the mapper's map, images included. Then the floor under every typed call on this machine, a bare
``std_srvs/Trigger`` round trip between two rclpy processes, and the same round trip as homiebot's nodes make it
(their executor, typed server and blocking caller) with a handler that does nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


FLOOR_SERVER = r"""
import sys
import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
rclpy.init()
node = Node("bench_floor_server")
if sys.argv[1] == "bare":
    from std_srvs.srv import Trigger
    node.create_service(Trigger, "/bench_floor/trigger", lambda request, response: response)
    executor = SingleThreadedExecutor()
else:  # as a homiebot node serves: a pool of callback threads, a TypedServer
    from homiebot_msgs.srv import RoomOf
    from homiebot.ros.kit.executors import PoolExecutor
    from homiebot.ros.kit.services import TypedServer
    TypedServer(node, RoomOf, "/bench_floor/room_of", lambda request: RoomOf.Response(known=True, room="kitchen"), [],
                RoomOf.Response.FAILED)
    executor = PoolExecutor(4)
executor.add_node(node)
try:
    executor.spin()
except (KeyboardInterrupt, ExternalShutdownException):
    pass
"""


def round_trips(env: dict[str, str], typed: bool, calls: int = 300) -> list[float]:
    """Seconds of each round trip between this process and a server process of its own: a bare
    ``std_srvs/Trigger`` one (rclpy's single-threaded executors, the floor), or ``typed``: a homiebot_msgs
    service as homiebot's nodes serve and call one (PoolExecutor, TypedServer, ServiceCaller)."""
    import rclpy
    from rclpy.context import Context
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node

    server = subprocess.Popen([sys.executable, "-c", FLOOR_SERVER, "typed" if typed else "bare"], env=env)  # ours, stopped below
    context = Context()
    rclpy.init(context=context)
    try:
        node = Node("bench_floor_client", context=context)
        if typed:
            from homiebot_msgs.srv import RoomOf

            from homiebot.ros.kit.executors import PoolExecutor
            from homiebot.ros.kit.services import ServiceCaller

            executor: SingleThreadedExecutor | PoolExecutor = PoolExecutor(4, context=context)
            caller = ServiceCaller(node, RoomOf, "/bench_floor/room_of", "bench")
            ready = lambda: caller.connected  # noqa: E731
            call = lambda: caller.call(RoomOf.Request(name="can_1"), 10.0)  # noqa: E731
        else:
            from std_srvs.srv import Trigger

            executor = SingleThreadedExecutor(context=context)
            client = node.create_client(Trigger, "/bench_floor/trigger")
            ready = client.service_is_ready

            def call() -> None:
                answered = threading.Event()
                client.call_async(Trigger.Request()).add_done_callback(lambda _: answered.set())
                if not answered.wait(10):
                    raise SystemExit("a Trigger call of the floor measurement was not answered within 10 s")
        executor.add_node(node)
        threading.Thread(target=executor.spin, daemon=True).start()
        deadline = time.monotonic() + 60
        while not ready():
            if time.monotonic() > deadline:
                raise SystemExit("the server of the floor measurement did not come up within 60 s")
            time.sleep(0.05)
        times = []
        for _ in range(calls + 20):  # the first ones warm up
            start = time.perf_counter()
            call()
            times.append(time.perf_counter() - start)
        return times[20:]
    finally:
        executor.shutdown()
        rclpy.shutdown(context=context)
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--episodes", type=int, default=5)
    ap.add_argument("--planner", default="oracle")
    ap.add_argument("--domain-id", type=int, default=90 + os.getpid() % 50)
    ap.add_argument("--compose", action="store_true", help="all nodes in one process")
    ap.add_argument("--bag", action="store_true", help="record every episode's MCAP bag, as the graph does by default")
    ap.add_argument("--perception", choices=("oracle", "mapped"), default="oracle",
                    help="mapped: the semantic map with the sim_truth detector (the mapper node keeps it)")
    args = ap.parse_args()

    from homiebot.ros.kit.environment import ros_environment
    env = ros_environment(args.domain_id)
    os.environ.update({k: v for k, v in env.items() if k.startswith(("ROS_", "FASTRTPS", "FASTDDS", "MUJOCO"))})

    from homiebot.config import RunConfig
    from homiebot.core.records import load_episode
    from homiebot.core.tasks import load_task
    from homiebot.ros.bringup.graph import graph
    from homiebot.ros.bringup.up import spawn_all, stop
    from homiebot.ros.clients.submit import submit
    from homiebot.runtime import run_episode

    task_file = ROOT / "config" / "tasks" / "demo.yaml"
    task = load_task(task_file)
    perception = {"mode": "mapped", "detector": {"name": "sim_truth"}} if args.perception == "mapped" else {"mode": "oracle"}
    cfg = RunConfig.model_validate({"planner": {"name": args.planner}, "perception": perception})
    ros_rounds, ros_wall, ros_phases = [], [], []
    local_rounds, local_wall, local_phases = [], [], []
    paired = []  # per round: graph time - in-process time of the same round of the same episode
    setups = []  # the task manager's preparation of each episode (scene, world reset, capabilities)
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "bench.yaml"
        config.write_text(json.dumps({"perception": perception}))  # YAML reads JSON
        procs = spawn_all(graph(str(config), args.planner, tmp, record_bag=args.bag), env, args.compose)
        try:
            run_episode(cfg, task)  # warm-up of both runners: first scene load
            submit({"task_file": str(task_file), "seed": 0}, timeout=300, echo=lambda *_: None)
            # Episodes alternate between the two runners so that both see the same machine load.
            for seed in range(1, args.episodes + 1):
                final = submit({"task_file": str(task_file), "seed": seed}, timeout=300, echo=lambda *_: None)
                if final.get("state") != "finished":
                    raise SystemExit(f"episode failed in the graph: {final}")
                ros = load_episode(Path(final["record"]))
                setups.append(final["setup_s"])
                local, _ = run_episode(cfg.model_copy(update={"seed": seed}), task, Path(tmp) / "local")
                if [s.subtask for s in ros.steps] != [s.subtask for s in local.steps]:
                    raise SystemExit(f"seed {seed}: the graph and the in-process runner diverged")
                ros_rounds += [s.timings.total for s in ros.steps]
                ros_phases += [s.timings for s in ros.steps]
                ros_wall.append(ros.wall_time)
                local_rounds += [s.timings.total for s in local.steps]
                local_phases += [s.timings for s in local.steps]
                local_wall.append(local.wall_time)
                paired += [a.timings.total - b.timings.total for a, b in zip(ros.steps, local.steps)]
        finally:
            stop(procs)

    def pct(xs, q):
        xs = sorted(xs)
        return xs[min(len(xs) - 1, int(q * len(xs)))]

    over_med = 1000 * statistics.median(paired)
    over_p95 = 1000 * pct(paired, 0.95)
    ratio = sum(ros_wall) / sum(local_wall)
    print(f"planner {args.planner}, {args.perception} perception, {args.episodes} episodes of the demo task, 256x256 views, "
          f"{'all nodes in one process' if args.compose else 'one process per node'}, {'with' if args.bag else 'no'} MCAP bag")
    print(f"per round: in-process median {1000 * statistics.median(local_rounds):.1f} ms, p95 {1000 * pct(local_rounds, 0.95):.1f} ms; "
          f"ROS graph median {1000 * statistics.median(ros_rounds):.1f} ms, p95 {1000 * pct(ros_rounds, 0.95):.1f} ms")
    print(f"middleware overhead per round: median {over_med:.1f} ms (target <= 5), p95 {over_p95:.1f} ms")
    print(f"episode wall time: in-process {statistics.mean(local_wall):.2f} s, ROS graph {statistics.mean(ros_wall):.2f} s, "
          f"ratio {ratio:.2f} (target <= 1.10)")
    print(f"  (before each graph episode, the task manager's set-up: median {1000 * statistics.median(setups):.1f} ms; "
          "in-process, building the world is not timed either)")
    for phase in ("observe", "plan", "check", "execute", "record"):
        a = statistics.median(getattr(t, phase) for t in local_phases)
        b = statistics.median(getattr(t, phase) for t in ros_phases)
        worst = max(getattr(t, phase) for t in ros_phases)
        worst_local = max(getattr(t, phase) for t in local_phases)
        print(f"  {phase:<8} median in-process {1000 * a:6.2f} ms, ROS graph {1000 * b:6.2f} ms "
              f"(slowest {1000 * worst_local:.1f} / {1000 * worst:.1f} ms)")
    floor, typed = round_trips(env, typed=False), round_trips(env, typed=True)
    floor_med, typed_med = 1000 * statistics.median(floor), 1000 * statistics.median(typed)
    print(f"the floor under every typed call: a bare std_srvs/Trigger round trip between two rclpy processes, median {floor_med:.2f} ms, "
          f"p95 {1000 * pct(floor, 0.95):.2f} ms")
    print(f"a typed call as the nodes make one (PoolExecutor, TypedServer, ServiceCaller; no handler work): median {typed_med:.2f} ms, "
          f"p95 {1000 * pct(typed, 0.95):.2f} ms")
    print(json.dumps({"overhead_median_ms": round(over_med, 2), "overhead_p95_ms": round(over_p95, 2), "ratio": round(ratio, 3),
                      "trigger_round_trip_ms": round(floor_med, 3), "typed_round_trip_ms": round(typed_med, 3)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
