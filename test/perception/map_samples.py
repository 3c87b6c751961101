"""Small synthetic instances and sightings for testing the semantic map's parts alone."""

from __future__ import annotations

import numpy as np

from homiebot.perception.instance_store import InstanceStore
from homiebot.perception.map_instance import MapInstance, Sighting3D, no_voxels
from homiebot.perception.map_settings import MapSettings
from homiebot.perception.vocabulary import is_receptacle


def cube(centre: tuple[float, float, float], size: float, n: int = 5) -> np.ndarray:
    """An n x n x n grid of points filling a cube of edge ``size`` around ``centre``."""
    g = np.linspace(-0.5, 0.5, n) * size
    return np.array([[x, y, z] for x in g for y in g for z in g]) + np.asarray(centre, dtype=float)


def sighting(label: str, centre: tuple[float, float, float], size: float = 0.1, colour: str | None = "white",
             is_open: bool | None = None, score: float = 0.9, view: str = "front") -> Sighting3D:
    """A sighting whose points fill a cube."""
    return Sighting3D(label, score, view, cube(centre, size), colour, is_open)


def store(**settings: int | float) -> InstanceStore:
    """An empty store with default settings (overridden by ``settings``)."""
    return InstanceStore(MapSettings(**settings))  # type: ignore[arg-type]


def place(into: InstanceStore, label: str, lo: tuple[float, float, float], hi: tuple[float, float, float],
          times_seen: int = 2, **fields: object) -> MapInstance:
    """A confirmed (by default) instance with box ``lo``-``hi``, kept in ``into``."""
    lo_, hi_ = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    inst = MapInstance(into.new_id(label), label, "receptacle" if is_receptacle(label) else "object", 0.5 * (lo_ + hi_),
                       lo_, hi_, 0.04 if is_receptacle(label) else 0.015, no_voxels(), times_seen=times_seen, **fields)  # type: ignore[arg-type]
    into.add(inst)
    return inst
