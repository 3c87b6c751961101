"""``PolicySkill``: any ``Policy`` (learned or expert) executing subtasks on a ``Robot``.

Per control step the skill reads the policy's camera at its ``image_size`` from the world's robot,
calls ``act`` and applies the returned commands through ``homiebot.policies.base.apply_command``;
it stops on success (judged by an ``AttemptCheck``: the world's own by default, privileged truth in
the simulator, the robot's signals and the map on a robot), on the policy's own stop/terminate,
after too many collisions, or after ``max_steps``. Nothing here knows which robot it drives.

Policies are chosen by name (``make_policy(name, **params)``): built-in ones from ``POLICIES``,
learned wrappers, and the ``homiebot.policies`` entry points (where the embedded home's expert
sources are registered). Example skill config::

    {name: policy_skill, model: NoMaD, params: {policy: expert_waypoints, rate_hz: 4, max_steps: 300}}
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from homiebot.core import plugin_params
from homiebot.core.attempt_checks import AttemptCheck, RobotSignalsCheck, Tolerances
from homiebot.core.camera_geometry import TrainingCamera
from homiebot.core.contracts import Action, SkillFailure, Subtask
from homiebot.core.robot import MotionReport, Robot, RobotUnavailable, Stopped
from homiebot.core.world import World
from homiebot.core.world_capabilities import PrivilegedWorld
from homiebot.policies.base import (
    DiscreteMove,
    EndEffectorDelta,
    Move,
    Policy,
    PolicyError,
    PolicyObservation,
    PrivilegedPolicy,
    apply_command,
)
from homiebot.policies.scripted import ScriptedPolicy
from homiebot.policies.training_cameras import training_camera as as_training_camera
from homiebot.skills.base import Skill, SkillContext, SkillResult

POLICIES: dict[str, Callable[..., Policy]] = {
    "scripted": ScriptedPolicy,
}

NAVIGATION = frozenset({Action.GO_TO})
MANIPULATION = frozenset({Action.PICK, Action.PUT, Action.OPEN, Action.CLOSE})
CHECKS = ("auto", "robot_signals")


def register_policy(name: str, factory: Callable[..., Policy]) -> None:
    """Make a policy constructible by name from skill configs."""
    POLICIES[name] = factory


def known_policies() -> list[str]:
    """Every policy name ``make_policy`` accepts: built-in, learned wrappers, entry points."""
    from homiebot.core import registry
    from homiebot.policies.learned import LEARNED_POLICIES

    return sorted({*POLICIES, *LEARNED_POLICIES, *registry.available("policies")})


def policy_factory(name: str) -> Callable[..., Policy]:
    """The class (or factory) registered as ``name``: ``POLICIES`` first, then the learned wrappers, then
    the ``homiebot.policies`` entry points of installed distributions."""
    if name in POLICIES:
        return POLICIES[name]
    from homiebot.core import registry
    from homiebot.policies.learned import LEARNED_POLICIES

    if name in LEARNED_POLICIES:
        return LEARNED_POLICIES[name]
    try:
        return registry.load("policies", name)
    except registry.PluginError as err:
        if "cannot be imported" in str(err):
            raise ValueError(str(err)) from None
        raise ValueError(f"unknown policy '{name}'; registered: {known_policies()}") from None


def make_policy(name: str, **params: Any) -> Policy:
    """Build a registered policy; unknown names list what is available, bad parameters (ConfigError) name
    the field and what the policy accepts."""
    factory = policy_factory(name)
    declared = factory.Params if isinstance(factory, type) and issubclass(factory, Policy) else None
    return factory(**plugin_params.validate("policy", factory, params, name=name, where="policy_params", declared=declared))


def _height_width(size: Sequence[int]) -> tuple[int, int]:
    """An image size (height, width) as a pair."""
    height, width = size
    return (height, width)


class PolicySkillParams(BaseModel):
    """The ``params`` of a ``policy_skill`` (see ``PolicySkill``)."""

    model_config = ConfigDict(extra="forbid", strict=True, arbitrary_types_allowed=True)
    model: str = Field(description="the name planners choose it by (the skill's model:)")
    actions: list[str] | frozenset[Action] | None = Field(None, description="the actions it executes (default: by the "
                                                                            "policy's kind)")
    policy: str | Policy = Field("expert_waypoints", description="a registered policy name (`homiebot plugins`)")
    policy_params: dict[str, Any] | None = Field(None, description="the policy's own keyword arguments")
    rate_hz: float | None = Field(None, strict=False, description="control rate, Hz (default: the policy's)")
    max_steps: int = Field(400, strict=False, description="policy calls per attempt")
    max_collisions: int = Field(5, strict=False, description="collisions before the attempt gives up")
    goal_gap: float = Field(0.45, strict=False, description="Go to success: the gap to the goal, metres")
    facing_deg: float = Field(30.0, description="Go to success: how far off facing the goal, degrees")
    image_size: tuple[int, int] | list[int] | None = Field(None, description="[height, width] of the policy's "
                                                                             "images (default: the policy's)")
    stow: bool = Field(True, description="bring the arm back to its carry pose after manipulation")
    render: bool = Field(True, description="false: blank images (expert policies only, to time the control path)")
    process: dict[str, Any] | None = Field(None, description="run the policy in a policy server process: "
                                                             "{python_executable, timeout, connect_timeout, service, spawn, host}")
    camera: str | None = Field(None, description="the robot camera the policy sees (default: the robot's policy camera)")
    check: Literal["auto", "robot_signals"] = Field("auto", description="how success is judged")
    training_camera: str | dict[str, Any] | TrainingCamera | None = Field(
        None, description="the camera the policy was trained with: a family name (nomad) or TrainingCamera fields")


class PolicySkill(Skill):
    """Runs a ``Policy`` on the world's ``Robot``.

    Parameters (all usable from YAML): ``model`` the name planners choose; ``actions`` the actions it
    executes (default: by the policy's ``kind``: navigation for waypoint/discrete policies,
    manipulation for end-effector ones); ``policy`` a registered policy name and ``policy_params`` its
    keyword arguments (or a ready ``Policy``); ``rate_hz`` the control rate (default the policy's);
    ``max_steps`` policy calls per attempt; ``max_collisions`` before giving up; ``goal_gap`` (m)
    and ``facing_deg`` the Go to success tolerance; ``image_size`` overrides the policy's; ``camera``
    the robot camera the policy sees (default: the robot's policy camera, e.g. the home's front view,
    Spot's hand camera); ``training_camera`` the camera the policy was trained with (default the
    policy's own ``camera``; a family name such as ``nomad`` or ``TrainingCamera`` fields): the robot
    renders it or crops its camera to it; ``stow`` brings the arm back to its carry
    pose after manipulation; ``render=False`` feeds blank images (only sensible for expert policies,
    to time the control path alone); ``check`` how success is judged: ``auto`` (the world's own
    check: truth in simulation) or ``robot_signals`` (what a real robot can tell, plus the belief).

    ``process`` runs the policy in a policy server process instead of this one (``RemotePolicy``; ``host`` names
    the ``homiebot.policy_hosts`` entry point that serves it, ``ros`` by default):
    ``{python_executable: /path/to/venv/bin/python, timeout: 10, connect_timeout: 30, service: ...,
    spawn: auto}``. ``timeout`` bounds every call to the server; a server that does not answer fails
    the attempt with a message saying so. Expert policies read simulator truth and cannot be served.

    The record names the skill ``policy:<policy name>`` (``...@server`` when served by another process).
    """

    Params: ClassVar[type[BaseModel] | None] = PolicySkillParams

    def __init__(self, model: str, actions: list[str] | frozenset[Action] | None = None, policy: str | Policy = "expert_waypoints",
                 policy_params: dict | None = None, rate_hz: float | None = None, max_steps: int = 400,
                 max_collisions: int = 5, goal_gap: float = 0.45, facing_deg: float = 30.0,
                 image_size: tuple[int, int] | list[int] | None = None, stow: bool = True, render: bool = True,
                 process: dict | None = None, camera: str | None = None, check: str = "auto",
                 training_camera: str | dict | TrainingCamera | None = None) -> None:
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
            acts = MANIPULATION if _command_kind(self.policy) == "manipulation" else NAVIGATION
        else:
            acts = frozenset(a if isinstance(a, Action) else Action(a) for a in actions)
        super().__init__(model, acts)
        if check not in CHECKS:
            raise ValueError(f"check must be one of {list(CHECKS)}, got '{check}'")
        self._rate_override, self._size_override = rate_hz, image_size
        self.rate_hz = float(rate_hz or self.policy.rate_hz)
        self.max_steps, self.max_collisions = int(max_steps), int(max_collisions)
        self.tolerances = Tolerances(goal_gap=float(goal_gap), facing=math.radians(facing_deg))
        self.image_size = _height_width(image_size) if image_size else _height_width(self.policy.image_size)
        self._camera_override = training_camera
        self.training_camera = self._training_camera()
        self.camera, self.check_name = camera, check
        self.stow = stow
        self.render = render
        self.last_stats: dict = {}

    @property
    def manipulates(self) -> bool:
        return bool(self.actions & MANIPULATION)

    # ---- Skill interface -----------------------------------------------------------------------
    def availability(self) -> str | None:
        """The policy's own answer: None, or what is missing and how to install it (for a policy served by
        another process, also whether that server answers). Called once at start-up."""
        reason = self.policy.availability()
        if not self._rate_override:  # a served policy reports its rate and image size only now
            self.rate_hz = float(self.policy.rate_hz)
        if not self._size_override:
            self.image_size = _height_width(self.policy.image_size)
        self.training_camera = self._training_camera()
        return reason

    def _training_camera(self) -> TrainingCamera | None:
        """The camera the observation is produced as: the configured one, else the policy's own (unless an
        explicit ``image_size`` asks for a plain square image)."""
        if self._camera_override is not None:
            return as_training_camera(self._camera_override)
        return None if self._size_override else getattr(self.policy, "camera", None)

    def supports(self, world: World) -> str | None:
        robot = world.robot
        if robot is None:
            return f"{type(world).__name__} has no robot for {self.model} to drive"
        if isinstance(self.policy, PrivilegedPolicy) and (not isinstance(world, PrivilegedWorld) or world.ground_truth() is None):
            return (f"{self.model}'s {type(self.policy).__name__} reads simulator truth, which {type(world).__name__} does not have; "
                    f"configure a learned policy for {self.model}")
        caps = robot.capabilities
        camera = self.camera or caps.default_camera
        if camera is None:
            return "the robot has no camera for the policy to see through"
        if self.manipulates:
            return caps.missing(arm=True, gripper=True, camera=camera)
        return caps.missing(camera=camera) or (None if caps.base else "the robot has no mobile base")

    def check_for(self, world: World) -> AttemptCheck:
        """The check that judges this skill's attempts in ``world``."""
        return RobotSignalsCheck(world.belief) if self.check_name == "robot_signals" else world.attempt_check()

    def run(self, subtask: Subtask, world: World | None, context: SkillContext) -> SkillResult:
        assert world is not None, "policy skills run in the process that holds the world"
        why = self.supports(world)
        robot = world.robot
        if why or robot is None:
            return SkillResult(False, why or "no robot", reason=SkillFailure.UNAVAILABLE)
        check = self.check_for(world)
        attempt = _Attempt()
        try:
            check.begin(subtask, robot)
            if isinstance(self.policy, PrivilegedPolicy):
                self.policy.attach(world, robot, subtask)
                goal_image, goal_mask = None, None
            else:
                goal_image, goal_mask = check.goal_view(subtask, robot, self.image_size, self.training_camera)
            self.policy.reset(_instruction(subtask), goal_image)
            result = self._loop(robot, check, subtask, goal_image, goal_mask, attempt)
        except (PolicyError, RobotUnavailable) as err:  # a model server or the robot's driver is gone
            result = SkillResult(False, f"{self.model} could not {subtask.action.value.lower()}: {err}", reason=SkillFailure.UNAVAILABLE)
        except Stopped as err:  # e-stop or cancel: the robot refused the next command
            result = SkillResult(False, f"{self.model} was stopped: {err}", reason=SkillFailure.STOPPED)
        finally:
            _stop_quietly(robot)
        stats = {"steps": attempt.steps, "sim_seconds": round(attempt.seconds, 3), "collisions": attempt.collisions,
                 "policy": type(self.policy).__name__, "rate_hz": self.rate_hz}
        self.last_stats = stats
        return SkillResult(result.success, result.message, result.dropped, attempt.distance, stats=stats, reason=result.reason)

    def close(self) -> None:
        self.policy.close()

    # ---- the loop ------------------------------------------------------------------------------
    def _loop(self, robot: Robot, check: AttemptCheck, sub: Subtask, goal_image: np.ndarray | None,
              goal_mask: np.ndarray | None, attempt: _Attempt) -> SkillResult:
        dt = 1.0 / self.rate_hz
        last_msg = ""
        stop = False
        for step in range(self.max_steps):
            obs = self._observe(robot, sub, step, goal_image, goal_mask)
            for cmd in self.policy.act(obs):
                if isinstance(cmd, DiscreteMove) and cmd.move is Move.STOP:
                    stop = True
                    break
                report = attempt.add(apply_command(robot, cmd, dt))
                if report.message and (report.collision or report.clipped or "closed on nothing" in report.message
                                       or "wider" in report.message):
                    last_msg = report.message
                if isinstance(cmd, EndEffectorDelta) and cmd.terminate:
                    stop = True
                    break
                if attempt.collisions >= self.max_collisions:
                    return self._finish(robot, check, sub, f"gave up after {attempt.collisions} collisions: {last_msg}", attempt,
                                        reason=SkillFailure.COLLISION)
                if check.done_early(sub, robot, self.tolerances):
                    return self._finish(robot, check, sub, "", attempt)
            if stop:
                break
        return self._finish(robot, check, sub, last_msg, attempt, timed_out=not stop if self.max_steps else False)

    def _finish(self, robot: Robot, check: AttemptCheck, sub: Subtask, last_msg: str, attempt: _Attempt,
                timed_out: bool = False, reason: SkillFailure | None = None) -> SkillResult:
        if sub.action in MANIPULATION and self.stow:
            if sub.action in (Action.OPEN, Action.CLOSE) or (sub.action is Action.PUT and not robot.gripper_state().holding):
                robot.set_gripper(0.0)
            attempt.seconds += robot.stow_arm().duration
        if check.succeeded(sub, robot, self.tolerances):
            return SkillResult(True)
        dropped = check.dropped(sub, robot)
        diagnosis = self.policy.diagnosis() if isinstance(self.policy, PrivilegedPolicy) else ""
        if diagnosis:
            message = f"{self.model} could not {sub.action.value.lower()} the {sub.target}: {diagnosis}"
            return SkillResult(False, message, dropped, reason=reason or SkillFailure.UNREACHABLE)
        kind, message = check.failure(sub, robot, self.model, last_msg, timed_out)
        return SkillResult(False, message, dropped, reason=reason or kind)

    # ---- observations --------------------------------------------------------------------------
    def _observe(self, robot: Robot, sub: Subtask, step: int, goal_image: np.ndarray | None,
                 goal_mask: np.ndarray | None) -> PolicyObservation:
        if not self.render:
            h, w = self.training_camera.frame_size if self.training_camera else self.image_size
            rgb = np.zeros((h, w, 3), dtype=np.uint8)  # for timing the control path alone
            return PolicyObservation(rgb=rgb, instruction=_instruction(sub), goal_image=goal_image, goal_mask=goal_mask, step=step)
        caps = robot.capabilities
        camera = self.camera or caps.default_camera or ""
        if self.training_camera is not None:
            frame = robot.read_policy_camera(camera, self.training_camera, depth=camera in caps.depth, model=self.model)
        else:
            frame = robot.read_camera(camera, self.image_size, depth=camera in caps.depth)
        return PolicyObservation(rgb=frame.rgb, instruction=_instruction(sub), depth=frame.depth, goal_image=goal_image,
                                 goal_mask=goal_mask, step=step)


