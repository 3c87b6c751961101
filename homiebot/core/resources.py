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
