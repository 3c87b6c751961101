"""Helpers shared by the learned low-level policy wrappers (NoMaD, PixNav, Octo, RT-1-X).

* checking, without importing, whether a model's code stack is installed and its weights are on disk,
  and phrasing what is missing as one actionable message;
* image operations that reproduce the resizes the upstream pipelines use (OpenCV / TensorFlow bilinear
  with half-pixel centres, TensorFlow ``resize_with_pad`` and ``crop_and_resize``) in plain numpy, so
  preprocessing is testable without OpenCV, TensorFlow or torchvision.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np

IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)


# --------------------------------------------------------------------------------------------------
# availability
# --------------------------------------------------------------------------------------------------

def module_installed(name: str) -> bool:
    """True when ``import name`` would find a module (the module is not imported)."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a parent package is missing, or a broken namespace entry
        return False


def missing_modules(names: Iterable[str]) -> list[str]:
    """The import names among ``names`` that are not installed, in order."""
    return [n for n in names if not module_installed(n)]


def availability_message(model: str, missing: Mapping[str, str], paths: Mapping[str, tuple[str | Path | None, str]]) -> str | None:
    """One message naming everything ``model`` lacks, or None when nothing is missing.

    ``missing`` maps a missing import name to the command that installs it; ``paths`` maps a label
    (e.g. "checkpoint") to ``(configured path or None, where to obtain it)``; a path is missing when it
    is unset or does not exist.
    """
    problems: list[str] = []
    said: set[str] = set()
    for module, hint in missing.items():
        problems.append(f"Python module '{module}' is not installed ({'same install' if hint in said else f'install: {hint}'})")
        said.add(hint)
    for label, (path, hint) in paths.items():
        if not path:
            problems.append(f"no {label} path is configured ({hint})")
        elif not Path(path).expanduser().exists():
            problems.append(f"{label} not found at {path} ({hint})")
    if not problems:
        return None
    return f"{model} unavailable: " + "; ".join(problems) + "."


def expand(path: str | Path | None) -> Path | None:
    return None if path in (None, "") else Path(path).expanduser()


# --------------------------------------------------------------------------------------------------
# images
# --------------------------------------------------------------------------------------------------

def as_rgb_uint8(image: np.ndarray) -> np.ndarray:
    """HxWx3 uint8 from HxWx3/HxWx4 uint8 or float in [0, 1]; raises on other shapes."""
    image = np.asarray(image)
    if image.ndim != 3 or image.shape[2] not in (3, 4):
        raise ValueError(f"expected an HxWx3 image, got shape {image.shape}")
    image = image[..., :3]
    if image.dtype != np.uint8:
        image = np.clip(np.round(image.astype(np.float64) * 255.0), 0, 255).astype(np.uint8)
    return image


