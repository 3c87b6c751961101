"""Writing episode folders: ``episode.json``, four PNG views per round and, on request, an MP4.

Images are written as rounds happen, into ``<out>/<episode_id>.partial/``; the finished folder
is renamed into place in one step, so a folder named ``<episode_id>`` is always complete. If an
episode is interrupted, what was recorded is still finalised (termination "interrupted"). No
episode ever replaces or deletes another's folder: a name in use (finished or ``.partial``) gets a
suffix (``_2``, ``_3`` ...), and ``finalise_leftovers`` turns the ``.partial`` folders of a process that
died into records (termination "error").
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import socket
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PIL import Image
from pydantic import ValidationError

from homiebot.core.contracts import VIEW_NAMES, EpisodeRecord, Observation, StepRecord

VIDEO_FPS = 2
START_FILE = "start.json"  # in a .partial folder: what the episode is, for finalise_leftovers
STEPS_FILE = "steps.jsonl"  # in a .partial folder: the rounds finished so far, one StepRecord per line
OWNER_FILE = "owner.json"  # in a .partial folder: the process writing it (pid, start time, host), to tell orphans
VIDEO_FILES = ("episode.mp4", "episode.vtt")


class StorageError(Exception):
    """The disk is full (or another I/O error) while a record is written; the message says what was kept
    and where. Raised after everything that could still be written has been."""


def atomic_write_text(path: Path, text: str) -> None:
    """Write a file so that readers see either the old or the complete new content (a failed write
    leaves no temporary file behind)."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with open(tmp, "w") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


class EpisodeWriter:
    """Accumulates one episode's artifacts and publishes them atomically."""

    def __init__(self, out_dir: str | Path, episode_id: str, images: bool = True, video: bool = False) -> None:
        self.out_dir = Path(out_dir)
        self.images = images
        self.video = video
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.episode_id = self._claim(episode_id)
        self.final_dir = self.out_dir / self.episode_id
        self.work_dir = self.out_dir / f"{self.episode_id}.partial"
        self._frames: list[np.ndarray] = []
        self.rounds_written = 0  # rounds made durable by write_step
        self.before_finish: list = []  # callables run before the folder is published (e.g. close a bag)
        self.video_maker: Callable[[Path], str | None] | None = None  # writes the video into the folder, returns its name

    def _claim(self, base: str) -> str:
        """The first of ``base``, ``base_2``, ``base_3`` ... that no other episode uses, finished or
        not; its ``.partial`` folder is created here (mkdir is atomic: two writers never share one)."""
        for n in itertools.count(1):
            name = base if n == 1 else f"{base}_{n}"
            if (self.out_dir / name).exists():
                continue
            try:
                (self.out_dir / f"{name}.partial").mkdir()
            except FileExistsError:
                continue
            if (self.out_dir / name).exists():  # finished in between by an episode that had claimed it
                (self.out_dir / f"{name}.partial").rmdir()
                continue
            owner = {"pid": os.getpid(), "start": process_start(os.getpid()), "host": socket.gethostname()}
            atomic_write_text(self.out_dir / f"{name}.partial" / OWNER_FILE, json.dumps(owner))
            return name
        raise AssertionError("unreachable")

    def write_start(self, fields: dict) -> None:
        """Note what the episode is (instruction, task_id, scene, planner, seed, max_rounds, config), so that
        a record can be made of the folder should this process die before ``finish``."""
        atomic_write_text(self.work_dir / START_FILE, json.dumps(fields))

    def write_step(self, step: StepRecord) -> None:
        """Make a finished round durable before the next one starts: should this process die, the record
        made of the folder keeps it (one complete line per round; a torn last line is ignored)."""
        with open(self.work_dir / STEPS_FILE, "ab") as fh:
            fh.write((step.model_dump_json() + "\n").encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())
        self.rounds_written += 1

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
            # what the views show by name (the instance labels), so exported training data can leave out
            # rounds whose target the planner could not have seen
            seen = sorted({label.name for label in obs.labels.values()})
            atomic_write_text(self.work_dir / f"images/round_{round_index:02d}_seen.json", json.dumps(seen))
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
                writer.append_data(frame)  # type: ignore[attr-defined]  # imageio's get_writer stubs lack append_data
        return rel

    def discard(self) -> None:
        """Remove the unfinished folder of an episode that never started (none of its rounds was written)."""
        if self.rounds_written:
            raise ValueError(f"{self.work_dir} holds {self.rounds_written} recorded round(s): it is kept, not discarded")
        shutil.rmtree(self.work_dir, ignore_errors=True)

    def finish(self, record: EpisodeRecord) -> EpisodeRecord:
        """Write episode.json (and the video), move the folder into place; returns the final record.

        Raises StorageError when the disk is full: a video that does not fit is left out (what was written
        of it is removed, which frees room for the record) and the record is still published; a record
        that does not fit leaves the ``.partial`` folder as it is (``finalise_leftovers`` can publish it)."""
        for hook in self.before_finish:
            hook()
        lost_video: OSError | None = None
        try:
            video = self.video_maker(self.work_dir) if self.video_maker is not None else self._write_video() if self.video else None
        except OSError as err:
            lost_video, video = err, None
            for name in VIDEO_FILES:
                (self.work_dir / name).unlink(missing_ok=True)
        if video:
            record = record.model_copy(update={"video": video})
        try:
            atomic_write_text(self.work_dir / "episode.json", record.model_dump_json(indent=2))
        except OSError as err:
            raise StorageError(f"the episode record could not be written ({_why(err)}); what was recorded of it stays in "
                               f"{self.work_dir}") from err
        for name in (START_FILE, STEPS_FILE, OWNER_FILE):  # episode.json holds what they said
            (self.work_dir / name).unlink(missing_ok=True)
        os.rename(self.work_dir, self.final_dir)  # no other writer takes a claimed name; rename never replaces a folder's files
        if lost_video is not None:
            raise StorageError(f"the video could not be written ({_why(lost_video)}); the episode record is complete "
                               f"without it: {self.final_dir / 'episode.json'}") from lost_video
        return record


