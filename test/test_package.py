"""package.xml lists what the graph imports, under the rosdep keys a ROS user resolves."""

from __future__ import annotations

import ast
import json
import os
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# top-level import -> rosdep key
KEYS = {"rclpy": "rclpy", "action_msgs": "action_msgs", "rosgraph_msgs": "rosgraph_msgs", "rcl_interfaces": "rcl_interfaces", "builtin_interfaces": "builtin_interfaces", "std_msgs": "std_msgs", "sensor_msgs": "sensor_msgs",
        "geometry_msgs": "geometry_msgs", "nav_msgs": "nav_msgs", "std_srvs": "std_srvs", "trajectory_msgs": "trajectory_msgs",
        "control_msgs": "control_msgs", "homiebot_msgs": "homiebot_msgs", "lifecycle_msgs": "lifecycle_msgs", "nav2_msgs": "nav2_msgs", "tf2_msgs": "tf2_msgs", "launch": "launch", "launch_ros": "launch_ros",
        "numpy": "python3-numpy", "yaml": "python3-yaml", "pydantic": "python3-pydantic", "PIL": "python3-pil", "imageio": "python3-imageio",
        "mujoco": "python3-mujoco-pip", "rosbags": "python3-rosbags-pip", "matplotlib": "python3-matplotlib",
        "scipy": "python3-scipy"}
# what the nodes, the launch files and the code they run (world, records, reports) import; model
# back-ends (torch, transformers, jax ...) are optional and imported only when configured
SOURCES = ["homiebot/ros", "homiebot/worlds/home", "homiebot/core/records.py", "homiebot/bench/report.py", "launch"]
OPTIONAL = {"rerun", "foxglove"}  # the viz extra: only the optional viewer and Foxglove nodes import them


def imported(paths: list[str]) -> set[str]:
    names = set()
    for base in paths:
        files = [ROOT / base] if base.endswith(".py") else sorted((ROOT / base).rglob("*.py"))
        for path in files:
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Import):
                    names |= {a.name.split(".")[0] for a in node.names}
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names.add(node.module.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n not in ("homiebot", "perception", "planners", "policies", "skills")} - OPTIONAL


def test_every_third_party_import_of_the_graph_is_an_exec_depend():
    depends = {e.text for e in ET.parse(ROOT / "package.xml").getroot().iter("exec_depend")}
    modules = imported(SOURCES)
    unknown = modules - set(KEYS)
    assert not unknown, f"add a rosdep key for {sorted(unknown)} to KEYS and package.xml"
    missing = {m: KEYS[m] for m in modules if KEYS[m] not in depends}
    assert not missing, f"package.xml lacks exec_depends {missing}"
    assert "rclpy" in modules and "mujoco" in modules and "rosbags" in modules  # the scan sees the nodes' imports


def source_tree(into: Path) -> Path:
    """The files of the checkout that git does not ignore, as a fresh clone (with this change) has them: an
    earlier build's ``build/`` folder would otherwise slip its stale modules into the wheel."""
    import shutil
    import subprocess

    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True, timeout=60)
    if listed.returncode != 0:  # not a git checkout (an unpacked source archive): build from it as it is
        return ROOT
    for rel in filter(None, listed.stdout.decode().split("\0")):
        src, dst = ROOT / rel, into / rel
        if src.is_symlink() or src.is_file():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst, follow_symlinks=False)
    return into


def test_a_wheel_installs_into_a_fresh_venv_imports_every_module_and_runs_an_episode(tmp_path: Path) -> None:
    """The wheel built from the tree (no editable install): every module imports from it, its plugins are
    registered, the shipped configuration is found under the venv's share/, and `homiebot run` runs the demo
    task. Its dependencies come from this environment through a path file (nothing is downloaded)."""
    import subprocess
    import sys
    import sysconfig

    wheels = tmp_path / "wheels"
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(wheels),
                            str(source_tree(tmp_path / "source"))],
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr[-2000:]
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = next(venv.glob("lib/python*/site-packages"))
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")  # a plain path: its .pth files (the editable install) are not read
    python = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "AMENT_PREFIX_PATH")}
    installed = subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "--no-index", "-q", *map(str, wheels.glob("*.whl"))],
                               capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert installed.returncode == 0, installed.stderr[-2000:]
    check = r'''
import importlib, json, pkgutil, sys
import homiebot
from homiebot.core import registry
from homiebot.core import resources
failed = {}
for info in pkgutil.walk_packages(homiebot.__path__, "homiebot."):
    try:
        importlib.import_module(info.name)
    except Exception as err:  # noqa: BLE001
        failed[info.name] = repr(err)
from homiebot.planners import trained
shipped = {name: sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
           for name, folder in trained.SHIPPED_MODELS.items()}
print(json.dumps({"file": homiebot.__file__, "failed": failed, "shipped": shipped, "modules": len([m for m in sys.modules if m.startswith("homiebot.")]),
                  "planners": registry.available("planners"), "config": str(resources.config_dir())}))
'''
    probe = subprocess.run([str(python), "-c", check], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
    assert probe.returncode == 0, probe.stderr[-2000:]
    found = json.loads(probe.stdout.splitlines()[-1])
    assert found["file"].startswith(str(site)), found["file"]  # the wheel's copy, not the checkout
    assert found["failed"] == {} and found["modules"] > 150
    assert {"heuristic", "oracle", "replay", "trained"} <= set(found["planners"])
    # the shipped models are package data: the LoRA adapter's folder as well as the scorer's files
    assert "adapter/adapter_model.safetensors" in found["shipped"]["smollm2_sft"] and "heads.pt" in found["shipped"]["minilm_heads"]
    assert found["config"] == str(venv / "share" / "homiebot" / "config") and (venv / "share" / "homiebot" / "config" / "robots" / "spot.yaml").is_file()
    ran = subprocess.run([str(venv / "bin" / "homiebot"), "run", "--task", str(ROOT / "config" / "tasks" / "demo.yaml"), "--planner", "oracle",
                          "--no-images", "--quiet", "--out", str(tmp_path / "runs")], capture_output=True, text=True, cwd=tmp_path,
                         env={**env, "MUJOCO_GL": os.environ.get("MUJOCO_GL", "osmesa")}, timeout=600)
    assert ran.returncode == 0, ran.stdout + ran.stderr[-2000:]
    assert json.loads((tmp_path / "runs" / "demo_seed0" / "episode.json").read_text())["goal_satisfied"] is True
