"""Forward and inverse kinematics of a serial arm described by a kinematic table (pure numpy).

A table is the joint list of a URDF chain from the base frame to the tool: each joint's origin
(translation and roll/pitch/yaw in its parent), axis and type; joints with a ``value`` are held
there (Fetch's torso lift), the others are the arm joints a trajectory commands, in table order.

The end-effector pose homiebot uses is the tool point's position in the base frame and the yaw of
the tool's x axis (the approach direction) about the base's z axis. The IK asks for that position
and yaw with the fingers' closing axis kept horizontal (no roll); the approach may pitch down
(a grasp from above) up to ``max_pitch``, preferring level and a posture near where it starts
(the measured joints: small motions stay small). Seven
joints leave room to spare: a damped least-squares solve from the seed, then from the rest posture,
then from the table's other seed postures, then from postures spread over the joint ranges.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

Vector = Sequence[float] | np.ndarray
RESTARTS = 16  # spread postures the IK tries when the table's seeds fail


class Unreachable(ValueError):
    """No joint values put the tool at the asked pose within the joint limits."""


@dataclass(frozen=True)
class Joint:
    """One row of the table: ``kind`` revolute, continuous, prismatic or fixed."""

    name: str
    kind: str
    origin: tuple[float, float, float]
    rpy: tuple[float, float, float] = (0.0, 0.0, 0.0)
    axis: tuple[float, float, float] = (0.0, 0.0, 1.0)
    lower: float = -math.inf
    upper: float = math.inf
    value: float | None = None  # held at this value (not commanded)


SEED_SETTLE = 10  # soft steps from a given seed (a nearby posture); the other starts take 60
TRACK_STEPS = 8  # exact steps from the seed when tracking


def _rot(rpy: Sequence[float]) -> np.ndarray:
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def _axis_angle(axis: np.ndarray, angle: float) -> np.ndarray:
    x, y, z = axis
    c, s, t = math.cos(angle), math.sin(angle), 1 - math.cos(angle)
    return np.array([[t * x * x + c, t * x * y - s * z, t * x * z + s * y],
                     [t * x * y + s * z, t * y * y + c, t * y * z - s * x],
                     [t * x * z - s * y, t * y * z + s * x, t * z * z + c]])


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cross products of (n, 3) with (3,) or (n, 3) (np.cross is slow for small arrays)."""
    b = np.broadcast_to(b, a.shape)
    return np.stack([a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1], a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2],
                     a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]], axis=1)


@dataclass(frozen=True)
class EndEffector:
    """The tool in the base frame: position, yaw of the approach axis, its pitch (down positive) and roll."""

    position: np.ndarray
    yaw: float
    pitch: float
    roll: float


