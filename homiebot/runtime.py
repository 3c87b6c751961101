"""Assemble a world, skills, a planner and the agent from a RunConfig, and run episodes in-process."""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from homiebot.agent import AgentSettings
from homiebot.config import RunConfig
from homiebot.core import plugin_params, registry
from homiebot.core.contracts import Action, EpisodeRecord, StepRecord
from homiebot.core.errors import ConfigError
from homiebot.core.records import EpisodeWriter
from homiebot.core.scenes import DEFAULT_WORLD
from homiebot.core.tasks import Task, check_goal_names, scene_source
from homiebot.core.world import World
from homiebot.episode import EpisodeObserver, EpisodeParts, Fanout, play_episode
from homiebot.executor import Executor, skill_name
from homiebot.memory.recall import MemoryStoreError, RecallingPlanner, home_name, open_memory, recall
from homiebot.people.base import User
from homiebot.planners.base import ModelInfo, Planner, RecalledSegment
from homiebot.safety.approval import Approver
from homiebot.safety.gate import SafetyGate
from homiebot.safety.state import SafetyState
from homiebot.skills.base import Skill

if TYPE_CHECKING:
    from homiebot.perception.detection import Detector
    from homiebot.worlds.perceiving import RemoteMap


def scene_for(task: Task, world: str = DEFAULT_WORLD) -> Any:
    """The scene ``task`` takes place in, as the world plugin ``world`` reads it; None for a world
    without scenes (a robot)."""
    source = scene_source(world)
    return None if source is None else source.load(task)


def scene_key(task: Task, world: str = DEFAULT_WORLD) -> str:
    """What identifies a task's scene, cheaply: equal keys, equal scenes (see ``SceneSource.key``)."""
    source = scene_source(world)
    return "" if source is None else source.key(task)


class SceneCache:
    """The last scene loaded, kept while tasks name the same scene (episodes in one home skip
    reading and validating its file again). The returned scene is shared (the same object while the
    scene is unchanged): do not modify it."""

    def __init__(self, world: str = DEFAULT_WORLD) -> None:
        self.world = world
        self._key: str | None = None
        self._scene: Any = None

    def get(self, task: Task) -> Any:
        """The task's scene (see ``scene_for``)."""
        key = scene_key(task, self.world)
        if key != self._key or self._scene is None:
            self._scene, self._key = scene_for(task, self.world), key
        return self._scene


_LAST_SCENES: dict[str, SceneCache] = {}
_LAST_SCENES_LOCK = threading.Lock()


def _shared_scene(world: str, task: Task) -> Any:
    """The task's scene through this process's cache of the last scene of ``world`` (episodes of one
    home in a row read and validate it once; worlds only read their scene)."""
    with _LAST_SCENES_LOCK:
        return _LAST_SCENES.setdefault(world, SceneCache(world)).get(task)


def scene_json(scene: Any, world: str = DEFAULT_WORLD) -> dict[str, Any] | None:
    """The scene as JSON (to send to the world node); None without scenes."""
    source = scene_source(world)
    return None if source is None or scene is None else source.to_json(scene)


def scene_from_json(data: Any, world: str = DEFAULT_WORLD) -> Any:
    """A scene back from ``scene_json``."""
    source = scene_source(world)
    return None if source is None or data is None else source.from_json(data)


def check_scene_names(task: Task, scene: Any, world: str = DEFAULT_WORLD) -> None:
    """TaskError if the task's goal names something its scene lacks (nothing to check without scenes)."""
    source = scene_source(world)
    if source is not None and scene is not None:
        check_goal_names(task, source.names(scene))


def make_task(instruction: str | None, scene: str | None, world: str = DEFAULT_WORLD) -> Task:
    """A task from the command line: an instruction in a scene given as a seed or a YAML file (the
    world plugin reads it); without an instruction, the task generated for that seed."""
    source = scene_source(world)
    if source is None:
        if instruction is None:
            raise ConfigError(f"world '{world}' has no scenes to generate a task in: give an instruction")
        return Task(id="task", instruction=instruction)
    return source.task_for(instruction, scene if scene is not None else "0")


