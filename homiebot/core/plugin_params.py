"""Typed parameters of plugins: a pydantic model per plugin class, and messages that say how to fix a bad one.

A plugin (planner, skill, world, detector, low-level policy) is configured by a ``params:`` mapping in
the run configuration. Its parameters model is the ``Params`` class its author declared (the plugin
bases declare ``Params: ClassVar[type[BaseModel] | None] = None``; a plugin sets it to a
``pydantic.BaseModel`` subclass with ``extra="forbid"``), else one derived from its constructor's
signature and type hints, made once per plugin. A constructor with ``**kwargs`` accepts further keys.

Derived models are strict: a number stays a number and text stays text (``width: "256"`` is an error,
not 256). The forms YAML cannot write are the exceptions: a list for a tuple or set, text for a
``Path`` or an enum value. The keyword arguments ``validate`` returns are what the configuration
wrote, unless the model changed a value (a value that only changed its type, 90 to 90.0 or a list to
a tuple, is passed as written), so valid configurations construct exactly what they did before.
"""

from __future__ import annotations

import collections.abc
import difflib
import enum
import functools
import inspect
import pathlib
import re
import types
import typing
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Strict, ValidationError, create_model
from pydantic.fields import FieldInfo

from homiebot.core.errors import ConfigError

# What YAML cannot write as such: a list stands for a tuple or set, text for a path or an enum value.
_WRITTEN_OTHERWISE = (tuple, set, frozenset, collections.abc.Set, collections.abc.MutableSet)


def params_model(plugin: Callable[..., Any], declared: type[BaseModel] | None = None) -> type[BaseModel]:
    """The parameters model of ``plugin``: ``declared`` (the class's own ``Params``) when given, else
    the model derived from its constructor (a class) or its signature (a factory function)."""
    return declared if declared is not None else derived_model(plugin)


@functools.cache
def derived_model(plugin: Callable[..., Any]) -> type[BaseModel]:
    """A strict pydantic model with one field per keyword parameter of ``plugin`` (its ``__init__`` for a
    class), typed by its hints (``Any`` where there is none or it cannot be resolved), with its defaults;
    ``**kwargs`` makes the model accept further keys."""
    signature, hints = _signature_and_hints(plugin)
    fields: dict[str, Any] = {}
    extra: Literal["forbid", "allow"] = "forbid"
    for param in signature.parameters.values():
        if param.kind is param.VAR_KEYWORD:
            extra = "allow"
        elif param.kind is not param.VAR_POSITIONAL:
            annotation = _as_written_in_yaml(hints.get(param.name, Any))
            fields[param.name] = (annotation, ... if param.default is param.empty else param.default)
    config = ConfigDict(extra=extra, strict=True, arbitrary_types_allowed=True, protected_namespaces=())
    return create_model(f"{_name_of(plugin)}Params", __config__=config, **fields)


def validate(kind: str, plugin: Callable[..., Any], params: Mapping[str, Any], *, name: str | None = None,
             where: str = "params", declared: type[BaseModel] | None = None) -> dict[str, Any]:
    """The keyword arguments to construct ``plugin`` with, checked against its parameters model.

    ``kind`` (world, planner, skill, detector, policy) and ``name`` (its registered name) say which
    plugin a message is about, ``where`` where its parameters sit in the configuration
    (``world.params``); ``declared`` is the class's own ``Params`` model. Only the keys ``params`` holds
    are returned (the constructor's defaults apply to the others). ConfigError names every bad field
    with its dotted path, what is wrong with it, and the fields the plugin accepts."""
    model = params_model(plugin, declared)
    try:
        checked = model.model_validate(dict(params))
    except ValidationError as err:
        raise ConfigError(describe(kind, plugin, model, params, err, name=name, where=where)) from None
    extra = checked.model_extra or {}
    return {key: value if key in extra else _as_given(value, getattr(checked, key)) for key, value in params.items()}


def describe(kind: str, plugin: Callable[..., Any], model: type[BaseModel], params: Mapping[str, Any],
             err: ValidationError, *, name: str | None = None, where: str = "params") -> str:
    """The message for a failed validation: a header naming the plugin, one line per bad field (its dotted
    path, what is wrong), then the accepted fields with their types and defaults."""
    problems = _problems(kind, model, params, err, where)
    lines = [f"{label(kind, plugin, name)}: {len(problems)} bad parameter{'s' if len(problems) > 1 else ''} in {where}:"]
    lines += [f"  - {problem}" for problem in problems]
    lines.append(f"accepted: {', '.join(model.model_fields) or 'no parameters'}"
                 + (" (other keys are passed on as they are)" if model.model_config.get("extra") == "allow" else ""))
    lines += [f"  {field}" for field in accepted_fields(model)]
    return "\n".join(lines)


def label(kind: str, plugin: Callable[..., Any], name: str | None = None) -> str:
    """How messages name a plugin: ``world 'embedded_home' (EmbeddedHome)``, or by its class alone."""
    if not name or name == _name_of(plugin):
        return f"{kind} '{_name_of(plugin)}'"
    return f"{kind} '{name}' ({_name_of(plugin)})"


def accepted_fields(model: type[BaseModel]) -> list[str]:
    """One line per field of ``model``: ``name: type = default`` (or ``(required)``), then its description."""
    lines = []
    for field_name, info in model.model_fields.items():
        default = "(required)" if info.is_required() else f"= {_default_text(info)}"
        line = f"{field_name}: {type_text(info.annotation)} {default}"
        lines.append(line + (f" - {info.description}" if info.description else ""))
    return lines


