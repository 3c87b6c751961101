"""``homiebot run --approve manipulation`` asks in its terminal: driven here through a pseudo-terminal."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

from homiebot.core.contracts import ErrorCode
from homiebot.core.records import load_episode

ROOT = Path(__file__).resolve().parents[2]


def test_operator_rejects_then_approves_in_the_terminal(tmp_path) -> None:
    task = tmp_path / "hide.yaml"
    task.write_text(f"id: hide\ninstruction: hide the green can inside something that can be shut\n"
                    f"scene_file: {ROOT / 'config' / 'scenes' / 'demo.yaml'}\n"
                    "goal: [{kind: object_at, object: green_can, receptacle: [fridge, kitchen_cabinet, drawer, bathroom_cabinet]}]\n")
    master, slave = pty.openpty()
    env = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "osmesa")}
    proc = subprocess.Popen([sys.executable, "-m", "homiebot.cli", "run", "--task", str(task), "--planner", "oracle", "--profile",
                             "perfect", "--approve", "manipulation", "--out", str(tmp_path / "runs"), "--no-images", "--quiet"],
                            stdin=slave, stdout=subprocess.PIPE, stderr=slave, cwd=ROOT, env=env, text=True)
    os.close(slave)
    screen, answers, sent = "", ["r not that one"] + ["a"] * 10, 0
    deadline = time.monotonic() + 240
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if not ready:
                continue
            try:
                chunk = os.read(master, 4096).decode(errors="replace")
            except OSError:
                break
            screen += chunk
            while screen.count("approve [a]") > sent:  # one answer per question asked
                os.write(master, (answers[sent] + "\n").encode())
                sent += 1
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    assert proc.returncode == 0, screen + out
    assert "next subtask [Open, kitchen_cabinet] with" in screen
    folder = Path(out.strip().splitlines()[-1].split("episode record: ")[-1]).parent
    record = load_episode(folder)
    assert record.goal_satisfied
    assert [s.feedback.code for s in record.steps].count(ErrorCode.S2) == 1
    decisions = [e.details["decision"] for e in record.safety_events if e.kind == "approval"]
    assert decisions[0] == "reject" and set(decisions[1:]) == {"approve"}