def _construct(kind: str, plugin: Any, params: dict, *, name: str, where: str,
               base: type[World] | type[Planner] | type[Skill] | type[Detector]) -> object:
    """The plugin built from its configured parameters, checked first against its parameters model (its
    class's ``Params``, else one derived from its constructor): ConfigError naming every bad field."""
    plugin_class = plugin if isinstance(plugin, type) and issubclass(plugin, base) else None
    declared = plugin_class.Params if plugin_class is not None else None
    kwargs = plugin_params.validate(kind, plugin, params, name=name, where=where, declared=declared)
    try:
        if plugin_class is not None and issubclass(plugin_class, Planner):
            return plugin_class.from_params(**kwargs)
        return plugin(**kwargs)
    except TypeError as err:
        accepted = list(plugin_params.params_model(plugin, declared).model_fields)
        raise ConfigError(f"{plugin_params.label(kind, plugin, name)}: bad parameters {sorted(params)} in {where} ({err}); "
                          f"accepted: {accepted}") from None
    except ValueError as err:
        raise ConfigError(f"{plugin_params.label(kind, plugin, name)}: {err}") from None


def build_world(cfg: RunConfig, scene: Any, remote_map: RemoteMap | None = None) -> World:
    """The configured world (built from ``scene`` when the world has scenes); with
    ``perception.mode: mapped`` wrapped in a PerceivingWorld that sees it through the configured
    detector and a semantic map, kept here or, with ``remote_map``, elsewhere (the mapper node's)."""
    cls = registry.load("worlds", cfg.world.name)
    params = {**cfg.world.params, **({"scene": scene} if scene_source(cfg.world.name) is not None else {})}
    world: World = _construct("world", cls, params, name=cfg.world.name, where="world.params", base=World)  # type: ignore[assignment]
    if cfg.perception.mode != "mapped":
        return world
    from homiebot.worlds.perceiving import PerceivingWorld

    try:
        detector = build_detector(cfg) if remote_map is None else None
        try:
            return PerceivingWorld(world, detector, cfg.perception.map, describe_in_prompt=cfg.perception.describe_in_prompt,
                                   remote=remote_map)
        except ValueError as err:
            raise ConfigError(f"perception: {err}") from None
    except BaseException:
        world.close()
        raise


def build_detector(cfg: RunConfig) -> Detector:
    """The detector ``perception.detector`` configures (ConfigError when it cannot run here)."""
    spec = cfg.perception.detector
    try:
        det_cls = registry.load("detectors", spec.name)
    except registry.PluginError as err:
        raise ConfigError(f"perception.detector: {err}") from None
    from homiebot.perception import detection

    detector: Detector = _construct("detector", det_cls, dict(spec.params), name=spec.name,  # type: ignore[assignment]
                                    where="perception.detector.params", base=detection.Detector)
    reason = detector.availability()
    if reason:
        detector.close()
        raise ConfigError(f"perception.detector '{spec.name}' cannot run here: {reason}")
    return detector


def recall_for(cfg: RunConfig, task: Task) -> list[RecalledSegment] | None:
    """The demonstration segments recalled for ``task``'s instruction from the memory ``cfg.memory``
    names (None without a memory); ConfigError when that memory cannot be opened."""
    if cfg.memory is None:
        return None
    try:
        memory = open_memory(cfg.memory, home_name(scene_key(task, cfg.world.name) or task.id))
        return recall(memory, task.instruction, cfg.memory.k)
    except MemoryStoreError as err:
        raise ConfigError(str(err)) from None


def build_planner(cfg: RunConfig, override: dict | None = None) -> Planner:
    cls = registry.load("planners", cfg.planner.name)
    return _construct("planner", cls, {**cfg.planner.params, **(override or {})}, name=cfg.planner.name,  # type: ignore[return-value]
                      where="planner.params", base=Planner)


