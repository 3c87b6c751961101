"""Episode folders survive the death of the process that writes them: every finished round is on disk
before the next starts, and ``finalise_leftovers`` makes a record of them (a torn last line is ignored)."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from homiebot.core.contracts import Feedback, StepRecord
from homiebot.core.records import OWNER_FILE, STEPS_FILE, EpisodeWriter, finalise_leftovers, finished_steps, load_episode

from .conftest import DEMO_TASK, ROOT


def test_a_killed_run_leaves_its_finished_rounds_for_the_record(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps(["Analysis: look.\nSubtask: [Go to, kitchen]\nModel: NoMaD"] * 400))
    cfg = tmp_path / "long.yaml"
    cfg.write_text(f"planner: {{name: replay, params: {{file: {script}}}}}\nmax_rounds: 1000\nskill_profile: perfect\n"
                   "world: {name: embedded_home, params: {width: 64, height: 64, depth: false, segmentation: false}}\n")
    out = tmp_path / "runs"
    proc = subprocess.Popen([sys.executable, "-m", "homiebot.cli", "run", "--task", str(DEMO_TASK), "--config", str(cfg),
                             "--out", str(out), "--quiet"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    steps = out / "demo_seed0.partial" / STEPS_FILE
    try:
        deadline = time.monotonic() + 240
        while not (steps.is_file() and steps.read_bytes().count(b"\n") >= 3):
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.poll() is not None else "no third round"
            time.sleep(0.05)
    finally:
        proc.kill()
        proc.wait()
    durable = finished_steps(steps)
    # the next `homiebot run` into the same folder publishes what the dead one recorded
    small = tmp_path / "small.yaml"
    small.write_text("world: {name: embedded_home, params: {width: 64, height: 64}}\n")
    after = subprocess.run([sys.executable, "-m", "homiebot.cli", "run", "--task", str(DEMO_TASK), "--planner", "oracle", "--profile",
                            "perfect", "--config", str(small), "--out", str(out), "--quiet"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert after.returncode == 0, after.stderr
    folder = out / "demo_seed0"
    assert f"published what an episode whose process died had recorded: {folder / 'episode.json'}" in after.stderr
    record = load_episode(folder)
    assert record.termination == "error" and "ended before it did" in record.error
    assert len(record.steps) == len(durable) >= 3 and [s.round for s in record.steps] == list(range(1, len(durable) + 1))
    assert all((folder / path).is_file() for s in record.steps for path in s.images.values())
    assert not (folder / STEPS_FILE).exists() and not list(out.glob("*.partial"))
    assert load_episode(out / "demo_seed0_2").goal_satisfied  # the new episode took the next name


def test_a_folder_whose_writer_lives_is_no_orphan(tmp_path):
    live = EpisodeWriter(tmp_path, "live")  # this process writes it
    dead = EpisodeWriter(tmp_path, "dead")
    owner = json.loads((dead.work_dir / OWNER_FILE).read_text())
    (dead.work_dir / OWNER_FILE).write_text(json.dumps({**owner, "start": "0"}))  # its pid now belongs to another process
    assert [f.name for f in finalise_leftovers(tmp_path, "died", orphans_only=True)] == ["dead"]
    assert live.work_dir.is_dir()


def test_a_torn_last_line_ends_the_rounds(tmp_path):
    writer = EpisodeWriter(tmp_path, "ep")
    first = StepRecord(round=1, prompt="p", raw_output="x", feedback=Feedback.ok(), inventory_before=[], inventory_after=[])
    writer.write_step(first)
    writer.write_step(first.model_copy(update={"round": 2}))
    with open(writer.work_dir / STEPS_FILE, "ab") as fh:
        fh.write(b'{"round": 3, "prom')  # the process died mid-write
    assert [s.round for s in finished_steps(writer.work_dir / STEPS_FILE)] == [1, 2]
    [folder] = finalise_leftovers(tmp_path, "died")
    assert [s.round for s in load_episode(folder).steps] == [1, 2]
