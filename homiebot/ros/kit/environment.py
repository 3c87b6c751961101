"""The environment of graph processes: discovery on this machine, a usable ROS_DOMAIN_ID, the Fast DDS profile."""

from __future__ import annotations

import os
from collections.abc import Mapping

from homiebot.core.errors import ConfigError
from homiebot.ros.kit.dds_profile import use_profile


def ros_environment(domain_id: int | None = None, localhost: bool = True) -> dict[str, str]:
    """The environment for graph processes: discovery stays on this machine unless asked otherwise."""
    env = dict(os.environ)
    if localhost:
        env.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    if domain_id is not None:
        env["ROS_DOMAIN_ID"] = str(domain_id)
    check_domain(env)
    use_profile(env)  # Fast DDS tuned for camera frames and for replies to new clients; a profile the user set wins
    env.setdefault("MUJOCO_GL", "osmesa")
    return env


def check_ros() -> None:
    """Raise ImportError with an install hint when rclpy is missing, ConfigError for an unusable ROS_DOMAIN_ID."""
    try:
        import rclpy  # noqa: F401
    except ImportError:
        raise ImportError("rclpy is not installed: source a ROS 2 Jazzy installation, or `pip install -e .[ros]` "
                          "(ROS 2 from PyPI)") from None
    check_domain(os.environ)


MAX_DOMAIN_ID = 232  # Fast DDS derives its UDP ports from the domain: above this they pass 65535


def check_domain(env: Mapping[str, str]) -> None:
    """ConfigError for a ROS_DOMAIN_ID that Fast DDS cannot use: every node would die at start, over and over."""
    text = env.get("ROS_DOMAIN_ID", "").strip()
    if not text:
        return  # domain 0
    if not text.isdigit() or int(text) > MAX_DOMAIN_ID:
        raise ConfigError(f"ROS_DOMAIN_ID={text!r} cannot be used: Fast DDS takes a whole number from 0 to {MAX_DOMAIN_ID} "
                          "(ROS 2 recommends 0 to 101 on Linux)")
