"""Writing episode folders: ``episode.json``, four PNG views per round and, on request, an MP4.

Images are written as rounds happen, into ``<out>/<episode_id>.partial/``; the finished folder
is renamed into place in one step, so a folder named ``<episode_id>`` is always complete. If an
episode is interrupted, what was recorded is still finalised (termination "interrupted").
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
from PIL import Image

from homiebot.contracts import VIEW_NAMES, EpisodeRecord, Observation

VIDEO_FPS = 2


def atomic_write_text(path: Path, text: str) -> None:
    """Write a file so that readers see either the old or the complete new content."""
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


class EpisodeWriter:
    """Accumulates one episode's artifacts and publishes them atomically."""

    def __init__(self, out_dir: str | Path, episode_id: str, images: bool = True, video: bool = False) -> None:
        self.out_dir = Path(out_dir)
        self.episode_id = episode_id
        self.images = images
        self.video = video
        self.final_dir = self.out_dir / episode_id
        self.work_dir = self.out_dir / f"{episode_id}.partial"
        if self.work_dir.exists():
            shutil.rmtree(self.work_dir)
        self.work_dir.mkdir(parents=True)
        self._frames: list[np.ndarray] = []
        self.before_finish: list = []  # callables run before the folder is published (e.g. close a bag)

    def write_views(self, round_index: int, obs: Observation) -> dict[str, str]:
        """Save the round's four RGB views; return view -> path relative to the episode folder."""
        paths: dict[str, str] = {}
        if self.images:
            for view in VIEW_NAMES:
                rel = f"images/round_{round_index:02d}_{view}.png"
                target = self.work_dir / rel
                target.parent.mkdir(exist_ok=True)
                Image.fromarray(obs.views[view].rgb).save(target, compress_level=1)
                paths[view] = rel
        if self.video:
            self._frames.append(self._mosaic(obs))
        return paths

    @staticmethod
    def _mosaic(obs: Observation) -> np.ndarray:
        v = obs.views
        top = np.concatenate([v["front"].rgb, v["left"].rgb], axis=1)
        bottom = np.concatenate([v["back"].rgb, v["right"].rgb], axis=1)
        return np.concatenate([top, bottom], axis=0)

    def _write_video(self) -> str | None:
        if not self._frames:
            return None
        import imageio.v2 as imageio  # optional dependency, imported only when a video is asked for

        rel = "episode.mp4"
        with imageio.get_writer(self.work_dir / rel, fps=VIDEO_FPS, codec="libx264", macro_block_size=16, quality=7) as writer:
            for frame in self._frames:
                writer.append_data(frame)
        return rel

    def discard(self) -> None:
        """Remove the unfinished folder of an episode that never started."""
        shutil.rmtree(self.work_dir, ignore_errors=True)

    def finish(self, record: EpisodeRecord) -> EpisodeRecord:
        """Write episode.json (and the video), move the folder into place; returns the final record."""
        for hook in self.before_finish:
            hook()
        video = self._write_video() if self.video else None
        if video:
            record = record.model_copy(update={"video": video})
        atomic_write_text(self.work_dir / "episode.json", record.model_dump_json(indent=2))
        if self.final_dir.exists():
            old = self.out_dir / f"{self.episode_id}.old"
            shutil.rmtree(old, ignore_errors=True)
            os.replace(self.final_dir, old)
            os.replace(self.work_dir, self.final_dir)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(self.work_dir, self.final_dir)
        return record


def load_episode(path: str | Path) -> EpisodeRecord:
    """Read an ``episode.json`` (or the folder containing it)."""
    path = Path(path)
    if path.is_dir():
        path = path / "episode.json"
    return EpisodeRecord.model_validate(json.loads(path.read_text()))
