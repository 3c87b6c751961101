"""A demonstration: what a demonstrator saw, looked at and said while doing a task (MICA's input).

One folder holds ``demonstration.json`` (this record) and the view images it names (paths relative
to the folder). Per frame: its time, the first-person image, the fixated instance (gaze: the thing on
the camera centre's ray when the robot is teleoperated) and the detections in view. Utterances have
start and end times. A scripted demonstration also carries its true subtask boundaries, the reference
segmentation is scored against.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

DEMONSTRATION_VERSION = 1
FILE_NAME = "demonstration.json"


class DemonstrationError(ValueError):
    """A demonstration file that cannot be read, or a record that does not hold together."""


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Detection(_Record):
    """A thing in view: its name, its category and the fraction of the image it covers."""

    name: str
    category: str
    area: float = Field(ge=0.0, le=1.0)


class Frame(_Record):
    """One first-person frame. ``gaze`` is the fixated instance's name; None when nothing is fixated
    or the gaze is unknown (frames rendered without segmentation while the base moves)."""

    time: float = Field(ge=0.0)
    image: str | None = None
    gaze: str | None = None
    detections: list[Detection] = Field(default_factory=list)
    holding: str | None = None
    room: str | None = None

    @model_validator(mode="after")
    def _inside_folder(self) -> Frame:
        # images travel with their folder: a path outside it would break when the folder is copied
        if self.image is not None and (Path(self.image).is_absolute() or ".." in Path(self.image).parts):
            raise ValueError(f"image '{self.image}' must be a path inside the demonstration's folder (relative, no '..')")
        return self


class Utterance(_Record):
    """What the demonstrator said, from ``start`` to ``end`` seconds."""

    start: float = Field(ge=0.0)
    end: float = Field(ge=0.0)
    text: str = Field(min_length=1)

    @model_validator(mode="after")
    def _ordered(self) -> Utterance:
        if self.end < self.start:
            raise ValueError(f"utterance '{self.text}' ends ({self.end}) before it starts ({self.start})")
        return self


class TrueSubtask(_Record):
    """A subtask of the script and the time it started (the reference boundary)."""

    start: float = Field(ge=0.0)
    subtask: str = Field(min_length=1)


class Demonstration(_Record):
    """A demonstration record (see the module's docstring). Frames are in time order."""

    version: int = DEMONSTRATION_VERSION
    id: str = Field(min_length=1)
    home: str = Field(min_length=1)
    user: str = "default"
    task: str = ""
    frames: list[Frame] = Field(min_length=1)
    utterances: list[Utterance] = Field(default_factory=list)
    subtasks: list[TrueSubtask] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> Demonstration:
        if self.version != DEMONSTRATION_VERSION:
            raise ValueError(f"demonstration version {self.version} is not supported (this homiebot reads version {DEMONSTRATION_VERSION})")
        times = [f.time for f in self.frames]
        if any(b <= a for a, b in zip(times, times[1:], strict=False)):
            raise ValueError("frame times must increase strictly")
        starts = [s.start for s in self.subtasks]
        if starts != sorted(starts):
            raise ValueError("subtask start times must be in order")
        return self

    @property
    def duration(self) -> float:
        """Seconds from the first frame to the last."""
        return self.frames[-1].time - self.frames[0].time

    def true_boundaries(self) -> list[float]:
        """Start times of the scripted subtasks after the first (the first starts the demonstration)."""
        return [s.start for s in self.subtasks[1:]]


def save_demonstration(demo: Demonstration, folder: str | Path) -> Path:
    """Write ``demo`` as ``folder/demonstration.json``; its image paths must be relative to ``folder``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / FILE_NAME
    path.write_text(demo.model_dump_json(indent=1))
    return path


def load_demonstration(path: str | Path, check_images: bool = True) -> Demonstration:
    """Read a demonstration from its folder or its JSON file. Raises DemonstrationError saying what is
    wrong (no file, not JSON, a field that does not validate, an image the record names that is missing)."""
    path = Path(path)
    if path.is_dir():
        path = path / FILE_NAME
    if not path.is_file():
        raise DemonstrationError(f"{path}: no demonstration here (record one with `python -m homiebot.memory record`)")
    try:
        data = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise DemonstrationError(f"{path}: not a JSON demonstration file ({err})") from None
    if not isinstance(data, dict):
        raise DemonstrationError(f"{path}: a demonstration is a JSON object, this file holds a {type(data).__name__}")
    try:
        demo = Demonstration.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "record"
        raise DemonstrationError(f"{path}: {where}: {first['msg'].removeprefix('Value error, ')}") from None
    if check_images:
        missing = [f.image for f in demo.frames if f.image is not None and not (path.parent / f.image).is_file()]
        if missing:
            raise DemonstrationError(f"{path}: {len(missing)} view image(s) named by the record are missing, first {missing[0]}")
    return demo
