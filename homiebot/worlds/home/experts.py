"""Privileged "expert" policies: computed from simulator truth, speaking exactly the policy contract.

They stand in for learned models (NoMaD, PixNav, Octo, RT-1-X) so that the whole control path, from
``Policy.act`` through ``apply_command`` and the ``Robot`` interface to the world state, runs without
any weights; they also give a reference success rate for the learned ones. Like the real models they
emit bounded steps; they read the home's truth (``World.ground_truth``), which exists only in the
simulator, and the robot's own arm and gripper state through the ``Robot`` interface.

* ``NavigationWaypointExpert`` (NoMaD-style): the next 8 waypoints along the shortest collision-free
  path, 0.25 m apart, in the robot frame; the last chunk carries the goal heading.
* ``DiscreteNavigationExpert`` (PixNav-style): turn 30 degrees / forward 0.25 m / stop, following the
  same path until the target is within reach and straight ahead.

Both plan around the person where they stand when the path is planned; when only the person is in the
way they wait for them as the privileged navigation does (``HomeState.wait_limit``: up to 5 s of the
person's time, never past the next round's start, not at all before the task), then stop and say so.
* ``EndEffectorExpert`` (Octo / RT-1-X-style): end-effector deltas of at most ``max_translation``
  metres and ``max_rotation`` radians per step through key poses: pick (approach above, descend,
  slide the fingers around the object, close, lift), put (lift, move over a free spot, lower, open,
  retract), open/close (reach the handle, grasp, drag it along the door arc or drawer axis, release,
  back off). ``chunk`` > 1 returns several steps per call, as Octo's action chunks do.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from homiebot.core.contracts import Action, Subtask
from homiebot.core.robot import Robot
from homiebot.policies.base import (
    Command,
    DiscreteMove,
    EndEffectorDelta,
    Move,
    PolicyObservation,
    PrivilegedPolicy,
    Waypoints,
)
from homiebot.worlds.home.checks import target_bearing
from homiebot.worlds.home.control import HomeControl
from homiebot.worlds.home.robot import FINGER_HEIGHT, SHOULDER_XY, arm_ik


class ExpertPolicy(PrivilegedPolicy):
    """A policy that reads simulator truth; ``attach`` gives it the world's truth, the robot and the subtask."""

    family = "expert"
    image_size = (64, 64)
    rate_hz = 5.0

    def __init__(self) -> None:
        self.control: HomeControl | None = None
        self.subtask: Subtask | None = None
        self.plan_error = ""

    def attach(self, world: Any, robot: Robot, subtask: Subtask) -> None:
        """Bind to the embedded home's robot and a subtask before ``reset``; called by ``PolicySkill``."""
        home = robot.unwrapped()  # read truth from the home's own robot; commands go through the skill
        if world.ground_truth() is None or not isinstance(home, HomeControl):
            raise TypeError(f"{type(self).__name__} reads the embedded home's truth; {type(world).__name__} has none")
        self.control = home
        self.subtask = subtask

    def diagnosis(self) -> str:
        return self.plan_error

    def _need(self) -> HomeControl:
        if self.control is None or self.subtask is None:
            raise RuntimeError(f"{type(self).__name__} reads simulator truth: call attach(world, robot, subtask) before act()")
        return self.control


class _PathFollower:
    """The shortest path to a subtask's target, planned once and re-planned when the robot strays."""

    def __init__(self) -> None:
        self.points: list[tuple[float, float]] = []
        self.goal_yaw: float | None = None
        self.blocked: str | None = None  # why there is no path when only the person stands in the way

    def update(self, control: HomeControl, target: str) -> list[tuple[float, float]]:
        st = control.state
        here = (st.robot.x, st.robot.y)
        if not self.points or min(math.dist(here, p) for p in self.points) > 0.3:
            path, self.blocked = st.way_to(target, st.wait_limit(_round_now(st)))  # around the person, waiting for them
            if path is None:
                self.points = []
                return []
            self.points = _resample([(p.x, p.y) for p in path.poses], 0.25)
            self.goal_yaw = path.poses[-1].yaw
        # drop what lies behind: keep from the nearest point on
        k = int(np.argmin([math.dist(here, p) for p in self.points]))
        if math.dist(here, self.points[k]) < 0.12:
            k += 1
        self.points = self.points[k:] if k < len(self.points) else self.points[-1:]
        return self.points


