"""Interface packages ``make`` builds from ``interfaces/`` (control_msgs, bosdyn_api_msgs): imported on use."""

from __future__ import annotations

import importlib
from typing import Any

from homiebot.core.robot import RobotUnavailable


def built_module(module: str, robot: str, what: str) -> Any:
    """``module`` (e.g. ``control_msgs.action``), or RobotUnavailable saying that ``what`` the profile uses
    is not built here and how to build it."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise RobotUnavailable(f"{robot}: the profile {what}, which is not built here ({err}): "
                               f"run `make setup` or tools/build_interfaces.py") from None
