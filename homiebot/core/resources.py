"""Where the files shipped beside the code are: the ``config/`` folder (run configurations, robot
profiles, scenes, tasks).

In a checkout (and an editable install) it is the repository's own ``config/``; an installed wheel
or a ``colcon build`` without ``--symlink-install`` has its copy under ``<prefix>/share/homiebot/config``
(``setup.py``'s data files), found through this interpreter's prefix or ``AMENT_PREFIX_PATH``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

PACKAGE = "homiebot"


def config_dir() -> Path:
    """The shipped ``config/`` folder (the checkout's path, even if missing, when no installed copy exists)."""
    checkout = Path(__file__).resolve().parents[2] / "config"
    if checkout.is_dir():
        return checkout
    prefixes = [sys.prefix, *os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep)]
    for prefix in filter(None, prefixes):
        installed = Path(prefix) / "share" / PACKAGE / "config"
        if installed.is_dir():
            return installed
    return checkout


def robot_config(robot: str, sim_driver: bool = False, folder: str | Path | None = None) -> str:
    """The shipped run configuration of a robot: ``config/robot_<robot>.yaml`` (the graph deployed on
    it), or with ``sim_driver`` ``config/robots/<robot>_sim.yaml`` (the same graph plus the sim driver); ``folder``
    instead of the shipped config folder."""
    base = Path(folder) if folder is not None else config_dir()
    path = base / "robots" / f"{robot}_sim.yaml" if sim_driver else base / f"robot_{robot}.yaml"
    if not path.is_file():
        shipped = sorted(p.stem.removeprefix("robot_") for p in base.glob("robot_*.yaml"))
        raise ValueError(f"no run configuration for robot '{robot}'{' with the sim driver' if sim_driver else ''} ({path}); "
                         f"shipped robots: {', '.join(shipped) or 'none'}")
    return str(path)
