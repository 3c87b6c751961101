"""Detections and detectors: what a detector reports for one camera image, and the backends.

A real detector only needs RGB (and optionally depth): ``Detector.detect(rgb, depth)``. The mapper
calls ``detect_frame(DetectorInput)``, which carries the extra per-view information only simulators
have (instance segmentation and the category of each id); backends that need it override
``detect_frame``. Labels are homiebot categories ("can", "fridge"), never instance names: telling
two cans apart is the mapper's job.

The backends and the registry (``DETECTORS``, ``make_detector``) live in ``perception.detectors``.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from pydantic import BaseModel

if TYPE_CHECKING:
    from homiebot.core.contracts import Observation


class DetectorError(ValueError):
    """A detector was configured or called wrongly; the message says how to fix it."""


Box = tuple[int, int, int, int]  # row0, col0, row1, col1, inclusive


@dataclass(frozen=True)
class Detection:
    """One thing found in one image: a homiebot label, a score in [0, 1], a mask and/or a box.

    ``attributes`` holds optional per-detection facts a detector may know, e.g. ``{"open": True}``
    for an articulated receptacle seen with its door open.
    """

    label: str
    score: float
    box: Box
    mask: np.ndarray | None = None  # HxW bool
    attributes: Mapping[str, Any] = field(default_factory=dict)

    def pixel_mask(self, shape: tuple[int, int]) -> np.ndarray:
        """The mask, or the filled box when the detector gives boxes only."""
        if self.mask is not None:
            return self.mask
        out = np.zeros(shape, dtype=bool)
        r0, c0, r1, c1 = self.box
        out[max(r0, 0):r1 + 1, max(c0, 0):c1 + 1] = True
        return out


@dataclass(frozen=True)
class DetectorInput:
    """One camera image for a detector, plus what only a simulator can provide.

    ``segmentation``/``categories`` (instance id -> category) feed ``SimTruthDetector``;
    ``open_state`` (instance id -> open?) lets it report door states. ``frame`` and ``view`` seed
    noise so that the same input always gives the same output.
    """

    rgb: np.ndarray
    depth: np.ndarray | None = None
    segmentation: np.ndarray | None = None
    categories: Mapping[int, str] | None = None
    open_state: Mapping[int, bool] | None = None
    view: str = "front"
    frame: int = 0


def box_of(mask: np.ndarray) -> Box:
    """Tight inclusive box of a non-empty boolean mask."""
    rows = np.flatnonzero(mask.any(axis=1))
    cols = np.flatnonzero(mask.any(axis=0))
    return (int(rows[0]), int(cols[0]), int(rows[-1]), int(cols[-1]))


class Detector(abc.ABC):
    """A detector backend. Subclasses implement ``detect``; ``availability`` says why it cannot run."""

    name = "detector"
    #: the parameters model of its ``params:`` (a pydantic model, extra="forbid"); None: derived from the constructor
    Params: ClassVar[type[BaseModel] | None] = None

    def availability(self) -> str | None:
        """None when the detector can run, else a sentence saying what is missing and how to get it."""
        return None

    @abc.abstractmethod
    def detect(self, rgb: np.ndarray, depth: np.ndarray | None = None) -> list[Detection]:
        """Detections in one RGB image (HxWx3 uint8), optionally with z-depth in metres."""

    def detect_frame(self, frame: DetectorInput) -> list[Detection]:
        """Detections for a mapper input; the default ignores the simulator-only fields."""
        return self.detect(frame.rgb, frame.depth)

    def close(self) -> None:
        """Release models or devices; the default has nothing to free."""

    def _require_available(self) -> None:
        reason = self.availability()
        if reason:
            raise DetectorError(f"detector '{self.name}' cannot run: {reason}")


def check_rgb(rgb: np.ndarray) -> None:
    """Raise DetectorError unless ``rgb`` is a HxWx3 uint8 array."""
    if not isinstance(rgb, np.ndarray) or rgb.ndim != 3 or rgb.shape[2] != 3 or rgb.dtype != np.uint8:
        got = f"{type(rgb).__name__} {getattr(rgb, 'shape', '')} {getattr(rgb, 'dtype', '')}"
        raise DetectorError(f"expected an RGB image as a HxWx3 uint8 array, got {got}")


def detector_inputs(obs: Observation, round_index: int | None = None,
                    open_state: Mapping[int, bool] | None = None) -> dict[str, DetectorInput]:
    """One DetectorInput per view of an observation; ``categories`` come from ``obs.labels``."""
    categories = {i: lab.category for i, lab in obs.labels.items()}
    frame = obs.round if round_index is None else round_index
    return {view: DetectorInput(img.rgb, img.depth, img.segmentation, categories if img.segmentation is not None else None,
                                open_state, view, frame)
            for view, img in obs.views.items()}


def detect_views(detector: Detector, obs: Observation, round_index: int | None = None,
                 open_state: Mapping[int, bool] | None = None) -> dict[str, list[Detection]]:
    """Run a detector on every view of an observation."""
    return {view: detector.detect_frame(inp) for view, inp in detector_inputs(obs, round_index, open_state).items()}