@dataclass
class SkillSet:
    skills: dict[str, Skill]
    models: list[ModelInfo]
    unavailable: dict[str, str] = field(default_factory=dict)  # model -> why it cannot run here
    fallbacks: dict[str, str] = field(default_factory=dict)  # unavailable model -> model running in its place

    def listing(self) -> dict[str, Any]:
        """What the skills offer, as the graph's nodes tell each other: models (name, actions,
        description, the skill that runs), unavailable models and fallbacks."""
        return {"models": [{"name": m.name, "actions": list(m.actions), "description": m.description,
                            "skill": skill_name(self.skills[self.fallbacks.get(m.name, m.name)])} for m in self.models],
                "unavailable": self.unavailable, "fallbacks": self.fallbacks}

    def notices(self) -> list[str]:
        """One line per configured model that cannot run here: what runs in its place, or that it is not offered."""
        lines = []
        for model, why in self.unavailable.items():
            instead = self.fallbacks.get(model)
            done = f"{instead} runs in its place" if instead else "the planner is not offered it"
            lines.append(f"{model} cannot run here ({_first_problem(why)}); {done}")
        return lines


def _first_problem(why: str) -> str:
    """The first of a skill's availability problems, without its install hint (the record keeps the whole text)."""
    problems = [p.strip() for p in why.split(": ", 1)[-1].split("; ") if p.strip()]
    first = problems[0].split(" (", 1)[0].rstrip(".") if problems else why
    return first + (f", and {len(problems) - 1} more" if len(problems) > 1 else "")


SkillSite = Literal["bridge", "copy"]


def skill_site(cfg: RunConfig) -> SkillSite:
    """Where the graph runs the skills, for both nodes that could (the executor and the world node):

    * ``bridge``: in the executor node, through a bridge of its own to the robot's driver
      (``World.reached_through_driver``);
    * ``copy``: in the executor node, on a copy of the simulator whose state it hands back to the world
      node (``World.state_copyable``).

    With mapped perception the executor's world sees through the mapper node's semantic map too. A world
    that can be neither reached nor copied runs in one process only (ConfigError)."""
    cls = registry.load("worlds", cfg.world.name)
    if isinstance(cls, type) and issubclass(cls, World) and (cls.reached_through_driver or cls.state_copyable):
        return "bridge" if cls.reached_through_driver else "copy"
    raise ConfigError(f"world '{cfg.world.name}' cannot run in the ROS 2 graph: its skills run in the executor node, on a copy of "
                      "the simulator (a World with state_copyable) or through a bridge of its own to the robot's driver (a World "
                      "with reached_through_driver), and this world is neither; run it in one process with `homiebot run`")


BeliefSite = Literal["truth", "map", "world"]


def belief_site(cfg: RunConfig) -> BeliefSite:
    """Where the graph builds the belief the error detector checks against, for the world and mapper nodes:

    * ``truth``: oracle perception of a simulator whose moving state the world node publishes
      (``skill_site`` ``copy``) and whose scenes mirror their truth: the mapper keeps that mirror in step;
    * ``map``: mapped perception: the mapper node's semantic map, fed by the world node's cameras;
    * ``world``: the world's own belief, published by the world node (a robot bridge's)."""
    if cfg.perception.mode == "mapped":
        return "map"
    source = scene_source(cfg.world.name)
    return "truth" if skill_site(cfg) == "copy" and source is not None and source.mirrors_truth else "world"


def build_skills(cfg: RunConfig, world: World) -> SkillSet:
    """Instantiate configured skills; those that cannot run here are reported, not used."""
    skills: dict[str, Skill] = {}
    models: list[ModelInfo] = []
    unavailable: dict[str, str] = {}
    for index, spec in enumerate(cfg.skills):
        if spec.model in skills or spec.model in unavailable:
            raise ConfigError(f"two skills answer to model '{spec.model}'; model names must be unique")
        cls = registry.load("skills", spec.name)
        params = dict(spec.params)
        if "profile" in inspect.signature(cls.__init__).parameters and "profile" not in params:
            params["profile"] = cfg.skill_profile
        if spec.actions is not None:
            params["actions"] = frozenset(spec.actions)
        skill: Skill = _construct("skill", cls, {"model": spec.model, **params}, name=spec.name,  # type: ignore[assignment]
                                  where=f"skills[{index}].params", base=Skill)
        reason = skill.availability() or skill.supports(world)
        if reason:
            unavailable[spec.model] = reason
            continue
        skills[spec.model] = skill
        models.append(ModelInfo(spec.model, tuple(a.value for a in Action if a in skill.actions), spec.description))
    if not skills:
        raise ConfigError("no configured skill can run here: " + "; ".join(f"{m}: {r}" for m, r in unavailable.items()))
    fallbacks = {}
    for spec in cfg.skills:
        if spec.model in unavailable and spec.fallback:
            if spec.fallback not in skills:
                raise ConfigError(f"skill '{spec.model}': fallback '{spec.fallback}' is not a model that can run here "
                                  f"(available: {sorted(skills)})")
            fallbacks[spec.model] = spec.fallback
            fb = skills[spec.fallback]
            models.append(ModelInfo(spec.model, tuple(a.value for a in Action if a in fb.actions),
                                    f"{spec.description} (runs as {spec.fallback} here)".strip()))
    return SkillSet(skills, models, unavailable, fallbacks)


