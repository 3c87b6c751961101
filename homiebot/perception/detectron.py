"""Mask R-CNN instance segmentation via detectron2 (optional), mapped from COCO to homiebot labels.

detectron2 is not on PyPI; ``availability()`` says how to install it. Weights must be a local file
(``weights``); the model-zoo config name selects the architecture. Only COCO classes that exist in
the homiebot vocabulary are reported (``COCO_TO_HOMIEBOT``), and people (``person``: the observation's
person in mapped perception, see ``perception.people``); the rest are dropped.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np

from homiebot.core.contracts import PERSON_KIND
from homiebot.perception.detection import Detection, Detector, DetectorError, box_of, check_rgb

INSTALL_HINT = ("detectron2 is not installed; it is not on PyPI, build it from source with "
                "python -m pip install 'git+https://github.com/facebookresearch/detectron2.git' "
                "(needs torch, torchvision and a C++ compiler)")

# The 80 COCO "thing" classes in detectron2's contiguous id order (0..79).
COCO_CLASSES: tuple[str, ...] = (
    "person", "bicycle", "car", "motorcycle", "airplane", "bus", "train", "truck", "boat", "traffic light",
    "fire hydrant", "stop sign", "parking meter", "bench", "bird", "cat", "dog", "horse", "sheep", "cow",
    "elephant", "bear", "zebra", "giraffe", "backpack", "umbrella", "handbag", "tie", "suitcase", "frisbee",
    "skis", "snowboard", "sports ball", "kite", "baseball bat", "baseball glove", "skateboard", "surfboard",
    "tennis racket", "bottle", "wine glass", "cup", "fork", "knife", "spoon", "bowl", "banana", "apple",
    "sandwich", "orange", "broccoli", "carrot", "hot dog", "pizza", "donut", "cake", "chair", "couch",
    "potted plant", "bed", "dining table", "toilet", "tv", "laptop", "mouse", "remote", "keyboard", "cell phone",
    "microwave", "oven", "toaster", "sink", "refrigerator", "book", "clock", "vase", "scissors", "teddy bear",
    "hair drier", "toothbrush",
)

# COCO classes that name a homiebot class or receptacle type.
COCO_TO_HOMIEBOT: dict[str, str] = {
    "bottle": "bottle", "cup": "cup", "bowl": "bowl", "banana": "banana", "apple": "apple", "orange": "orange",
    "chair": "chair", "couch": "sofa", "bed": "bed", "dining table": "table", "sink": "sink",
    "refrigerator": "fridge", "book": "book", "remote": "remote", "teddy bear": "teddy_bear",
    "person": PERSON_KIND,  # not a map thing: mapped perception makes it the observation's person
}


def homiebot_label(coco_index: int) -> str | None:
    """The homiebot label of a contiguous COCO class index, or None when homiebot has no such class."""
    if not 0 <= coco_index < len(COCO_CLASSES):
        return None
    return COCO_TO_HOMIEBOT.get(COCO_CLASSES[coco_index])


class Detectron2Detector(Detector):
    """Mask R-CNN masks and boxes, relabelled to homiebot classes."""

    name = "detectron2"

    def __init__(self, weights: str | Path | None = None, config: str = "COCO-InstanceSegmentation/mask_rcnn_R_50_FPN_3x.yaml",
                 threshold: float = 0.5, device: str = "cpu") -> None:
        """``weights``: local .pkl/.pth checkpoint; ``config``: detectron2 model-zoo config name."""
        if not 0.0 <= threshold <= 1.0:
            raise DetectorError(f"detectron2: threshold must be within [0, 1], got {threshold}")
        self.weights = Path(weights).expanduser() if weights else None
        self.config, self.threshold, self.device = config, float(threshold), device
        self._predictor: Any = None

    def availability(self) -> str | None:
        if importlib.util.find_spec("detectron2") is None:
            return INSTALL_HINT
        if self.weights is None or not self.weights.is_file():
            return (f"no Mask R-CNN weights at '{self.weights}'; download the checkpoint of '{self.config}' from the "
                    "detectron2 model zoo once and set the detector's weights to that local file")
        return None

    def _load(self) -> None:
        if self._predictor is not None:
            return
        self._require_available()
        from detectron2 import model_zoo
        from detectron2.config import get_cfg
        from detectron2.engine import DefaultPredictor

        cfg = get_cfg()
        cfg.merge_from_file(model_zoo.get_config_file(self.config))
        cfg.MODEL.WEIGHTS = str(self.weights)
        cfg.MODEL.ROI_HEADS.SCORE_THRESH_TEST = self.threshold
        cfg.MODEL.DEVICE = self.device
        self._predictor = DefaultPredictor(cfg)

    def detect(self, rgb: np.ndarray, depth: np.ndarray | None = None) -> list[Detection]:
        check_rgb(rgb)
        self._load()
        out = self._predictor(np.ascontiguousarray(rgb[..., ::-1]))  # the default predictor expects BGR
        inst = out["instances"].to("cpu")
        masks = inst.pred_masks.numpy() if inst.has("pred_masks") else None
        return self.convert(inst.pred_classes.numpy(), inst.scores.numpy(), masks)

    @staticmethod
    def convert(classes: np.ndarray, scores: np.ndarray, masks: np.ndarray | None) -> list[Detection]:
        """COCO predictions -> homiebot detections (classes without a homiebot label are dropped)."""
        found = []
        for k, (cls, score) in enumerate(zip(classes.tolist(), scores.tolist())):
            label = homiebot_label(int(cls))
            if label is None or masks is None or not masks[k].any():
                continue
            found.append(Detection(label, float(score), box_of(masks[k]), masks[k].astype(bool)))
        return found

    def close(self) -> None:
        self._predictor = None
