"""In-between states of the embedded home for videos: privileged skills are kinematic (the base
jumps to its goal, a door to open), so the motion between two snapshots is rebuilt here: the base
along a collision-free path (re-planned between the two poses), the arm, doors, drawers and loose
objects interpolated over their motion, a held object carried along.

The person acts on their own clock, between the states too: they are drawn walking along their planned
path over the frames, one frame per ``1 / fps`` seconds of their time (frames are added while they are
still walking after the robot stopped), and the last frame shows them where the later state has them.
Drawing never changes the states themselves."""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator

from homiebot.worlds.home.catalog import ROBOT_RADIUS
from homiebot.worlds.home.navigation import CLEARANCE, Disc
from homiebot.worlds.home.navigation import Pose2D as NavPose
from homiebot.worlds.home.person import CARRIED, PERSON_RADIUS, PersonState, carry, walking_pose, walking_until
from homiebot.worlds.home.robot import ArmPose
from homiebot.worlds.home.state import HomeState, RobotPose

BASE_SPEED = 1.0  # m/s shown in videos
TURN_SPEED = 2.0  # rad/s
JOINT_TIME = 1.0  # s for an arm, door or drawer motion


def _lerp(a: float, b: float, t: float) -> float:
    return a + (b - a) * t


def _angle_lerp(a: float, b: float, t: float) -> float:
    d = (b - a + math.pi) % (2 * math.pi) - math.pi
    return a + d * t


def _base_track(state: HomeState, start: RobotPose, end: RobotPose, avoid: list[Disc] | None = None) -> list[tuple[float, float, float]]:
    """Waypoints (x, y, yaw) of the base from ``start`` to ``end``: the planner's path when there is one
    (around the ``avoid`` discs, the person where they stood, when that leaves one)."""
    if math.dist((start.x, start.y), (end.x, end.y)) < 1e-3:
        return [(start.x, start.y, start.yaw), (end.x, end.y, end.yaw)]
    path = None
    if state.nav is not None:
        a, b = NavPose(start.x, start.y, start.yaw), NavPose(end.x, end.y, end.yaw)
        path = (state.nav.plan(a, [b], avoid) if avoid else None) or state.nav.plan(a, [b])
    pts = [(p.x, p.y, p.yaw) for p in path.poses] if path is not None else []
    return [(start.x, start.y, start.yaw), *pts[1:-1], (end.x, end.y, end.yaw)]


def _sample_track(track: list[tuple[float, float, float]], fps: float) -> list[tuple[float, float, float]]:
    """Poses at ``fps`` along the track: turn towards each leg, drive it, turn to the final yaw."""
    out: list[tuple[float, float, float]] = []
    x, y, yaw = track[0]

    def turn(to: float) -> None:
        nonlocal yaw
        delta = _angle_lerp(yaw, to, 1.0) - yaw
        n = round(abs(delta) / TURN_SPEED * fps)
        out.extend((x, y, yaw + delta * k / n) for k in range(1, n + 1))
        yaw = yaw + delta

    for x1, y1, _ in track[1:]:
        dist = math.dist((x, y), (x1, y1))
        if dist < 1e-3:
            continue
        turn(math.atan2(y1 - y, x1 - x))
        n = max(1, round(dist / BASE_SPEED * fps))
        out.extend((_lerp(x, x1, k / n), _lerp(y, y1, k / n), yaw) for k in range(1, n + 1))
        x, y = x1, y1
    turn(track[-1][2])
    return out


def _carried_pose(work: HomeState, obj: str, before: dict) -> tuple[float, float, float, float]:
    """Where ``obj`` sits in the gripper with the base where it was before the motion."""
    probe = copy.copy(work)
    probe.object_poses = dict(work.object_poses)
    probe.robot = RobotPose(*before["robot"])
    probe.held = obj
    probe._carry_held()
    return probe.object_poses[obj]


def _person_times(state: HomeState, before: dict, after: dict, fps: float) -> list[float]:
    """The person's clock at each frame while they walk between the two snapshots, ``1 / fps`` apart
    (empty when they do not walk, or there is nobody)."""
    if state.person is None or before.get("person") is None or after.get("person") is None:
        return []
    person = PersonState.from_json(before["person"])
    stop = walking_until(person, state.person_legs, float(after["person"]["clock"]))
    n = math.ceil((stop - person.clock) * fps - 1e-9)
    return [min(stop, person.clock + (k + 1) / fps) for k in range(max(0, n))]


