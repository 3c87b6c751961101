"""``python -m homiebot.memory from-bag``: the command line around ``from_bag.demonstration_from_bag``."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from homiebot.builders.memory.from_bag import BagSources, demonstration_from_bag, read_rooms, sources_for
from homiebot.memory.demonstration import DemonstrationError


def from_bag(args: argparse.Namespace) -> int:
    """Convert the bag the arguments name; errors are raised as DemonstrationError (one line each)."""
    sources = _sources(args)
    detector = _detector(args.detector, args.detector_param) if args.detector else None
    rooms = read_rooms(args.rooms) if args.rooms else None
    demo_id = args.id or Path(args.bag).resolve().name
    try:
        demo = demonstration_from_bag(args.bag, args.out, sources, demo_id=demo_id, home=args.home, user=args.user, task=args.task,
                                      fps=args.fps, detector=detector, rooms=rooms, speech_stamp=args.speech_stamp,
                                      progress=lambda line: print(line, file=sys.stderr, flush=True))
    finally:
        if detector is not None:
            detector.close()
    fixated = sum(f.gaze is not None for f in demo.frames)
    held = sorted({f.holding for f in demo.frames if f.holding})
    print(f"'{demo.id}' from {args.bag} -> {args.out}: {len(demo.frames)} frames over {demo.duration:.1f} s from {sources.image}, "
          f"{fixated} with a fixated thing, {len(demo.utterances)} utterances, held: {', '.join(held) or 'nothing'}")
    return 0


def _sources(args: argparse.Namespace) -> BagSources:
    if args.robot:
        from homiebot.robots.profile import ProfileError, load_profile

        try:
            profile = load_profile(args.robot)
        except ProfileError as err:
            raise DemonstrationError(str(err).splitlines()[0]) from None
        sources = sources_for(profile, args.camera or profile.policy_camera or next(iter(profile.cameras)), args.speech, args.gaze)
    elif args.camera:
        raise DemonstrationError("--camera names a camera of a robot profile: give --robot too (or --image-topic)")
    else:
        sources = BagSources(speech=args.speech, gaze=args.gaze)
    if args.image_topic:
        sources = replace(sources, image=args.image_topic, rotation_deg=0.0 if not args.robot else sources.rotation_deg)
    if args.gripper_joint:
        name, opened, closed = args.gripper_joint
        try:
            sources = replace(sources, gripper=(name, float(opened), float(closed)),
                              joint_states=sources.joint_states or "/joint_states")
        except ValueError:
            raise DemonstrationError(f"--gripper-joint takes a name and two positions in radians or metres, got {args.gripper_joint}") from None
    return sources


def _detector(name: str, params: list[str]) -> Any:
    from homiebot.perception.detectors import DetectorError, make_detector

    values: dict[str, Any] = {}
    for item in params:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise DemonstrationError(f"--detector-param takes KEY=VALUE, got '{item}'")
        values[key] = yaml.safe_load(text)
    try:
        detector = make_detector(name, **values)
        reason = detector.availability()
    except DetectorError as err:
        raise DemonstrationError(str(err)) from None
    if reason:
        raise DemonstrationError(f"detector '{name}' cannot run: {reason}")
    return detector
