"""What a command off the wire must have before it moves the simulated robot."""

from __future__ import annotations

import math


def finite(*values: float) -> bool:
    """Whether every value is a finite number."""
    return all(math.isfinite(v) for v in values)
