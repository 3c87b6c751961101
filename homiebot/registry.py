"""Plugin lookup through Python entry points.

Planners, skills, worlds, detectors and low-level policies are registered by any installed distribution under the
entry-point groups ``homiebot.planners``, ``homiebot.skills``, ``homiebot.worlds`` and
``homiebot.detectors``, ``homiebot.policies``; configuration selects them by name. Nothing is ever looked up with eval.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any

GROUPS = ("planners", "skills", "worlds", "detectors", "policies")


class PluginError(LookupError):
    """A plugin name that is not registered, or that failed to import."""


def available(group: str) -> list[str]:
    """Names registered in a group, sorted."""
    _check_group(group)
    return sorted({ep.name for ep in entry_points(group=f"homiebot.{group}")})


def load(group: str, name: str) -> Any:
    """The object (usually a class) registered as ``name`` in ``group``."""
    _check_group(group)
    matches = [ep for ep in entry_points(group=f"homiebot.{group}") if ep.name == name]
    if not matches:
        known = available(group)
        hint = ", ".join(known) if known else "none (is homiebot installed? run `pip install -e .`)"
        raise PluginError(f"unknown {group[:-1]} '{name}'; available: {hint}")
    try:
        return matches[0].load()
    except ImportError as err:
        raise PluginError(f"{group[:-1]} '{name}' is registered but cannot be imported: {err}") from err


def _check_group(group: str) -> None:
    if group not in GROUPS:
        raise PluginError(f"unknown plugin group '{group}'; groups: {', '.join(GROUPS)}")
