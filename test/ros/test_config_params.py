"""The run configuration's settings as ROS parameters (``homiebot.ros.kit.config_params``), without ROS: what a
node declares for its sections, and the configuration it builds from the file and the parameters somebody set."""

from __future__ import annotations

import array

import pytest

from homiebot.config import load_config
from homiebot.ros.kit.config_params import SettingError, changed_settings, configuration, describe, settings


@pytest.fixture
def config_file(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("planner: {name: oracle, params: {}}\ndetector: {far: 2.5}\n"
                    "world: {name: embedded_home, params: {width: 128, height: 96}}\n")
    return str(path)


def declared(path: str, sections: tuple[str, ...]) -> dict:
    return {s.name: s for s in settings(load_config(path or None), sections)}


def test_each_setting_of_a_section_is_a_parameter_named_by_its_path_with_the_files_value(config_file):
    found = declared(config_file, ("detector", "world", "planner", "memory", "history_window"))
    assert found["detector.far"].value == 2.5 and found["detector.near"].value == 0.1
    assert found["detector.suggest_names"].value is True
    assert found["world.name"].value == "embedded_home" and found["world.params.width"].value == 128
    # what a ROS parameter cannot hold is YAML text: none, an empty mapping
    assert (found["memory"].value, found["memory"].as_yaml) == ("", True)
    assert (found["history_window"].value, found["planner.params"].value) == ("", "{}")
    assert "memory.root" not in found and "perception.mode" not in found  # only the sections asked for


def test_a_list_of_mappings_is_yaml_text_and_a_list_of_strings_an_array():
    found = declared("", ("skills", "safety"))
    skills = found["skills"]
    assert skills.as_yaml and skills.value.startswith("[{name: privileged_navigation, model: NoMaD")
    arrays = [s for s in found.values() if isinstance(s.value, list)]
    assert all(not s.as_yaml and all(isinstance(v, str) for v in s.value) for s in arrays)


def test_the_file_with_nothing_changed_is_the_file(config_file):
    found = declared(config_file, ("detector", "world", "planner", "skills", "memory"))
    current = {name: s.value for name, s in found.items()}
    assert changed_settings(current, found) == {}
    assert configuration(config_file, {}, found) == load_config(config_file)


def test_a_changed_parameter_changes_only_its_setting(config_file):
    found = declared(config_file, ("detector", "world", "perception", "history_window", "memory"))
    changed = changed_settings({"detector.far": 3, "world.params.width": array.array("q", [64])[0], "detector.near": 0.1,
                                "history_window": "6", "memory": "{root: /tmp/memories, k: 2}"}, found)
    assert set(changed) == {"detector.far", "world.params.width", "history_window", "memory"}
    cfg = configuration(config_file, changed, found)
    assert cfg.detector.far == 3.0 and cfg.detector.near == 0.1 and cfg.world.params == {"width": 64, "height": 96}
    assert cfg.history_window == 6 and cfg.memory is not None and (cfg.memory.root, cfg.memory.k) == ("/tmp/memories", 2)
    assert cfg.planner.name == "oracle"  # not a parameter here: the file's


def test_a_section_the_file_leaves_to_the_defaults_is_changed_from_them():
    found = declared("", ("perception",))
    cfg = configuration("", {"perception.mode": "mapped"}, found)
    assert cfg.perception.mode == "mapped" and cfg.perception.detector.name == "sim_truth"
    assert any(s.name == "explore" for s in cfg.skills)  # as the same setting in a file would


@pytest.mark.parametrize("name, value, message", [
    ("detector.far", -1.0, "parameter detector.far: Input should be greater than 0"),
    ("perception.mode", "psychic", "parameter perception.mode: Input should be 'oracle' or 'mapped'"),
    ("detector.far", "far", "parameter detector.far: Input should be a valid number"),
    ("memory", "{root: [unclosed", "parameter 'memory' = '{root: [unclosed': not YAML"),
    ("memory", "{k: 2}", "parameter memory.root: Field required"),
])
def test_a_value_that_makes_the_configuration_invalid_is_refused_naming_the_parameter(config_file, name, value, message):
    found = declared(config_file, ("detector", "perception", "memory"))
    with pytest.raises(SettingError) as caught:
        configuration(config_file, {name: value}, found)
    assert str(caught.value).startswith(message), caught.value


def test_a_file_that_cannot_be_read_is_a_setting_error(tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text("detector: {far: -2}\n")
    with pytest.raises(SettingError, match="detector.far"):
        configuration(str(broken), {}, {})


def test_descriptions_come_from_the_configurations_fields_with_their_limits():
    found = declared("", ("detector", "perception", "max_rounds"))
    text, constraints = describe(found["detector.far"])
    assert text.startswith("D1 beyond this many metres") and constraints == "> 0"
    assert describe(found["perception.mode"])[1] == "one of oracle, mapped"
    assert describe(found["max_rounds"])[1] == ">= 1 and <= 1000"
    assert "applies at the next configure" in text

