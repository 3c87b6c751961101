"""Turning camera images between mounted and upright (homiebot.robots.camera_rotation), and the profile's
``rotation_deg``: any finite angle, Spot's from the Spot SDK's image example."""

from __future__ import annotations

import math

import numpy as np
import pytest
from pydantic import ValidationError

from homiebot.robots import camera_rotation as cr
from homiebot.robots.profile import CameraSpec, load_profile


def scene(shape: tuple[int, int]) -> np.ndarray:
    """A smooth grey image with a few sharp-edged blocks (what a camera sees, more or less)."""
    ys, xs = np.mgrid[0:shape[0], 0:shape[1]]
    img = 100 + 60 * np.sin(xs / 9.0) * np.cos(ys / 7.0)
    img[shape[0] // 4: shape[0] // 2, shape[1] // 5: shape[1] // 2] = 230
    img[shape[0] // 2: 3 * shape[0] // 4, 3 * shape[1] // 5: 4 * shape[1] // 5] = 20
    return img.round().astype(np.uint8)


def test_spot_takes_the_sdk_examples_angles() -> None:
    spot = load_profile("spot")
    angles = {name: spec.rotation_deg for name, spec in spot.cameras.items()}
    assert angles == {"frontleft": -78.0, "frontright": -102.0, "left": 0.0, "right": 180.0, "back": 0.0, "hand": 0.0}


@pytest.mark.parametrize("angle", [360.0, -360.0, math.inf, math.nan])
def test_a_rotation_must_be_finite_and_within_a_turn(angle: float) -> None:
    with pytest.raises(ValidationError):
        CameraSpec(image="camera/x/image", rotation_deg=angle)
    assert CameraSpec(image="camera/x/image", rotation_deg=-78.5).rotation_deg == -78.5


@pytest.mark.parametrize("angle, k", [(90, 1), (-90, 3), (180, 2), (270, 3), (-270, 1), (0, 0)])
def test_quarter_turns_are_exact_rot90s_counter_clockwise(angle: float, k: int) -> None:
    img = scene((12, 16))
    up = cr.to_upright(img, angle)
    assert np.array_equal(up, np.rot90(img, k))
    assert cr.upright_shape((12, 16), angle) == up.shape
    assert np.array_equal(cr.to_mounted(up, angle, img.shape), img)
    assert cr.render_shape((12, 16), angle) == up.shape  # nothing to grow


def test_a_positive_angle_turns_counter_clockwise_as_scipy_does() -> None:
    img = np.zeros((9, 9), np.uint8)
    img[4, 8] = 255  # right of the centre
    out = cr.rotate(img, 30.0, img.shape, order=0)
    y, x = np.argwhere(out == 255)[0]
    assert (y, x) == (2, 7)  # up and left: 4 px at 30 degrees counter-clockwise
    ndimage = pytest.importorskip("scipy.ndimage")
    smooth = scene((40, 56)).astype(np.float32)
    ours = cr.rotate(smooth, -78.0, smooth.shape, order=1)
    theirs = ndimage.rotate(smooth, -78.0, reshape=False, order=1, mode="constant", cval=0.0)
    inner = cr.rotate(np.ones_like(smooth), -78.0, smooth.shape, order=1) == 1  # where we have data
    inner[1:-1, 1:-1] &= inner[:-2, 1:-1] & inner[2:, 1:-1] & inner[1:-1, :-2] & inner[1:-1, 2:]  # and its neighbours
    assert np.abs(ours - theirs)[inner].max() < 1e-3


@pytest.mark.parametrize("angle", [-78.0, -102.0, 12.5])
def test_the_round_trip_gives_the_upright_image_back_but_for_empty_corners(angle: float) -> None:
    raw = (48, 64)
    render = cr.render_shape(raw, angle)
    upright = cr.upright_shape(raw, angle)
    assert (render[0] - upright[0]) % 2 == 0 and (render[1] - upright[1]) % 2 == 0  # centres stay on the pixel grid
    big = scene(render)
    mounted = cr.to_mounted(big, angle, raw)
    assert mounted.shape == raw and np.count_nonzero(cr.to_mounted(np.full(render, 255, np.uint8), angle, raw) != 255) == 0
    back = cr.to_upright(mounted, angle)
    assert back.shape == upright
    top, left = (render[0] - upright[0]) // 2, (render[1] - upright[1]) // 2
    truth = big[top:top + upright[0], left:left + upright[1]].astype(float)
    valid = cr.to_upright(np.full(raw, 255, np.uint8), angle) == 255
    assert 0.6 < valid.mean() < 1.0 and (back[~valid] == 0).all()  # the corners no sensor pixel reaches are 0
    error = np.abs(back.astype(float) - truth)[valid].mean()
    wrong = np.abs(cr.rotate(mounted, angle + 10, upright).astype(float) - truth)[valid].mean()
    assert error < 8 and wrong > 3 * error  # two bilinear samplings blur edges a little; a wrong angle does much worse


def test_depth_and_ids_take_the_nearest_pixel_never_a_blend() -> None:
    depth = np.full((30, 40), 4.0, np.float32)
    depth[:, 20:] = 1.0  # an edge: nothing in between exists
    ids = np.where(depth > 2, 7, 3).astype(np.int32)
    for angle in (-78.0, -102.0, 33.0):
        d = cr.to_upright(depth, angle, order=0)
        assert set(np.unique(d).tolist()) <= {0.0, 1.0, 4.0} and (d == 0).any()  # 0: unknown corners
        i = cr.to_upright(ids, angle, order=0)
        assert set(np.unique(i).tolist()) <= {0, 3, 7} and i.dtype == np.int32
        assert np.array_equal(i == 7, d == 4.0) and np.array_equal(i == 3, d == 1.0)  # the same pixels chosen
        assert set(np.unique(cr.to_mounted(d, angle, depth.shape, order=0)).tolist()) <= {0.0, 1.0, 4.0}


def test_colour_channels_turn_together() -> None:
    grey = scene((24, 32))
    rgb = np.stack([grey, 255 - grey, grey // 2], axis=2)
    out = cr.to_upright(rgb, -78.0)
    for c in range(3):
        assert np.array_equal(out[..., c], cr.to_upright(np.ascontiguousarray(rgb[..., c]), -78.0))


@pytest.mark.parametrize("angle", [-78.0, -102.0, 90.0, 180.0])
def test_upright_intrinsics_keep_the_focal_length_and_turn_the_principal_point(angle: float) -> None:
    raw = (48, 64)
    f = 40.0
    fx, fy, cx, cy = cr.upright_intrinsics(f, f, (raw[1] - 1) / 2, (raw[0] - 1) / 2, raw, angle)
    h, w = cr.upright_shape(raw, angle)
    assert (fx, fy) == (f, f) and (cx, cy) == pytest.approx(((w - 1) / 2, (h - 1) / 2))  # about the centre
    # a principal point off the centre turns with the image: where a marked pixel lands
    px, py = 40.0, 20.0
    img = np.zeros(raw, np.uint8)
    img[int(py), int(px)] = 255
    _, _, cx2, cy2 = cr.upright_intrinsics(f, f, px, py, raw, angle)
    landed = np.argwhere(cr.to_upright(img, angle, order=0) == 255)
    assert len(landed) >= 1 and abs(landed[0][0] - cy2) <= 1 and abs(landed[0][1] - cx2) <= 1


def test_a_point_projected_by_the_upright_intrinsics_lands_where_the_turned_image_has_it() -> None:
    """A ray projects by the upright intrinsics, in the upright view's axes (the sensor's turned by
    Rz(rotation_deg) about the optical axis: base_from_camera = base_from_sensor @ Rz), onto the pixel
    where turning the image puts the sensor's pixel: projection stays consistent."""
    raw, f, angle = (48, 64), 40.0, -78.0
    cx, cy = (raw[1] - 1) / 2, (raw[0] - 1) / 2
    ray = np.array([0.3, -0.2, 1.0])  # in the sensor's camera frame (x right, y down, z forward)
    u, v = f * ray[0] / ray[2] + cx, f * ray[1] / ray[2] + cy
    ux, uy = cr.rotate_point(u, v, angle, raw, cr.upright_shape(raw, angle))
    fx, fy, cx2, cy2 = cr.upright_intrinsics(f, f, cx, cy, raw, angle)
    c, s = math.cos(math.radians(angle)), math.sin(math.radians(angle))
    sensor_from_upright = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])  # Rz(rotation_deg), as docs/robots.md says
    turned = sensor_from_upright.T @ ray  # the ray in the upright view's axes
    assert (fx * turned[0] / turned[2] + cx2, fy * turned[1] / turned[2] + cy2) == pytest.approx((ux, uy))


@pytest.mark.parametrize("angle", [-102.0, -78.0, 0.0, 90.0, 180.0, 33.0])
def test_the_upright_views_camera_is_the_sensor_turned_about_its_optical_axis(angle: float) -> None:
    """A point seen by the sensor at pixel offset (dx, dy) is where rotate_point puts it in the upright image, and
    that is where the upright view's camera (sensor_from_upright) projects it: the pose an upright image needs."""
    f, shape = 100.0, (48, 64)
    up = cr.upright_shape(shape, angle)
    point = np.array([0.3, -0.2, 2.0, 1.0])  # in the sensor's frame (OpenCV axes)
    sx, sy = f * point[0] / point[2] + (shape[1] - 1) / 2, f * point[1] / point[2] + (shape[0] - 1) / 2
    expected = cr.rotate_point(sx, sy, angle, shape, up)
    in_upright = np.linalg.inv(cr.sensor_from_upright(angle)) @ point
    got = (f * in_upright[0] / in_upright[2] + (up[1] - 1) / 2, f * in_upright[1] / in_upright[2] + (up[0] - 1) / 2)
    assert got == pytest.approx(expected, abs=1e-9)