def _round_now(st: Any) -> int:
    """The round the person's clock is in: 0 before the task while round-0 steps are still to come (without
    any, the clock cannot tell the exploration phase from round 1's start; that phase does not run these
    policies: it drives with ``navigate_to``)."""
    if st.person is None or st.person.clock < st.round_time(1):
        return 0
    return 1 + int((st.person.clock - st.round_time(1)) // (st.round_time(2) - st.round_time(1)))


def _resample(points: list[tuple[float, float]], spacing: float) -> list[tuple[float, float]]:
    out = [points[0]]
    carry = 0.0
    for a, b in zip(points, points[1:]):
        seg = math.dist(a, b)
        d = spacing - carry
        while d <= seg:
            t = d / seg
            out.append((a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])))
            d += spacing
        carry = seg - (d - spacing)
    if math.dist(out[-1], points[-1]) > 1e-6:
        out.append(points[-1])
    return out[1:] if len(out) > 1 else out


class _NavigationExpert(ExpertPolicy):
    """An expert that follows the shortest path to the subtask's target."""

    def __init__(self) -> None:
        super().__init__()
        self._path = _PathFollower()

    def reset(self, instruction: str = "", goal_image: np.ndarray | None = None) -> None:
        self._path = _PathFollower()
        self.plan_error = ""

    def _waypoints(self, control: HomeControl, target: str) -> list[tuple[float, float]]:
        pts = self._path.update(control, target)
        if not pts:
            self.plan_error = self._path.blocked or f"there is no collision-free path to the {target} from here"
        return pts


class NavigationWaypointExpert(_NavigationExpert):
    """NoMaD-style: the next ``horizon`` waypoints of the shortest path, in the robot frame."""

    family = "nomad"
    image_size = (96, 96)  # NoMaD's input size
    rate_hz = 4.0

    def __init__(self, horizon: int = 8) -> None:
        super().__init__()
        self.horizon = int(horizon)

    def act(self, obs: PolicyObservation) -> list[Command]:
        control = self._need()
        st = control.state
        assert self.subtask is not None  # checked by _need
        pts = self._waypoints(control, self.subtask.target or "")
        if not pts:
            return [DiscreteMove(Move.STOP)]
        goal_yaw = self._path.goal_yaw
        if len(pts) == 1 and math.dist(pts[0], (st.robot.x, st.robot.y)) < 0.05 and (
                goal_yaw is None or abs(math.remainder(goal_yaw - st.robot.yaw, 2 * math.pi)) < math.radians(3)):
            return [DiscreteMove(Move.STOP)]  # arrived: NoMaD's distance head would say so
        chunk = pts[: self.horizon]
        local = np.array([control.world_to_robot((x, y, 0.0))[:2] for x, y in chunk])
        yaw = None
        if len(chunk) == len(pts) and self._path.goal_yaw is not None:  # the goal is in this chunk
            err = self._path.goal_yaw - st.robot.yaw
            yaw = np.full(len(local), math.atan2(math.sin(err), math.cos(err)))
        return [Waypoints(local, yaw)]


