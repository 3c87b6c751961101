"""Tasks: an instruction, the scene it happens in, and a machine-checkable goal.

The goal is a list of conditions that must all hold at the end (an object on/in a receptacle,
a container open or closed, the robot in a room, an object handed to the person). The oracle planner plans towards it and the
simulator checks it. Benchmarks add keypaths on top (``homiebot.bench``).
"""

from __future__ import annotations

import functools
import json
import re
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from homiebot.core import registry
from homiebot.core.errors import normalise_name
from homiebot.core.scenes import DEFAULT_WORLD, SceneError
from homiebot.core.yamlio import format_validation_error, read_yaml


class TaskError(ValueError):
    """A task file that cannot be used; the message names the file and the field."""


class _Cond(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ObjectAt(_Cond):
    """A named object (or any object of a class) is on/in a receptacle (or any of several)."""

    kind: Literal["object_at"] = "object_at"
    object: str | None = None
    object_class: str | None = None
    receptacle: str | list[str]

    @property
    def receptacles(self) -> list[str]:
        return [self.receptacle] if isinstance(self.receptacle, str) else list(self.receptacle)

    @model_validator(mode="after")
    def _one_subject(self) -> ObjectAt:
        if (self.object is None) == (self.object_class is None):
            raise ValueError("object_at needs exactly one of 'object' or 'object_class'")
        return self


class ContainerState(_Cond):
    """A receptacle with a door or drawer is open (or closed)."""

    kind: Literal["container"] = "container"
    receptacle: str
    open: bool


class RobotIn(_Cond):
    """The robot stands in a room."""

    kind: Literal["robot_in"] = "robot_in"
    room: str


class PersonHas(_Cond):
    """The person holds a named object (or one of a class): the robot gave it to them."""

    kind: Literal["person_has"] = "person_has"
    object: str | None = None
    object_class: str | None = None
    person: str = "person"

    @model_validator(mode="after")
    def _one_subject(self) -> PersonHas:
        if (self.object is None) == (self.object_class is None):
            raise ValueError("person_has needs exactly one of 'object' or 'object_class'")
        return self


Condition = Annotated[ObjectAt | ContainerState | RobotIn | PersonHas, Field(discriminator="kind")]


class Exploration(BaseModel):
    """An exploration phase before the instruction: the robot drives to frontiers of its map, looking, until
    none is left or ``max_stops`` stops were made, building the map its planner keeps (perception mode
    ``mapped``). Then the person's round-0 steps happen unseen, and the task begins.

    SIF gives its agents 1.5 times the steps a frontier exploration needs to complete the map; this phase *is*
    a frontier exploration, so it completes within that budget unless ``max_stops`` cuts it short."""

    model_config = ConfigDict(extra="forbid")
    max_stops: int = Field(40, ge=1, le=200, description="the most frontier stops (each: drive, then look)")


class Situated(BaseModel):
    """What kind of situated task (SIF) a task is, and the path its SPL compares against.

    ``PnP``: nothing relevant moves; ``S_obj``: the object was moved after the exploration and the
    instruction remarks on it; ``S_hum``: the person walks away at the start and is the destination.
    ``hint``: whether their words name the place (clear) or only imply it (ambiguous)."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["PnP", "S_obj", "S_hum"]
    hint: Literal["clear", "ambiguous"] = "clear"
    home: Literal["seen", "unseen"] = "seen"
    shortest_path: float | None = Field(None, gt=0, description="metres the oracle drives with perfect skills (SPL's L*)")

    @property
    def group(self) -> str:
        """'PnP', 'S_obj clear', 'S_hum ambiguous' ...: the rows of the SIF table."""
        return self.kind if self.kind == "PnP" else f"{self.kind} {self.hint}"


Attribute = Literal["short-horizon", "long-horizon", "open-ended", "logical", "human-style"]


class Task(BaseModel):
    """One thing to do, in a scene of a simulated world or in the real world.

    The scene is given inline (``scene``: the world's own description, validated when the world
    loads it), as a file (``scene_file``) or as a generator seed (``scene_seed``); a task for a real
    robot gives none.

    ``goal`` is checked in simulation and planned towards by the oracle (None: unknown; [] means
    nothing needs to change). ``keypaths`` are the EMMOE-style ordered lists of necessary subtasks
    (several when several ways succeed); ``aliases`` map names a planner may use to canonical names.
    """

    model_config = ConfigDict(extra="forbid")
    id: str = "task"
    instruction: str
    attributes: list[Attribute] = []
    split: Literal["train", "dev", "test"] | None = None  # dev: the half of a suite to tune on
    scene: dict[str, Any] | None = None
    scene_file: str | None = None
    scene_seed: int | None = None
    goal: list[Condition] | None = None
    keypaths: list[list[str]] = []
    expert_length: int | None = Field(None, ge=1)
    aliases: dict[str, str] = {}
    intent: str | None = Field(None, description="what the person really wants, in words; hidden from planners "
                                                 "(a simulated user answers questions from it and the goal)")
    min_questions: int | None = Field(None, ge=0, description="K: the fewest questions that pin the goal down")
    person: dict[str, Any] | None = Field(None, description="a person in the task's scene and their script, in the "
                                                            "world's format (replaces one the scene has; validated "
                                                            "by the world like an inline scene)")
    explore: Exploration | None = Field(None, description="an exploration phase before the instruction (mapped perception)")
    situated: Situated | None = Field(None, description="a situated (SIF) task's kind and shortest path, for SPL")

    @field_validator("scene", mode="before")
    @classmethod
    def _scene_as_data(cls, value: Any) -> Any:
        """A world's scene model (e.g. the embedded home's ``SceneSpec``) is kept as its JSON data."""
        if isinstance(value, BaseModel):
            return value.model_dump(mode="json", by_alias=True, exclude_none=True)
        return value

    @field_validator("keypaths")
    @classmethod
    def _parseable_nodes(cls, value: list[list[str]]) -> list[list[str]]:
        from homiebot.core.parsing import FormatError, parse_subtask_text

        for i, path in enumerate(value):
            if not path:
                raise ValueError(f"keypath {i} is empty")
            for node in path:
                try:
                    parse_subtask_text(node)
                except (FormatError, ValueError) as err:
                    raise ValueError(f"keypath {i} node '{node}': {err}") from None
        return value

    @model_validator(mode="after")
    def _one_scene(self) -> Task:
        given = [k for k in ("scene", "scene_file", "scene_seed") if getattr(self, k) is not None]
        if len(given) > 1:
            raise ValueError(f"a task names at most one of scene, scene_file or scene_seed, got {given}")
        return self

    @property
    def has_person(self) -> bool:
        """Whether someone takes part in the task (the task's ``person``, or one its inline scene declares):
        planners are offered Follow and Give only then."""
        return self.person is not None or bool((self.scene or {}).get("person"))

    @property
    def has_scene(self) -> bool:
        """Whether the task names a scene (tasks for a real robot do not)."""
        return self.scene is not None or self.scene_file is not None or self.scene_seed is not None


MAX_INSTRUCTION_CHARS = 2000  # longer text is no request a person makes; it would flood every prompt and record


def instruction_too_long(text: str, limit: int = MAX_INSTRUCTION_CHARS, setting: str = "") -> str | None:
    """Why an instruction is refused for its length (``setting`` names the knob that sets ``limit``), or None.
    ``homiebot run`` and the task manager refuse the same instructions."""
    if len(text) <= limit:
        return None
    return (f"the instruction has {len(text)} characters; at most {limit} are accepted"
            + (f" ({setting})" if setting else "") + "; say what the robot should do in fewer words")


def load_task(path: str | Path, world: str | None = None) -> Task:
    """Read a task YAML file; a relative scene_file is resolved against the task file's folder. An
    inline scene is validated by the world plugin ``world`` (default: the embedded home)."""
    path = Path(path)
    return task_from_data(read_yaml(path, "task file", TaskError), path, world)


def task_from_data(data: Any, path: str | Path, world: str | None = None) -> Task:
    """A task file's parsed YAML as a task (``load_task`` without the reading: a caller that reads the file
    itself, under its own limits)."""
    path = Path(path)
    if not isinstance(data, dict):
        raise TaskError(f"{path}: a task must be a mapping with instruction, scene and goal")
    try:
        task = Task.model_validate(data)
    except ValidationError as err:
        raise TaskError(f"{path}: invalid task\n{format_validation_error(err)}") from None
    if task.scene_file is not None and not Path(task.scene_file).is_absolute():
        task.scene_file = str((path.parent / task.scene_file).resolve())
    if task.scene is not None or task.person is not None:
        source = scene_source(world or DEFAULT_WORLD)
        try:
            if source is not None and task.person is not None:
                source.load(task)  # the scene with the task's person: names checked against that scene
            elif source is not None:
                source.from_json(task.scene, "scene")
        except SceneError as err:
            raise TaskError(f"{path}: invalid task\n{str(err).removeprefix('invalid scene').strip(chr(10))}") from None
    return task


def check_goal_names(task: Task, names: set[str]) -> None:
    """Raise TaskError if the goal mentions things the scene does not have."""
    for cond in task.goal or []:
        if isinstance(cond, ObjectAt):
            refs = [cond.object, *cond.receptacles] if cond.object else cond.receptacles
        elif isinstance(cond, ContainerState):
            refs = [cond.receptacle]
        elif isinstance(cond, PersonHas):
            refs = [cond.object, cond.person] if cond.object else [cond.person]
        else:
            refs = [cond.room]
        for ref in refs:
            if ref not in names:
                raise TaskError(f"task '{task.id}': goal refers to '{ref}', which is not in the scene")


# ---- reading simple instructions into goals ------------------------------------------------
_PUT = re.compile(
    r"^(?:please\s+)?(?:put|place|move|bring|take|carry|set)\s+(?:the\s+|a\s+|an\s+|one\s+)?(?P<obj>.+?)\s+"
    r"(?:in|into|inside|on|onto|on top of|to|in the|back (?:in|on|to))\s+(?:the\s+)?(?P<rec>[\w\s-]+?)[.!]?$",
    re.IGNORECASE,
)
_OPEN = re.compile(r"^(?:please\s+)?(?P<verb>open|close)\s+(?:the\s+)?(?P<rec>[\w\s-]+?)[.!]?$", re.IGNORECASE)
_GO = re.compile(r"^(?:please\s+)?(?:go|walk|move|navigate)\s+(?:to|into)\s+(?:the\s+)?(?P<room>[\w\s-]+?)[.!]?$", re.IGNORECASE)


def goal_from_instruction(instruction: str, objects: dict[str, str], receptacles: set[str], rooms: set[str]) -> list[Condition] | None:
    """Read 'put the green can in the fridge', 'open the cabinet', 'go to the kitchen'.

    ``objects`` maps object names to their classes. Returns None when the sentence is not of a
    supported form or names something the scene lacks.
    """
    text = instruction.strip()
    if m := _PUT.match(text):
        obj, rec = normalise_name(m["obj"]), normalise_name(m["rec"])
        if rec not in receptacles:
            return None
        if obj in objects:
            return [ObjectAt(object=obj, receptacle=rec)]
        if obj in set(objects.values()):
            return [ObjectAt(object_class=obj, receptacle=rec)]
        return None
    if m := _OPEN.match(text):
        rec = normalise_name(m["rec"])
        return [ContainerState(receptacle=rec, open=m["verb"].lower() == "open")] if rec in receptacles else None
    if m := _GO.match(text):
        room = normalise_name(m["room"])
        return [RobotIn(room=room)] if room in rooms else None
    return None


class SceneSource(ABC):
    """How a world plugin reads, describes and mirrors its scenes."""

    @abstractmethod
    def load(self, task: Task) -> Any:
        """The scene ``task`` takes place in (inline, from its file, or generated from its seed).
        Raises a ``ValueError`` subclass with an actionable message when it is invalid."""

    def key(self, task: Task) -> str:
        """What identifies a task's scene, cheaply: equal keys, equal scenes (a file's key follows its
        size and modification time)."""
        if task.person is not None or task.explore is not None:  # another person's script, another phase: another scene
            plain = self.key(task.model_copy(update={"person": None, "explore": None}))
            return plain + ":person:" + json.dumps(task.person, sort_keys=True) + ":explore:" + (
                task.explore.model_dump_json() if task.explore is not None else "")
        if task.scene is not None:
            return "inline:" + json.dumps(task.scene, sort_keys=True)
        if task.scene_file is not None:
            path = Path(task.scene_file)
            try:
                stat = path.stat()
            except OSError:
                return f"file:{path}"  # load will say what is wrong with it
            return f"file:{path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"
        return f"seed:{task.scene_seed}"

    @abstractmethod
    def names(self, scene: Any) -> set[str]:
        """Every name a goal may refer to in this scene."""

    @abstractmethod
    def to_json(self, scene: Any) -> dict[str, Any]:
        """A JSON-able description the scene can be rebuilt from (``from_json``)."""

    @abstractmethod
    def from_json(self, data: Any, where: str = "") -> Any:
        """The scene from ``to_json`` output or a task's inline ``scene`` (validated; a ``SceneError``
        names each bad field, its path starting with ``where``)."""

    @abstractmethod
    def task_for(self, instruction: str | None, scene: str) -> Task:
        """A task from the command line: ``instruction`` in the scene named by ``scene`` (a seed or a
        file); without an instruction, the scene's own task if it has one."""

    # whether ``truth_mirror`` gives a mirror (known before any scene is loaded: the graph decides by it)
    mirrors_truth = False

    def truth_mirror(self, scene: Any) -> Any | None:
        """Privileged state of the scene in another process (a privileged planner's, the mapper's), kept in
        step through ``apply_dynamic``; its ``state`` is the world's belief in oracle perception. None when
        the world has no such state."""
        return None

    def mirror_hints(self, mirror: Any) -> Any | None:
        """``PerceptionHints`` (homiebot/core/world.py) read from a ``truth_mirror``, for a semantic map kept
        in another process than the simulator (the mapper node's): its ``bind`` and ``held_name``; its
        ``open_state`` is empty (the simulator sends that with each observation). None when the mirror
        cannot bind."""
        return None


@runtime_checkable
class WithScenes(Protocol):
    """What a world plugin declares about its scenes (``World.scenes``)."""

    scenes: SceneSource | None


@functools.lru_cache(maxsize=16)  # an entry-point lookup costs milliseconds; the runtime asks several times per episode
def scene_source(world: str = DEFAULT_WORLD) -> SceneSource | None:
    """The ``scenes`` of the world plugin registered as ``world`` (None for worlds without scenes)."""
    cls = registry.load("worlds", world)
    if not (isinstance(cls, type) and isinstance(cls, WithScenes)):  # every World declares ``scenes``
        raise registry.PluginError(f"world plugin '{world}' is not a homiebot World")
    return cls.scenes
