"""Detector backends and their registry.

``sim_truth`` (the simulator's segmentation), ``noisy`` (wraps another detector and degrades it,
seeded), ``owlv2`` (open-vocabulary detection with transformers, from a local model folder) and
``detectron2`` (Mask R-CNN on COCO classes, when detectron2 is installed). Third parties add more
under the ``homiebot.detectors`` entry-point group; ``make_detector(name, **params)`` builds one.
"""

from __future__ import annotations

import inspect
import zlib
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from homiebot.perception.detection import Detection, Detector, DetectorError, DetectorInput, box_of, detect_views, detector_inputs  # noqa: F401
from homiebot.perception.detectron import Detectron2Detector
from homiebot.perception.owl import OwlDetector
from homiebot.perception.vocabulary import ALL_LABELS, group_members


class SimTruthDetector(Detector):
    """Perfect detections from the simulator's instance segmentation, reported by category only."""

    name = "sim_truth"

    def __init__(self, min_pixels: int = 12, labels: tuple[str, ...] | None = None) -> None:
        """``min_pixels``: smaller blobs are dropped; ``labels``: categories to report (default: all)."""
        if min_pixels < 1:
            raise DetectorError(f"min_pixels must be >= 1, got {min_pixels}")
        self.min_pixels = int(min_pixels)
        self.labels = frozenset(labels or ALL_LABELS)
        unknown = sorted(self.labels - set(ALL_LABELS))
        if unknown:
            raise DetectorError(f"unknown labels {unknown}; known labels are {', '.join(ALL_LABELS)}")

    def detect(self, rgb: np.ndarray, depth: np.ndarray | None = None) -> list[Detection]:
        raise DetectorError("the sim_truth detector needs the simulator's segmentation: call "
                            "detect_frame(DetectorInput(rgb, depth, segmentation=..., categories=...))")

    def detect_frame(self, frame: DetectorInput) -> list[Detection]:
        if frame.segmentation is None or frame.categories is None:
            raise DetectorError("the sim_truth detector needs segmentation and categories in its input "
                                "(render the embedded home with segmentation=True)")
        seg = frame.segmentation
        ids, counts = np.unique(seg, return_counts=True)
        out: list[Detection] = []
        for inst, count in zip(ids.tolist(), counts.tolist()):
            category = frame.categories.get(inst)
            if category not in self.labels or count < self.min_pixels:
                continue
            mask = seg == inst
            attrs = {}
            if frame.open_state is not None and inst in frame.open_state:
                attrs["open"] = bool(frame.open_state[inst])
            out.append(Detection(category, 1.0, box_of(mask), mask, attrs))
        return out


def _erode(mask: np.ndarray, px: int) -> np.ndarray:
    """Binary erosion with a square element, vectorised (shifts of the padded mask)."""
    for _ in range(px):
        p = np.pad(mask, 1, constant_values=False)
        mask = p[1:-1, 1:-1] & p[:-2, 1:-1] & p[2:, 1:-1] & p[1:-1, :-2] & p[1:-1, 2:]
    return mask


