"""Demonstration files: round trip, and bad files refused with a message that says what is wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from homiebot.memory.demonstration import DemonstrationError, load_demonstration
from test.memory.fixture import mug_demonstration


def test_round_trip(tmp_path: Path) -> None:
    demo = mug_demonstration(tmp_path)
    assert load_demonstration(tmp_path) == demo
    assert load_demonstration(tmp_path / "demonstration.json") == demo


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d.update(version=9), r"version 9 is not supported \(this homiebot reads version 1\)"),
    (lambda d: d["frames"].reverse(), "frame times must increase strictly"),
    (lambda d: d["utterances"][0].update(end=0.0), "utterance 'after work I clear my desk' ends"),
    (lambda d: d["frames"][0].update(gaze_at="mug"), r"frames\.0\.gaze_at: Extra inputs are not permitted"),
    (lambda d: d.update(frames=[]), "frames: List should have at least 1 item"),
    (lambda d: d["frames"][3].update(image="/tmp/x.png"), r"frames\.3: image '/tmp/x.png' must be a path inside the demonstration's folder"),
])
def test_invalid_records_are_refused(tmp_path: Path, edit, message: str) -> None:
    mug_demonstration(tmp_path)
    path = tmp_path / "demonstration.json"
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))
    with pytest.raises(DemonstrationError, match=message):
        load_demonstration(tmp_path)


def test_unreadable_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(DemonstrationError, match="no demonstration here"):
        load_demonstration(tmp_path)
    (tmp_path / "demonstration.json").write_text("{frames: oops")
    with pytest.raises(DemonstrationError, match="not a JSON demonstration file"):
        load_demonstration(tmp_path)
    (tmp_path / "demonstration.json").write_text("[1, 2]")
    with pytest.raises(DemonstrationError, match="a demonstration is a JSON object, this file holds a list"):
        load_demonstration(tmp_path)


def test_missing_images_are_named(tmp_path: Path) -> None:
    mug_demonstration(tmp_path)
    (tmp_path / "frames" / "0003.png").unlink()
    with pytest.raises(DemonstrationError, match=r"1 view image\(s\) named by the record are missing, first frames/0003.png"):
        load_demonstration(tmp_path)
    assert len(load_demonstration(tmp_path, check_images=False).frames) == 13
