"""Run configuration: which world, planner and skills to use, loaded from YAML and validated.

Every field has a default, so an empty file is a valid configuration (the embedded home with the
oracle planner and privileged skills answering to the four EMMOE model names).
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

from homiebot.core import registry
from homiebot.core.contracts import Action
from homiebot.core.errors import ConfigError
from homiebot.core.yamlio import read_yaml
from homiebot.safety.settings import SafetySettings
from homiebot.skills.failures import load_profile

CONFIG_VERSION = 1


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Resources(_Strict):
    """What a plugin needs on the machine that runs an episode; a distributed evaluation
    (``homiebot eval --executor ray``) schedules each job by the sum over its planner, world and skills."""

    num_cpus: float = Field(0.0, ge=0, description="CPUs beyond the one every job gets")
    num_gpus: float = Field(0.0, ge=0, description="GPUs (fractions share one GPU between jobs)")
    memory_mb: int = Field(0, ge=0, description="memory to reserve, in MB")


class PluginSpec(_Strict):
    name: str
    params: dict[str, Any] = {}
    resources: Resources = Field(default_factory=Resources, description="for distributed evaluation only")


class SkillSpec(_Strict):
    """A skill plugin answering to a model name, e.g. privileged_navigation as 'NoMaD'."""

    name: str = Field(description="entry point in homiebot.skills")
    model: str = Field(description="the model name planners choose")
    actions: list[Action] | None = Field(None, description="actions it executes; default: the skill's own")
    description: str = Field("", description="what the model is good at, shown to planners")
    fallback: str | None = Field(None, description="model whose skill runs in its place when this one cannot run here")
    params: dict[str, Any] = {}
    resources: Resources = Field(default_factory=Resources, description="for distributed evaluation only")


def _default_skills() -> list[SkillSpec]:
    return [
        SkillSpec(name="privileged_navigation", model="NoMaD", params={"weak_at": ["small"]},
                  description="image-goal navigation, best for rooms and large furniture"),
        SkillSpec(name="privileged_navigation", model="PixNav", params={"weak_at": ["room"]},
                  description="pixel-goal navigation, best for reaching visible objects"),
        SkillSpec(name="privileged_manipulation", model="octo", actions=[Action.OPEN, Action.CLOSE, Action.PICK, Action.PUT],
                  description="manipulation, best at opening and closing doors and drawers"),
        SkillSpec(name="privileged_manipulation", model="RT-1-X", actions=[Action.PICK, Action.PUT, Action.OPEN, Action.CLOSE],
                  description="manipulation, best at picking and putting objects"),
    ]


def mapped_default_skills() -> list[SkillSpec]:
    """The default skills for ``perception.mode: mapped``: as ``_default_skills``, but NoMaD also
    explores rooms. One model name answers to one skill, so NoMaD's skill is the ``explore`` skill
    wrapping its privileged navigation (Go to is handed to it; Explore drives to frontiers)."""
    skills = _default_skills()
    nomad = skills[0]
    skills[0] = SkillSpec(name="explore", model=nomad.model,
                          description=nomad.description + "; also explores a room for things not seen yet",
                          params={"navigation": nomad.name, "navigation_params": dict(nomad.params)})
    return skills


class DetectorSettings(_Strict):
    far: float = Field(2.0, gt=0, description="D1 beyond this many metres")
    near: float = Field(0.1, ge=0, description="D2 below this many metres")
    suggest_names: bool = Field(True, description="add similar scene names to F2 feedback")


class PerceptionSettings(_Strict):
    """Where the agent's knowledge of the scene comes from."""

    mode: Literal["oracle", "mapped"] = Field("oracle", description="oracle: simulator truth; mapped: a semantic map built from detections")
    detector: PluginSpec = Field(PluginSpec(name="sim_truth"), description="entry point in homiebot.detectors")
    map: dict[str, Any] = Field(default_factory=dict, description="SemanticMap parameters")
    describe_in_prompt: bool = Field(False, description="add the map's text summary to planner prompts")


class OutputSettings(_Strict):
    dir: str = "runs"
    images: bool = True
    video: bool = False


class SimDriverSettings(_Strict):
    """The embedded home served as the robot's driver (``homiebot_sim_driver``), started with the graph:
    the deploy graph run against simulation. Leave it out on the robot."""

    scene: str = Field("0", description="the home: a generator seed or a scene YAML file")
    camera_size: str = Field("", description="publish every camera at HEIGHTxWIDTH, as the driver sends it (empty: each camera's own resolution)")
    lockstep: bool = Field(False, description="simulated time advances only when the bridge steps it (reproducible "
                           "episodes; the world needs lockstep: true too); real time otherwise")


class MemorySettings(_Strict):
    """The demonstration memory (``homiebot.memory``) the planner recalls from: segments of a user's
    demonstrations in a home, kept in ``root/<home>/<user>/``."""

    root: str = Field(description="the memories' folder (python -m homiebot.memory remember --memory ROOT)")
    user: str = Field("default", description="whose demonstrations")
    home: str | None = Field(None, description="which home's (default: the task's scene, as the recorder names it)")
    k: int = Field(3, ge=1, le=20, description="segments recalled per episode")


