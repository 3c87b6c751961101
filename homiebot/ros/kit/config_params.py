"""The run configuration's settings as a node's ROS parameters.

A node that builds from the run configuration (its ``config`` parameter, a homiebot YAML file) declares the
settings of the sections it reads as parameters named by their path in the file (``detector.far``,
``planner.params.model_path``), with the file's values as defaults. ``-p``, a ``--params-file`` or
``set_parameters`` then change single settings. At each configure the node reads the file again and applies
every parameter whose value differs from the one it was declared with (one somebody set), so the YAML file and
the parameters make one configuration, validated as a whole; a ``set_parameters`` that would make it invalid is
refused with the reason.

A value a ROS parameter cannot hold (none, a list of mappings, an empty list or mapping, a mapping whose keys
are not parameter names) is one string parameter holding YAML: ``""`` for none, ``"[...]"``, ``"{...}"``.
"""

from __future__ import annotations

import array
import copy
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import yaml
from pydantic import BaseModel

from homiebot.config import RunConfig, config_from, read_config_data
from homiebot.core.errors import ConfigError

KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")  # a key that can be a part of a parameter's name
SCALARS = (bool, int, float, str)
LIMITS = {"Gt": ">", "Ge": ">=", "Lt": "<", "Le": "<="}  # pydantic's bounds of a field, in words
SCHEDULING = ("resources",)  # fields of the configuration's plugins that no node reads


class SettingError(ValueError):
    """A setting (a parameter or the file) that does not make a valid run configuration."""


@dataclass(frozen=True)
class Setting:
    """One parameter standing for one place in the run configuration."""

    path: tuple[str, ...]
    value: Any  # as declared: the file's value, a ROS parameter value
    as_yaml: bool  # the parameter holds YAML text ("" for none)

    @property
    def name(self) -> str:
        return ".".join(self.path)

    def config_value(self, value: Any) -> Any:
        """What the configuration gets for the parameter value ``value``."""
        if isinstance(value, array.array | tuple):
            value = list(value)  # rclpy gives arrays from a parameters file as array.array
        if not self.as_yaml or not isinstance(value, str):
            return value
        if not value.strip():
            return None
        try:
            return yaml.safe_load(value)
        except yaml.YAMLError as err:
            raise SettingError(f"parameter '{self.name}' = {value!r}: not YAML ({str(err).splitlines()[0]})") from None


def settings(cfg: RunConfig, sections: Iterable[str]) -> list[Setting]:
    """The parameters for ``sections`` (top-level keys of the run configuration) of ``cfg``."""
    data = cfg.model_dump(mode="json")
    found: list[Setting] = []
    for section in sections:
        _flatten(data.get(section), (section,), found)
    return found


def _flatten(value: Any, path: tuple[str, ...], found: list[Setting]) -> None:
    if path[-1] in SCHEDULING and _field(path) is not None:
        return  # what a distributed evaluation reserves for a job: nothing a node reads
    if isinstance(value, dict) and value and all(isinstance(k, str) and KEY.match(k) for k in value):
        for key, item in value.items():
            _flatten(item, (*path, key), found)
    elif isinstance(value, SCALARS):
        found.append(Setting(path, value, False))
    elif isinstance(value, list) and value and isinstance(value[0], SCALARS) and all(type(v) is type(value[0]) for v in value):
        found.append(Setting(path, list(value), False))  # a ROS array parameter
    else:
        found.append(Setting(path, "" if value is None else yaml_text(value), True))


def yaml_text(value: Any) -> str:
    """``value`` as one line of YAML."""
    return yaml.safe_dump(value, default_flow_style=True, width=math.inf, sort_keys=False).strip().removesuffix("...").strip()


def describe(setting: Setting) -> tuple[str, str]:
    """The parameter's description and its constraints in words (for its descriptor), from the configuration's
    own field descriptions and limits."""
    field = _field(setting.path)
    text = (field.description if field is not None and field.description else "") or f"`{setting.name}` of the run configuration"
    if setting.as_yaml:
        text += " (YAML text; empty for none)"
    constraints = []
    if field is not None:
        for rule in field.metadata:  # pydantic's Gt, Ge, Lt, Le: each holds its bound under its own lower-case name
            sign = LIMITS.get(type(rule).__name__)
            if sign is not None:
                constraints.append(f"{sign} {getattr(rule, type(rule).__name__.lower())}")
        choices = _literal(field.annotation)
        if choices:
            constraints.append("one of " + ", ".join(map(str, choices)))
    return f"{text}; run configuration `{setting.name}`, applies at the next configure", " and ".join(constraints)


def _field(path: tuple[str, ...]) -> Any:
    """pydantic's field info at ``path`` of the run configuration (None inside free-form mappings and lists)."""
    model: Any = RunConfig
    field = None
    for part in path:
        if model is None:
            return None
        field = model.model_fields.get(part)
        if field is None:
            return None
        model = _model_in(field.annotation)
    return field


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if get_origin(annotation) is list:
        return None  # items of a list are not parameters of their own
    return next((m for m in map(_model_in, get_args(annotation)) if m is not None), None)


def _literal(annotation: Any) -> tuple[Any, ...]:
    if get_origin(annotation) is Literal:
        return get_args(annotation)
    return next((c for c in map(_literal, get_args(annotation)) if c), ())


def configuration(path: str, changed: Mapping[str, Any], declared: Mapping[str, Setting]) -> RunConfig:
    """The run configuration of the file at ``path`` (empty: the defaults) with the parameters in ``changed``
    (name -> value; each one of ``declared``) applied; SettingError names the first problem."""
    try:
        raw = read_config_data(Path(path)) if path else {}
        cfg = config_from(raw, f"{path}: ")
        if not changed:
            return cfg
        dumped = cfg.model_dump(mode="json")
        for name, value in changed.items():
            setting = declared[name]
            section = setting.path[0]
            if section not in raw:  # the file left it to the defaults: they are its starting point
                raw[section] = copy.deepcopy(dumped.get(section))
            target = raw
            for part in setting.path[:-1]:
                if not isinstance(target.get(part), dict):
                    target[part] = {}
                target = target[part]
            target[setting.path[-1]] = setting.config_value(value)
        return config_from(raw, "parameter ")
    except ConfigError as err:
        raise SettingError(str(err)) from None


def changed_settings(values: Mapping[str, Any], declared: Mapping[str, Setting]) -> dict[str, Any]:
    """The parameters among ``values`` whose value is not the one they were declared with (arrays as lists)."""
    plain = {name: _plain(value) for name, value in values.items() if name in declared}
    return {name: value for name, value in plain.items() if value != _plain(declared[name].value)}


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, array.array | tuple) else value

