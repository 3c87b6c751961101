"""Module paths that moved, and the import hook that keeps the old paths working for one release.

``import homiebot.contracts`` (and ``python -m homiebot.worlds.home.build_suite``) still work: the old name
becomes the module at its new place, with a ``DeprecationWarning`` naming the new path. The table is the
record of the move; remove it one release after.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from types import CodeType, ModuleType

MOVED = {
    "homiebot.contracts": "homiebot.core.contracts",
    "homiebot.parsing": "homiebot.core.parsing",
    "homiebot.errors": "homiebot.core.errors",
    "homiebot.robot": "homiebot.core.robot",
    "homiebot.camera_geometry": "homiebot.core.camera_geometry",
    "homiebot.attempt_checks": "homiebot.core.attempt_checks",
    "homiebot.tasks": "homiebot.core.tasks",
    "homiebot.scenes": "homiebot.core.scenes",
    "homiebot.vocabulary": "homiebot.core.vocabulary",
    "homiebot.yamlio": "homiebot.core.yamlio",
    "homiebot.registry": "homiebot.core.registry",
    "homiebot.resources": "homiebot.core.resources",
    "homiebot.records": "homiebot.core.records",
    "homiebot.prompting": "homiebot.core.prompting",
    "homiebot.console": "homiebot.core.console",
    "homiebot.chat_client": "homiebot.core.chat_client",
    "homiebot.worlds.base": "homiebot.core.world",
    "homiebot.perception.rooms": "homiebot.core.rooms",
    "homiebot.skills.policy": "homiebot.policies.base",
    "homiebot.skills._loading": "homiebot.policies._loading",
    "homiebot.skills.nomad": "homiebot.policies.nomad",
    "homiebot.skills.octo": "homiebot.policies.octo",
    "homiebot.skills.pixnav": "homiebot.policies.pixnav",
    "homiebot.skills.rt1x": "homiebot.policies.rt1x",
    "homiebot.skills.learned": "homiebot.policies.learned",
    "homiebot.skills.training_cameras": "homiebot.policies.training_cameras",
    "homiebot.skills.policy_wire": "homiebot.policies.wire",
    "homiebot.skills.scripted": "homiebot.policies.scripted",
    "homiebot.skills.sim_expert": "homiebot.policies.sim_expert",
    "homiebot.ros.map_messages": "homiebot.ros.messages.map",
    "homiebot.ros.policy_messages": "homiebot.ros.messages.policy",
    "homiebot.ros.round_messages": "homiebot.ros.messages.round",
    "homiebot.ros.safety_messages": "homiebot.ros.messages.safety",
    "homiebot.ros.truth_messages": "homiebot.ros.messages.truth",
    "homiebot.ros.wire": "homiebot.ros.messages.wire",
    "homiebot.ros.observations": "homiebot.ros.messages.observations",
    "homiebot.ros.common": "homiebot.ros.kit.common",
    "homiebot.ros.lifecycle": "homiebot.ros.kit.lifecycle",
    "homiebot.ros.services": "homiebot.ros.kit.services",
    "homiebot.ros.executors": "homiebot.ros.kit.executors",
    "homiebot.ros.dds_profile": "homiebot.ros.kit.dds_profile",
    "homiebot.ros.shm": "homiebot.ros.kit.shm",
    "homiebot.ros.sim_thread": "homiebot.ros.kit.sim_thread",
    "homiebot.ros.watch": "homiebot.ros.kit.watch",
    "homiebot.ros.safety": "homiebot.ros.kit.safety",
    "homiebot.ros.robot": "homiebot.ros.clients.robot",
    "homiebot.worlds.ros2_robot": "homiebot.ros.clients.ros2_robot",
    "homiebot.ros.sim_client": "homiebot.ros.clients.sim_client",
    "homiebot.ros.driver_check": "homiebot.ros.clients.driver_check",
    "homiebot.ros.remote": "homiebot.ros.clients.remote",
    "homiebot.ros.remote_map": "homiebot.ros.clients.remote_map",
    "homiebot.ros.world_link": "homiebot.ros.clients.world_link",
    "homiebot.ros.map_link": "homiebot.ros.clients.map_link",
    "homiebot.skills.remote_policy": "homiebot.ros.clients.remote_policy",
    "homiebot.people.ros_user": "homiebot.ros.clients.ros_user",
    "homiebot.ros.operator": "homiebot.ros.clients.operator",
    "homiebot.ros.submit": "homiebot.ros.clients.submit",
    "homiebot.ros.run_task": "homiebot.ros.clients.run_task",
    "homiebot.ros.viewer": "homiebot.ros.clients.viewer",
    "homiebot.ros.foxglove": "homiebot.ros.clients.foxglove",
    "homiebot.ros.recorder": "homiebot.ros.clients.recorder",
    "homiebot.ros.map_server": "homiebot.ros.nodes.map_server",
    "homiebot.ros.belief_mirror": "homiebot.ros.nodes.belief_mirror",
    "homiebot.ros.sim_copy": "homiebot.ros.nodes.sim_copy",
    "homiebot.worlds.home.sim_driver": "homiebot.ros.nodes.sim_driver",
    "homiebot.worlds.home.sim_services": "homiebot.ros.nodes.sim_services",
    "homiebot.ros.graph": "homiebot.ros.bringup.graph",
    "homiebot.ros.up": "homiebot.ros.bringup.up",
    "homiebot.ros.compose": "homiebot.ros.bringup.compose",
    "homiebot.worlds.home.build_suite": "homiebot.builders.suites.home",
    "homiebot.worlds.home.build_people_suites": "homiebot.builders.suites.people",
    "homiebot.worlds.home.build_sif_suite": "homiebot.builders.suites.sif",
    "homiebot.memory.build_suite": "homiebot.builders.suites.memory",
    "homiebot.memory.record": "homiebot.builders.memory.record",
    "homiebot.memory.scripts": "homiebot.builders.memory.scripts",
    "homiebot.memory.from_bag": "homiebot.builders.memory.from_bag",
    "homiebot.memory.bag_cli": "homiebot.builders.memory.bag_cli",
    "homiebot.viz.rebuild": "homiebot.builders.rebuild",
}


def new_name(old: str) -> str | None:
    """Where the module once called ``old`` lives now (a moved package's submodules included); None if it did not move."""
    if old in MOVED:
        return MOVED[old]
    for before, after in MOVED.items():
        if old.startswith(before + "."):
            return after + old[len(before):]
    return None


class _OldPaths(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolves an old module path to the module at its new place (imports and ``python -m``)."""

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        new = new_name(fullname) if fullname.startswith("homiebot.") else None
        if new is None:
            return None
        found = importlib.util.find_spec(new)
        # the new file as origin: ``python -m old.path`` shows it as argv[0]
        return importlib.util.spec_from_loader(fullname, self, origin=found.origin if found else None)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        new = _warn(module.__name__)
        # the import system hands out whatever sys.modules holds under the old name once this returns
        sys.modules[module.__name__] = importlib.import_module(new)

    def get_code(self, fullname: str) -> CodeType | None:
        """The new module's code, for ``python -m old.path``."""
        new = _warn(fullname)
        spec = importlib.util.find_spec(new)
        if spec is None or not isinstance(spec.loader, importlib.abc.InspectLoader):
            raise ImportError(f"{fullname} moved to {new}, which cannot be run with -m")
        return spec.loader.get_code(new)

    def is_package(self, fullname: str) -> bool:
        return False


def _warn(old: str) -> str:
    new = new_name(old)
    assert new is not None
    warnings.warn(f"{old} moved to {new}; import it from there (the old path goes in the next release)",
                  DeprecationWarning, stacklevel=3)
    return new


def install() -> None:
    """Put the hook in front of the path finders (once)."""
    if not any(isinstance(finder, _OldPaths) for finder in sys.meta_path):
        sys.meta_path.insert(0, _OldPaths())