class ArmKinematics:
    """FK and IK over a kinematic table (see the module doc)."""

    def __init__(self, joints: Sequence[Joint], tool: Vector, rest: Vector | None = None,
                 max_pitch: float = 1.3, seeds: Sequence[Vector] = ()) -> None:
        """``rest``: the preferred posture (default: mid-range); ``seeds``: more postures the IK starts
        from when neither the caller's seed nor the rest posture leads to a solution."""
        self.joints = list(joints)
        self.active = [j for j in self.joints if j.kind != "fixed" and j.value is None]
        if not self.active:
            raise ValueError("the kinematic table has no commanded joint")
        self.names = [j.name for j in self.active]
        self.tool = np.asarray(tool, dtype=float).reshape(3)
        self._fixed = [(np.asarray(j.origin, dtype=float), _rot(j.rpy)) for j in self.joints]
        self._axes = [np.asarray(j.axis, dtype=float) / np.linalg.norm(j.axis) for j in self.joints]
        self.lower = np.array([j.lower for j in self.active])
        self.upper = np.array([j.upper for j in self.active])
        bounded = np.isfinite(self.lower) & np.isfinite(self.upper)
        mid = np.zeros(len(self.active))
        mid[bounded] = (self.lower[bounded] + self.upper[bounded]) / 2
        self.rest = np.asarray(rest, dtype=float) if rest is not None else mid
        if self.rest.shape != (len(self.active),):
            raise ValueError(f"rest has {self.rest.size} values for {len(self.active)} joints {self.names}")
        self.max_pitch = max_pitch
        self.seeds = [np.asarray(v, dtype=float).reshape(-1) for v in seeds]
        if any(v.size != len(self.active) for v in self.seeds):
            raise ValueError(f"each seed needs {len(self.active)} values, one per joint {self.names}")
        # last resort: postures spread over the joint ranges, the same ones every run (a folded pose close
        # to the body is often found from none of the seeds above)
        low = np.where(np.isfinite(self.lower), self.lower, -math.pi)
        high = np.where(np.isfinite(self.upper), self.upper, math.pi)
        spread = np.random.default_rng(0).random((RESTARTS, len(self.active)))
        self.restarts = [low + (high - low) * row for row in spread]

    @property
    def held(self) -> dict[str, float]:
        """The held joints (a torso lift) and the values they are held at."""
        return {j.name: float(j.value) for j in self.joints if j.kind != "fixed" and j.value is not None}

    def hold(self, name: str, value: float) -> None:
        """Hold a held joint at ``value`` from now on (its measured value: a torso lift the robot moved)."""
        for i, joint in enumerate(self.joints):
            if joint.name == name and joint.kind != "fixed" and joint.value is not None:
                if not math.isfinite(value):
                    raise ValueError(f"joint {name}: a held value must be finite, not {value}")
                self.joints[i] = replace(joint, value=float(value))
                return
        raise ValueError(f"joint {name} is not held in this table (held: {sorted(self.held) or 'none'})")

    # ---- forward ---------------------------------------------------------------------------------
    def transform(self, q: Vector) -> np.ndarray:
        """The tool frame in the base frame (4x4) for the commanded joints ``q`` (table order)."""
        return self._chain(q)[0]

    def _chain(self, q: Vector) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray, bool]]]:
        """The tool frame, and each commanded joint's axis and origin in the base frame (and whether it slides)."""
        q = np.asarray(q, dtype=float).reshape(-1)
        if q.size != len(self.active):
            raise ValueError(f"{q.size} joint values for {len(self.active)} joints {self.names}")
        rot, pos = np.eye(3), np.zeros(3)
        values = iter(q)
        frames = []
        for joint, (origin, frot), axis in zip(self.joints, self._fixed, self._axes):
            pos = pos + rot @ origin
            rot = rot @ frot
            if joint.kind == "fixed":
                continue
            if joint.value is None:
                v = float(next(values))
                frames.append((rot @ axis, pos, joint.kind == "prismatic"))
            else:
                v = joint.value
            if joint.kind == "prismatic":
                pos = pos + rot @ (axis * v)
            else:
                rot = rot @ _axis_angle(axis, v)
        out = np.eye(4)
        out[:3, :3], out[:3, 3] = rot, pos + rot @ self.tool
        return out, frames

    def joint_origins(self, q: Vector) -> list[np.ndarray]:
        """Where each commanded joint sits in the base frame for the joints ``q`` (table order)."""
        return [origin.copy() for _, origin, _ in self._chain(q)[1]]

    def forward(self, q: Vector) -> EndEffector:
        """The tool's position, yaw, pitch and roll for the joints ``q``."""
        t = self.transform(q)
        x, y = t[:3, 0], t[:3, 1]
        yaw = math.atan2(x[1], x[0])
        pitch = -math.asin(float(np.clip(x[2], -1.0, 1.0)))  # approach pointing down: positive
        return EndEffector(t[:3, 3].copy(), yaw, pitch, math.asin(float(np.clip(y[2], -1.0, 1.0))))

    # ---- inverse ---------------------------------------------------------------------------------
    def _residual(self, q: np.ndarray, position: np.ndarray, yaw: float, soft: float,
                  anchor: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The pose error (metres; angles scaled by 0.1 m) and its Jacobian; with ``soft``, also the
        pull towards a level approach and the ``anchor`` posture (where the solve started)."""
        t, frames = self._chain(q)
        x, y, p = t[:3, 0], t[:3, 1], t[:3, 3]
        n = len(frames)
        axes = np.array([f[0] for f in frames])
        slides = np.array([f[2] for f in frames])
        turns = np.where(slides[:, None], 0.0, axes)
        jp = np.where(slides[:, None], axes, _cross(axes, p - np.array([f[1] for f in frames]))).T
        jx, jy = _cross(turns, x).T, _cross(turns, y).T
        flat = max(x[0] * x[0] + x[1] * x[1], 1e-9)
        scale = 0.1 * math.sqrt(flat)
        dheading = (x[0] * jx[1] - x[1] * jx[0]) / flat
        rows = [*(p - position), scale * math.remainder(math.atan2(x[1], x[0]) - yaw, 2 * math.pi), 0.1 * y[2]]
        jac = [jp, scale * dheading[None, :], 0.1 * jy[2][None, :]]
        if soft > 0:
            rows += [soft * x[2], *(0.1 * soft * (q - (self.rest if anchor is None else anchor)))]
            jac += [soft * jx[2][None, :], 0.1 * soft * np.eye(n)]
        return np.array(rows), np.vstack(jac)

    def _solve(self, seed: np.ndarray, position: np.ndarray, yaw: float, soft: float, iterations: int) -> np.ndarray:
        q = self._clip(seed.copy())
        anchor = q.copy()
        damping = 1e-3
        r, jac = self._residual(q, position, yaw, soft, anchor)
        for _ in range(iterations):
            if soft <= 0 and r @ r < 1e-14:
                break  # exact to a tenth of a micrometre
            step = np.linalg.solve(jac.T @ jac + damping * np.eye(q.size), -jac.T @ r)
            candidate = self._clip(q + step)
            rc, jc = self._residual(candidate, position, yaw, soft, anchor)
            if rc @ rc < r @ r:
                q, r, jac, damping = candidate, rc, jc, max(damping * 0.3, 1e-9)
                if float(np.linalg.norm(step)) < 1e-8:
                    break
            else:
                damping *= 10
                if damping > 1e6:
                    break
        return q

    def _clip(self, q: np.ndarray) -> np.ndarray:
        q = np.clip(q, self.lower, self.upper)
        unbounded = ~(np.isfinite(self.lower) & np.isfinite(self.upper))
        q[unbounded] = np.remainder(q[unbounded] + math.pi, 2 * math.pi) - math.pi
        return q

    def inverse(self, position: Vector, yaw: float, seed: Vector | None = None,
                tolerance: float = 5e-4, spread: bool = True, near: float = 0.0, track: bool = False) -> np.ndarray:
        """Joint values (table order) that put the tool at ``position`` (base frame) approaching along
        ``yaw``, fingers level; ``Unreachable`` when no solution is within the joint limits and ``max_pitch``.
        ``spread``: also try the spread postures (up to a second when nothing reaches; off where time is short).
        ``near``: failing that, the closest posture found when its tool is within this many metres (a display
        of where the hand is needs no more). ``track``: first a few exact steps from ``seed`` (a hand that moved a
        little since it was solved): an exact posture found so is taken at once (milliseconds instead of tens),
        else the whole solve runs."""
        target = np.asarray(position, dtype=float).reshape(3)
        if not np.all(np.isfinite(target)) or not math.isfinite(yaw):
            raise Unreachable(f"a non-finite end-effector goal {target.tolist()}, yaw {yaw}")
        if track and seed is not None:  # a hand that moved a little: a few exact steps from where it was
            tracked = self._solve(np.asarray(seed, dtype=float).reshape(-1), target, yaw, 0.0, TRACK_STEPS)
            ee = self.forward(tracked)
            if float(np.linalg.norm(ee.position - target)) <= tolerance and abs(math.remainder(ee.yaw - yaw, 2 * math.pi)) <= 1e-2:
                return tracked  # as exact as a whole solve (a closed loop reads the hand from these joints)
        seeds = [(np.asarray(seed, dtype=float).reshape(-1), SEED_SETTLE)] if seed is not None else []
        seeds += [(self.rest, 60)] + [(v, 60) for v in self.seeds] + ([(v, 60) for v in self.restarts] if spread else [])
        best: tuple[float, np.ndarray] | None = None
        for start, settle in seeds:
            for soft in (0.05, 0.0):  # posture and level first (a few steps from a nearby seed), then the exact pose
                start = self._solve(start, target, yaw, soft, settle if soft else 100)
            ee = self.forward(start)
            error = float(np.linalg.norm(ee.position - target))
            turn = abs(math.remainder(ee.yaw - yaw, 2 * math.pi))
            if error <= tolerance and turn <= 1e-2 and abs(ee.roll) <= 1e-2 and abs(ee.pitch) <= self.max_pitch:
                return start
            if best is None or error < best[0]:
                best = (error, start)
        assert best is not None
        if best[0] <= near:
            return best[1]
        raise Unreachable(f"({target[0]:.2f}, {target[1]:.2f}, {target[2]:.2f}) m approaching at yaw {math.degrees(yaw):.0f} deg "
                          f"is out of the arm's reach (closest {best[0] * 100:.1f} cm away)")


class CameraMount:
    """A camera carried by a kinematic chain (a hand camera on the arm, a head camera on pan and tilt
    joints): its pose in homiebot's base frame from the chain's measured joints.

    ``end_from_camera`` is the camera (OpenCV axes: x right, y down, z forward) in the chain's end frame
    (the table's tool frame); ``lift`` is how far the chain's base frame sits above homiebot's, which
    is on the floor (Spot's body frame: the profile's ``base_height``)."""

    def __init__(self, chain: ArmKinematics, end_from_camera: Sequence[Sequence[float]] | np.ndarray, lift: float = 0.0) -> None:
        self.chain = chain
        self.end_from_camera = np.asarray(end_from_camera, dtype=float).reshape(4, 4)
        self.lift = float(lift)

    @property
    def names(self) -> list[str]:
        """The joints (table order) whose measured values place the camera."""
        return self.chain.names

    def pose(self, q: Vector) -> np.ndarray:
        """The camera's 4x4 pose in homiebot's base frame for the joints ``q`` (table order)."""
        end = self.chain.transform(q)
        end[2, 3] += self.lift
        return end @ self.end_from_camera


__all__ = ["ArmKinematics", "CameraMount", "EndEffector", "Joint", "Unreachable"]
