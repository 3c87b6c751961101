"""The episode video as a viewer meets it: it decodes at a real frame rate, moves during a Go to,
its WebVTT captions parse and match the record's rounds, and `homiebot video` makes it again."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from test.viz.conftest import cli

imageio = pytest.importorskip("imageio.v2")
CUE_TIME = re.compile(r"^(\d\d):(\d\d):(\d\d)\.(\d\d\d) --> (\d\d):(\d\d):(\d\d)\.(\d\d\d)$")


def parse_vtt(text: str) -> list[tuple[float, float, str]]:
    """A strict reader of the WebVTT this project writes: header, then cues (id, timing, text lines)."""
    blocks = text.strip("\n").split("\n\n")
    assert blocks[0] == "WEBVTT"
    cues = []
    for block in blocks[1:]:
        lines = block.split("\n")
        assert lines[0].isdigit(), block
        m = CUE_TIME.match(lines[1])
        assert m, lines[1]
        g = [int(x) for x in m.groups()]
        start = g[0] * 3600 + g[1] * 60 + g[2] + g[3] / 1000
        end = g[4] * 3600 + g[5] * 60 + g[6] + g[7] / 1000
        assert end > start and len(lines) >= 3
        cues.append((start, end, "\n".join(lines[2:])))
    assert all(a[1] <= b[0] + 1e-9 for a, b in zip(cues, cues[1:])), "cues overlap or go back in time"
    return cues


def frames_of(path: Path) -> tuple[float, list[np.ndarray]]:
    reader = imageio.get_reader(path)
    try:
        return float(reader.get_meta_data()["fps"]), [f for f in reader]
    finally:
        reader.close()


def test_video_moves_at_a_real_frame_rate_and_its_captions_match_the_rounds(live_run):
    folder = live_run["folder"]
    record = json.loads((folder / "episode.json").read_text())
    assert record["video"] == "episode.mp4"
    fps, frames = frames_of(folder / "episode.mp4")
    steps = record["steps"]
    assert fps >= 10 and len(frames) > 5 * len(steps)
    cues = parse_vtt((folder / "episode.vtt").read_text())
    assert len(cues) == len(steps)
    for (_, _, text), step in zip(cues, steps):
        subtask = step["output"]["subtask"] if step["output"] else None
        assert text.startswith(f"Round {step['round']}  |  "), text
        code = step["feedback"]["code"] or "ok"
        assert f"|  {code}" in text
        if subtask and subtask["action"] == "Go to":
            assert f"[Go to, {subtask['target']}]" in text
    assert cues[-1][1] == pytest.approx(len(frames) / fps, abs=0.2)
    # during a successful Go to the robot drives: consecutive frames after the held observation differ
    go = next(i for i, s in enumerate(steps) if s["output"] and s["output"]["subtask"]["action"] == "Go to" and s["feedback"]["status"] == "success")
    start, end, _ = cues[go]
    moving = frames[round(start * fps) + 11: round(end * fps)]
    assert len(moving) >= 5
    diffs = [np.abs(a[:512].astype(np.int16) - b[:512].astype(np.int16)).mean() for a, b in zip(moving, moving[1:])]
    assert sum(d > 0.5 for d in diffs) >= 0.8 * len(diffs), diffs


def test_video_command_makes_the_same_video_again(live_run, tmp_path):
    copy = tmp_path / "episode"
    shutil.copytree(live_run["folder"], copy)
    (copy / "episode.mp4").unlink()
    (copy / "episode.vtt").unlink()
    done = cli("video", str(copy))
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr
    assert (copy / "episode.vtt").read_text() == (live_run["folder"] / "episode.vtt").read_text()
    _, frames = frames_of(copy / "episode.mp4")
    assert len(frames) == len(frames_of(live_run["folder"] / "episode.mp4")[1])


@pytest.mark.parametrize("make", ["missing", "empty_folder", "garbage_record"])
def test_video_command_refuses_bad_input_in_one_line(tmp_path, make):
    src = tmp_path / "ep"
    if make != "missing":
        src.mkdir()
    if make == "garbage_record":
        (src / "episode.json").write_text('{"steps": 3}')
    done = cli("video", str(src))
    assert done.returncode == 2
    assert done.stderr.startswith("homiebot: error: ") and done.stderr.count("\n") == 1, done.stderr
