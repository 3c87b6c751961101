"""The semantic map's tuning, one object shared by every part of the map.

The parts keep a reference, not a copy, so a setting changed on the map (``smap.max_range = 3.0``)
takes effect in all of them at the next update, as it would on a single object.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from homiebot.perception.map_instance import MapError


@dataclass
class MapSettings:
    """How the map fuses, forgets and looks (see ``SemanticMap``)."""

    min_sightings: int = 2  # sightings in different updates before an instance counts
    stale_after: int = 3  # misses in a row before an instance is stale
    max_points: int = 400  # mask pixels lifted per detection
    occupancy_stride: int = 4  # pixel stride of the depth fed to the occupancy grid
    max_range: float = 4.0  # metres
    min_depth: float = 0.2
    robot_radius: float = 0.35
    min_expected_pixels: float = 60.0  # smaller in the image: a miss is no evidence

    @classmethod
    def checked(cls, min_sightings: int, stale_after: int, max_points: int, occupancy_stride: int, max_range: float,
                min_depth: float, robot_radius: float, min_expected_pixels: float) -> MapSettings:
        """Settings from the map's arguments, converted to their types; MapError on out-of-range counts."""
        if min_sightings < 1 or stale_after < 1 or max_points < 8 or occupancy_stride < 1:
            raise MapError("min_sightings and stale_after must be >= 1, max_points >= 8, occupancy_stride >= 1")
        return cls(int(min_sightings), int(stale_after), int(max_points), int(occupancy_stride), float(max_range),
                   float(min_depth), float(robot_radius), float(min_expected_pixels))


class SharedSetting:
    """An attribute of the owner that reads and writes the same-named field of its ``settings``."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        return self if obj is None else getattr(obj.settings, self.name)

    def __set__(self, obj: Any, value: Any) -> None:
        setattr(obj.settings, self.name, value)