def type_text(annotation: Any) -> str:
    """A type as a reader writes it: ``int``, ``str | None``, ``tuple[int, int] | list[int]``."""
    if annotation is type(None):
        return "None"
    if isinstance(annotation, type) and not typing.get_args(annotation):
        return annotation.__name__
    if typing.get_origin(annotation) is Annotated:
        return type_text(typing.get_args(annotation)[0])
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return " | ".join(type_text(arg) for arg in typing.get_args(annotation))
    text = repr(annotation).replace("typing.", "")
    return re.sub(r"\b(?:[A-Za-z_]\w*\.)+([A-Za-z_]\w*)", r"\1", text)  # module paths say nothing to a reader


def _problems(kind: str, model: type[BaseModel], params: Mapping[str, Any], err: ValidationError, where: str) -> list[str]:
    """One line per bad field; the several complaints of a union's branches become one 'expected' line."""
    by_field: dict[str, list[Any]] = {}
    for error in err.errors():
        by_field.setdefault(str(error["loc"][0]) if error["loc"] else "", []).append(error)
    problems = []
    for field_name, errors in by_field.items():
        first = errors[0]
        path = ".".join([where, *(str(part) for part in first["loc"])])
        if first["type"] == "extra_forbidden":
            close = difflib.get_close_matches(field_name, list(model.model_fields), n=1, cutoff=0.6)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            problems.append(f"{path}: not a parameter of this {kind}{hint}")
        elif first["type"] == "missing":
            problems.append(f"{path}: required, and not given")
        elif len(errors) > 1:  # the branches of a union each complain
            expected = type_text(model.model_fields[field_name].annotation)
            problems.append(f"{where}.{field_name}: expected {expected}, got {_shown(params.get(field_name))}")
        else:
            problems.append(f"{path}: {first['msg'].removeprefix('Value error, ')}, got {_shown(first.get('input'))}")
    return problems


def _shown(value: Any) -> str:
    """A value with its YAML-ish type, for a message: ``'256' (text)``."""
    kinds = {str: "text", bool: "true/false", int: "an integer", float: "a number", list: "a list", dict: "a mapping"}
    text = repr(value)
    return f"{text if len(text) <= 60 else text[:57] + '...'} ({kinds.get(type(value), type(value).__name__)})"


def _default_text(info: FieldInfo) -> str:
    if info.default_factory is not None:
        return f"{info.default_factory.__name__}()" if hasattr(info.default_factory, "__name__") else "computed"
    default = info.default
    return repr(default.value if isinstance(default, enum.Enum) else default)  # as the configuration writes it


def _as_given(given: Any, validated: Any) -> Any:
    """What the configuration wrote when validation only re-typed it (90 -> 90.0, a list -> a tuple, text ->
    a path or an enum member), else the validated value (a declared model may convert)."""
    if validated is given:
        return given
    if isinstance(validated, pathlib.PurePath) and isinstance(given, str) or \
            isinstance(validated, enum.Enum) and not isinstance(given, enum.Enum):
        return given  # text the model read as a path or an enum value
    try:
        if validated == given:
            return given
        ordered = (list, tuple)
        if isinstance(validated, ordered) and isinstance(given, ordered) and list(validated) == list(given):
            return given
        if isinstance(validated, (set, frozenset)) and isinstance(given, (list, tuple, set, frozenset)) \
                and validated == set(given):
            return given
    except (TypeError, ValueError):  # values that do not compare (arrays): the validated one
        pass
    return validated


def _as_written_in_yaml(annotation: Any) -> Any:
    """``annotation`` with the types YAML writes in another form (tuples, sets, paths, enums) accepting that form."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return typing.Union[tuple(_as_written_in_yaml(arg) for arg in typing.get_args(annotation))]  # noqa: UP007
    if origin in _WRITTEN_OTHERWISE or annotation in _WRITTEN_OTHERWISE or (
            isinstance(annotation, type) and issubclass(annotation, (pathlib.PurePath, enum.Enum))):
        return Annotated[annotation, Strict(False)]
    return annotation


def _signature_and_hints(plugin: Callable[..., Any]) -> tuple[inspect.Signature, dict[str, Any]]:
    """The signature a configuration calls (without ``self``) and its resolved type hints."""
    function = plugin.__init__ if isinstance(plugin, type) else plugin  # type: ignore[misc]
    signature = inspect.signature(plugin)
    try:
        return signature, typing.get_type_hints(function)
    except (NameError, TypeError, AttributeError):  # a hint names what only a type checker imports: resolve one by one
        pass
    hints = {}
    for param in signature.parameters.values():
        try:
            hints[param.name] = typing.get_type_hints(_Annotated(function, param.annotation))["value"]
        except (NameError, TypeError, AttributeError):
            hints[param.name] = Any
    return signature, hints


class _Annotated:
    """One parameter's annotation with its function's globals, for ``typing.get_type_hints`` to resolve alone."""

    def __init__(self, function: Callable[..., Any], annotation: Any) -> None:
        self.__annotations__ = {"value": Any if annotation is inspect.Parameter.empty else annotation}
        self.__globals__ = getattr(function, "__globals__", {})


def _name_of(plugin: Callable[..., Any]) -> str:
    return getattr(plugin, "__name__", type(plugin).__name__)


__all__ = ["accepted_fields", "derived_model", "describe", "label", "params_model", "type_text", "validate"]
