"""Replaying a recorded episode folder into rerun (an .rrd file, or the web viewer)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import rerun as rr
from PIL import Image

from homiebot.core.contracts import VIEW_NAMES, EpisodeRecord
from homiebot.core.errors import ConfigError
from homiebot.core.records import load_episode
from homiebot.viz.rerun_log import APP_ID, RerunLog, blueprint


def read_record(folder: str | Path) -> EpisodeRecord:
    """The record of an episode folder (ConfigError, one line, when it is not one)."""
    path = Path(folder)
    if not (path / "episode.json").is_file():
        raise ConfigError(f"{path}: not an episode folder (no episode.json); give a folder written by `homiebot run`, "
                          "or an .rrd file")
    try:
        return load_episode(path)
    except (ValueError, OSError) as err:
        raise ConfigError(f"{path / 'episode.json'}: unreadable episode record ({str(err).splitlines()[0]})") from None


def episode_to_rrd(folder: str | Path, rrd: str | Path) -> int:
    """Write an .rrd of an episode folder: the saved views of each round and the timeline
    (rounds, safety events). Returns the number of rounds."""
    record = read_record(folder)
    stream = rr.RecordingStream(APP_ID)
    stream.set_sinks(rr.FileSink(str(rrd)), default_blueprint=blueprint())
    log = RerunLog(stream)
    root = Path(folder)
    for step in record.steps:
        log.frame += 1
        stream.set_time("frame", sequence=log.frame)
        stream.set_time("round", sequence=step.round)
        for view in VIEW_NAMES:
            rel = step.images.get(view)
            if rel and (root / rel).is_file():
                with Image.open(root / rel) as img:
                    stream.log(f"views/{view}", rr.Image(np.asarray(img.convert("RGB"))))
        log.step(step)
    for event in record.safety_events:
        log.safety(event)
    stream.flush(timeout_sec=30.0)
    stream.disconnect()
    return len(record.steps)