class DiscreteNavigationExpert(_NavigationExpert):
    """PixNav-style: turn / forward / stop along the shortest path until the target is in reach and ahead."""

    family = "pixnav"
    image_size = (224, 224)
    rate_hz = 2.0

    def __init__(self, goal_gap: float = 0.4, facing_deg: float = 15.0) -> None:
        super().__init__()
        self.goal_gap, self.facing = float(goal_gap), math.radians(facing_deg)

    def act(self, obs: PolicyObservation) -> list[Command]:
        control = self._need()
        st = control.state
        assert self.subtask is not None  # checked by _need
        target = self.subtask.target or ""
        gap, err = target_bearing(control, target)
        if gap <= self.goal_gap:
            if abs(err) <= self.facing or target in st.layout.rooms:
                return [DiscreteMove(Move.STOP)]
            return [DiscreteMove(Move.TURN_LEFT if err > 0 else Move.TURN_RIGHT)]
        pts = self._waypoints(control, target)
        if not pts:
            return [DiscreteMove(Move.STOP)]
        aim = next((p for p in pts if math.dist(p, (st.robot.x, st.robot.y)) >= 0.2), pts[-1])
        head = math.atan2(aim[1] - st.robot.y, aim[0] - st.robot.x) - st.robot.yaw
        head = math.atan2(math.sin(head), math.cos(head))
        if abs(head) > self.facing:
            return [DiscreteMove(Move.TURN_LEFT if head > 0 else Move.TURN_RIGHT)]
        return [DiscreteMove(Move.FORWARD)]


class _Key:
    """A key pose of the gripper (robot frame) and the gripper command to hold there."""

    __slots__ = ("pos", "yaw", "gripper")

    def __init__(self, pos: np.ndarray, yaw: float, gripper: float) -> None:
        self.pos, self.yaw, self.gripper = np.asarray(pos, dtype=float), float(yaw), float(gripper)


