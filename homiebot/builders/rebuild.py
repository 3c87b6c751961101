"""``homiebot video <episode folder>``: make the video of a recorded episode again.

A record holds the scene, the configuration, the seed and every raw planner answer, and episodes
are deterministic for a seed: the episode is run again in-process with those answers replayed and
the video on, and the new video and captions replace the folder's. When the replayed rounds do
not match the record (a component changed since), the video is still written and the mismatch
is reported.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from pydantic import ValidationError

from homiebot.config import RunConfig, describe_validation_error
from homiebot.core.errors import ConfigError
from homiebot.core.records import atomic_write_text
from homiebot.core.tasks import Task
from homiebot.viz.replay import read_record


def rebuild_video(folder: str | Path) -> tuple[Path, list[str]]:
    """Write ``episode.mp4`` and ``episode.vtt`` into an episode folder from its record; returns
    the video's path and the rounds whose replay differed from the record (empty when none)."""
    from homiebot.runtime import run_episode  # heavy: the world and its renderer

    folder = Path(folder)
    record = read_record(folder)
    if not record.steps:
        raise ConfigError(f"{folder}: the record has no rounds to make a video of")
    data = dict(record.config)
    if not data:
        raise ConfigError(f"{folder}: the record carries no configuration to replay it with")
    data["planner"] = {"name": "replay", "params": {"outputs": [s.raw_output for s in record.steps], "then_end": False}}
    data["max_rounds"] = len(record.steps)
    data["output"] = {**data.get("output", {}), "video": True, "images": False}
    data["seed"] = record.seed
    try:
        cfg = RunConfig.model_validate(data)
    except ValidationError as err:
        raise ConfigError(f"{folder}: the record's configuration is not valid here: {describe_validation_error(err)}") from None
    task = Task(id=record.task_id or "task", instruction=record.instruction, scene=record.scene or None)
    with tempfile.TemporaryDirectory(prefix="homiebot-rebuild-") as tmp:
        again, out = run_episode(cfg, task, tmp)
        assert out is not None
        if again.video is None:
            raise ConfigError(f"{folder}: the replayed episode made no video frames")
        shutil.copyfile(out / "episode.mp4", folder / ".episode.mp4.tmp")
        (folder / ".episode.mp4.tmp").replace(folder / "episode.mp4")
        atomic_write_text(folder / "episode.vtt", (out / "episode.vtt").read_text())
    differ = [f"round {a.round}: recorded {a.feedback.code.value if a.feedback.code else 'ok'}, "
              f"replayed {b.feedback.code.value if b.feedback.code else 'ok'}"
              for a, b in zip(record.steps, again.steps)
              if (a.feedback.success, a.feedback.code) != (b.feedback.success, b.feedback.code)]
    if len(again.steps) != len(record.steps):
        differ.append(f"{len(record.steps)} rounds recorded, {len(again.steps)} replayed")
    if record.video != "episode.mp4":
        atomic_write_text(folder / "episode.json", record.model_copy(update={"video": "episode.mp4"}).model_dump_json(indent=2))
    return folder / "episode.mp4", differ