class RunConfig(_Strict):
    version: int = CONFIG_VERSION
    seed: int = 0
    max_rounds: int = Field(20, ge=1, le=1000)
    history_window: int | None = Field(None, ge=1)
    attempts: int = Field(3, ge=1, le=10, description="attempts per subtask (Put is tried once)")
    skill_profile: str | dict[str, Any] = Field("default", description="failure profile of privileged skills: default, perfect, a file")
    planner: PluginSpec = PluginSpec(name="heuristic")
    world: PluginSpec = PluginSpec(name="embedded_home", params={"width": 256, "height": 256})
    skills: list[SkillSpec] = Field(default_factory=_default_skills)
    detector: DetectorSettings = DetectorSettings()
    perception: PerceptionSettings = PerceptionSettings()
    output: OutputSettings = OutputSettings()
    safety: SafetySettings = SafetySettings()
    sim_driver: SimDriverSettings | None = Field(None, description="start the sim driver node serving the world's robot profile")
    memory: MemorySettings | None = Field(None, description="recall demonstrations for each instruction (none: no memory)")
    user: str = Field("none", description="who answers the planner's questions (Ask): none, simulated (from the "
                                          "task's hidden intent), persona:<name or file> (simulated, in character), ros (/homiebot/ask and "
                                          "/homiebot/answer topics)")

    @model_serializer(mode="wrap")
    def _without_unused_memory(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """No ``memory`` key when no memory is configured (records of runs without one stay as they were)."""
        data = handler(self)
        if data.get("memory", True) is None:
            del data["memory"]
        return data

    @field_validator("user")
    @classmethod
    def _known_user(cls, value: str) -> str:
        plugged = registry.available("users")  # ``ros`` and any a distribution registers
        if value not in ("none", "simulated", *plugged) and not value.startswith("persona:"):
            raise ValueError(f"unknown user '{value}'; choose none, simulated, {', '.join(plugged + [''])}or persona:<name or file>")
        return value

    @model_validator(mode="after")
    def _mapped_skills(self) -> RunConfig:
        """Mapped perception without an explicit skill list gets the exploring defaults."""
        if self.perception.mode == "mapped" and "skills" not in self.model_fields_set:
            self.skills = mapped_default_skills()
        return self

    @model_validator(mode="after")
    def _driver_has_a_profile(self) -> RunConfig:
        """The sim driver serves the robot profile the world bridges to."""
        if self.sim_driver is not None and not self.world.params.get("profile"):
            raise ValueError("sim_driver serves a robot profile: give world.params.profile (world: {name: ros2_robot, ...})")
        return self

    @field_validator("skill_profile")
    @classmethod
    def _known_profile(cls, value: str | dict[str, Any]) -> str | dict[str, Any]:
        load_profile(value)  # raises ValueError with the list of built-in profiles
        return value


def describe_validation_error(err: ValidationError) -> str:
    """'field.path: message' for the first problem, without pydantic's boilerplate; an unknown key
    names the nearest known one ("did you mean ...?")."""
    errors = err.errors()
    first = errors[0]
    missing = {e["loc"][:-1] for e in errors if e["type"] == "missing"}
    # a misspelled key also makes its right spelling "missing": report the misspelling, which says both
    first = next((e for e in errors if e["type"] == "extra_forbidden" and e["loc"][:-1] in missing), first)
    where = ".".join(str(p) for p in first["loc"])
    message = first["msg"].removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        known = _known_keys(err.title, first["loc"][:-1])
        close = difflib.get_close_matches(str(first["loc"][-1]), known, n=1, cutoff=0.6)
        message = "unknown key" + (f"; did you mean '{close[0]}'?" if close else f" (known: {', '.join(sorted(known))})" if known else "")
    return f"{where}: {message}"


def _known_keys(model_name: str, loc: tuple) -> list[str]:
    """The field names of the pydantic model at ``loc`` below the model called ``model_name`` (empty when unknown)."""
    model: Any = RunConfig if model_name == RunConfig.__name__ else None
    for part in loc:
        if model is None or isinstance(part, int):
            continue  # list items: the same model as the list
        field = model.model_fields.get(part)
        model = _model_of(field.annotation) if field is not None else None
    return list(model.model_fields) if model is not None else []


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model inside an annotation such as ``X``, ``X | None`` or ``list[X]``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _model_of(arg)
        if found is not None:
            return found
    return None


def load_config(path: str | Path | None) -> RunConfig:
    """Read a YAML config (None: all defaults)."""
    if path is None:
        return RunConfig()
    path = Path(path)
    return config_from(read_config_data(path), f"{path}: ")


def read_config_data(path: Path) -> dict[str, Any]:
    """A config file's mapping as written, not validated (ConfigError when it is not YAML or not a mapping)."""
    data = read_yaml(path, "config file", ConfigError) or {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a config must be a mapping")
    return data


def config_from(data: dict[str, Any], where: str) -> RunConfig:
    """A config from its mapping; ConfigError starting with ``where`` names the first problem."""
    try:
        cfg = RunConfig.model_validate(data)
    except ValidationError as err:
        raise ConfigError(f"{where}{describe_validation_error(err)}") from None
    if cfg.version != CONFIG_VERSION:
        raise ConfigError(f"{where}config version {cfg.version} is not supported (expected {CONFIG_VERSION})")
    return cfg
