"""Camera -> policy -> command loops through the ROS 2 bridge and in-process.

Through the bridge: the embedded home served as a Spot by the sim driver (its own process, a ROS
domain of its own, localhost discovery); ``Ros2Robot`` waits for each new image of the policy camera,
runs a trivial policy and sends a velocity command. Latency is from the image's stamp (when the
driver rendered it) to the command being published; steps per second is the loop's rate (bounded by
the camera rate, 10 Hz for Spot's profile). In-process: the embedded home's robot, the same loop
without middleware (render, policy, command).

Target: the bridge sustains a 10 Hz loop with p95 latency <= 50 ms on the 2-core machine.

``--episode`` also times the demo task end to end: ``homiebot up --config config/robots/spot_sim.yaml``
(then ``fetch_sim.yaml``) and ``homiebot submit --task config/tasks/demo.yaml`` (real time, as shipped:
every command through the robot's names) against ``homiebot run`` with ``config/sim_expert.yaml`` (the
same planner and experts in-process). The test suite runs these episodes in lock-step instead.

    python benchmarks/bench_robot.py [--steps 100] [--episode]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("MUJOCO_GL", "osmesa")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from homiebot.ros.kit.environment import ros_environment  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SIZE = (96, 96)  # NoMaD's input


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


COMMANDER = """
import sys, time
from homiebot.robots.profile import load_profile
from homiebot.ros.clients.robot import Ros2Robot
robot = Ros2Robot(load_profile("spot"), connect_timeout=60)
robot.start()
print("driving", flush=True)
robot.drive(0.3, 0.0, 60.0)
"""


def kill_stops(robot: object, env: dict, trials: int) -> list[float]:
    """Seconds from SIGKILL of a process driving the base to the base standing still (the driver's timeout)."""
    out = []
    for _ in range(trials):
        proc = subprocess.Popen([sys.executable, "-c", COMMANDER], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "driving"
        time.sleep(1.0)  # moving
        proc.kill()  # a process we started
        proc.wait()
        killed = time.monotonic()
        last = robot.odometry()  # type: ignore[attr-defined]
        still_since = killed
        while time.monotonic() - still_since < 0.5 and time.monotonic() - killed < 10:
            time.sleep(0.01)
            now = robot.odometry()  # type: ignore[attr-defined]
            if (now.x, now.y) != (last.x, last.y):
                still_since, last = time.monotonic(), now
        out.append(still_since - killed)
        robot.drive(-0.3, 0.0, 1.0)  # type: ignore[attr-defined]  # back to where it was, for the next trial
    return out


def bridged(steps: int, kills: int = 5) -> tuple[list[float], float]:
    from homiebot.robots.profile import load_profile
    from homiebot.ros.clients.robot import Ros2Robot

    env = ros_environment(231)  # a domain of its own
    os.environ.update({k: env[k] for k in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE")})
    scene = ROOT / "config" / "scenes" / "demo.yaml"
    driver = subprocess.Popen([sys.executable, "-m", "homiebot.ros.nodes.sim_driver", "--ros-args", "-p", "robot:=spot",
                               "-p", f"scene:={scene}", "-p", "camera_size:=240x320"], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    robot = Ros2Robot(load_profile("spot"), connect_timeout=120.0)
    try:
        robot.start()
        camera = robot.profile.policy_camera
        latencies: list[float] = []
        last = robot.read_camera(camera, SIZE).stamp
        started = time.monotonic()
        for _ in range(steps):
            while (frame := robot.read_camera(camera, SIZE)).stamp == last:
                time.sleep(0.001)
            last = frame.stamp
            turn = 0.2 if float(frame.rgb.mean()) > 100 else -0.2  # the "policy"
            robot.drive(0.0, turn, 0.0)  # one command, published now
            latencies.append(time.time() - frame.stamp)
        rate = steps / (time.monotonic() - started)
        stops = kill_stops(robot, env, kills)
        print(f"SIGKILL of the commanding process -> base still (driver timeout {robot.profile.cmd_vel_timeout} s): "
              f"median {statistics.median(stops):.2f} s, max {max(stops):.2f} s (n={len(stops)}; target <= 0.5 s + one state tick)")
    finally:
        robot.close()
        driver.terminate()  # a process we started
        driver.wait(timeout=20)
    return latencies, rate


def in_process(steps: int) -> tuple[list[float], float]:
    from homiebot.worlds.home.scene import load_scene
    from homiebot.worlds.home.world import EmbeddedHome

    world = EmbeddedHome(load_scene(ROOT / "config" / "scenes" / "demo.yaml"), width=64, height=64)
    robot = world.own_robot()
    latencies = []
    started = time.monotonic()
    try:
        for _ in range(steps):
            t0 = time.perf_counter()
            frame = robot.read_camera("front", SIZE)
            turn = 0.2 if float(frame.rgb.mean()) > 100 else -0.2
            robot.drive(0.0, turn, 0.1)
            latencies.append(time.perf_counter() - t0)
        rate = steps / (time.monotonic() - started)
    finally:
        world.close()
    return latencies, rate


def episode_times(domain: int = 231) -> list[tuple[str, float, str]]:
    """(how, wall seconds, outcome line) of the demo task through the bridged graph and in-process."""
    import json
    import signal
    import tempfile

    out = []
    with tempfile.TemporaryDirectory() as tmp:
        env = ros_environment(domain)
        for robot in ("spot", "fetch"):
            up = subprocess.Popen([sys.executable, "-m", "homiebot.cli", "up", "--config", f"config/robots/{robot}_sim.yaml", "--out",
                                   f"{tmp}/{robot}", "--no-bag"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                start = time.monotonic()
                done = subprocess.run([sys.executable, "-m", "homiebot.cli", "submit", "--task", "config/tasks/demo.yaml", "--timeout", "900"],
                                      cwd=ROOT, env=env, capture_output=True, text=True, timeout=960)
                outcome = (done.stdout.strip().splitlines() or ["no output"])[-2:][0]
                out.append((f"bridged graph ({robot}_sim, start-up included)", time.monotonic() - start, outcome))
            finally:
                up.send_signal(signal.SIGINT)  # a process we started; it stops its nodes
                up.wait(timeout=60)
        start = time.monotonic()
        subprocess.run([sys.executable, "-m", "homiebot.cli", "run", "--task", "config/tasks/demo.yaml", "--config", "config/sim_expert.yaml",
                        "--out", f"{tmp}/in_process"], cwd=ROOT, capture_output=True, text=True, timeout=600)
        record = json.loads(next(Path(tmp, "in_process").glob("*/episode.json")).read_text())
        out.append(("in-process (sim_expert)", time.monotonic() - start,
                    f"goal {'reached' if record['goal_satisfied'] else 'not reached'} after {len(record['steps'])} rounds"))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--episode", action="store_true", help="also time the demo task through the bridged graph and in-process")
    args = parser.parse_args()
    for name, run in (("in-process", in_process), ("bridge (sim driver, Spot profile)", bridged)):
        lat, rate = run(args.steps)
        print(f"{name:36s} {rate:6.1f} steps/s   camera->command median {statistics.median(lat) * 1000:6.1f} ms, "
              f"p95 {percentile(lat, 0.95) * 1000:6.1f} ms   (n={len(lat)})")
    print("target: the bridge sustains 10 Hz with p95 <= 50 ms")
    if args.episode:
        for how, seconds, outcome in episode_times():
            print(f"demo task, {how:44s} {seconds:7.1f} s   {outcome}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
