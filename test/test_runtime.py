"""Scene loading shared by the runners: the scene cache follows the scene file."""

from __future__ import annotations

import os

from homiebot.runtime import SceneCache, scene_key
from homiebot.tasks import Task, load_task
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