def build_safety(cfg: RunConfig, world: World, approver: Approver | None = None, state: SafetyState | None = None) -> SafetyGate:
    """The configured safety gate, attached to ``world`` (its robot's commands go through it)."""
    try:
        gate = SafetyGate(cfg.safety, state, approver)
        gate.attach(world)
    except ValueError as err:
        raise ConfigError(f"safety: {err}") from None
    return gate


def agent_settings(cfg: RunConfig) -> AgentSettings:
    """The agent loop's settings from a run config (both runners use them)."""
    return AgentSettings(max_rounds=cfg.max_rounds, history_window=cfg.history_window, far=cfg.detector.far,
                         near=cfg.detector.near, suggest_names=cfg.detector.suggest_names)


def run_episode(cfg: RunConfig, task: Task, out_dir: str | Path | None = None,
                on_step: Callable[[StepRecord], None] | None = None, planner_override: dict | None = None,
                approver: Approver | None = None, safety_state: SafetyState | None = None,
                observer: EpisodeObserver | None = None, user: User | None = None,
                planner: Planner | None = None,
                on_skills: Callable[[SkillSet], None] | None = None) -> tuple[EpisodeRecord, Path | None]:
    """Build everything, run one episode, write its folder (if ``out_dir``), release everything.
    ``planner``: a planner object to use instead of building the configured one (the caller owns
    it: it is reset for the episode and not closed);
    ``approver`` answers approval questions (``safety.approve``); ``safety_state`` lets the caller
    engage the e-stop or cancel from another thread; ``observer`` watches (a live viewer); ``user``
    answers the planner's questions (default: the one ``cfg.user`` names); ``on_skills`` hears which
    skills can run before the first round (to say which models are stand-ins)."""
    scene = _shared_scene(cfg.world.name, task)
    check_scene_names(task, scene, cfg.world.name)
    memories = recall_for(cfg, task)
    world = build_world(cfg, scene)
    own_planner = planner is None
    executor = None
    try:
        skillset = build_skills(cfg, world)
        if on_skills is not None:
            on_skills(skillset)
        gate = build_safety(cfg, world, approver, safety_state)
        executor = Executor(skillset.skills, max_attempts=cfg.attempts, unavailable=skillset.unavailable, fallbacks=skillset.fallbacks,
                            interruption=gate.state.interruption)
        if planner is None:
            planner = build_planner(cfg, planner_override)
        agent_planner = planner if memories is None else RecallingPlanner(planner, memories)
        settings = agent_settings(cfg)
        if user is None and cfg.user != "none":
            from homiebot.people.factory import make_user

            user = make_user(cfg.user, task, world.scene_description(), cfg.seed)
        parts = EpisodeParts(world, agent_planner, executor, skillset.models, settings, cfg.planner.name, gate=gate, user=user)
        episode_id = f"{task.id}_seed{cfg.seed}"
        writer = EpisodeWriter(out_dir, episode_id, images=cfg.output.images, video=cfg.output.video) if out_dir else None
        watchers: list[EpisodeObserver] = [observer] if observer is not None else []
        if writer is not None and cfg.output.video:
            from homiebot.viz.video import EpisodeVideo  # continuous motion, captions, WebVTT

            video = EpisodeVideo()
            writer.video_maker = video.write
            watchers.append(video)
        record = play_episode(parts, task, cfg.seed, writer=writer, config=cfg.model_dump(mode="json"), on_step=on_step,
                              observer=Fanout(watchers) if watchers else None)
        return record, (writer.final_dir if writer else None)
    finally:
        if own_planner and planner is not None:
            planner.close()
        if executor is not None:
            executor.close()
        world.close()
