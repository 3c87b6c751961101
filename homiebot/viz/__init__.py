"""Watching the robot: a live rerun view of episodes, replay of records, Foxglove serving and videos.

Everything here is optional (the ``viz`` extra); without it the runtime is unchanged and the flags
that need it say so in one line.
"""

from __future__ import annotations

VIZ_EXTRA_HINT = "pip install 'homiebot[viz]'"


class VizUnavailable(ImportError):
    """The viewer's packages are not installed (one line naming the extra)."""


def require_rerun() -> None:
    """Raise VizUnavailable unless rerun-sdk imports."""
    try:
        import rerun  # noqa: F401
    except ImportError:
        raise VizUnavailable(f"the live view and .rrd recordings need the viz extra: {VIZ_EXTRA_HINT}") from None