def _bilinear_axis(out_size: int, in_size: int, scale: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Source indices (low, high) and weights for a half-pixel-centred bilinear resize along one axis."""
    src = (np.arange(out_size, dtype=np.float64) + 0.5) * scale - 0.5
    src = np.clip(src, 0.0, in_size - 1)
    lo = np.floor(src).astype(np.int64)
    hi = np.minimum(lo + 1, in_size - 1)
    return lo, hi, src - lo


def resize_bilinear(image: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Bilinear resize to ``size`` = (height, width) with half-pixel centres and no antialiasing, the
    sampling of ``cv2.resize(..., INTER_LINEAR)`` and of TensorFlow 2 ``tf.image.resize(method="bilinear")``.
    Works on HxW or HxWxC arrays; returns float64 (callers round or cast as their pipeline does)."""
    img = np.asarray(image, dtype=np.float64)
    h, w = img.shape[:2]
    oh, ow = int(size[0]), int(size[1])
    y0, y1, wy = _bilinear_axis(oh, h, h / oh)
    x0, x1, wx = _bilinear_axis(ow, w, w / ow)
    if img.ndim == 3:
        wy = wy[:, None, None]
        wx = wx[None, :, None]
    else:
        wy = wy[:, None]
        wx = wx[None, :]
    top = img[y0][:, x0] * (1 - wx) + img[y0][:, x1] * wx
    bottom = img[y1][:, x0] * (1 - wx) + img[y1][:, x1] * wx
    return top * (1 - wy) + bottom * wy


def resize_uint8_cv2(image: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """``cv2.resize(image, (w, h))`` (INTER_LINEAR) on a uint8 image: bilinear, rounded to uint8."""
    return np.clip(np.round(resize_bilinear(image, size)), 0, 255).astype(np.uint8)


def resize_pil(image: np.ndarray, size: tuple[int, int], resample: str = "bicubic") -> np.ndarray:
    """PIL resize of an HxWx3 uint8 image to ``size`` = (height, width); ``resample`` is a PIL filter
    name ("nearest", "bilinear", "bicubic", "lanczos")."""
    from PIL import Image

    filters = {"nearest": Image.Resampling.NEAREST, "bilinear": Image.Resampling.BILINEAR,
               "bicubic": Image.Resampling.BICUBIC, "lanczos": Image.Resampling.LANCZOS}
    pil = Image.fromarray(as_rgb_uint8(image))
    return np.asarray(pil.resize((int(size[1]), int(size[0])), filters[resample]))


def resize_with_pad(image: np.ndarray, target_height: int, target_width: int) -> np.ndarray:
    """``tf.image.resize_with_pad`` followed by ``tf.cast(..., tf.uint8)``: scale to fit inside the
    target keeping the aspect ratio (bilinear, half-pixel centres), centre it, pad with zeros, then
    truncate to uint8 as a TensorFlow cast does."""
    img = np.asarray(image)
    h, w = img.shape[:2]
    ratio = max(w / target_width, h / target_height)
    rh = max(1, int(np.floor(h / ratio)))
    rw = max(1, int(np.floor(w / ratio)))
    resized = resize_bilinear(img, (rh, rw))
    top = (target_height - rh) // 2
    left = (target_width - rw) // 2
    out = np.zeros((target_height, target_width) + img.shape[2:], dtype=np.float64)
    out[top:top + rh, left:left + rw] = resized
    return np.clip(out, 0, 255).astype(np.uint8)  # astype truncates toward zero like tf.cast


def crop_and_resize(image: np.ndarray, box: tuple[float, float, float, float], size: tuple[int, int]) -> np.ndarray:
    """``tf.image.crop_and_resize`` for one image and one normalised box (y1, x1, y2, x2): bilinear
    samples at ``y1*(H-1) + i*(y2-y1)*(H-1)/(crop_h-1)`` (and likewise for x). Returns float64."""
    img = np.asarray(image, dtype=np.float64)
    h, w = img.shape[:2]
    y1, x1, y2, x2 = box
    ch, cw = int(size[0]), int(size[1])
    ys = y1 * (h - 1) + np.arange(ch) * ((y2 - y1) * (h - 1) / (ch - 1) if ch > 1 else 0.0)
    xs = x1 * (w - 1) + np.arange(cw) * ((x2 - x1) * (w - 1) / (cw - 1) if cw > 1 else 0.0)
    if ch == 1:
        ys = np.array([0.5 * (y1 + y2) * (h - 1)])
    if cw == 1:
        xs = np.array([0.5 * (x1 + x2) * (w - 1)])
    y0 = np.clip(np.floor(ys).astype(np.int64), 0, h - 1)
    yb = np.clip(np.ceil(ys).astype(np.int64), 0, h - 1)
    x0 = np.clip(np.floor(xs).astype(np.int64), 0, w - 1)
    xb = np.clip(np.ceil(xs).astype(np.int64), 0, w - 1)
    wy = (ys - np.floor(ys))[:, None, None] if img.ndim == 3 else (ys - np.floor(ys))[:, None]
    wx = (xs - np.floor(xs))[None, :, None] if img.ndim == 3 else (xs - np.floor(xs))[None, :]
    top = img[y0][:, x0] * (1 - wx) + img[y0][:, xb] * wx
    bottom = img[yb][:, x0] * (1 - wx) + img[yb][:, xb] * wx
    return top * (1 - wy) + bottom * wy


def imagenet_normalize(image: np.ndarray) -> np.ndarray:
    """HxWx3 uint8 -> 3xHxW float32, scaled to [0, 1] then normalised with the ImageNet mean and std
    (torchvision ``ToTensor`` + ``Normalize``)."""
    x = as_rgb_uint8(image).astype(np.float32) / 255.0
    x = (x - IMAGENET_MEAN) / IMAGENET_STD
    return np.ascontiguousarray(x.transpose(2, 0, 1))


def torch_device(device: str | None) -> str:
    """``device`` as given, or "cpu" when unset or when CUDA is asked for but absent."""
    if not device:
        return "cpu"
    if str(device).startswith("cuda"):
        try:
            import torch

            if not torch.cuda.is_available():
                return "cpu"
        except ImportError:
            return "cpu"
    return str(device)


def as_vector(value, length: int, name: str) -> np.ndarray:
    """A float vector of ``length`` from a scalar or a sequence (configuration convenience)."""
    arr = np.asarray(value, dtype=np.float64)
    if arr.ndim == 0:
        arr = np.full(length, float(arr))
    if arr.shape != (length,):
        raise ValueError(f"{name} must be a number or {length} numbers, got {value!r}")
    return arr


def as_rotation(value, name: str = "frame_rotation") -> np.ndarray:
    """A 3x3 matrix from None (identity) or a nested list."""
    if value is None:
        return np.eye(3)
    arr = np.asarray(value, dtype=np.float64)
    if arr.shape != (3, 3):
        raise ValueError(f"{name} must be a 3x3 matrix, got shape {arr.shape}")
    return arr
