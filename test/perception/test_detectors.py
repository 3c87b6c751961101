"""Detector backends: simulator truth, seeded noise, the registry, OWLv2 (tiny local model), detectron2."""

from __future__ import annotations

import json

import numpy as np
import pytest

from homiebot.perception.detection import Detection, DetectorError, DetectorInput
from homiebot.perception.detectors import DETECTORS, NoisyDetector, SimTruthDetector, make_detector
from homiebot.perception.detectron import COCO_CLASSES, COCO_TO_HOMIEBOT, Detectron2Detector, homiebot_label
from homiebot.perception.owl import OwlDetector, boxes_to_pixels, owl_preprocess
from homiebot.perception.vocabulary import ALL_LABELS, same_group


def _frame(frame: int = 0, view: str = "front") -> DetectorInput:
    seg = np.zeros((64, 64), dtype=np.int32)
    seg[10:20, 10:20] = 5  # a can
    seg[30:60, 0:40] = 7  # a table
    seg[0:3, 60:62] = 9  # too small
    seg[40:50, 50:60] = 11  # a room floor: not a homiebot class
    rgb = np.zeros((64, 64, 3), dtype=np.uint8)
    return DetectorInput(rgb, np.ones((64, 64), np.float32), seg, {5: "can", 7: "table", 9: "cup", 11: "room"}, {7: False}, view, frame)


def test_sim_truth_reports_categories_with_masks() -> None:
    dets = SimTruthDetector(min_pixels=12).detect_frame(_frame())
    assert sorted(d.label for d in dets) == ["can", "table"]
    can = next(d for d in dets if d.label == "can")
    assert can.box == (10, 10, 19, 19) and can.mask.sum() == 100 and can.score == 1.0
    assert next(d for d in dets if d.label == "table").attributes == {"open": False}
    with pytest.raises(DetectorError, match="segmentation"):
        SimTruthDetector().detect(np.zeros((4, 4, 3), np.uint8))


def test_noisy_detector_is_deterministic_per_frame_and_view() -> None:
    noisy = NoisyDetector(SimTruthDetector(), miss_rate=0.3, false_positive_rate=0.5, confusion_rate=0.5, erosion_px=1, seed=3)
    runs = [[(d.label, d.box) for d in noisy.detect_frame(_frame(k, v))] for k in range(20) for v in ("front", "left")]
    again = [[(d.label, d.box) for d in noisy.detect_frame(_frame(k, v))] for k in range(20) for v in ("front", "left")]
    assert runs == again
    assert len({tuple(r) for r in runs}) > 3  # frames and views differ
    flat = [lab for r in runs for lab, _ in r]
    assert all(lab in ALL_LABELS for lab in flat)
    dets = NoisyDetector(SimTruthDetector(), miss_rate=0.0, false_positive_rate=0.0, confusion_rate=0.0, erosion_px=1).detect_frame(_frame())
    can = next(d for d in dets if d.label == "can")
    assert can.mask.sum() == 64 and can.box == (11, 11, 18, 18)  # eroded by one pixel
    confused = NoisyDetector(SimTruthDetector(), miss_rate=0.0, false_positive_rate=0.0, confusion_rate=1.0, erosion_px=0)
    for d in confused.detect_frame(_frame()):
        assert d.label not in ("can", "table") and same_group(d.label, "can" if d.box[0] == 10 else "table")


def test_registry_and_errors() -> None:
    assert {"sim_truth", "noisy", "owlv2", "detectron2"} <= set(DETECTORS)
    assert isinstance(make_detector("noisy", miss_rate=0.1, base="sim_truth"), NoisyDetector)
    with pytest.raises(DetectorError, match="unknown detector 'yolo'; available: .*sim_truth"):
        make_detector("yolo")
    with pytest.raises(DetectorError, match="has no parameter.*'speed'"):
        make_detector("sim_truth", speed=2)
    with pytest.raises(DetectorError, match="miss_rate must be within"):
        make_detector("noisy", miss_rate=1.5)
    with pytest.raises(DetectorError, match="HxWx3 uint8"):
        OwlDetector("/nonexistent").detect(np.zeros((4, 4), np.uint8))


