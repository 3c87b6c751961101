"""Turning camera images between how a camera is mounted and upright.

A profile's ``rotation_deg`` is the angle an image as the driver publishes it (the sensor's frame,
``height`` x ``width``) is turned by to be upright: counter-clockwise as displayed is positive, the
sense of ``scipy.ndimage.rotate`` and of the Spot SDK's image example (frontleft -78, frontright -102,
right 180). Both directions turn about the image centres:

* ``to_upright`` (the bridge): the upright frame is the sensor's frame turned by the nearest quarter
  turn (``upright_shape``: height and width swapped when that is 90 or 270 degrees). A multiple of 90
  degrees is an exact ``np.rot90``; any other angle leaves corners no sensor pixel reaches, which are 0
  (for depth: unknown).
* ``to_mounted`` (the sim driver): an upright render turned into the sensor's frame. Rendered at
  ``render_shape`` (the upright frame grown to cover the whole turned sensor), the raw image has no
  empty corners, as a real sensor's has none.

Images are sampled bilinearly (``order=1``, rgb and mono) or by the nearest pixel (``order=0``: depth
and instance ids, which must never be blended across an edge). Only numpy: the bridge runs on a robot
without the simulator's extras. The sampling maps are cached per angle and shape, so a frame costs
one gather.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

_EPS = 1e-6


def quarter_turns(angle_deg: float) -> int:
    """The nearest number of quarter turns (0..3) to ``angle_deg``."""
    return int(round(angle_deg / 90.0)) % 4


def _off_quarter(angle_deg: float) -> float:
    """Degrees ``angle_deg`` is off its nearest quarter turn (0 for 0, 90, 180, 270)."""
    return angle_deg - 90.0 * round(angle_deg / 90.0)


def upright_shape(shape: tuple[int, int], angle_deg: float) -> tuple[int, int]:
    """The upright frame (height, width) of a sensor frame ``shape`` turned by ``angle_deg``: the same
    size, swapped when the nearest quarter turn is odd (Spot's front cameras: 480x640 -> 640x480)."""
    h, w = int(shape[0]), int(shape[1])
    return (w, h) if quarter_turns(angle_deg) % 2 else (h, w)


def render_shape(shape: tuple[int, int], angle_deg: float) -> tuple[int, int]:
    """The upright frame grown (keeping its centre pixel-aligned: the same parity) so that the sensor
    frame ``shape``, turned by ``angle_deg``, lies wholly inside it. The upright frame itself when the
    angle is a multiple of 90 degrees."""
    uh, uw = upright_shape(shape, angle_deg)
    residual = math.radians(_off_quarter(angle_deg))
    c, s = abs(math.cos(residual)), abs(math.sin(residual))
    need_h, need_w = uh * c + uw * s, uw * c + uh * s

    def grow(size: int, need: float) -> int:
        n = max(size, math.ceil(need - _EPS))
        return n + (n - size) % 2

    return grow(uh, need_h), grow(uw, need_w)


def rotate_point(x: float, y: float, angle_deg: float, shape_in: tuple[int, int], shape_out: tuple[int, int]) -> tuple[float, float]:
    """Where pixel (x right, y down) of a ``shape_in`` image lands in the ``shape_out`` image after
    turning by ``angle_deg`` (counter-clockwise as displayed) about the centres."""
    t = math.radians(angle_deg)
    dx, dy = x - (shape_in[1] - 1) / 2, y - (shape_in[0] - 1) / 2
    return (math.cos(t) * dx + math.sin(t) * dy + (shape_out[1] - 1) / 2,
            -math.sin(t) * dx + math.cos(t) * dy + (shape_out[0] - 1) / 2)


@lru_cache(maxsize=64)
def _sampling(angle_deg: float, shape_in: tuple[int, int], shape_out: tuple[int, int],
              order: int) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None, np.ndarray]:
    """Flat source indices (one per output pixel, or four for bilinear), bilinear weights (as floats,
    and in 1/256 summing to 256 for 8-bit images), and the mask of output pixels that have a source."""
    h, w = shape_in
    t = math.radians(angle_deg)
    c, s = math.cos(t), math.sin(t)
    ys, xs = np.mgrid[0:shape_out[0], 0:shape_out[1]].astype(np.float64)
    dx, dy = xs - (shape_out[1] - 1) / 2, ys - (shape_out[0] - 1) / 2
    sx = c * dx - s * dy + (w - 1) / 2  # the inverse turn: output pixel -> source pixel
    sy = s * dx + c * dy + (h - 1) / 2
    if order == 0:
        ix, iy = np.floor(sx + 0.5 + _EPS).astype(np.int64), np.floor(sy + 0.5 + _EPS).astype(np.int64)
        valid = (ix >= 0) & (ix < w) & (iy >= 0) & (iy < h)
        return (np.clip(iy, 0, h - 1) * w + np.clip(ix, 0, w - 1)).ravel(), None, None, valid
    valid = (sx >= -_EPS) & (sx <= w - 1 + _EPS) & (sy >= -_EPS) & (sy <= h - 1 + _EPS)
    x0 = np.clip(np.floor(sx), 0, max(w - 2, 0)).astype(np.int64)
    y0 = np.clip(np.floor(sy), 0, max(h - 2, 0)).astype(np.int64)
    fx, fy = np.clip(sx - x0, 0.0, 1.0), np.clip(sy - y0, 0.0, 1.0)
    x1, y1 = np.minimum(x0 + 1, w - 1), np.minimum(y0 + 1, h - 1)
    index = np.stack([y0 * w + x0, y0 * w + x1, y1 * w + x0, y1 * w + x1]).reshape(4, -1)
    weights = np.stack([(1 - fx) * (1 - fy), fx * (1 - fy), (1 - fx) * fy, fx * fy]).reshape(4, -1)
    fixed = np.rint(weights * 256).astype(np.uint16)
    fixed[3] = 256 - fixed[:3].sum(axis=0)  # exact sums: a flat image stays flat
    return index, weights.astype(np.float32), fixed, valid


