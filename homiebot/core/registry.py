"""Plugin lookup through Python entry points.

Planners, skills, worlds, detectors and low-level policies are registered by any installed distribution under the
entry-point groups ``homiebot.planners``, ``homiebot.skills``, ``homiebot.worlds`` and
``homiebot.detectors``, ``homiebot.policies``, ``homiebot.policy_hosts`` (where a policy runs out of process) and
``homiebot.users`` (who answers questions); configuration selects them by name. Nothing is ever looked up with eval.

The installed distributions are scanned once per process (a scan reads every distribution's metadata
from disk, which costs more than an episode's rendering on a busy machine); ``refresh()`` scans again,
for a process that installs a plugin after its first lookup.
"""

from __future__ import annotations

import functools
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from homiebot.core.extras import missing_extra

GROUPS = ("planners", "skills", "worlds", "detectors", "policies", "policy_hosts", "users")


class PluginError(LookupError):
    """A plugin name that is not registered, or that failed to import."""


@functools.lru_cache(maxsize=1)
def _registered() -> dict[str, dict[str, EntryPoint]]:
    """Every homiebot group's entry points by name (the first registration of a name wins)."""
    found: dict[str, dict[str, EntryPoint]] = {group: {} for group in GROUPS}
    for group in GROUPS:
        for ep in entry_points(group=f"homiebot.{group}"):
            found[group].setdefault(ep.name, ep)
    return found


def refresh() -> None:
    """Forget the scan, so that the next lookup sees distributions installed since the last one."""
    _registered.cache_clear()


def entry_points_of(group: str) -> dict[str, EntryPoint]:
    """The entry points registered in a group, by name (not loaded)."""
    _check_group(group)
    return dict(_registered()[group])


def available(group: str) -> list[str]:
    """Names registered in a group, sorted."""
    return sorted(entry_points_of(group))


def load(group: str, name: str) -> Any:
    """The object (usually a class) registered as ``name`` in ``group``."""
    _check_group(group)
    ep = _registered()[group].get(name)
    if ep is None:
        known = available(group)
        hint = ", ".join(known) if known else "none (is homiebot installed? run `pip install -e .`)"
        raise PluginError(f"unknown {group[:-1]} '{name}'; available: {hint}")
    try:
        return ep.load()
    except ImportError as err:
        raise PluginError(f"{group[:-1]} '{name}' is registered but cannot be imported: {missing_extra(err) or err}") from err


def _check_group(group: str) -> None:
    if group not in GROUPS:
        raise PluginError(f"unknown plugin group '{group}'; groups: {', '.join(GROUPS)}")
