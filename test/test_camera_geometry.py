"""Training-camera geometry on a robot camera: crop box, intrinsics after the crop, narrow cameras, resizes."""

from __future__ import annotations

import logging
import math

import numpy as np
import pytest

from homiebot.core import camera_geometry
from homiebot.core.camera_geometry import (
    TrainingCamera,
    camera_fov_deg,
    crop_box,
    fov_shortfall,
    match_camera,
    model_input,
    vfov_from_hfov,
    warn_if_narrow,
)
from homiebot.core.robot import CameraFrame, CameraInfo

SPEC = TrainingCamera(480, 640, 90.0, (96, 96), "squash", (48, 64))


def pinhole(name: str, h: int, w: int, hfov: float, cx: float | None = None, cy: float | None = None) -> CameraInfo:
    f = 0.5 * w / math.tan(math.radians(hfov) / 2)
    return CameraInfo(name, h, w, (f, f, (w - 1) / 2 if cx is None else cx, (h - 1) / 2 if cy is None else cy), np.eye(4))


def checker(h: int, w: int) -> np.ndarray:
    """A ramp image: pixel value encodes its column, so crops are easy to locate."""
    cols = np.tile(np.linspace(0, 255, w)[None, :], (h, 1))
    return np.repeat(cols[:, :, None], 3, axis=2).astype(np.uint8)


def test_spec_fields_validation_and_round_trip():
    assert SPEC.aspect == pytest.approx(4 / 3)
    assert SPEC.vfov_deg == pytest.approx(math.degrees(2 * math.atan(0.75)))
    assert vfov_from_hfov(90.0, 1.0) == pytest.approx(90.0)
    assert SPEC.frame_size == (48, 64) and SPEC.focal_px() == pytest.approx(32.0)
    assert TrainingCamera.from_dict(SPEC.to_dict()) == SPEC
    with pytest.raises(ValueError, match="resize must be one of"):
        TrainingCamera(480, 640, 90.0, (96, 96), "stretch")
    with pytest.raises(ValueError, match="hfov_deg"):
        TrainingCamera(480, 640, 180.0, (96, 96))


def test_wider_camera_of_another_shape_is_cropped_to_the_training_view():
    # a 16:9 camera with a 120 degree hfov: the 90 degree 4:3 view is a centred box
    info = pinhole("wide", 360, 640, 120.0)
    x0, y0, x1, y1 = crop_box(info, SPEC)
    f = info.intrinsics[0]
    assert (x1 - x0) == pytest.approx(2 * f * math.tan(math.radians(45)))
    assert (x1 - x0) / (y1 - y0) == pytest.approx(4 / 3)
    assert (x0 + x1) / 2 == pytest.approx(320.0) and (y0 + y1) / 2 == pytest.approx(180.0)
    assert fov_shortfall(info, SPEC) is None
    frame = CameraFrame(checker(360, 640), info, 1.5, np.full((360, 640), 2.0, np.float32))
    out = match_camera(frame, SPEC)
    assert out.image.shape == (48, 64, 3) and out.depth is not None and out.depth.shape == (48, 64)
    assert out.stamp == 1.5 and out.info.height == 48 and out.info.width == 64
    hfov, vfov = camera_fov_deg(out.info)
    assert hfov == pytest.approx(90.0, abs=0.1) and vfov == pytest.approx(SPEC.vfov_deg, abs=0.1)
    # the crop holds the middle columns: the ramp's values there, not its ends
    assert abs(int(out.image[24, 0, 0]) - 255 * x0 / 640) < 6 and abs(int(out.image[24, -1, 0]) - 255 * x1 / 640) < 6


def test_off_centre_principal_point_centres_the_crop_on_it():
    info = pinhole("offset", 480, 640, 110.0, cx=300.0, cy=250.0)
    x0, y0, x1, y1 = crop_box(info, SPEC)
    assert (x0 + x1) / 2 == pytest.approx(300.5) and (y0 + y1) / 2 == pytest.approx(250.5)
    out = match_camera(CameraFrame(checker(480, 640), info, 0.0), SPEC)
    assert out.info.intrinsics[2] == pytest.approx(31.5) and out.info.intrinsics[3] == pytest.approx(23.5)


def test_narrow_camera_keeps_the_aspect_and_warns_once(caplog):
    info = pinhole("narrow", 480, 640, 60.0)
    why = fov_shortfall(info, SPEC)
    assert why is not None and "narrower than the model's training camera" in why and "horizontal 60 < 90" in why
    x0, y0, x1, y1 = crop_box(info, SPEC)
    assert (x0, x1) == pytest.approx((0.0, 640.0)) and (x1 - x0) / (y1 - y0) == pytest.approx(4 / 3)
    out = match_camera(CameraFrame(checker(480, 640), info, 0.0), SPEC)
    assert out.image.shape == (48, 64, 3)
    camera_geometry._warned.clear()
    with caplog.at_level(logging.WARNING, logger="homiebot.camera"):
        warn_if_narrow(info, SPEC, "NoMaD")
        warn_if_narrow(info, SPEC, "NoMaD")
    assert [r.getMessage() for r in caplog.records].count(f"NoMaD: {why}") == 1
    # a square camera that is wide enough horizontally but not vertically for 4:3 still fits
    assert fov_shortfall(pinhole("square", 256, 256, 90.0), SPEC) is None


def test_mismatched_image_and_info_is_a_clear_error():
    with pytest.raises(ValueError, match="image is 64x48 but its info says 640x480"):
        match_camera(CameraFrame(np.zeros((48, 64, 3), np.uint8), pinhole("c", 480, 640, 90.0), 0.0), SPEC)


def test_model_input_resize_methods():
    img = np.full((240, 320, 3), 200, np.uint8)
    squash = model_input(img, TrainingCamera(480, 640, 70.0, (256, 256), "squash"))
    assert squash.shape == (256, 256, 3) and squash.min() == 200
    box = model_input(img, TrainingCamera(480, 640, 70.0, (256, 320), "letterbox"))
    assert box.shape == (256, 320, 3)
    assert box[:8].max() == 0 and box[-8:].max() == 0 and box[8:248].min() == 200  # 240 rows of image, 8 padded each side
    ramp = checker(240, 320)
    crop = model_input(ramp, TrainingCamera(480, 640, 70.0, (224, 224), "center_crop"))
    assert crop.shape == (224, 224, 3)
    assert crop[0, 0, 0] > ramp[0, 30, 0] and crop[0, -1, 0] < ramp[0, 290, 0]  # the sides are cut away