def rotate(image: np.ndarray, angle_deg: float, shape_out: tuple[int, int], order: int = 1) -> np.ndarray:
    """``image`` (H, W) or (H, W, C) turned by ``angle_deg`` (counter-clockwise as displayed) about its
    centre into a ``shape_out`` frame with the same centre; pixels with no source are 0. ``order`` 0:
    the nearest pixel (depth, ids), 1: bilinear."""
    if order not in (0, 1):
        raise ValueError(f"order must be 0 (nearest) or 1 (bilinear), got {order}")
    shape_in = (int(image.shape[0]), int(image.shape[1]))
    shape_out = (int(shape_out[0]), int(shape_out[1]))
    if abs(_off_quarter(angle_deg)) < _EPS and upright_shape(shape_in, angle_deg) == shape_out:
        return np.ascontiguousarray(np.rot90(image, k=quarter_turns(angle_deg)))  # exact: no sampling
    index, weights, fixed, valid = _sampling(float(angle_deg), shape_in, shape_out, order)
    flat = image.reshape(shape_in[0] * shape_in[1], -1)
    if weights is None or fixed is None:
        out = flat[index]
    elif image.dtype == np.uint8:  # fixed point: three times faster than floats
        taps = flat[index].astype(np.uint16)  # (4, N, C); the weighted sum stays below 2**16
        out = ((fixed[0][:, None] * taps[0] + fixed[1][:, None] * taps[1] + fixed[2][:, None] * taps[2]
                + fixed[3][:, None] * taps[3] + 128) >> 8).astype(np.uint8)
    else:
        taps = flat[index].astype(np.float32)
        out = np.einsum("kn,knc->nc", weights, taps).astype(image.dtype)
    out[~valid.ravel()] = 0
    return out.reshape(shape_out + image.shape[2:])


def to_upright(raw: np.ndarray, angle_deg: float, order: int = 1) -> np.ndarray:
    """A sensor image turned upright into its ``upright_shape`` frame (the bridge's view)."""
    return rotate(raw, angle_deg, upright_shape(raw.shape[:2], angle_deg), order)


def to_mounted(upright: np.ndarray, angle_deg: float, shape: tuple[int, int], order: int = 1) -> np.ndarray:
    """An upright image (e.g. rendered at ``render_shape``) turned into the sensor's ``shape`` frame,
    as the mounted camera gives it."""
    return rotate(upright, -angle_deg, shape, order)


def upright_intrinsics(fx: float, fy: float, cx: float, cy: float, shape: tuple[int, int],
                       angle_deg: float) -> tuple[float, float, float, float]:
    """Pinhole intrinsics of the upright image, given the sensor image's (``shape``: its height, width).

    Turning the image about its centre is turning the camera about its optical axis: the principal
    point turns with the image, and the focal length is kept, which is exact for square pixels
    (fx = fy; a quarter turn swaps fx and fy). For other pixels and angles the turned image is no longer
    a pinhole image with axis-aligned focal lengths: their geometric mean stands for both."""
    if quarter_turns(angle_deg) % 2:
        fx, fy = fy, fx
    if abs(_off_quarter(angle_deg)) >= _EPS:
        fx = fy = math.sqrt(fx * fy)
    cx2, cy2 = rotate_point(cx, cy, angle_deg, shape, upright_shape(shape, angle_deg))
    return fx, fy, cx2, cy2


def sensor_from_upright(angle_deg: float) -> np.ndarray:
    """The 4x4 pose of the upright view's camera (OpenCV axes) in the sensor's frame: turning the image by
    ``angle_deg`` about its centre is turning the camera about its optical axis (z) by the same angle
    (a point at pixel offset (dx, dy) of the sensor lands at ``rotate_point``'s offset in the upright image)."""
    t = math.radians(angle_deg)
    pose = np.eye(4)
    pose[:2, :2] = [[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]]
    return pose


__all__ = ["quarter_turns", "render_shape", "rotate", "rotate_point", "sensor_from_upright", "to_mounted", "to_upright", "upright_intrinsics",
           "upright_shape"]