def _person_discs(snapshot: dict) -> list[Disc]:
    """The person's obstacle disc where a snapshot has them (as ``HomeState.person_discs``)."""
    if snapshot.get("person") is None:
        return []
    x, y, _ = snapshot["person"]["pose"]
    return [(x, y, PERSON_RADIUS + ROBOT_RADIUS + CLEARANCE)]


def in_between(state: HomeState, before: dict, after: dict, fps: float, max_frames: int) -> Iterator[HomeState]:
    """States from ``before`` to ``after`` (``HomeState.dynamic()`` snapshots), ``fps`` per second of
    motion: first the joints that change (arm, doors, drawers, released objects), then the base; the
    person walks along meanwhile (and on, with the robot still, while their walk lasts).
    One working copy is yielded again and again, changed in between: use each state at once."""
    work = copy.deepcopy(state)
    work.apply_dynamic(before)
    start_robot, end_robot = RobotPose(*before["robot"]), RobotPose(*after["robot"])
    plan: list[tuple[str, float]] = []
    if before["arm"] != after["arm"] or before["joint_open"] != after["joint_open"] or before["held"] != after["held"]:
        plan += [("joints", k / max(1, round(JOINT_TIME * fps))) for k in range(1, max(1, round(JOINT_TIME * fps)) + 1)]
    track = _sample_track(_base_track(state, start_robot, end_robot, _person_discs(before)), fps)
    plan += [("base", float(i)) for i in range(len(track))]
    person_times = _person_times(state, before, after, fps)
    plan += [("still", 0.0)] * max(0, len(person_times) - len(plan))  # the robot has stopped, the person walks on
    if not plan:
        return
    frames = list(range(len(plan)))
    if len(plan) > max_frames:  # long drives: evenly spaced frames, the last one kept
        step = len(plan) / max_frames
        frames = [min(len(plan) - 1, round((i + 1) * step) - 1) for i in range(max_frames)]
    arm0, arm1 = before["arm"], after["arm"]
    end_person = PersonState.from_json(after["person"]) if after.get("person") is not None else None
    happened = set(end_person.events) if end_person is not None else set()
    by_person = {o for o, loc in [*before["locations"].items(), *after["locations"].items()] if loc[1] == CARRIED}
    for index in frames:
        kind, value = plan[index]
        if kind == "joints":
            t = value
            work.arm = ArmPose(*(_lerp(a, b, t) for a, b in zip(arm0, arm1)))
            for rec, f1 in after["joint_open"].items():
                work.joint_open[rec] = _lerp(before["joint_open"].get(rec, f1), f1, t)
            # objects picked up or put down glide between the surface and the gripper
            hand_pose = _carried_pose(work, after["held"], before) if after["held"] else None
            for obj, p1 in after["object_poses"].items():
                if obj in by_person:
                    continue  # carried along by the person below
                p1 = hand_pose if obj == after["held"] and hand_pose is not None else p1
                p0 = before["object_poses"].get(obj, p1)
                if p0 != p1:
                    work.object_poses[obj] = tuple(_lerp(a, b, t) for a, b in zip(p0, p1))  # type: ignore[assignment]
            work.held = None
        else:
            x, y, yaw = track[int(value)] if kind == "base" else (end_robot.x, end_robot.y, end_robot.yaw)
            work.robot = RobotPose(x, y, yaw)
            work.arm = ArmPose(*arm1)
            work.held = after["held"]
            work._carry_held()
        if work.person is not None:
            was_held = work.person.held
            if index == len(plan) - 1 and end_person is not None:
                work.person = end_person  # the round ends where the states have them
            elif person_times:
                work.person = walking_pose(work.person, state.person_legs, person_times[min(index, len(person_times) - 1)],
                                           happened)
            if was_held is not None and work.person.held != was_held:  # put down: where it lies at the end
                work.object_poses[was_held] = tuple(after["object_poses"][was_held])  # type: ignore[assignment]
            carry(work.person, work)
        yield work
