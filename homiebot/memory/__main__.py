"""``python -m homiebot.memory``: record, segment, remember and recall demonstrations.

    python -m homiebot.memory record --script toys --out demos/toys
    python -m homiebot.memory from-bag run_bag --robot spot --camera hand --speech /speech --home flat --out demos/teleop
    python -m homiebot.memory segment demos/toys --method gaze+speech
    python -m homiebot.memory remember demos/toys --memory memory --user alex
    python -m homiebot.memory recall "where do the toys go" --memory memory --user alex
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from homiebot.memory.demonstration import DemonstrationError, load_demonstration
from homiebot.memory.segmentation import METHODS, boundaries, boundary_scores, segment
from homiebot.memory.store import DemonstrationMemory, MemoryStoreError


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m homiebot.memory", description="Demonstrations: record, segment, remember, recall.")
    sub = p.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="record an example script in the embedded home")
    rec.add_argument("--script", required=True)
    rec.add_argument("--out", required=True, help="folder for demonstration.json and its frames")
    rec.add_argument("--size", type=int, default=128, help="view side in pixels")
    bag = sub.add_parser("from-bag", help="a demonstration from a ROS 2 bag of a teleoperated run")
    bag.add_argument("bag", help="a rosbag2 folder (MCAP or SQLite)")
    bag.add_argument("--out", required=True, help="folder for demonstration.json and its frames")
    bag.add_argument("--home", required=True, help="the home the run was in (memories are kept per home)")
    bag.add_argument("--user", default="default", help="who demonstrated")
    bag.add_argument("--id", help="the demonstration's id (default: the bag folder's name)")
    bag.add_argument("--task", default="", help="what was demonstrated, in words")
    bag.add_argument("--robot", help="a robot profile (spot, fetch or a YAML file): its driver's topic names and types")
    bag.add_argument("--camera", help="the profile's camera giving the first-person frames (default: its policy camera)")
    bag.add_argument("--image-topic", help="image topic (default: the profile camera's, else /homiebot/camera/front/image)")
    bag.add_argument("--speech", help="transcript topic (std_msgs/String)")
    bag.add_argument("--speech-stamp", choices=("end", "start"), default="end",
                     help="whether a transcript arrives when the speech ends (a recogniser's final result) or starts")
    bag.add_argument("--gaze", help="gaze topic (geometry_msgs/PointStamped, image pixels); default: the image centre")
    bag.add_argument("--gripper-joint", nargs=3, metavar=("NAME", "OPEN", "CLOSED"),
                     help="the gripper's joint in joint_states and its open and closed positions (default: the profile's)")
    bag.add_argument("--rooms", help="YAML file: room name -> [x0, y0, x1, y1] in the odometry frame")
    bag.add_argument("--detector", help="a perception detector (owlv2, detectron2, ...) for detections and gaze")
    bag.add_argument("--detector-param", action="append", default=[], metavar="KEY=VALUE", help="a detector parameter (repeatable)")
    bag.add_argument("--fps", type=float, default=2.0, help="frames kept per second")
    seg = sub.add_parser("segment", help="print a demonstration's segments (and boundary scores when scripted)")
    seg.add_argument("demo", help="a demonstration folder")
    seg.add_argument("--method", default="gaze+speech", choices=METHODS)
    seg.add_argument("--tolerance", type=float, default=1.0, help="seconds a boundary may be off")
    rem = sub.add_parser("remember", help="segment demonstrations and add them to a memory")
    rem.add_argument("demos", nargs="+", help="demonstration folders")
    rem.add_argument("--method", default="gaze+speech", choices=METHODS)
    call = sub.add_parser("recall", help="the segments of a memory closest to an instruction")
    call.add_argument("instruction")
    call.add_argument("-k", type=int, default=3)
    for q in (rem, call):
        q.add_argument("--memory", required=True, help="the memories' folder")
        q.add_argument("--home", help="home (default: the demonstration's)" if q is rem else "home", default=None if q is rem else "demo")
        q.add_argument("--user", default=None if q is rem else "default", help="user (default: the demonstration's)" if q is rem else "user")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; errors in files or memories are printed as one line and exit 2."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "record":
            from homiebot.builders.memory.record import main as record

            return record(["--script", args.script, "--out", args.out, "--size", str(args.size)])
        if args.command == "from-bag":
            from homiebot.builders.memory.bag_cli import from_bag

            return from_bag(args)
        if args.command == "segment":
            demo = load_demonstration(args.demo)
            for s in segment(demo, args.method, args.demo):
                print(f"{s.index}: {s.start:5.1f}-{s.end:5.1f} s  key frames {s.key_frames}  {s.caption}")
            if demo.subtasks:
                sc = boundary_scores(boundaries(demo, args.method, args.demo), demo.true_boundaries(), args.tolerance)
                print(f"boundaries vs the script: precision {sc.precision:.2f} recall {sc.recall:.2f} F1 {sc.f1:.2f}")
            return 0
        if args.command == "remember":
            demos = [(load_demonstration(d), d) for d in args.demos]
            for demo, folder in demos:
                memory = DemonstrationMemory(args.memory, args.home or demo.home, args.user or demo.user)
                segs = segment(demo, args.method, folder)
                memory.add(segs, demo, folder)
                print(f"{memory.folder}: {len(segs)} segments of '{demo.id}' ({len(memory.segments)} in all)")
            return 0
        memory = DemonstrationMemory(args.memory, args.home, args.user)
        if not memory.segments:
            print(f"{memory.folder}: no demonstrations remembered (python -m homiebot.memory remember ...)", file=sys.stderr)
            return 2
        for h in memory.search(args.instruction, args.k):
            print(f"{h.score:.3f}  {h.segment.demo} #{h.segment.index}  {h.segment.caption}")
        return 0
    except (DemonstrationError, MemoryStoreError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