def _stop_quietly(robot: Robot) -> None:
    """The base must not keep a velocity after an attempt, whatever ended it."""
    try:
        robot.stop()
    except (RobotUnavailable, Stopped):
        pass


class _Attempt:
    """Figures of one attempt, summed from the robot's reports."""

    def __init__(self) -> None:
        self.steps, self.collisions = 0, 0
        self.seconds, self.distance = 0.0, 0.0

    def add(self, report: MotionReport) -> MotionReport:
        self.steps += 1
        self.collisions += int(report.collision)
        self.seconds += report.duration
        self.distance += report.distance
        return report


def _instruction(sub: Subtask) -> str:
    """The language instruction a language-conditioned policy gets (Octo, RT-1-X)."""
    if sub.action is Action.PUT:
        return f"put the {sub.target} on the {sub.place}".replace("_", " ")
    return f"{sub.action.value.lower()} the {sub.target}".replace("_", " ")


def _remote_policy(model: str, policy: str, params: dict, process: dict) -> Policy:
    """The policy served out of this process (a skill's ``process`` settings, see ``PolicySkill``), by the policy
    host the ``homiebot.policy_hosts`` entry points register (``ros``: a policy server spoken to over ROS 2)."""
    from homiebot.core import registry

    try:
        host = registry.load("policy_hosts", str(process.get("host", "ros")))
    except registry.PluginError as err:
        raise ValueError(f"process: {err}") from None
    return host(model, policy, params, {k: v for k, v in process.items() if k != "host"})


def _command_kind(policy: Policy) -> str:
    if policy.kind == "manipulation" or policy.family in ("octo", "rt1x", "rt-1-x"):
        return "manipulation"
    return "navigation"


__all__ = ["POLICIES", "PolicySkill", "make_policy", "register_policy"]
