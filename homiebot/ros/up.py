"""Start the whole graph as one process per node (what ``ros2 launch homiebot sim.launch.py`` does
where the ROS launch tools are installed), and stop it cleanly."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from homiebot.ros.graph import NodeSpec, ros_args


def ros_environment(domain_id: int | None = None, localhost: bool = True) -> dict[str, str]:
    """The environment for graph processes: discovery stays on this machine unless asked otherwise."""
    env = dict(os.environ)
    if localhost:
        env.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    if domain_id is not None:
        env["ROS_DOMAIN_ID"] = str(domain_id)
    # Fast DDS tuned for camera frames (see fastdds.xml); a profile the user set wins
    profile = str(Path(__file__).with_name("fastdds.xml"))
    env.setdefault("FASTRTPS_DEFAULT_PROFILES_FILE", profile)
    env.setdefault("FASTDDS_DEFAULT_PROFILES_FILE", env["FASTRTPS_DEFAULT_PROFILES_FILE"])
    env.setdefault("MUJOCO_GL", "osmesa")
    return env


def check_ros() -> None:
    """Raise ImportError with an install hint when rclpy is missing."""
    try:
        import rclpy  # noqa: F401
    except ImportError:
        raise ImportError("rclpy is not installed: source a ROS 2 Jazzy installation, or `pip install -e .[ros]` "
                          "(ROS 2 from PyPI)") from None


def spawn(spec: NodeSpec, env: dict[str, str]) -> subprocess.Popen:
    """One node as a process, run by its own interpreter when the spec names one (``spec.python``)."""
    return subprocess.Popen([spec.python or sys.executable, "-m", spec.module, *ros_args(spec)], env=env)


def spawn_all(specs: Sequence[NodeSpec], env: dict[str, str], compose: bool = False) -> dict[str, subprocess.Popen]:
    """One process per node, or (``compose``) all nodes in one process."""
    if compose:  # policy servers keep their own processes: they exist to isolate their model's software stack
        servers = [s for s in specs if s.executable == "homiebot_policy_server"]
        members = [s for s in specs if s not in servers]
        payload = json.dumps([{k: v for k, v in spec.__dict__.items() if k != "python"} for spec in members])
        procs = {"graph": subprocess.Popen([sys.executable, "-m", "homiebot.ros.compose", payload], env=env)}
        return procs | {spec.name: spawn(spec, env) for spec in servers}
    return {spec.name: spawn(spec, env) for spec in specs}


def stop(procs: dict[str, subprocess.Popen], grace: float = 5.0) -> None:
    """SIGTERM every node we started, then SIGKILL those still running after ``grace`` seconds."""
    for p in procs.values():
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace
    for p in procs.values():
        try:
            p.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def run_graph(specs: Sequence[NodeSpec], env: dict[str, str], compose: bool = False) -> int:
    """Run until Ctrl-C or until a node exits; returns non-zero if a node failed."""
    signal.signal(signal.SIGTERM, _interrupt)  # stop the graph on SIGTERM as on Ctrl-C
    signal.signal(signal.SIGINT, _interrupt)  # even when started in the background, where SIGINT is ignored
    procs = spawn_all(specs, env, compose)
    print("homiebot graph: " + ", ".join(f"{n} (pid {p.pid})" for n, p in procs.items()), flush=True)
    print(f"ROS_DOMAIN_ID={env.get('ROS_DOMAIN_ID', '0')} ROS_AUTOMATIC_DISCOVERY_RANGE={env.get('ROS_AUTOMATIC_DISCOVERY_RANGE', '')}; "
          "submit tasks with `homiebot submit \"INSTRUCTION\"`; Ctrl-C stops the graph", flush=True)
    status = 0
    try:
        while True:
            for name, p in procs.items():
                code = p.poll()
                if code is not None:
                    print(f"homiebot graph: node {name} exited with status {code}; stopping the graph", file=sys.stderr, flush=True)
                    status = code or 1
                    return status
            time.sleep(0.2)
    except KeyboardInterrupt:
        return 0
    finally:
        stop(procs)
