"""Typed plugin parameters: derived and declared models, and messages that name the bad field."""

from __future__ import annotations

import os
import subprocess
import sys
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

from homiebot.core import plugin_params
from homiebot.core.errors import ConfigError
from homiebot.planners.openai_compat import OpenAIParams, OpenAIPlanner
from homiebot.skills.policy_skill import PolicySkill, PolicySkillParams, make_policy
from homiebot.worlds.home.world import EmbeddedHome, HomeParams

from ..conftest import DEMO_TASK, ROOT

if TYPE_CHECKING:
    from homiebot.core.world import World


class Colour(Enum):
    RED = "red"


class Camera:
    """A plugin with a derived model: plain, container, path, enum and unresolvable hints."""

    def __init__(self, width: int = 256, fovy: float = 90.0, labels: tuple[str, ...] | None = None,
                 colour: Colour = Colour.RED, weights: Path | None = None, world: World | None = None) -> None:
        self.width, self.fovy, self.labels, self.colour, self.weights = width, fovy, labels, colour, weights


class Open:
    """A constructor with ``**kwargs``: unknown keys pass."""

    def __init__(self, size: int = 1, **rest: Any) -> None:
        self.size, self.rest = size, rest


class Declared:
    """A plugin with its own parameters model."""

    class Params(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True)
        speed: float = Field(0.5, gt=0, description="metres per second")

    def __init__(self, speed: float = 0.5) -> None:
        self.speed = speed


def test_derived_model_fields_types_and_defaults():
    model = plugin_params.derived_model(Camera)
    assert list(model.model_fields) == ["width", "fovy", "labels", "colour", "weights", "world"]
    assert model.model_fields["width"].default == 256
    assert plugin_params.derived_model(Camera) is model  # derived once
    lines = plugin_params.accepted_fields(model)
    assert lines[0] == "width: int = 256" and lines[1] == "fovy: float = 90.0"


def test_derived_values_keep_what_the_config_wrote():
    kwargs = plugin_params.validate("world", Camera, {"width": 64, "fovy": 60, "labels": ["cup"], "weights": "w.pt"})
    assert kwargs == {"width": 64, "fovy": 60, "labels": ["cup"], "weights": "w.pt"}
    assert type(kwargs["fovy"]) is int and type(kwargs["labels"]) is list  # 60 is not turned into 60.0, nor a list into a tuple
    assert plugin_params.validate("world", Camera, {"colour": "red"}) == {"colour": "red"}


def test_unknown_field_is_named_with_a_suggestion():
    with pytest.raises(ConfigError) as err:
        plugin_params.validate("world", Camera, {"widht": 64}, name="cam", where="world.params")
    text = str(err.value)
    assert text.startswith("world 'cam' (Camera): 1 bad parameter in world.params:")
    assert "world.params.widht: not a parameter of this world; did you mean 'width'?" in text
    assert "accepted: width, fovy, labels, colour, weights, world" in text
    assert "  labels: tuple[str, ...] | None = None" in text and "  colour: Colour = 'red'" in text


def test_wrong_type_is_named_and_strings_are_not_numbers():
    with pytest.raises(ConfigError) as err:
        plugin_params.validate("world", Camera, {"width": "256", "labels": "cup"}, where="world.params")
    text = str(err.value)
    assert "2 bad parameters" in text
    union = _message(PolicySkill, {"model": "m", "image_size": "64"}, PolicySkillParams)
    assert "params.image_size: expected tuple[int, int] | list[int] | None, got '64' (text)" in union
    assert "world.params.width: Input should be a valid integer, got '256' (text)" in text
    assert "world.params.labels: Input should be a valid tuple, got 'cup' (text)" in text


def test_nested_path_is_dotted():
    with pytest.raises(ConfigError, match=r"world\.params\.labels\.1: Input should be a valid string, got 3"):
        plugin_params.validate("world", Camera, {"labels": ["cup", 3]}, where="world.params")


def test_kwargs_constructor_accepts_extra_keys():
    assert plugin_params.validate("policy", Open, {"size": 2, "anything": [1]}) == {"size": 2, "anything": [1]}
    assert "other keys are passed on" in _message(Open, {"size": "2"})


