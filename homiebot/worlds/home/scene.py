"""Declarative scene files for the embedded home: the YAML schema and its validation.

A scene lists rooms (axis-aligned rectangles that tile the floor), receptacles placed in rooms,
objects placed on/in receptacles or on the floor, and the robot's start pose. Everything is in
metres, world frame, x east, y north; yaw in degrees. See ``config/scenes/demo.yaml``.
Doors are cut automatically between rooms that share a long enough wall, unless ``doors`` lists
the connected pairs explicitly.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from homiebot.core.scenes import SceneError
from homiebot.core.tasks import Exploration
from homiebot.core.yamlio import format_validation_error, read_yaml
from homiebot.worlds.home.catalog import COLORS, OBJECT_CLASSES, RECEPTACLE_TYPES, ROOM_TYPES
from homiebot.worlds.home.person_script import PersonSpec

SCENE_VERSION = 1
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")



RESERVED_NAMES = ("robot", "wall", "floor")


def _check_name(value: str) -> str:
    if not _NAME.match(value):
        raise ValueError(f"'{value}' is not a valid name: use lower_snake_case like 'green_can'")
    if value in RESERVED_NAMES:
        raise ValueError(f"'{value}' is reserved; choose another name")
    return value


def _choices(options: Any) -> str:
    return ", ".join(sorted(options))


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class RoomSpec(_Strict):
    name: str
    type: str
    origin: tuple[float, float] = Field(description="south-west corner (x, y)")
    size: tuple[float, float] = Field(description="extent along x and y")

    _name = field_validator("name")(_check_name)

    @field_validator("type")
    @classmethod
    def _known_type(cls, value: str) -> str:
        if value not in ROOM_TYPES:
            raise ValueError(f"unknown room type '{value}'; known: {_choices(ROOM_TYPES)}")
        return value

    @field_validator("size")
    @classmethod
    def _big_enough(cls, value: tuple[float, float]) -> tuple[float, float]:
        if min(value) < 2.0:
            raise ValueError(f"rooms must be at least 2 m on each side, got {value}")
        return value


class ReceptacleSpec(_Strict):
    name: str
    type: str
    room: str
    position: tuple[float, float]
    yaw: float = Field(0.0, description="degrees; the front (doors, drawer) faces this direction")
    color: str | None = None
    open: bool = False

    _name = field_validator("name")(_check_name)

    @field_validator("type")
    @classmethod
    def _known_type(cls, value: str) -> str:
        if value not in RECEPTACLE_TYPES:
            raise ValueError(f"unknown receptacle type '{value}'; known: {_choices(RECEPTACLE_TYPES)}")
        return value

    @field_validator("color")
    @classmethod
    def _known_color(cls, value: str | None) -> str | None:
        if value is not None and value not in COLORS:
            raise ValueError(f"unknown color '{value}'; known: {_choices(COLORS)}")
        return value


class ObjectSpec(_Strict):
    name: str
    object_class: str = Field(alias="class")
    color: str
    on: str | None = None
    inside: str | None = Field(None, alias="in")
    floor: tuple[float, float] | None = None
    offset: tuple[float, float] | None = Field(
        None, description="position on/in the receptacle, relative to its centre, receptacle frame"
    )

    _name = field_validator("name")(_check_name)

    @field_validator("object_class")
    @classmethod
    def _known_class(cls, value: str) -> str:
        if value not in OBJECT_CLASSES:
            raise ValueError(f"unknown object class '{value}'; known: {_choices(OBJECT_CLASSES)}")
        return value

    @field_validator("color")
    @classmethod
    def _known_color(cls, value: str) -> str:
        if value not in COLORS:
            raise ValueError(f"unknown color '{value}'; known: {_choices(COLORS)}")
        return value

    @model_validator(mode="after")
    def _one_placement(self) -> ObjectSpec:
        given = [k for k, v in (("on", self.on), ("in", self.inside), ("floor", self.floor)) if v is not None]
        if len(given) != 1:
            raise ValueError(f"object '{self.name}' needs exactly one of 'on', 'in' or 'floor', got {given or 'none'}")
        return self

    @property
    def receptacle(self) -> str | None:
        return self.on or self.inside

    @property
    def relation(self) -> str:
        return "on" if self.on else "in" if self.inside else "floor"


class RobotSpec(_Strict):
    position: tuple[float, float]
    yaw: float = 0.0


class SceneSpec(_Strict):
    version: int = SCENE_VERSION
    name: str = "home"
    seed: int = 0
    rooms: list[RoomSpec]
    doors: list[tuple[str, str]] | None = None
    receptacles: list[ReceptacleSpec]
    objects: list[ObjectSpec] = []
    robot: RobotSpec
    person: PersonSpec | None = Field(None, description="someone who lives here and follows a script (person_script.py)")
    explore: Exploration | None = Field(None, description="an exploration phase before the task (from the task's 'explore')")

    @field_validator("version")
    @classmethod
    def _supported(cls, value: int) -> int:
        if value != SCENE_VERSION:
            raise ValueError(f"scene version {value} is not supported; this homiebot reads version {SCENE_VERSION}")
        return value

    @model_validator(mode="after")
    def _cross_references(self) -> SceneSpec:
        seen: dict[str, str] = {}
        for kind, items in (("room", self.rooms), ("receptacle", self.receptacles), ("object", self.objects)):
            for item in items:
                if item.name in seen:
                    raise ValueError(f"name '{item.name}' is used twice ({seen[item.name]} and {kind}); names must be unique")
                seen[item.name] = kind
        rooms = {r.name for r in self.rooms}
        receptacles = {r.name: r for r in self.receptacles}
        for rec in self.receptacles:
            if rec.room not in rooms:
                raise ValueError(f"receptacle '{rec.name}' is in unknown room '{rec.room}'; rooms: {_choices(rooms)}")
        for obj in self.objects:
            target = obj.receptacle
            if target is None:
                continue
            if target not in receptacles:
                raise ValueError(f"object '{obj.name}' is placed on/in unknown receptacle '{target}'; "
                                 f"receptacles: {_choices(receptacles)}")
            expected = RECEPTACLE_TYPES[receptacles[target].type].relation
            if obj.relation != expected:
                raise ValueError(f"object '{obj.name}': objects go '{expected}' a {receptacles[target].type}, "
                                 f"not '{obj.relation}'; write '{expected}: {target}'")
        for pair in self.doors or []:
            for room in pair:
                if room not in rooms:
                    raise ValueError(f"door {list(pair)} names unknown room '{room}'; rooms: {_choices(rooms)}")
        if self.person is not None:
            _check_name(self.person.name)
            self.person.check_names(rooms, set(receptacles), {o.name for o in self.objects})
        return self


def _unbool_on_keys(data: dict) -> dict:
    """YAML 1.1 reads an unquoted ``on:`` key as the boolean True; treat it as the word 'on'."""
    objects = data.get("objects")
    if not isinstance(objects, list):
        return data
    fixed = [{("on" if k is True else k): v for k, v in o.items()} if isinstance(o, dict) else o for o in objects]
    return {**data, "objects": fixed}


def parse_scene(data: Any, source: str = "<scene>") -> SceneSpec:
    """Validate a scene given as plain data (e.g. loaded YAML); raise SceneError naming the field."""
    if not isinstance(data, dict):
        raise SceneError(f"{source}: a scene must be a mapping with rooms, receptacles, objects and robot")
    data = _unbool_on_keys(data)
    try:
        return SceneSpec.model_validate(data)
    except ValidationError as err:
        raise SceneError(f"{source}: invalid scene\n{format_validation_error(err)}") from None


def load_scene(path: str | Path) -> SceneSpec:
    """Read and validate a scene YAML file."""
    return parse_scene(read_yaml(path, "scene file", SceneError), str(path))


def scene_json(spec: SceneSpec) -> dict[str, Any]:
    """The scene as plain JSON-able data (what a task's inline ``scene`` holds)."""
    return spec.model_dump(mode="json", by_alias=True, exclude_none=True)


def dump_scene(spec: SceneSpec) -> str:
    """The scene as YAML text that ``load_scene`` reads back to an equal spec."""
    return yaml.safe_dump(spec.model_dump(mode="json", by_alias=True, exclude_none=True), sort_keys=False)
