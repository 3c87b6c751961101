"""``PolicySkill``: any ``Policy`` (learned or expert) executing subtasks in the embedded home.

Per control step the skill renders the policy's camera at its ``image_size``, calls ``act`` and runs
the returned commands through ``HomeControl``; it stops on success (checked from the world state),
on the policy's own stop/terminate, after too many collisions, or after ``max_steps``.

Policies are chosen by name from ``POLICIES`` (``make_policy(name, **params)``); learned wrappers
register themselves there with ``register_policy``. Example skill config::

    {name: policy_skill, model: NoMaD, params: {policy: expert_waypoints, rate_hz: 4, max_steps: 300}}
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from homiebot.contracts import Action, Subtask
from homiebot.skills.base import Skill, SkillContext, SkillResult
from homiebot.skills.experts import (
    DiscreteNavigationExpert,
    EndEffectorExpert,
    ExpertPolicy,
    NavigationWaypointExpert,
    target_bearing,
)
from homiebot.skills.policy import DiscreteMove, EndEffectorDelta, Move, Policy, PolicyError, PolicyObservation, Waypoints
from homiebot.skills.scripted import ScriptedPolicy
from homiebot.worlds.base import World

POLICIES: dict[str, Callable[..., Policy]] = {
    "expert_waypoints": NavigationWaypointExpert,
    "expert_discrete": DiscreteNavigationExpert,
    "expert_ee": EndEffectorExpert,
    "scripted": ScriptedPolicy,
}

NAVIGATION = frozenset({Action.GO_TO})
MANIPULATION = frozenset({Action.PICK, Action.PUT, Action.OPEN, Action.CLOSE})
OPEN_DONE, CLOSED_DONE = 0.9, 0.05  # opening fractions that count as opened / closed
LIFTED = 0.02  # m above the support that counts as lifted
EARLY_GAP = 0.27  # a Go to ends by itself this close (the manipulation standoff is 0.25 m)


def register_policy(name: str, factory: Callable[..., Policy]) -> None:
    """Make a policy constructible by name from skill configs."""
    POLICIES[name] = factory


def known_policies() -> list[str]:
    """Every policy name ``make_policy`` accepts: built-in, learned wrappers, entry points."""
    from homiebot import registry
    from homiebot.skills.learned import LEARNED_POLICIES

    return sorted({*POLICIES, *LEARNED_POLICIES, *registry.available("policies")})


def policy_factory(name: str) -> Callable[..., Policy]:
    """The class (or factory) registered as ``name``: ``POLICIES`` first, then the learned wrappers, then
    the ``homiebot.policies`` entry points of installed distributions."""
    if name in POLICIES:
        return POLICIES[name]
    from homiebot import registry
    from homiebot.skills.learned import LEARNED_POLICIES

    if name in LEARNED_POLICIES:
        return LEARNED_POLICIES[name]
    try:
        return registry.load("policies", name)
    except registry.PluginError as err:
        if "cannot be imported" in str(err):
            raise ValueError(str(err)) from None
        raise ValueError(f"unknown policy '{name}'; registered: {known_policies()}") from None


def make_policy(name: str, **params: Any) -> Policy:
    """Build a registered policy; unknown names list what is available."""
    return policy_factory(name)(**params)


class PolicySkill(Skill):
    """Runs a ``Policy`` through ``HomeControl`` in an embedded home.

    Parameters (all usable from YAML): ``model`` the name planners choose; ``actions`` the actions it
    executes (default: by the policy's command kind: navigation for waypoint/discrete policies,
    manipulation for end-effector ones); ``policy`` a name in ``POLICIES`` and ``policy_params`` its
    keyword arguments (or a ready ``Policy``); ``rate_hz`` the control rate (default the policy's);
    ``max_steps`` policy calls per attempt; ``max_collisions`` before giving up; ``goal_gap`` (m)
    and ``facing_deg`` the Go to success tolerance; ``image_size`` overrides the policy's; ``stow``
    brings the arm back to its carry pose after manipulation; ``render=False`` feeds blank images
    (only sensible for expert policies, to time the control path alone).

    ``process`` runs the policy in a policy server process instead of this one (``RemotePolicy``):
    ``{python_executable: /path/to/venv/bin/python, timeout: 10, connect_timeout: 30, service: ...,
    spawn: auto}``. ``timeout`` bounds every call to the server; a server that does not answer fails
    the attempt with a message saying so. Expert policies read simulator truth and cannot be served.

    The record names the skill ``policy:<policy name>`` (``...@server`` when served by another process).
    """

    def __init__(self, model: str, actions: list[str] | frozenset[Action] | None = None, policy: str | Policy = "expert_waypoints",
                 policy_params: dict | None = None, rate_hz: float | None = None, max_steps: int = 400,
                 max_collisions: int = 5, goal_gap: float = 0.45, facing_deg: float = 30.0,
                 image_size: tuple[int, int] | list[int] | None = None, stow: bool = True, render: bool = True,
                 process: dict | None = None) -> None:
        self.process = dict(process) if process is not None else None
        if isinstance(policy, Policy):
            self.policy = policy
            policy_label = type(policy).__name__
        elif self.process is not None:
            self.policy = _remote_policy(model, policy, policy_params or {}, self.process)
            policy_label = policy
        else:
            self.policy = make_policy(policy, **(policy_params or {}))
            policy_label = policy
        self.name = f"policy:{policy_label}" + ("@server" if self.process is not None else "")
        if actions is None:
            kind = _command_kind(self.policy)
            acts = MANIPULATION if kind == "ee" else NAVIGATION
        else:
            acts = frozenset(a if isinstance(a, Action) else Action(a) for a in actions)
        super().__init__(model, acts)
        self._rate_override, self._size_override = rate_hz, image_size
        self.rate_hz = float(rate_hz or self.policy.rate_hz)
        self.max_steps, self.max_collisions = int(max_steps), int(max_collisions)
        self.goal_gap, self.facing = float(goal_gap), math.radians(facing_deg)
        self.image_size = tuple(image_size) if image_size else tuple(self.policy.image_size)
        self.stow = stow
        self.render = render
        self._controls: dict[int, Any] = {}
        self.last_stats: dict = {}
        self._held_before: str | None = None

    # ---- Skill interface -----------------------------------------------------------------------
    def availability(self) -> str | None:
        """The policy's own answer: None, or what is missing and how to install it (for a policy served by
        another process, also whether that server answers). Called once at start-up."""
        reason = self.policy.availability()
        if not self._rate_override:  # a served policy reports its rate and image size only now
            self.rate_hz = float(self.policy.rate_hz)
        if not self._size_override:
            self.image_size = tuple(self.policy.image_size)
        return reason

    def supports(self, world: World) -> str | None:
        if getattr(world, "state", None) is None or getattr(world, "renderer", None) is None:
            return f"{type(world).__name__} is not an embedded home: PolicySkill drives HomeControl"
        return None

    def control_for(self, world: World):  # -> HomeControl
        from homiebot.worlds.home.control import HomeControl

        key = id(world)
        ctl = self._controls.get(key)
        if ctl is None or ctl.world is not world:
            ctl = HomeControl(world, rate_hz=self.rate_hz)
            self._controls = {key: ctl}
        return ctl

    def run(self, subtask: Subtask, world: World, context: SkillContext) -> SkillResult:
        why = self.supports(world)
        if why:
            return SkillResult(False, why)
        ctl = self.control_for(world)
        ctl.reset()
        if isinstance(self.policy, ExpertPolicy):
            self.policy.attach(ctl, subtask)
        before = world.state.path_length
        try:
            goal_image, goal_mask = self._goal_views(ctl, subtask)
            self.policy.reset(_instruction(subtask), goal_image)
            result = self._loop(ctl, subtask, goal_image, goal_mask)
        except PolicyError as err:  # the model could not answer (e.g. its server is gone): a failed attempt
            result = SkillResult(False, f"{self.model} could not {subtask.action.value.lower()}: {err}")
        stats = {"steps": ctl.stats.steps, "sim_seconds": round(ctl.stats.sim_time, 3), "collisions": ctl.stats.collisions,
                 "policy": type(self.policy).__name__, "rate_hz": self.rate_hz}
        self.last_stats = stats
        return SkillResult(result.success, result.message, result.dropped, world.state.path_length - before, stats=stats)

    def close(self) -> None:
        for ctl in self._controls.values():
            ctl.close()
        self._controls.clear()
        self.policy.close()

    # ---- the loop ------------------------------------------------------------------------------
    def _loop(self, ctl, sub: Subtask, goal_image: np.ndarray | None, goal_mask: np.ndarray | None) -> SkillResult:
        st = ctl.state
        held_before = st.held
        self._held_before = held_before
        last_msg = ""
        for step in range(self.max_steps):
            obs = self._observe(ctl, sub, step, goal_image, goal_mask)
            commands = self.policy.act(obs)
            stop = False
            for cmd in commands:
                if isinstance(cmd, DiscreteMove) and cmd.move is Move.STOP:
                    stop = True
                    break
                report = ctl.execute(cmd)
                if report.message and (report.collision or report.clipped or "closed on nothing" in report.message
                                       or "wider" in report.message):
                    last_msg = report.message
                if isinstance(cmd, EndEffectorDelta) and cmd.terminate:
                    stop = True
                    break
                if ctl.stats.collisions >= self.max_collisions:
                    return self._finish(ctl, sub, held_before, f"gave up after {ctl.stats.collisions} collisions: {last_msg}")
                if self._done_early(ctl, sub):
                    return self._finish(ctl, sub, held_before, "")
            if stop:
                break
        return self._finish(ctl, sub, held_before, last_msg, timed_out=not stop if self.max_steps else False)

    def _finish(self, ctl, sub: Subtask, held_before: str | None, last_msg: str, timed_out: bool = False) -> SkillResult:
        st = ctl.state
        dropped = None
        if sub.action in MANIPULATION and self.stow:
            if sub.action in (Action.OPEN, Action.CLOSE) or (sub.action is Action.PUT and st.held is None):
                ctl.release_all()
            ctl.stow()
        if self._succeeded(ctl, sub):
            return SkillResult(True)
        if sub.action is Action.PUT and held_before and st.held is None:
            dropped = held_before  # released, but not on/in the place: E2
        return SkillResult(False, self._failure_message(ctl, sub, last_msg, timed_out), dropped)

    def _done_early(self, ctl, sub: Subtask) -> bool:
        """Success that ends the attempt before the policy stops: a lifted object, or standing at the
        manipulation standoff squarely facing the target (policies that do not stop by themselves)."""
        if sub.action is Action.PICK:
            return self._succeeded(ctl, sub)
        if sub.action is Action.GO_TO:
            target = sub.target or ""
            if target in ctl.state.layout.rooms:
                return self._succeeded(ctl, sub)
            gap, err = target_bearing(ctl, target)
            return gap <= EARLY_GAP and abs(err) <= math.radians(5)
        return False

    def _succeeded(self, ctl, sub: Subtask) -> bool:
        st = ctl.state
        target = sub.target or ""
        if sub.action is Action.GO_TO:
            if target in st.layout.rooms:
                return st.robot_room() == target
            gap, err = target_bearing(ctl, target)
            return gap <= self.goal_gap and abs(err) <= self.facing
        if sub.action is Action.PICK:
            if st.held != target:
                return False
            info = st.layout.objects[target]
            bottom = st.object_poses[target][2] - info.cls.size[2] / 2
            return bottom >= self._support_height(ctl) + LIFTED
        if sub.action is Action.PUT:
            loc = st.locations.get(target)
            return st.held is None and loc is not None and loc.receptacle == sub.place
        if sub.action is Action.OPEN:
            return st.open_fraction(target) >= OPEN_DONE
        if sub.action is Action.CLOSE:
            return st.open_fraction(target) <= CLOSED_DONE
        return False

    @staticmethod
    def _support_height(ctl) -> float:
        """Height of the highest surface under the gripper (the floor if none)."""
        st = ctl.state
        g = ctl.robot_to_world(ctl.gripper_pose()[0])
        best = 0.0
        for rec in st.layout.receptacles.values():
            lx, ly = rec.to_local(g[0], g[1])
            hx, hy, _ = rec.half
            slide = st._slide_offset(rec)
            if -hx <= lx <= hx + slide and abs(ly) <= hy:
                best = max(best, rec.rest_height())
        return best

    def _failure_message(self, ctl, sub: Subtask, last_msg: str, timed_out: bool) -> str:
        st = ctl.state
        target = sub.target or ""
        detail = f": {last_msg}" if last_msg else ""
        plan_error = getattr(self.policy, "plan_error", "")
        if plan_error:
            return f"{self.model} could not {sub.action.value.lower()} the {target}: {plan_error}"
        if sub.action is Action.GO_TO:
            if target in st.layout.rooms:
                return f"{self.model} did not reach the {target}{detail}"
            gap, err = target_bearing(ctl, target)
            return (f"{self.model} stopped {gap:.2f} m from the {target}, {abs(math.degrees(err)):.0f} degrees off to the "
                    f"{'left' if err > 0 else 'right'}{detail}")
        if sub.action is Action.PICK:
            if st.held == target:
                return f"{self.model} grasped the {target} but could not lift it{detail}"
            return f"{self.model} failed to grasp the {target}{detail or ': the gripper never closed around it'}"
        if sub.action is Action.PUT:
            if self._held_before != target:
                return f"the {target} is not in the gripper: pick it up first"
            if st.held is not None:
                return f"{self.model} did not release the {target} on the {sub.place}{detail}"
            loc = st.locations[target]
            where = loc.receptacle or "floor"
            return f"the {target} fell onto the {where} instead of the {sub.place}"
        verb = "open" if sub.action is Action.OPEN else "close"
        return f"{self.model} could not {verb} the {target} (it is {st.open_fraction(target) * 100:.0f}% open){detail}"

    # ---- observations --------------------------------------------------------------------------
    def _observe(self, ctl, sub: Subtask, step: int, goal_image: np.ndarray | None, goal_mask: np.ndarray | None) -> PolicyObservation:
        if not self.render:
            h, w = self.image_size
            rgb = np.zeros((h, w, 3), dtype=np.uint8)  # for timing the control path alone
            return PolicyObservation(rgb=rgb, instruction=_instruction(sub), goal_image=goal_image, goal_mask=goal_mask, step=step)
        view = ctl.render(self.image_size)["front"]
        return PolicyObservation(rgb=view.rgb, instruction=_instruction(sub), depth=view.depth, goal_image=goal_image,
                                 goal_mask=goal_mask, step=step)

    def _goal_views(self, ctl, sub: Subtask) -> tuple[np.ndarray | None, np.ndarray | None]:
        """For navigation policies: the front view from the pose a Go to would end at, and the target's mask
        in it (taken from the world truth until a mapper provides them)."""
        if sub.action is not Action.GO_TO or isinstance(self.policy, ExpertPolicy):
            return None, None
        st = ctl.state
        target = sub.target or ""
        poses = st._goal_poses(target)
        free = [p for p in poses if st.nav.is_free(p.x, p.y)] or poses
        if not free:
            return None, None
        view = ctl.render(self.image_size, robot_pose=(free[0].x, free[0].y, free[0].yaw))["front"]
        renderer = ctl.renderer(self.image_size)
        ident = renderer.instance_ids.get(target)
        mask = None if view.segmentation is None or ident is None else view.segmentation == ident
        return view.rgb, mask


def _instruction(sub: Subtask) -> str:
    """The language instruction a language-conditioned policy gets (Octo, RT-1-X)."""
    if sub.action is Action.PUT:
        return f"put the {sub.target} on the {sub.place}".replace("_", " ")
    return f"{sub.action.value.lower()} the {sub.target}".replace("_", " ")


PROCESS_KEYS = frozenset({"python_executable", "timeout", "connect_timeout", "service", "spawn"})


def _remote_policy(model: str, policy: str, params: dict, process: dict) -> Policy:
    """A ``RemotePolicy`` for a skill's ``process`` settings (see ``PolicySkill``)."""
    from homiebot.skills.remote_policy import RemotePolicy, default_service

    unknown = set(process) - PROCESS_KEYS
    if unknown:
        raise ValueError(f"process: unknown keys {sorted(unknown)}; known: {sorted(PROCESS_KEYS)}")
    return RemotePolicy(policy, params, service=process.get("service") or default_service(model),
                        timeout=float(process.get("timeout", 10.0)), connect_timeout=float(process.get("connect_timeout", 30.0)),
                        label=f"{model} ({policy})", python_executable=process.get("python_executable"),
                        spawn=process.get("spawn", "auto"))


def _command_kind(policy: Policy) -> str:
    if isinstance(policy, EndEffectorExpert) or policy.family in ("octo", "rt1x", "rt-1-x"):
        return "ee"
    return "nav"


__all__ = ["POLICIES", "PolicySkill", "make_policy", "register_policy", "Waypoints"]