def test_declared_model_is_used():
    assert plugin_params.params_model(Declared, Declared.Params) is Declared.Params
    assert plugin_params.validate("policy", Declared, {"speed": 1}, declared=Declared.Params) == {"speed": 1}
    with pytest.raises(ConfigError, match=r"params\.speed: Input should be greater than 0, got -1 \(an integer\)"):
        plugin_params.validate("policy", Declared, {"speed": -1}, declared=Declared.Params)
    assert "speed: float = 0.5 - metres per second" in _message(Declared, {"speed": "x"}, Declared.Params)


def test_factory_functions_get_a_derived_model():
    def factory(horizon: int = 8) -> Open:
        return Open(horizon)

    assert plugin_params.validate("policy", factory, {"horizon": 4}) == {"horizon": 4}
    with pytest.raises(ConfigError, match="policy 'factory': 1 bad parameter"):
        plugin_params.validate("policy", factory, {"horizon": 4.5})


def test_shipped_declared_models():
    assert EmbeddedHome.Params is HomeParams and PolicySkill.Params is PolicySkillParams and OpenAIPlanner.Params is OpenAIParams
    for cls, model in ((EmbeddedHome, HomeParams), (PolicySkill, PolicySkillParams), (OpenAIPlanner, OpenAIParams)):
        # every constructor parameter, with the constructor's default
        plugin_params.derived_model.cache_clear()
        derived = plugin_params.derived_model(cls)
        assert list(model.model_fields) == list(derived.model_fields), cls
        for name, info in derived.model_fields.items():
            assert info.is_required() == model.model_fields[name].is_required(), name
            if not info.is_required():
                assert model.model_fields[name].default == info.default, name


def test_home_params_check_the_world_params():
    assert plugin_params.validate("world", EmbeddedHome, {"scene": None, "width": 64, "fovy": 90}, declared=HomeParams) == {
        "scene": None, "width": 64, "fovy": 90}
    with pytest.raises(ConfigError, match=r"world\.params\.height: Input should be greater than 0, got 0"):
        plugin_params.validate("world", EmbeddedHome, {"scene": None, "height": 0}, where="world.params", declared=HomeParams)


def test_policy_skill_params_keep_the_yaml_forms():
    params = {"model": "NoMaD", "policy": "expert_waypoints", "max_steps": 300, "image_size": [64, 64], "rate_hz": 4}
    kwargs = plugin_params.validate("skill", PolicySkill, params, declared=PolicySkillParams)
    assert kwargs == params and type(kwargs["rate_hz"]) is int and type(kwargs["image_size"]) is list
    with pytest.raises(ConfigError, match=r"check: Input should be 'auto' or 'robot_signals'"):
        plugin_params.validate("skill", PolicySkill, {"model": "m", "check": "truth"}, declared=PolicySkillParams)


def test_make_policy_names_the_bad_policy_param():
    assert make_policy("expert_ee", chunk=4).chunk == 4
    with pytest.raises(ConfigError, match=r"policy 'expert_ee' \(EndEffectorExpert\).*\n.*policy_params\.chunk: .*got '4'"):
        make_policy("expert_ee", chunk="4")


def test_cli_run_reports_a_bad_world_param_without_traceback(tmp_path):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("world:\n  name: embedded_home\n  params: {width: '256', colour: red}\n")
    env = {**os.environ, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "osmesa")}
    out = subprocess.run([sys.executable, "-m", "homiebot.cli", "run", "--task", str(DEMO_TASK), "--config", str(cfg),
                          "--out", str(tmp_path / "runs")], capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr
    assert "world 'embedded_home' (EmbeddedHome): 2 bad parameters in world.params:" in out.stderr
    assert "world.params.width: Input should be a valid integer, got '256' (text)" in out.stderr
    assert "world.params.colour: not a parameter of this world" in out.stderr
    assert "width: int = 256 - camera image width, pixels" in out.stderr
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def _message(plugin: Any, params: dict, declared: type[BaseModel] | None = None) -> str:
    with pytest.raises(ConfigError) as err:
        plugin_params.validate("policy", plugin, params, declared=declared)
    return str(err.value)
