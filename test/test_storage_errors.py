"""A full disk while a record is written: one line, exit status 74, and what finished is kept
(the record without its video, or the rounds' images in the ``.partial`` folder); ``eval`` never leaves
half a line in results.jsonl. ENOSPC is injected where the write happens."""

from __future__ import annotations

import errno
import json
import os

import pytest

from homiebot import cli
from homiebot.bench import evaluate
from homiebot.core import records
from homiebot.core.records import load_episode

from .conftest import DEMO_TASK


def disk_full(path: object = None) -> OSError:
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path) if path else None)


@pytest.fixture
def small(tmp_path):
    cfg = tmp_path / "small.yaml"
    cfg.write_text("world: {name: embedded_home, params: {width: 64, height: 64}}\n")
    return ["run", "--task", str(DEMO_TASK), "--planner", "oracle", "--profile", "perfect", "--config", str(cfg),
            "--out", str(tmp_path / "runs")]


def test_a_video_that_does_not_fit_is_left_out_and_the_record_kept(small, tmp_path, monkeypatch, capsys):
    def move_half(src, dst):  # the copy onto the full disk stops half way, as shutil.move's would
        data = open(src, "rb").read()
        with open(dst, "wb") as fh:
            fh.write(data[: len(data) // 2])
        raise disk_full(dst)

    monkeypatch.setattr("homiebot.viz.video.shutil.move", move_half)
    status = cli.main([*small, "--video", "--max-rounds", "2"])  # two rounds make a video as well as nine
    err = capsys.readouterr().err
    assert status == cli.STORAGE_FAILED == 74
    assert "homiebot: error: the video could not be written (No space left on device)" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    folder = tmp_path / "runs" / "demo_seed0"
    record = load_episode(folder)
    assert record.video is None and len(record.steps) == 2
    assert not (folder / "episode.mp4").exists() and not list((tmp_path / "runs").glob("*.partial"))


def test_a_record_that_does_not_fit_stays_in_its_partial_folder(small, tmp_path, monkeypatch, capsys):
    real = records.atomic_write_text

    def refuse_the_record(path, text):
        if path.name == "episode.json":
            raise disk_full(path)
        real(path, text)

    monkeypatch.setattr(records, "atomic_write_text", refuse_the_record)
    status = cli.main(small)
    err = capsys.readouterr().err
    partial = tmp_path / "runs" / "demo_seed0.partial"
    assert status == 74 and f"the episode record could not be written (No space left on device); what was recorded of it stays in {partial}" in err
    assert (partial / "images" / "round_01_front.png").is_file()
    assert not (tmp_path / "runs" / "demo_seed0").exists()


def test_any_other_write_on_a_full_disk_is_one_line(small, monkeypatch, capsys):
    def full(*args, **kwargs):
        raise disk_full("/somewhere/round_01_front.png")

    monkeypatch.setattr("homiebot.core.records.Image.Image.save", full)
    assert cli.main(small) == 74
    err = capsys.readouterr().err
    assert "No space left on device" in err and "Traceback" not in err


def test_a_results_line_that_does_not_fit_is_taken_back_whole(tmp_path, monkeypatch):
    path = tmp_path / "results.jsonl"
    real_write = os.write
    with open(path, "a") as fh:
        evaluate.append_line(fh, json.dumps({"run": 1}))

        def half(fd, data):
            real_write(fd, data[: len(data) // 2])
            raise disk_full(path)

        monkeypatch.setattr(evaluate.os, "write", half)
        with pytest.raises(OSError):
            evaluate.append_line(fh, json.dumps({"run": 2, "pad": "x" * 200}))
        monkeypatch.setattr(evaluate.os, "write", real_write)
        evaluate.append_line(fh, json.dumps({"run": 3}))
    assert [json.loads(line)["run"] for line in path.read_text().splitlines()] == [1, 3]

