"""Cutting a demonstration into subtask segments (MICA), with key frames and a caption per segment.

Methods (each gives boundary times; the demonstration's start is never a boundary):
- ``gaze``: where the fixated object changes and the new fixation is held for ``min_fixation`` frames
  (a glance is not a new subtask; frames with unknown gaze neither break nor start a fixation);
- ``speech``: where an utterance starts (each utterance opens a segment);
- ``gaze+speech``: both, a boundary within ``merge_within`` seconds of an earlier one dropped;
- ``visual``: the frames-only baseline, where consecutive images differ by more than a threshold.
Boundaries are scored against the script's subtask starts with a time tolerance (``boundary_scores``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image
from pydantic import BaseModel, ConfigDict, Field

from homiebot.memory.demonstration import Demonstration

METHODS = ("gaze", "speech", "gaze+speech", "visual")
KEY_FRAMES = 3  # per segment, as MICA picks
SURFACES = {"table", "kitchen_counter", "counter", "sofa", "desk", "tv_stand", "bed", "shelf"}  # things go on these, not in


class Segment(BaseModel):
    """A stretch of a demonstration: frames ``first``..``last`` (inclusive), from ``start`` to ``end``
    seconds, its key frames (frame indices), what was picked and put where (``put``: object, place),
    and a caption; in a memory also copies of its key frames' images."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    demo: str
    index: int = Field(ge=0)
    first: int = Field(ge=0)
    last: int = Field(ge=0)
    start: float
    end: float
    key_frames: list[int]
    room: str | None = None
    looked_at: list[str] = Field(default_factory=list)
    picked: list[str] = Field(default_factory=list)
    put: list[tuple[str, str]] = Field(default_factory=list)
    said: list[str] = Field(default_factory=list)
    caption: str
    key_images: list[str] = Field(default_factory=list)  # the key frames' images kept with a memory (relative to its folder)


@dataclass(frozen=True)
class BoundaryScores:
    """Precision, recall and F1 of predicted boundaries against the true ones."""

    precision: float
    recall: float
    f1: float
    matched: int
    predicted: int
    true: int


def gaze_boundaries(demo: Demonstration, min_fixation: int = 2) -> list[float]:
    """Times where a new object is fixated for at least ``min_fixation`` frames in a row."""
    current: str | None = None
    candidate: str | None = None
    run, run_start = 0, 0.0
    out: list[float] = []
    for frame in demo.frames:
        if frame.gaze is None:
            continue  # no evidence either way
        if frame.gaze == current:
            candidate, run = None, 0
            continue
        if frame.gaze != candidate:
            candidate, run, run_start = frame.gaze, 0, frame.time
        run += 1
        if run >= min_fixation:
            if current is not None:
                out.append(run_start)
            current, candidate, run = candidate, None, 0
    return out


def speech_boundaries(demo: Demonstration) -> list[float]:
    """The start of every utterance after the demonstration's first frame."""
    t0 = demo.frames[0].time
    return sorted({u.start for u in demo.utterances if u.start > t0})


def merge_boundaries(times: Sequence[float], merge_within: float) -> list[float]:
    """Sorted times with any time within ``merge_within`` of the last kept one dropped."""
    out: list[float] = []
    for t in sorted(times):
        if not out or t - out[-1] > merge_within:
            out.append(t)
    return out


def visual_boundaries(demo: Demonstration, root: str | Path, threshold: float = 0.08, min_gap: float = 1.0) -> list[float]:
    """Times of frames whose image differs from the one before by more than ``threshold`` (mean
    absolute difference of 16x16 grey thumbnails, 0..1), at least ``min_gap`` seconds apart."""
    thumbs = [_thumbnail(Path(root) / f.image) if f.image else None for f in demo.frames]
    changes = []
    for i in range(1, len(thumbs)):
        a, b = thumbs[i - 1], thumbs[i]
        if a is not None and b is not None and float(np.abs(a - b).mean()) > threshold:
            changes.append(demo.frames[i].time)
    return merge_boundaries(changes, min_gap)


def _thumbnail(path: Path) -> np.ndarray:
    with Image.open(path) as im:
        return np.asarray(im.convert("L").resize((16, 16), Image.Resampling.BILINEAR), dtype=np.float32) / 255.0


def boundaries(demo: Demonstration, method: str, root: str | Path | None = None, min_fixation: int = 2,
               merge_within: float = 1.0) -> list[float]:
    """Boundary times by ``method`` (one of METHODS); ``visual`` reads images under ``root``. A boundary
    within ``merge_within`` seconds of the demonstration's start is dropped (it would cut off nothing
    but an opening remark)."""
    if method == "gaze":
        found = gaze_boundaries(demo, min_fixation)
    elif method == "speech":
        found = speech_boundaries(demo)
    elif method == "gaze+speech":
        found = merge_boundaries(gaze_boundaries(demo, min_fixation) + speech_boundaries(demo), merge_within)
    elif method == "visual":
        if root is None:
            raise ValueError("the visual method reads the frames' images: give the demonstration's folder")
        found = visual_boundaries(demo, root)
    else:
        raise ValueError(f"unknown segmentation method '{method}' (known: {', '.join(METHODS)})")
    return [t for t in found if t - demo.frames[0].time > merge_within]