class EndEffectorExpert(ExpertPolicy):
    """Octo / RT-1-X-style end-effector deltas for Pick, Put, Open and Close."""

    family = "octo"
    kind = "manipulation"
    image_size = (256, 256)
    rate_hz = 5.0

    def __init__(self, max_translation: float = 0.05, max_rotation: float = 0.25, chunk: int = 1,
                 approach: float = 0.15, lift: float = 0.12) -> None:
        super().__init__()
        self.max_translation, self.max_rotation = float(max_translation), float(max_rotation)
        self.chunk = max(1, int(chunk))
        self.approach, self.lift = float(approach), float(lift)
        self._keys: list[_Key] | None = None
        self._k = 0
        self._stalled = 0
        self._last: np.ndarray | None = None

    def reset(self, instruction: str = "", goal_image: np.ndarray | None = None) -> None:
        self._keys, self._k, self._stalled, self._last, self.plan_error = None, 0, 0, None, ""

    # ---- key poses ----------------------------------------------------------------------------
    def _plan(self) -> list[_Key]:
        control, sub = self._need(), self.subtask
        assert sub is not None
        if sub.action is Action.PICK:
            return self._plan_pick(control, sub.target or "")
        if sub.action is Action.PUT:
            return self._plan_put(control, sub.target or "", sub.place or "")
        if sub.action in (Action.OPEN, Action.CLOSE):
            return self._plan_articulate(control, sub.target or "", sub.action is Action.OPEN)
        self.plan_error = f"the end-effector expert cannot do {sub.action.value}"
        return []

    def _plan_pick(self, control: HomeControl, obj: str) -> list[_Key]:
        st = control.state
        x, y, z, _ = st.object_poses[obj]
        p = control.world_to_robot((x, y, z))
        info = st.layout.objects[obj]
        loc = st.locations[obj]
        support = z - info.cls.size[2] / 2
        grasp_z = max(p[2], support + FINGER_HEIGHT / 2 + 0.01)
        at = np.array([p[0], p[1], grasp_z])
        centre = math.atan2(p[1], p[0])
        shoulder = math.atan2(p[1] - SHOULDER_XY[1], p[0] - SHOULDER_XY[0])  # the longest reach
        yaw = next((y for y in (centre, centre - 0.15, centre + 0.15, shoulder, centre - 0.3, centre + 0.3)
                    if arm_ik(tuple(at), y) is not None), centre)
        u = np.array([math.cos(yaw), math.sin(yaw), 0.0])
        lift = self.lift
        if loc.receptacle is not None:
            clearance = st.layout.receptacles[loc.receptacle].type.clearance
            if clearance is not None:
                lift = max(0.03, min(lift, clearance - info.cls.size[2] - 0.03))
        up = np.array([0, 0, lift])
        if arm_ik(tuple(at), yaw) is None:
            self.plan_error = (f"the {obj} is out of the arm's reach from here ({math.hypot(p[0], p[1]):.2f} m from the base "
                               f"centre at {p[2]:.2f} m height); go closer to it")
            return []
        return [_Key(at - self.approach * u + up, yaw, 0.0), _Key(at - self.approach * u, yaw, 0.0),
                _Key(at, yaw, 0.0), _Key(at, yaw, 1.0), _Key(at + up, yaw, 1.0)]

    def _plan_put(self, control: HomeControl, obj: str, place: str) -> list[_Key]:
        st = control.state
        rec = st.layout.receptacles[place]
        info = st.layout.objects[obj]
        g, gyaw = control.gripper_pose()
        release_z = rec.rest_height() + info.cls.size[2] / 2 - st.held_dz + 0.02
        room = self.lift if rec.type.clearance is None else max(0.0, min(self.lift, rec.type.clearance - info.cls.size[2] - 0.04))
        travel_z = release_z + room
        spot = self._free_spot(control, obj, place, release_z, travel_z)
        if spot is None:
            self.plan_error = f"no free spot on the {place} is within the arm's reach"
            return []
        yaw = math.atan2(spot[1], spot[0])
        u = np.array([math.cos(yaw), math.sin(yaw), 0.0])
        over = np.array([spot[0], spot[1], travel_z])
        down = np.array([spot[0], spot[1], release_z])
        rise = np.array([g[0], g[1], max(g[2], travel_z)])
        back = down - self.approach * u
        return [_Key(rise, gyaw, 1.0), _Key(over - self.approach * u, yaw, 1.0), _Key(over, yaw, 1.0), _Key(down, yaw, 1.0),
                _Key(down, yaw, 0.0), _Key(back, yaw, 0.0), _Key(back + np.array([0, 0, room]), yaw, 0.0)]

    def _free_spot(self, control: HomeControl, obj: str, place: str, release_z: float, travel_z: float) -> np.ndarray | None:
        """A free resting spot on/in ``place`` that the arm reaches, nearest to 0.75 m ahead."""
        st = control.state
        rec = st.layout.receptacles[place]
        info = st.layout.objects[obj]
        x0, y0, x1, y1 = rec.placement_area()
        r = info.radius
        slide = st._slide_offset(rec)
        best: tuple[float, np.ndarray] | None = None
        for lx in np.arange(x0 + r, x1 - r + 1e-9, 0.04):
            for ly in np.arange(y0 + r, y1 - r + 1e-9, 0.04):
                if st._local_spot_if_free(rec, info, (float(lx), float(ly))) is None and not rec.type.articulated:
                    continue
                if rec.type.articulated and not self._clear(st, rec, info, float(lx), float(ly)):
                    continue
                wx, wy = rec.to_world(float(lx) + slide, float(ly))
                p = control.world_to_robot((wx, wy, release_z))
                yaw = math.atan2(p[1], p[0])
                u = np.array([math.cos(yaw), math.sin(yaw), 0.0])
                if any(arm_ik(tuple(q), yaw) is None for q in (p, np.array([p[0], p[1], travel_z]), p - self.approach * u)):
                    continue
                score = math.hypot(p[0] - 0.75, p[1])
                if best is None or score < best[0]:
                    best = (score, p)
        return None if best is None else best[1]

    @staticmethod
    def _clear(st, rec, info, lx: float, ly: float) -> bool:  # noqa: ANN001 - HomeState internals
        for other in st.objects_at(rec.name):
            ox, oy = st._local_of(rec, other)
            if math.hypot(ox - lx, oy - ly) < info.radius + st.layout.objects[other].radius + 0.02:
                return False
        return True

    def _plan_articulate(self, control: HomeControl, name: str, open_: bool) -> list[_Key]:
        st = control.state
        rec = st.layout.receptacles[name]
        start = st.open_fraction(name)
        goal = 1.0 if open_ else 0.0
        n = max(2, int(abs(goal - start) * (18 if rec.type.articulation == "hinge" else 8)))
        fractions = [start + (goal - start) * k / n for k in range(n + 1)]
        keys: list[_Key] = []

        def normal_yaw(f: float) -> tuple[np.ndarray, float]:
            ang = f * math.pi / 2 if rec.type.articulation == "hinge" else 0.0
            nw = (math.cos(rec.yaw + ang), math.sin(rec.yaw + ang))  # outward normal of the door face, world
            nr = control.world_to_robot((st.robot.x + nw[0], st.robot.y + nw[1], 0.0))[:2]
            n_robot = np.array([nr[0], nr[1], 0.0])
            return n_robot, math.atan2(-n_robot[1], -n_robot[0])

        def feasible_yaw(p: np.ndarray, yaw: float) -> float:
            """The yaw nearest to facing the door at which the arm reaches ``p`` (turning about the handle)."""
            for turn in (0.0, 0.3, -0.3, 0.6, -0.6, 0.9, -0.9, 1.2, -1.2):
                if arm_ik(tuple(p), yaw + turn) is not None:
                    return yaw + turn
            return yaw

        n0, yaw0 = normal_yaw(start)
        h0 = control._handle_robot(rec, start)
        if arm_ik(tuple(h0), feasible_yaw(h0, yaw0)) is None:
            self.plan_error = f"the {name}'s handle is out of the arm's reach from here"
            return []
        keys += [_Key(h0 + self.approach * n0, yaw0, 0.0), _Key(h0, yaw0, 0.0), _Key(h0, yaw0, 1.0)]
        for f in fractions[1:]:
            h = control._handle_robot(rec, f)
            keys.append(_Key(h, feasible_yaw(h, normal_yaw(f)[1]), 1.0))
        n1, _ = normal_yaw(goal)
        h1 = control._handle_robot(rec, goal)
        yaw1 = keys[-1].yaw
        keys += [_Key(h1, yaw1, 0.0), _Key(h1 + self.approach * n1, yaw1, 0.0)]
        return keys

    # ---- stepping ----------------------------------------------------------------------------
    def act(self, obs: PolicyObservation) -> list[Command]:
        control = self._need()
        if self._keys is None:
            self._keys = self._plan()
        pos, yaw = control.gripper_pose()
        closed = 1.0 if control.gripper_state().holding else 0.0
        if self._last is not None and np.linalg.norm(pos - self._last) < 1e-4:
            self._stalled += 1
        else:
            self._stalled = 0
        self._last = pos.copy()
        out: list[Command] = []
        for _ in range(self.chunk):
            if self._k >= len(self._keys):
                out.append(EndEffectorDelta(np.zeros(3), np.zeros(3), closed, terminate=True))
                break
            key = self._keys[self._k]
            d = key.pos - pos
            dyaw = math.atan2(math.sin(key.yaw - yaw), math.cos(key.yaw - yaw))
            dist = float(np.linalg.norm(d))
            if dist < 0.004 and abs(dyaw) < 0.02 or self._stalled >= 3:
                self._stalled = 0
                self._k += 1
                if abs(key.gripper - closed) > 0.5:  # a gripper change happens at the key, standing still
                    closed = key.gripper
                    out.append(EndEffectorDelta(np.zeros(3), np.zeros(3), key.gripper))
                continue
            step = d if dist <= self.max_translation else d * (self.max_translation / dist)
            rot = float(np.clip(dyaw, -self.max_rotation, self.max_rotation))
            out.append(EndEffectorDelta(step, np.array([0.0, 0.0, rot]), closed))
            pos, yaw = pos + step, yaw + rot  # what the next step of the chunk assumes
        return out or [EndEffectorDelta(np.zeros(3), np.zeros(3), closed)]


__all__ = ["DiscreteNavigationExpert", "EndEffectorExpert", "ExpertPolicy", "NavigationWaypointExpert"]