class NoisyDetector(Detector):
    """Wraps a detector and degrades its output, the same way for the same (seed, frame, view).

    ``miss_rate``: chance to drop each detection; ``false_positive_rate``: expected false detections
    per image (a random box and elliptic mask with a random known label); ``confusion_rate``: chance
    to swap a label for another of its group; ``erosion_px``: mask erosion in pixels.
    """

    name = "noisy"

    def __init__(self, base: Detector | str = "sim_truth", miss_rate: float = 0.2, false_positive_rate: float = 0.05,
                 confusion_rate: float = 0.05, erosion_px: int = 1, seed: int = 0, base_params: Mapping[str, Any] | None = None) -> None:
        for key, value in (("miss_rate", miss_rate), ("false_positive_rate", false_positive_rate), ("confusion_rate", confusion_rate)):
            if not 0.0 <= value <= 1.0:
                raise DetectorError(f"{key} must be within [0, 1], got {value}")
        if erosion_px < 0:
            raise DetectorError(f"erosion_px must be >= 0, got {erosion_px}")
        self.base = make_detector(base, **dict(base_params or {})) if isinstance(base, str) else base
        self.miss_rate, self.false_positive_rate, self.confusion_rate = miss_rate, false_positive_rate, confusion_rate
        self.erosion_px, self.seed = int(erosion_px), int(seed)

    def availability(self) -> str | None:
        return self.base.availability()

    def _rng(self, frame: int, view: str) -> np.random.Generator:
        return np.random.default_rng([self.seed & 0xFFFFFFFF, frame & 0xFFFFFFFF, zlib.crc32(view.encode())])

    def detect(self, rgb: np.ndarray, depth: np.ndarray | None = None) -> list[Detection]:
        return self.detect_frame(DetectorInput(rgb, depth))

    def detect_frame(self, frame: DetectorInput) -> list[Detection]:
        clean = self.base.detect_frame(frame)
        rng = self._rng(frame.frame, frame.view)
        h, w = frame.rgb.shape[:2]
        out: list[Detection] = []
        for det in clean:
            # draw every random number for every detection so that one choice does not shift the others
            drop, swap, pick = rng.random(), rng.random(), rng.random()
            if drop < self.miss_rate:
                continue
            label = det.label
            if swap < self.confusion_rate and group_members(label):
                members = group_members(label)
                label = members[int(pick * len(members)) % len(members)]
            mask = det.mask
            if mask is not None and self.erosion_px:
                mask = _erode(mask, self.erosion_px)
                if not mask.any():
                    continue
            out.append(replace(det, label=label, mask=mask, box=box_of(mask) if mask is not None else det.box))
        for _ in range(int(rng.poisson(self.false_positive_rate)) if self.false_positive_rate else 0):
            out.append(self._false_positive(rng, h, w))
        return out

    @staticmethod
    def _false_positive(rng: np.random.Generator, h: int, w: int) -> Detection:
        label = ALL_LABELS[int(rng.integers(len(ALL_LABELS)))]
        bh, bw = int(rng.integers(max(4, h // 20), max(5, h // 4))), int(rng.integers(max(4, w // 20), max(5, w // 4)))
        r0, c0 = int(rng.integers(0, h - bh)), int(rng.integers(0, w - bw))
        rr, cc = np.ogrid[:bh, :bw]
        ellipse = ((rr - (bh - 1) / 2) / (bh / 2)) ** 2 + ((cc - (bw - 1) / 2) / (bw / 2)) ** 2 <= 1.0
        mask = np.zeros((h, w), dtype=bool)
        mask[r0:r0 + bh, c0:c0 + bw] = ellipse
        return Detection(label, float(rng.uniform(0.3, 0.9)), box_of(mask), mask)

    def close(self) -> None:
        self.base.close()


# ---- registry --------------------------------------------------------------------------------
DETECTORS: dict[str, type[Detector]] = {"sim_truth": SimTruthDetector, "noisy": NoisyDetector,
                                        "owlv2": OwlDetector, "detectron2": Detectron2Detector}


def _registry() -> dict[str, type[Detector]]:
    found = dict(DETECTORS)
    try:  # third-party detectors registered under the ``homiebot.detectors`` entry-point group
        from homiebot.core.registry import entry_points_of

        for ep in entry_points_of("detectors").values():
            if ep.name not in found:
                found[ep.name] = ep  # type: ignore[assignment]  # loaded on demand
    except Exception:  # noqa: BLE001 - broken metadata must not break the built-in detectors
        pass
    return found


def make_detector(name: str, **params: Any) -> Detector:
    """Build a detector by name with keyword parameters; raises DetectorError on bad names or params."""
    registry = _registry()
    cls = registry.get(name)
    if cls is None:
        raise DetectorError(f"unknown detector '{name}'; available: {', '.join(sorted(registry))}")
    if not isinstance(cls, type):
        cls = cls.load()  # an entry point
    sig = inspect.signature(cls.__init__)
    accepts_any = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
    allowed = [p for p in sig.parameters if p not in ("self", "args", "kwargs")]
    bad = sorted(set(params) - set(allowed))
    if bad and not accepts_any:
        raise DetectorError(f"detector '{name}' has no parameter(s) {bad}; its parameters are: {', '.join(allowed) or 'none'}")
    try:
        return cls(**params)
    except TypeError as err:
        raise DetectorError(f"detector '{name}': {err}") from err


__all__ = ["DETECTORS", "Detectron2Detector", "NoisyDetector", "OwlDetector", "SimTruthDetector", "detect_views",
           "detector_inputs", "make_detector"]
