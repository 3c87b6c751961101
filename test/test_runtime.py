"""Scene loading shared by the runners (the scene cache follows the scene file); where the graph runs skills and builds the belief."""

from __future__ import annotations

import os

from homiebot.core.tasks import Task, load_task
from homiebot.runtime import SceneCache, scene_key
from test.conftest import DEMO_TASK, ROOT


def test_the_cache_reloads_a_scene_file_that_changed(tmp_path):
    scene = tmp_path / "home.yaml"
    scene.write_text((ROOT / "config" / "scenes" / "demo.yaml").read_text())
    task = load_task(DEMO_TASK).model_copy(update={"scene_file": str(scene)})
    cache = SceneCache()
    first = cache.get(task)
    assert cache.get(task) is first  # unchanged file: not read again

    text = scene.read_text()
    scene.write_text(text.replace("name: demo_home", "name: moved_home", 1))
    os.utime(scene, ns=(scene.stat().st_atime_ns, scene.stat().st_mtime_ns + 10**9))
    changed = cache.get(task)
    assert changed is not first and changed.name == "moved_home"


def test_keys_tell_scenes_apart():
    demo = load_task(DEMO_TASK)
    assert scene_key(demo) == scene_key(load_task(DEMO_TASK))
    assert scene_key(Task(instruction="x", scene_seed=3)) != scene_key(Task(instruction="x", scene_seed=4))
    missing = demo.model_copy(update={"scene_file": "/nonexistent/home.yaml"})
    assert scene_key(missing) == "file:/nonexistent/home.yaml"


def test_where_the_skills_run_and_the_belief_is_built_follows_the_world_and_its_perception():
    from homiebot.config import RunConfig
    from homiebot.runtime import belief_site, skill_site

    home = RunConfig()
    mapped = RunConfig.model_validate({"perception": {"mode": "mapped", "detector": {"name": "sim_truth"}}})
    robot = RunConfig.model_validate({"world": {"name": "ros2_robot", "params": {"profile": "spot"}}})
    assert (skill_site(home), belief_site(home)) == ("copy", "truth")  # the executor's copy, the mapper's mirror of the truth
    assert (skill_site(mapped), belief_site(mapped)) == ("copy", "map")  # the executor's copy; the mapper's semantic map
    assert (skill_site(robot), belief_site(robot)) == ("bridge", "world")  # the robot bridge's own belief


def test_a_world_that_can_be_neither_copied_nor_reached_is_refused_by_the_graph_with_what_to_do(monkeypatch):
    import pytest

    from homiebot import runtime
    from homiebot.config import RunConfig
    from homiebot.core import registry
    from homiebot.core.errors import ConfigError
    from homiebot.worlds.home.world import EmbeddedHome

    class Sealed(EmbeddedHome):
        state_copyable = False  # and not reached through a driver either

    real = registry.load
    monkeypatch.setattr(registry, "load", lambda kind, name: Sealed if (kind, name) == ("worlds", "sealed") else real(kind, name))
    with pytest.raises(ConfigError, match="world 'sealed' cannot run in the ROS 2 graph.*run it in one process with `homiebot run`"):
        runtime.skill_site(RunConfig.model_validate({"world": {"name": "sealed"}}))
