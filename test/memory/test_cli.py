"""python -m homiebot.memory: segment a demonstration, refuse a bad one with one line and exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from homiebot.memory.__main__ import main
from test.memory.fixture import mug_demonstration


def test_segment_prints_segments_and_scores(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mug_demonstration(tmp_path)
    assert main(["segment", str(tmp_path), "--method", "speech"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("0:   0.0-  4.0 s  key frames [2, 3]  In the bedroom.")
    assert out[-1] == "boundaries vs the script: precision 1.00 recall 0.67 F1 0.80"


def test_bad_demonstration_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "demonstration.json").write_text("[]")
    assert main(["segment", str(tmp_path)]) == 2
    assert "a demonstration is a JSON object" in capsys.readouterr().err
    assert main(["recall", "anything", "--memory", str(tmp_path / "none")]) == 2
    assert "no demonstrations remembered" in capsys.readouterr().err
