"""Where a served policy answers: its ROS names, without importing ROS (the graph definition needs them too)."""

from __future__ import annotations

import re


def service_slug(name: str) -> str:
    """A model or policy name as a ROS name component ("RT-1-X" -> "rt_1_x")."""
    slug = re.sub(r"[^a-z0-9_]+", "_", name.lower()).strip("_")
    return slug if slug and not slug[0].isdigit() else f"m_{slug}"


def default_service(model: str) -> str:
    """Where the policy server for a model serves: ``/homiebot/policy/<model>/{describe,reset,act}``."""
    return f"policy/{service_slug(model)}"