def test_detectron2_label_map_and_missing_package() -> None:
    assert len(COCO_CLASSES) == 80
    assert homiebot_label(COCO_CLASSES.index("refrigerator")) == "fridge"
    assert homiebot_label(COCO_CLASSES.index("couch")) == "sofa"
    assert homiebot_label(COCO_CLASSES.index("person")) == "person"  # the observation's person, not a map thing
    assert homiebot_label(COCO_CLASSES.index("car")) is None and homiebot_label(99) is None
    assert set(COCO_TO_HOMIEBOT.values()) - {"person"} <= set(ALL_LABELS)
    reason = Detectron2Detector().availability()
    assert reason is not None and "pip install 'git+https://github.com/facebookresearch/detectron2.git'" in reason
    with pytest.raises(DetectorError, match="cannot run: detectron2 is not installed"):
        Detectron2Detector().detect(np.zeros((8, 8, 3), np.uint8))
    masks = np.zeros((3, 8, 8), bool)
    masks[0, 1:3, 1:4] = masks[1, 4:6, 4:6] = masks[2, 0:2, 0:2] = True
    dets = Detectron2Detector.convert(np.array([COCO_CLASSES.index("bottle"), COCO_CLASSES.index("car"), COCO_CLASSES.index("bed")]),
                                      np.array([0.9, 0.8, 0.7]), masks)
    assert [(d.label, d.box) for d in dets] == [("bottle", (1, 1, 2, 3)), ("bed", (0, 0, 1, 1))]
    dets = Detectron2Detector.convert(np.array([0]), np.array([0.8]), masks[1:2])  # COCO 0: a person
    assert [(d.label, d.box) for d in dets] == [("person", (4, 4, 5, 5))]


def test_owl_preprocessing_contract() -> None:
    rgb = np.full((40, 80, 3), 255, np.uint8)
    x = owl_preprocess(rgb, 32)
    assert x.shape == (1, 3, 32, 32) and x.dtype == np.float32
    # top half is the image (white), bottom half the zero padding, both normalised with CLIP statistics
    assert x[0, 0, 2, 16] == pytest.approx((1.0 - 0.48145466) / 0.26862954, rel=1e-4)
    assert x[0, 0, 30, 16] == pytest.approx((0.0 - 0.48145466) / 0.26862954, rel=1e-4)
    # boxes are relative to the padded square: (0.5, 0.25, 0.5, 0.5) covers the left image half fully
    box = boxes_to_pixels(np.array([[0.25, 0.25, 0.5, 0.5]]), 40, 80)[0]
    assert tuple(box) == (0, 0, 39, 39)


@pytest.fixture(scope="module")
def tiny_owl(tmp_path_factory: pytest.TempPathFactory):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    path = tmp_path_factory.mktemp("owl")
    vocab = {"<|startoftext|>": 0, "<|endoftext|>": 1}
    for ch in "abcdefghijklmnopqrstuvwxyz":
        vocab.setdefault(ch, len(vocab))
        vocab.setdefault(ch + "</w>", len(vocab))
    (path / "vocab.json").write_text(json.dumps(vocab))
    (path / "merges.txt").write_text("#version: 0.2\n")
    tok = transformers.CLIPTokenizer(vocab_file=str(path / "vocab.json"), merges_file=str(path / "merges.txt"))
    small = {"hidden_size": 32, "intermediate_size": 37, "num_attention_heads": 4, "num_hidden_layers": 2}
    cfg = transformers.Owlv2Config(text_config={**small, "vocab_size": len(vocab), "max_position_embeddings": 16,
                                                "bos_token_id": 0, "eos_token_id": 1, "pad_token_id": 1},
                                   vision_config={**small, "image_size": 64, "patch_size": 16}, projection_dim=32)
    torch.manual_seed(0)
    transformers.Owlv2ForObjectDetection(cfg).save_pretrained(str(path))
    tok.save_pretrained(str(path))
    return path


def test_owl_detector_runs_a_local_model(tiny_owl) -> None:
    det = make_detector("owlv2", model_path=str(tiny_owl), labels=["can", "fridge", "table"], threshold=0.0, max_detections=5)
    assert det.availability() is None
    rgb = np.random.default_rng(0).integers(0, 255, (48, 64, 3), dtype=np.uint8)
    found = det.detect(rgb)
    assert 0 < len(found) <= 5
    for d in found:
        assert isinstance(d, Detection) and d.label in ("can", "fridge", "table") and 0.0 <= d.score <= 1.0
        r0, c0, r1, c1 = d.box
        assert 0 <= r0 <= r1 < 48 and 0 <= c0 <= c1 < 64
    assert [d.score for d in found] == sorted((d.score for d in found), reverse=True)
    det.close()
    missing = OwlDetector("/nonexistent/owl")
    assert "no OWLv2 model at '/nonexistent/owl'" in missing.availability()
    with pytest.raises(DetectorError, match="unknown labels"):
        OwlDetector(tiny_owl, labels=["spaceship"])
