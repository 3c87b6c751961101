"""One demo episode run as a user would (`homiebot run --view --save-rrd --video`), shared by the viz tests."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from test.viz.browser import CHROMIUM, screenshot_when_drawn

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "config" / "tasks" / "demo.yaml"
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "MUJOCO_GL": os.environ.get("MUJOCO_GL", "osmesa")}


def cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """The real command line in a new process."""
    return subprocess.run([sys.executable, "-m", "homiebot.cli", *args], env=ENV, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="session")
def live_run(tmp_path_factory) -> dict:
    """One demo episode watched live with a video: the screenshot taken while it is served, then Ctrl-C."""
    tmp = tmp_path_factory.mktemp("live")
    rrd = tmp / "demo.rrd"
    proc = subprocess.Popen([sys.executable, "-m", "homiebot.cli", "run", "--task", str(DEMO), "--config", str(ROOT / "config" / "sim.yaml"),
                             "--seed", "0", "--out", str(tmp / "runs"), "--quiet", "--view", "--save-rrd", str(rrd), "--video"],
                            env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    served = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if "stays up at" in line:
                served.set()
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert served.wait(300), "".join(lines) + (proc.stderr.read() if proc.poll() is not None and proc.stderr else "")
        url = next(line.split("stays up at ")[1].split(" ;")[0] for line in lines if "stays up at" in line)
        result: dict = {"url": url, "lines": lines, "tmp": tmp, "rrd": rrd}
        host_port = url.split("//")[1].split("/")[0]
        result["listening"] = socket.create_connection((host_port.split(":")[0], int(host_port.split(":")[1])), timeout=5).close() is None
        if CHROMIUM:
            result["colours"] = screenshot_when_drawn(url, tmp / "chromium", tmp / "viewer.png")
        proc.send_signal(signal.SIGINT)
        result["code"] = proc.wait(60)
        reader.join(10)
        result["stderr"] = proc.stderr.read() if proc.stderr else ""
        result["folder"] = tmp / "runs" / "demo_seed0"
        return result
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


