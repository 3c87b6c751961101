"""Episode videos people want to watch: continuous motion, labelled views, a caption bar, WebVTT.

``EpisodeVideo`` watches an episode (the runtime's observer interface): each round's four views are
held for a moment under a caption (round, subtask, model, feedback), then the motion the skills
made is shown frame by frame (``World.in_between``: the base along its path, the arm, doors and
drawers over their motion) at a real frame rate. Frames stream into the encoder as they are made;
only the current round's observation waits for its caption.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from homiebot.core.contracts import VIEW_NAMES, EpisodeRecord, Observation, StepRecord
from homiebot.core.world import World
from homiebot.core.world_capabilities import ViewableWorld
from homiebot.viz.timeline import step_status, step_subtask

FPS = 10
HOLD_SECONDS = 1.0  # each round's observation stays on screen this long before the motion
CAPTION_HEIGHT = 64
MAX_MOTION_FRAMES = 150  # per round: a long drive is shown faster


def caption_lines(step: StepRecord | None, round_index: int) -> tuple[str, str]:
    """The caption bar's two lines for a round."""
    if step is None:
        return f"Round {round_index}", "planning..."
    model = (step.output.model if step.output else None) or "-"
    first = f"Round {step.round}  |  {step_subtask(step)}  |  {model}  |  {step_status(step)}"
    second = "" if step.feedback.success else step.feedback.message
    return first, second


def cue_text(step: StepRecord | None, round_index: int) -> str:
    """A round's WebVTT cue."""
    first, second = caption_lines(step, round_index)
    return first + (f"\n{second}" if second else "")


def _font(size: int) -> Any:
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1: one bitmap size
        return ImageFont.load_default()


class FrameStyle:
    """Composes a video frame: the four views in a 2x2 grid, each labelled, and the caption bar."""

    def __init__(self) -> None:
        self.label_font = _font(13)
        self.caption_font = _font(15)

    def compose(self, obs: Observation, lines: tuple[str, str]) -> np.ndarray:
        v = obs.views
        grid = np.concatenate([np.concatenate([v["front"].rgb, v["left"].rgb], axis=1),
                               np.concatenate([v["back"].rgb, v["right"].rgb], axis=1)], axis=0)
        h, w = grid.shape[:2]
        img = Image.new("RGB", (w, h + CAPTION_HEIGHT), (20, 22, 28))
        img.paste(Image.fromarray(np.ascontiguousarray(grid)), (0, 0))
        draw = ImageDraw.Draw(img)
        vh, vw = v["front"].rgb.shape[:2]
        for i, name in enumerate(VIEW_NAMES):  # grid order: front left / back right
            x, y = (i % 2) * vw, (i // 2) * vh
            box = draw.textbbox((x + 6, y + 4), name, font=self.label_font)
            draw.rectangle((box[0] - 3, box[1] - 2, box[2] + 3, box[3] + 2), fill=(0, 0, 0))
            draw.text((x + 6, y + 4), name, fill=(255, 255, 255), font=self.label_font)
        draw.text((10, h + 10), lines[0], fill=(255, 255, 255), font=self.caption_font)
        if lines[1]:
            draw.text((10, h + 34), lines[1][:90], fill=(255, 170, 120), font=self.caption_font)
        return np.asarray(img)


def vtt_time(seconds: float) -> str:
    ms = round(seconds * 1000)
    return f"{ms // 3_600_000:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"


class EpisodeVideo:
    """Writes ``episode.mp4`` and ``episode.vtt`` of one episode (an observer of the loop)."""

    def __init__(self, fps: int = FPS, hold: float = HOLD_SECONDS, max_motion_frames: int = MAX_MOTION_FRAMES) -> None:
        self.fps = fps
        self.hold = max(1, round(hold * fps))
        self.max_motion = max_motion_frames
        self.style = FrameStyle()
        self._tmp = Path(tempfile.mkdtemp(prefix="homiebot-video-"))
        self._writer: Any = None
        self.frames = 0
        self.cues: list[tuple[int, int, str]] = []  # (first frame, end frame, text)
        self._world: World | None = None
        self._snap: Any = None
        self._pending: Observation | None = None
        self._last_step: StepRecord | None = None
        self._last_obs: Observation | None = None

    # ---- observer interface ----------------------------------------------------------------
    def start(self, world: World, safety: Any = None) -> None:
        self._world = world

    def observation(self, obs: Observation) -> None:
        self._motion()
        self._flush_pending(None)
        self._pending = obs
        self._last_obs = obs
        self._snap = self._world.motion_snapshot() if isinstance(self._world, ViewableWorld) else None

    def step(self, step: StepRecord) -> None:
        self._flush_pending(step)
        self._last_step = step

    def end(self, record: EpisodeRecord | None) -> None:
        """Nothing to do: the video is written by ``write`` before the record is published."""

    # ---- frames ----------------------------------------------------------------------------
    def _emit(self, frame: np.ndarray, count: int = 1) -> None:
        if self._writer is None:
            import imageio.v2 as imageio  # the sim extra

            self._writer = imageio.get_writer(self._tmp / "episode.mp4", fps=self.fps, codec="libx264", macro_block_size=16,
                                              quality=7, ffmpeg_log_level="error")
        for _ in range(count):
            self._writer.append_data(frame)
        self.frames += count

    def _flush_pending(self, step: StepRecord | None) -> None:
        """The round's observation, held under its caption; its cue starts here."""
        obs, self._pending = self._pending, None
        if obs is None:
            return
        self.cues.append((self.frames, self.frames + self.hold, cue_text(step, obs.round)))
        self._emit(self.style.compose(obs, caption_lines(step, obs.round)), self.hold)

    def _motion(self) -> None:
        """The motion since the last observation, under the last round's caption (its cue grows)."""
        world, before = self._world, self._snap
        self._snap = None
        if not isinstance(world, ViewableWorld) or before is None:
            return
        after = world.motion_snapshot()
        lines = caption_lines(self._last_step, self._last_step.round if self._last_step else 0)
        for obs in world.in_between(before, after, self.fps, self.max_motion):
            self._emit(self.style.compose(obs, lines))
        if self.cues:
            first, _, text = self.cues[-1]
            self.cues[-1] = (first, self.frames, text)

    def write(self, folder: Path) -> str | None:
        """Finish the video into ``folder`` (``episode.mp4`` and ``episode.vtt``); its name, or None
        when no frame was made. Used as the episode writer's video maker."""
        try:
            self._motion()
            self._flush_pending(None)
            if self._writer is None:
                return None
            self._writer.close()
            self._writer = None
            shutil.move(str(self._tmp / "episode.mp4"), folder / "episode.mp4")
            (folder / "episode.vtt").write_text(self.vtt())
            return "episode.mp4"
        finally:
            self.close()

    def vtt(self) -> str:
        """The WebVTT captions: one cue per round."""
        out = ["WEBVTT", ""]
        for i, (first, end, text) in enumerate(self.cues, 1):
            out += [str(i), f"{vtt_time(first / self.fps)} --> {vtt_time(end / self.fps)}", text, ""]
        return "\n".join(out)

    def close(self) -> None:
        """Drop the encoder and the scratch folder (safe to call again)."""
        if self._writer is not None:
            try:
                self._writer.close()
            except Exception:
                pass
            self._writer = None
        shutil.rmtree(self._tmp, ignore_errors=True)