def boundary_scores(predicted: Sequence[float], true: Sequence[float], tolerance: float) -> BoundaryScores:
    """Match each true boundary to at most one predicted boundary within ``tolerance`` seconds
    (closest pairs first) and score the matches. No boundaries at all on both sides scores 1."""
    pairs = sorted((abs(p - t), i, j) for i, p in enumerate(predicted) for j, t in enumerate(true) if abs(p - t) <= tolerance)
    used_p: set[int] = set()
    used_t: set[int] = set()
    for _, i, j in pairs:
        if i not in used_p and j not in used_t:
            used_p.add(i)
            used_t.add(j)
    m = len(used_p)
    precision = m / len(predicted) if predicted else float(not true)
    recall = m / len(true) if true else float(not predicted)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return BoundaryScores(precision, recall, f1, m, len(predicted), len(true))


def segment(demo: Demonstration, method: str, root: str | Path | None = None, k: int = KEY_FRAMES) -> list[Segment]:
    """The demonstration cut at ``method``'s boundaries, each segment with key frames and a caption."""
    return segments_at(demo, boundaries(demo, method, root), k)


def segments_at(demo: Demonstration, times: Sequence[float], k: int = KEY_FRAMES) -> list[Segment]:
    """Segments between the given boundary times (each starts at the first frame at or after its time)."""
    starts = sorted({0} | {_frame_at(demo, t) for t in times})
    ends = [s - 1 for s in starts[1:]] + [len(demo.frames) - 1]
    return [_describe(demo, i, first, last, k) for i, (first, last) in enumerate(zip(starts, ends, strict=True))]


def _frame_at(demo: Demonstration, t: float) -> int:
    for i, f in enumerate(demo.frames):
        if f.time >= t - 1e-9:
            return i
    return len(demo.frames) - 1


def key_frames(demo: Demonstration, first: int, last: int, k: int = KEY_FRAMES) -> list[int]:
    """Up to ``k`` frame indices spread evenly over the segment's frames that fixate its most looked-at
    object (all its frames when nothing is fixated)."""
    frames = range(first, last + 1)
    gazes = Counter(demo.frames[i].gaze for i in frames if demo.frames[i].gaze)
    pool = [i for i in frames if demo.frames[i].gaze == gazes.most_common(1)[0][0]] if gazes else list(frames)
    picks = np.linspace(0, len(pool) - 1, num=min(k, len(pool))).round().astype(int)
    return sorted({pool[p] for p in picks})


def _describe(demo: Demonstration, index: int, first: int, last: int, k: int) -> Segment:
    frames = demo.frames[first:last + 1]
    start = frames[0].time
    end = demo.frames[last + 1].time if last + 1 < len(demo.frames) else frames[-1].time
    rooms = Counter(f.room for f in frames if f.room)
    room = rooms.most_common(1)[0][0] if rooms else None
    looked = list(dict.fromkeys(f.gaze for f in frames if f.gaze))
    picked: list[str] = []
    put: list[tuple[str, str]] = []
    held = demo.frames[first - 1].holding if first > 0 else None
    for f in frames:
        if f.holding != held:
            if held is not None:
                put.append((held, f.gaze or (looked[-1] if looked else "somewhere")))
            if f.holding is not None:
                picked.append(f.holding)
            held = f.holding
    # an utterance belongs to the segment holding the first frame at or after its start (a boundary
    # from speech falls a little before its frame)
    said = [u.text for u in demo.utterances if first <= _frame_at(demo, u.start) <= last]
    seen: dict[str, float] = {}
    for f in frames:
        for d in f.detections:
            if d.name not in looked:
                seen[d.name] = seen.get(d.name, 0.0) + d.area
    return Segment(demo=demo.id, index=index, first=first, last=last, start=start, end=end, key_frames=key_frames(demo, first, last, k),
                   room=room, looked_at=looked, picked=picked, put=put, said=said,
                   caption=caption(room, looked, picked, put, said, sorted(seen, key=lambda n: (-seen[n], n))[:3],
                                   {d.name for f in frames for d in f.detections if d.category in SURFACES}))


def caption(room: str | None, looked: Sequence[str], picked: Sequence[str], put: Sequence[tuple[str, str]],
            said: Sequence[str], seen: Sequence[str], surfaces: set[str] | frozenset[str] = frozenset()) -> str:
    """One sentence per fact: where, what was picked, put where (on one of ``surfaces``, else in),
    looked at, also in view, said."""
    def words(name: str) -> str:
        return name.replace("_", " ")

    parts = [f"In the {words(room)}." if room else "Somewhere in the home."]
    parts += [f"Picked up the {words(o)}." for o in picked]
    parts += [f"Put the {words(o)} {'on' if p in surfaces else 'in'} the {words(p)}." for o, p in put]
    if looked:
        parts.append("Looked at the " + ", the ".join(words(o) for o in looked) + ".")
    if seen:
        parts.append("Also in view: " + ", ".join(words(o) for o in seen) + ".")
    parts += [f'Said: "{s}"' for s in said]
    return " ".join(parts)
