"""Open-vocabulary detection with OWLv2 (transformers), loaded from a local model folder only.

The queries are the homiebot class names ("a photo of a can", "a photo of a fridge"), so every
box comes out with a homiebot label. Preprocessing follows the upstream OWLv2 image processor's
contract without needing torchvision or scipy: scale to [0, 1], pad bottom/right with zeros to a
square, resize to the model's input size, normalise with the CLIP mean and standard deviation.
Predicted boxes are relative to the padded square, hence scaled by ``max(height, width)``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from homiebot.perception.detection import Detection, Detector, DetectorError, check_rgb
from homiebot.perception.vocabulary import ALL_LABELS, is_known_label

if TYPE_CHECKING:
    from transformers import Owlv2Config, Owlv2TextConfig, Owlv2VisionConfig

CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
CLIP_STD = (0.26862954, 0.26130258, 0.27577711)


def owl_preprocess(rgb: np.ndarray, size: int) -> np.ndarray:
    """HxWx3 uint8 -> 1x3xSxS float32 normalised input, padded to a square at the bottom/right."""
    from PIL import Image

    h, w = rgb.shape[:2]
    side = max(h, w)
    square = np.zeros((side, side, 3), dtype=np.float32)
    square[:h, :w] = rgb.astype(np.float32) / 255.0
    if side != size:  # PIL resizes float images one channel at a time (mode "F")
        bilinear = Image.BILINEAR  # type: ignore[attr-defined]  # Pillow's types name only Image.Resampling (9.1+); pillow>=9 allows 9.0
        square = np.stack([np.asarray(Image.fromarray(square[..., k]).resize((size, size), bilinear))
                           for k in range(3)], axis=-1)
    out = (square - np.array(CLIP_MEAN, np.float32)) / np.array(CLIP_STD, np.float32)
    return out.transpose(2, 0, 1)[None].astype(np.float32)


def boxes_to_pixels(boxes_cxcywh: np.ndarray, height: int, width: int) -> np.ndarray:
    """Relative (cx, cy, w, h) boxes on the padded square -> inclusive pixel boxes (r0, c0, r1, c1)."""
    side = max(height, width)
    cx, cy, bw, bh = (boxes_cxcywh[:, k] * side for k in range(4))
    c0 = np.clip(np.floor(cx - bw / 2), 0, width - 1)
    c1 = np.clip(np.ceil(cx + bw / 2) - 1, 0, width - 1)
    r0 = np.clip(np.floor(cy - bh / 2), 0, height - 1)
    r1 = np.clip(np.ceil(cy + bh / 2) - 1, 0, height - 1)
    return np.stack([r0, c0, np.maximum(r1, r0), np.maximum(c1, c0)], axis=1).astype(int)


def nms(boxes: np.ndarray, scores: np.ndarray, iou: float) -> list[int]:
    """Greedy non-maximum suppression on inclusive pixel boxes; indices kept, best first."""
    order = np.argsort(-scores, kind="stable")
    area = (boxes[:, 2] - boxes[:, 0] + 1) * (boxes[:, 3] - boxes[:, 1] + 1)
    keep: list[int] = []
    while order.size:
        i = int(order[0])
        keep.append(i)
        rest = order[1:]
        ih = np.minimum(boxes[i, 2], boxes[rest, 2]) - np.maximum(boxes[i, 0], boxes[rest, 0]) + 1
        iw = np.minimum(boxes[i, 3], boxes[rest, 3]) - np.maximum(boxes[i, 1], boxes[rest, 1]) + 1
        inter = np.clip(ih, 0, None) * np.clip(iw, 0, None)
        overlap = inter / (area[i] + area[rest] - inter)
        order = rest[overlap <= iou]
    return keep


class OwlDetector(Detector):
    """OWLv2 open-vocabulary boxes, labelled with homiebot class names; no masks.

    ``model_path`` is a local folder with ``config.json``, the weights and the tokenizer files (as
    written by ``save_pretrained``); nothing is ever downloaded.
    """

    name = "owlv2"

    def __init__(self, model_path: str | Path, labels: tuple[str, ...] | list[str] | None = None, threshold: float = 0.2,
                 nms_iou: float = 0.5, max_detections: int = 50, prompt: str = "a photo of a {}", device: str = "cpu") -> None:
        self.model_path = Path(model_path).expanduser()
        self.labels = tuple(labels or ALL_LABELS)
        unknown = [lab for lab in self.labels if not is_known_label(lab)]
        if unknown:
            raise DetectorError(f"owlv2: unknown labels {unknown}; use homiebot class names such as 'can' or 'fridge'")
        if not 0.0 <= threshold <= 1.0 or not 0.0 <= nms_iou <= 1.0:
            raise DetectorError(f"owlv2: threshold and nms_iou must be within [0, 1], got {threshold}, {nms_iou}")
        if "{}" not in prompt:
            raise DetectorError(f"owlv2: prompt must contain '{{}}' where the class name goes, got {prompt!r}")
        self.threshold, self.nms_iou, self.max_detections = float(threshold), float(nms_iou), int(max_detections)
        self.queries = [prompt.format(lab.replace("_", " ")) for lab in self.labels]
        self.device = device
        self._model: Any = None
        self._text: dict[str, Any] = {}

    def availability(self) -> str | None:
        for module in ("torch", "transformers"):
            if importlib.util.find_spec(module) is None:
                return f"{module} is not installed (pip install 'homiebot[ml]')"
        if not (self.model_path / "config.json").is_file():
            return (f"no OWLv2 model at '{self.model_path}' (a folder with config.json, weights and tokenizer files, "
                    "e.g. written by Owlv2ForObjectDetection.save_pretrained); set the detector's model_path")
        return None

    def _load(self) -> None:
        if self._model is not None:
            return
        self._require_available()
        import torch
        from transformers import AutoTokenizer, Owlv2ForObjectDetection

        path = str(self.model_path)
        try:
            model = Owlv2ForObjectDetection.from_pretrained(path, local_files_only=True)
            tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        except (OSError, ValueError) as err:
            raise DetectorError(f"owlv2: cannot load the model from '{path}': {err}") from err
        self._model = model.to(self.device).eval()  # type: ignore[arg-type]  # transformers types .to's wrapper as taking the model
        # transformers types every config (and sub-config) as PreTrainedConfig | dict | None
        config = cast("Owlv2Config", model.config)
        max_len = int(cast("Owlv2TextConfig", config.text_config).max_position_embeddings)
        enc = tokenizer(self.queries, padding="max_length", truncation=True, max_length=max_len, return_tensors="pt")
        self._text = {k: v.to(self.device) for k, v in enc.items() if k in ("input_ids", "attention_mask")}
        self._size = int(cast(int, cast("Owlv2VisionConfig", config.vision_config).image_size))  # an int for OWLv2
        self._torch = torch

    def detect(self, rgb: np.ndarray, depth: np.ndarray | None = None) -> list[Detection]:
        check_rgb(rgb)
        self._load()
        torch = self._torch
        pixels = torch.from_numpy(owl_preprocess(rgb, self._size)).to(self.device)
        with torch.no_grad():
            out = self._model(pixel_values=pixels, **self._text)
        logits = out.logits[0].float().cpu().numpy()  # patches x queries
        boxes = out.pred_boxes[0].float().cpu().numpy()  # patches x 4, relative cx cy w h
        return self.decode(logits, boxes, rgb.shape[0], rgb.shape[1])

    def decode(self, logits: np.ndarray, boxes: np.ndarray, height: int, width: int) -> list[Detection]:
        """Model outputs -> detections: best query per box, threshold, per-label NMS, top ``max_detections``."""
        scores = 1.0 / (1.0 + np.exp(-np.clip(logits.max(axis=1), -50.0, 50.0)))  # masked queries give huge logits
        query = logits.argmax(axis=1)
        keep = np.flatnonzero(scores >= self.threshold)
        pix = boxes_to_pixels(boxes[keep], height, width)
        found: list[Detection] = []
        for q in np.unique(query[keep]):
            sel = np.flatnonzero(query[keep] == q)
            for i in nms(pix[sel], scores[keep][sel], self.nms_iou):
                j = sel[i]
                x0, y0, x1, y1 = (int(v) for v in pix[j])
                found.append(Detection(self.labels[int(q)], float(scores[keep][j]), (x0, y0, x1, y1)))
        found.sort(key=lambda d: -d.score)
        return found[: self.max_detections]

    def close(self) -> None:
        self._model = None
        self._text = {}
