"""Record a teleoperated demonstration: the robot is driven through a script of subtasks while the
operator speaks; the robot's front camera gives the first-person frames and its centre ray the gaze.

Per subtask: the frames of the motion (``World.in_between``; RGB only, so gaze unknown), then
``dwell`` frames of the robot at rest looking at the outcome (rendered with segmentation: the gaze is
the instance on the image centre, else the nearest thing to it, and the detections are the things
in view). Frames are ``dt`` seconds apart. Utterances start ``speech_delay`` after their subtask
starts (``say``) or when its motion ends (``remark``). The world is reached only through the World
protocol and the configured skills, so the same code records from any world plugin with motion.

    python -m homiebot.memory record --script cereal --out demos/cereal
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from homiebot.builders.memory.scripts import SCRIPTS, Script
from homiebot.core.contracts import Observation
from homiebot.core.world import World
from homiebot.core.world_capabilities import ViewableWorld
from homiebot.executor import Executor
from homiebot.memory.demonstration import Demonstration, Detection, Frame, TrueSubtask, Utterance, save_demonstration

FOVEA = 0.15  # fraction of the image size around the centre searched when the centre ray hits no thing


def gaze_at_centre(obs: Observation, rooms: set[str]) -> str | None:
    """The thing on the front camera's centre ray (rooms' walls and floors are not things); else the
    thing nearest the centre within the fovea; None without segmentation or with nothing near."""
    seg = obs.views["front"].segmentation
    if seg is None:
        return None
    h, w = seg.shape[:2]
    things = {i: lab.name for i, lab in obs.labels.items() if lab.name not in rooms}
    centre = int(seg[h // 2, w // 2])
    if centre in things:
        return things[centre]
    r = max(1, int(FOVEA * min(h, w)))
    window = seg[h // 2 - r:h // 2 + r + 1, w // 2 - r:w // 2 + r + 1]
    ys, xs = np.nonzero(np.isin(window, list(things)))
    if len(ys) == 0:
        return None
    nearest = int(np.argmin((ys - r) ** 2 + (xs - r) ** 2))
    return things[int(window[ys[nearest], xs[nearest]])]


def room_at(plan: Mapping[str, Any], x: float, y: float) -> str | None:
    """The room of a floor plan (name -> rectangle with x0, y0, x1, y1) holding the point; None outside."""
    for name, r in sorted(plan.items()):
        x0, y0, x1, y1 = (getattr(r, k) for k in ("x0", "y0", "x1", "y1")) if hasattr(r, "x0") else r
        if x0 <= x <= x1 and y0 <= y <= y1:
            return str(name)
    return None


def detections_of(obs: Observation, rooms: set[str]) -> list[Detection]:
    """The things in the front view with their share of the image, largest first."""
    seg = obs.views["front"].segmentation
    if seg is None:
        return []
    ids, counts = np.unique(seg, return_counts=True)
    out = [Detection(name=obs.labels[int(i)].name, category=obs.labels[int(i)].category, area=float(c) / seg.size)
           for i, c in zip(ids, counts, strict=True) if int(i) in obs.labels and obs.labels[int(i)].name not in rooms]
    return sorted(out, key=lambda d: (-d.area, d.name))


def record_demonstration(world: World, executor: Executor, script: Script, out: str | Path, home: str, dt: float = 0.5,
                         dwell: int = 3, motion_frames: int = 2, speech_delay: float = 0.25) -> Demonstration:
    """Drive ``world``'s robot through ``script`` with ``executor`` and save the demonstration in ``out``.
    A subtask that fails stops the recording with a RuntimeError (a demonstration shows success)."""
    out = Path(out)
    (out / "frames").mkdir(parents=True, exist_ok=True)
    plan = world.floor_plan() or {}
    rooms = set(plan)
    world.reset()
    frames: list[Frame] = []
    utterances: list[Utterance] = []
    subtasks: list[TrueSubtask] = []

    def add(obs: Observation, holding: str | None, gaze: str | None, detections: list[Detection]) -> None:
        name = f"frames/{len(frames):04d}.png"
        Image.fromarray(obs.views["front"].rgb).save(out / name, compress_level=1)
        room = room_at(plan, obs.pose.x, obs.pose.y)  # where the robot is, not what it looks at through a door
        frames.append(Frame(time=round(len(frames) * dt, 6), image=name, gaze=gaze, detections=detections, holding=holding, room=room))

    def speak(text: str, at: float) -> None:
        utterances.append(Utterance(start=at, end=at + 0.3 * len(text.split()), text=text))

    obs = world.observe(0)
    held = obs.inventory[0] if obs.inventory else None
    for i, step in enumerate(script.steps):
        t0 = len(frames) * dt
        sub = step.subtask()
        subtasks.append(TrueSubtask(start=t0, subtask=str(sub)))
        if step.say:
            speak(step.say, t0 + speech_delay)
        before = world.motion_snapshot() if isinstance(world, ViewableWorld) else None
        result = executor.execute(sub, step.model, world, seed=0, round_index=i)
        if result.feedback.status.value != "success":
            raise RuntimeError(f"script '{script.id}' step {i + 1} {sub} failed: {result.feedback.message}")
        motion = list(world.in_between(before, world.motion_snapshot(), fps=2.0, max_frames=motion_frames))[:motion_frames] \
            if isinstance(world, ViewableWorld) else []
        for m in motion or [obs]:  # at least one frame per subtask, so that every subtask takes time
            add(m, held, None, [])
        if step.remark:
            speak(step.remark, len(frames) * dt + speech_delay)
        obs = world.observe(i + 1)
        held = obs.inventory[0] if obs.inventory else None
        gaze = gaze_at_centre(obs, rooms)
        detections = detections_of(obs, rooms)
        for _ in range(dwell):
            add(obs, held, gaze, detections)
    demo = Demonstration(id=script.id, home=home, user=script.user, task=script.task, frames=frames, utterances=utterances, subtasks=subtasks)
    save_demonstration(demo, out)
    return demo


def record_in_home(script: Script, out: str | Path, size: int = 64, **kwargs: float) -> Demonstration:
    """Record ``script`` in the embedded home (the world plugin ``embedded_home``, skills that never
    fail by chance) at ``size`` x ``size`` pixels."""
    from homiebot import runtime
    from homiebot.config import load_config
    from homiebot.core.tasks import load_task
    from homiebot.memory.recall import home_name

    cfg = load_config(None)
    world_spec = cfg.world.model_copy(update={"params": {**cfg.world.params, "width": size, "height": size, "depth": False,
                                                         "segmentation": True}})
    cfg = cfg.model_copy(update={"skill_profile": "perfect", "world": world_spec})
    task = load_task(_task_path(script.task))
    world = runtime.build_world(cfg, runtime.scene_for(task, cfg.world.name))
    try:
        skills = runtime.build_skills(cfg, world)
        executor = Executor(skills.skills, max_attempts=1)
        home = runtime.scene_key(task, cfg.world.name) or task.id
        return record_demonstration(world, executor, script, out, home=home_name(home), **kwargs)  # type: ignore[arg-type]
    finally:
        world.close()


def _task_path(task: str) -> Path:
    from homiebot.core.resources import config_dir

    path = Path(task)
    return path if path.exists() else Path(config_dir()) / task


def main(argv: Sequence[str] | None = None) -> int:
    """Record one of the example scripts (``homiebot.builders.memory.scripts``) in the embedded home."""

    parser = argparse.ArgumentParser(prog="python -m homiebot.builders.memory.record", description=main.__doc__)
    parser.add_argument("--script", required=True, choices=sorted(SCRIPTS))
    parser.add_argument("--out", required=True, help="folder for demonstration.json and its frames")
    parser.add_argument("--size", type=int, default=128, help="image side in pixels")
    args = parser.parse_args(argv)
    demo = record_in_home(SCRIPTS[args.script], args.out, size=args.size)
    print(f"recorded '{demo.id}' in {args.out}: {len(demo.frames)} frames, {len(demo.utterances)} utterances, "
          f"{len(demo.subtasks)} subtasks, {demo.duration:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