def process_start(pid: int) -> str | None:
    """When process ``pid`` started (Linux: clock ticks since boot, from /proc), so that a reused pid is not
    taken for the process it was; None when that cannot be read or the process is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if fields[0] in ("Z", "X") else fields[19]


def orphaned(work: Path) -> bool:
    """Whether the process that writes the ``.partial`` folder ``work`` has ended. A folder with no owner
    noted, or written on another host (a shared disk), is never taken for an orphan."""
    try:
        owner = json.loads((work / OWNER_FILE).read_text())
        pid, start, host = int(owner["pid"]), owner.get("start"), str(owner["host"])
    except (OSError, ValueError, KeyError, TypeError):
        return False
    if host != socket.gethostname():
        return False
    now = process_start(pid)
    if now is not None:
        return start is not None and now != start  # the pid now belongs to another process
    if Path("/proc/self/stat").exists():
        return True  # /proc works and has no such process
    try:  # no /proc (macOS): whether the pid exists at all
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def finished_steps(path: Path) -> list[StepRecord]:
    """The rounds ``write_step`` made durable, in order; a line cut short by the process's death ends the list."""
    try:
        lines = path.read_bytes().splitlines()
    except OSError:
        return []
    steps: list[StepRecord] = []
    for line in lines:
        try:
            steps.append(StepRecord.model_validate_json(line))
        except ValidationError:
            break
    return steps


def _why(err: OSError) -> str:
    """An I/O error in a few words (``No space left on device``)."""
    return err.strerror or str(err)


def load_episode(path: str | Path) -> EpisodeRecord:
    """Read an ``episode.json`` (or the folder containing it)."""
    path = Path(path)
    if path.is_dir():
        path = path / "episode.json"
    return EpisodeRecord.model_validate(json.loads(path.read_text()))


def finalise_leftovers(out_dir: str | Path, reason: str, orphans_only: bool = False) -> list[Path]:
    """Publish the ``.partial`` folders left in ``out_dir`` by a process that died mid-episode.

    A folder with its ``episode.json`` already written is only moved into place; one without gets a
    record (termination "error", ``reason``) of what the folder holds: the episode's start and every
    round that finished before the process died, next to their images. Call this only when no other
    writer uses ``out_dir``, or with ``orphans_only``: then only folders whose writing process has ended
    are published (others may be episodes running beside this process)."""
    done = []
    for work in sorted(Path(out_dir).glob("*.partial")):
        if not work.is_dir() or orphans_only and not orphaned(work):
            continue
        name = work.name[: -len(".partial")]
        final = work.with_name(name)
        n = 2
        while final.exists():
            final, n = work.with_name(f"{name}_{n}"), n + 1
        if not (work / "episode.json").exists():
            start = {"instruction": "(unknown: the episode's process died)", "scene": {}, "planner": "unknown", "seed": 0,
                     "max_rounds": 0}
            try:
                start |= json.loads((work / START_FILE).read_text())
            except (OSError, ValueError):
                pass
            steps = finished_steps(work / STEPS_FILE)
            record = EpisodeRecord.model_validate({**start, "episode_id": final.name, "termination": "error", "error": reason,
                                                   "steps": steps})
            atomic_write_text(work / "episode.json", record.model_dump_json(indent=2))
        for name in (START_FILE, STEPS_FILE, OWNER_FILE):
            (work / name).unlink(missing_ok=True)
        os.rename(work, final)
        done.append(final)
    return done
