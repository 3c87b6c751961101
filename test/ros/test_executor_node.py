"""The executor node on a robot: skills run in it, through its own bridge to the driver (here the sim driver
serving the embedded home as a Spot, in real time). A plain client (rclpy and homiebot_msgs only) cancels its
ExecuteSubtask goal while the base drives, as the task manager does when an episode fails: the driver's
cmd_vel carries a zero velocity at once and nothing moves the robot after the goal ended. (Before the goal
could be cancelled, a failed episode's Go to kept driving the robot for 14 s.)

Localhost-only discovery and a ROS_DOMAIN_ID of its own (96), one module at a time (test/conftest.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")

from homiebot.core.resources import robot_config  # noqa: E402
from homiebot.ros.bringup.graph import graph  # noqa: E402
from homiebot.ros.bringup.up import spawn, stop  # noqa: E402
from homiebot.ros.kit.environment import ros_environment  # noqa: E402
from test.ros_domains import domain_of  # noqa: E402

CLIENT = Path(__file__).with_name("plain_client.py")
DOMAIN = domain_of(__name__)


@pytest.fixture(scope="module")
def executor_on_spot():
    """The shipped spot_sim graph's sim driver and executor node, and nothing else of the graph."""
    # no world node checks the driver here: the executor's bridge connects after a short wait for one
    specs = {spec.name: spec for spec in graph(robot_config("spot", sim_driver=True), record_bag=False,
                                               overrides={"executor": {"world_wait": 1.0}})}
    env = ros_environment(DOMAIN)
    procs = {name: spawn(specs[name], env) for name in ("sim_driver", "executor")}  # processes we started
    try:
        yield env
    finally:
        stop(procs)


def test_a_cancelled_goal_stops_the_base_at_once_and_nothing_drives_it_afterwards(executor_on_spot) -> None:
    args = {"cmd_vel": "/spot/cmd_vel", "target": "fridge", "model": "NoMaD", "moving": 5, "listen": 3.0, "in_flight": 0.3}
    done = subprocess.run([sys.executable, str(CLIENT), "cancel_motion"], input=json.dumps(args), env=executor_on_spot,
                          capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["moving_before"] >= 5, seen  # the base was driving when the goal was cancelled
    assert seen["status"] == 5 and seen["error_code"] == 2, seen  # STATUS_CANCELED, ExecuteSubtask.Result.CANCELLED
    assert seen["stop_after"] is not None and seen["stop_after"] < 1.0, seen  # a zero velocity right after the cancel
    assert seen["moving_after_end"] == 0, seen  # nothing commanded motion once the goal had ended
