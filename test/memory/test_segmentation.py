"""MICA segmentation on the hand-built fixture: literal boundaries, segments, key frames, captions, F1."""

from __future__ import annotations

from pathlib import Path

import pytest

from homiebot.memory.segmentation import METHODS, boundaries, boundary_scores, key_frames, segment
from test.memory.fixture import mug_demonstration

TOLERANCE = 1.0


@pytest.fixture
def demo(tmp_path: Path):
    return mug_demonstration(tmp_path), tmp_path


def test_boundaries_of_each_method(demo) -> None:
    d, root = demo
    assert d.true_boundaries() == [4.0, 7.0, 10.0]
    assert boundaries(d, "gaze", root) == [8.0]  # the glance at the desk (one frame) is no boundary
    assert boundaries(d, "speech", root) == [3.8, 9.9]  # the opening remark at 0.2 s cuts nothing off
    assert boundaries(d, "gaze+speech", root) == [3.8, 8.0, 9.9]
    assert boundaries(d, "visual", root) == [2.0, 7.0]  # the lamp's flash and the walk


def test_boundary_f1_ranks_gaze_and_speech_first(demo) -> None:
    d, root = demo
    f1 = {m: boundary_scores(boundaries(d, m, root), d.true_boundaries(), TOLERANCE).f1 for m in METHODS}
    assert f1 == pytest.approx({"gaze+speech": 1.0, "speech": 0.8, "gaze": 0.5, "visual": 0.4})


def test_boundary_scores_match_one_to_one_within_tolerance() -> None:
    s = boundary_scores([3.9, 4.1, 9.0], [4.0, 7.0], tolerance=1.0)
    assert (s.matched, s.precision, s.recall) == (1, pytest.approx(1 / 3), 0.5)
    assert boundary_scores([], [], 1.0).f1 == 1.0
    assert boundary_scores([5.0], [], 1.0).f1 == 0.0


def test_segments_key_frames_and_captions(demo) -> None:
    d, root = demo
    segs = segment(d, "gaze+speech", root)
    assert [(s.first, s.last, s.start, s.end) for s in segs] == [(0, 3, 0.0, 4.0), (4, 7, 4.0, 8.0), (8, 9, 8.0, 10.0), (10, 12, 10.0, 12.0)]
    assert [s.key_frames for s in segs] == [[2, 3], [4, 5, 6], [8, 9], [10, 11, 12]]
    assert [s.picked for s in segs] == [[], ["white_mug"], [], []]
    assert [s.put for s in segs] == [[], [], [], [("white_mug", "kitchen_sink")]]
    assert [s.caption for s in segs] == [
        'In the bedroom. Looked at the white desk, the white mug. Also in view: red book. Said: "after work I clear my desk"',
        'In the bedroom. Picked up the white mug. Looked at the white mug. Also in view: white desk, red book. '
        'Said: "I pick up the mug by its handle"',
        "In the kitchen. Looked at the kitchen sink. Also in view: white mug, yellow sponge.",
        'In the kitchen. Put the white mug in the kitchen sink. Looked at the kitchen sink. Also in view: white mug, yellow sponge. '
        'Said: "dirty mugs go in the kitchen sink"',
    ]


def test_key_frames_spread_over_the_fixation() -> None:
    from homiebot.memory.demonstration import Demonstration, Frame

    frames = [Frame(time=float(i), gaze="fridge" if i >= 2 else None) for i in range(9)]
    d = Demonstration(id="d", home="h", frames=frames)
    assert key_frames(d, 0, 8) == [2, 5, 8]
    assert key_frames(d, 0, 1) == [0, 1]  # nothing fixated: all frames are candidates


def test_unknown_method_and_visual_without_images(demo) -> None:
    d, _ = demo
    with pytest.raises(ValueError, match="unknown segmentation method 'clip'.*gaze, speech"):
        boundaries(d, "clip")
    with pytest.raises(ValueError, match="give the demonstration's folder"):
        boundaries(d, "visual")
