"""The camera a low-level model was trained with, and how to give it the same view on another camera.

A model sees the world through the camera of its training data: NoMaD through 4:3 wide-angle frames
squashed to 96x96, PixNav through Habitat's 640x480 at a 79 degree horizontal field of view resized
to 224x224, Octo through Bridge's 4:3 frames squashed to 256x256, RT-1-X through 4:3 frames
letterboxed into 256x320. A ``TrainingCamera`` states that camera (resolution, field of view) and how the
model's own preprocessing brings its frames to the network input (``squash``, ``letterbox`` or
``center_crop``).

The observation a policy gets is the *training camera's* frame (at ``capture_size``, the same aspect
and field of view); the wrapper then resizes it exactly as upstream does. A simulator renders that
camera directly; a robot crops its real (pinhole) image to the training field of view around the
principal point and resizes it (``match_camera``). When the real camera is narrower than the
training camera the crop keeps the widest view of the right aspect and ``fov_shortfall`` says by how
much the model's view is narrowed (logged once per camera).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, replace

import numpy as np

RESIZE_METHODS = ("squash", "letterbox", "center_crop")
LOG = logging.getLogger("homiebot.camera")
FOV_TOLERANCE_DEG = 0.5  # a narrower camera within this is treated as matching


@dataclass(frozen=True)
class CameraInfo:
    """A camera's geometry. ``intrinsics`` are pinhole ``(fx, fy, cx, cy)`` in pixels at
    ``(height, width)``; ``base_from_camera`` is the 4x4 pose of the camera in the base frame with
    OpenCV axes (x right, y down, z forward); ``encoding`` is how images arrive (``rgb8``, ``mono8``);
    ``pose_stamp`` is when a camera moved by joints was there (seconds, the joint states' stamp)."""

    name: str
    height: int
    width: int
    intrinsics: tuple[float, float, float, float]
    base_from_camera: np.ndarray
    encoding: str = "rgb8"
    has_depth: bool = False
    pose_stamp: float | None = None  # when base_from_camera held (the joint states it came from); None: static

    @property
    def vertical_fov_deg(self) -> float:
        """Vertical field of view in degrees (pinhole model)."""
        return math.degrees(2 * math.atan2(self.height / 2, self.intrinsics[1]))


@dataclass(frozen=True)
class CameraFrame:
    """One image of a camera: ``image`` HxWx3 uint8 (rgb8) or HxW uint8 (mono8), optional ``depth``
    HxW float32 metres (0 = no return), the camera's ``info`` at this resolution and its ``stamp``."""

    image: np.ndarray
    info: CameraInfo
    stamp: float
    depth: np.ndarray | None = None

    @property
    def rgb(self) -> np.ndarray:
        """The image as HxWx3 uint8 (a mono image repeated over three channels)."""
        if self.image.ndim == 2:
            return np.repeat(self.image[:, :, None], 3, axis=2)
        return self.image


@dataclass(frozen=True)
class TrainingCamera:
    """A model's training camera.

    ``height`` x ``width`` is the training camera's resolution (its aspect is the frames' aspect);
    ``hfov_deg`` its horizontal field of view (pinhole); ``input_size`` the network input (height,
    width) and ``resize`` how upstream preprocessing maps a frame onto it; ``capture_size`` the
    (height, width) the observation is delivered at (same aspect, usually smaller than the native
    resolution to save rendering time; default the native one)."""

    height: int
    width: int
    hfov_deg: float
    input_size: tuple[int, int]
    resize: str = "squash"
    capture_size: tuple[int, int] | None = None
    note: str = ""

    def __post_init__(self) -> None:
        if self.resize not in RESIZE_METHODS:
            raise ValueError(f"resize must be one of {list(RESIZE_METHODS)}, got '{self.resize}'")
        if not (0.0 < self.hfov_deg < 180.0):
            raise ValueError(f"hfov_deg must be in (0, 180), got {self.hfov_deg}")
        if self.height <= 0 or self.width <= 0:
            raise ValueError("height and width must be positive")

    @property
    def aspect(self) -> float:
        """Width / height of the training frames."""
        return self.width / self.height

    @property
    def vfov_deg(self) -> float:
        """Vertical field of view (pinhole, square pixels)."""
        return vfov_from_hfov(self.hfov_deg, self.aspect)

    @property
    def frame_size(self) -> tuple[int, int]:
        """(height, width) the observation is delivered at."""
        return tuple(self.capture_size) if self.capture_size else (self.height, self.width)  # type: ignore[return-value]

    def focal_px(self, size: tuple[int, int] | None = None) -> float:
        """Focal length in pixels of the training camera at ``size`` (default ``frame_size``)."""
        _, w = size or self.frame_size
        return 0.5 * w / math.tan(math.radians(self.hfov_deg) / 2)

    def to_dict(self) -> dict:
        """Plain values (for the policy wire and records)."""
        return {"height": self.height, "width": self.width, "hfov_deg": self.hfov_deg, "input_size": list(self.input_size),
                "resize": self.resize, "capture_size": list(self.frame_size), "note": self.note}

    @classmethod
    def from_dict(cls, d: dict) -> TrainingCamera:
        """Inverse of ``to_dict`` (also accepts a skill config's mapping)."""
        cap = d.get("capture_size")
        return cls(int(d["height"]), int(d["width"]), float(d["hfov_deg"]), tuple(int(n) for n in d["input_size"]),  # type: ignore[arg-type]
                   str(d.get("resize", "squash")), tuple(int(n) for n in cap) if cap else None, str(d.get("note", "")))  # type: ignore[arg-type]


def vfov_from_hfov(hfov_deg: float, aspect: float) -> float:
    """Vertical field of view of a pinhole camera with horizontal ``hfov_deg`` and width/height ``aspect``."""
    return math.degrees(2 * math.atan(math.tan(math.radians(hfov_deg) / 2) / aspect))


def camera_fov_deg(info: CameraInfo) -> tuple[float, float]:
    """(horizontal, vertical) field of view of a pinhole camera, degrees (about its principal point, the
    narrower side of an off-centre principal point counting twice)."""
    fx, fy, cx, cy = info.intrinsics
    half_w = min(cx + 0.5, info.width - cx - 0.5)
    half_h = min(cy + 0.5, info.height - cy - 0.5)
    return math.degrees(2 * math.atan2(half_w, fx)), math.degrees(2 * math.atan2(half_h, fy))


def fov_shortfall(info: CameraInfo, spec: TrainingCamera) -> str | None:
    """Why ``info`` cannot give the view ``spec`` was trained on (its field of view is narrower), or None."""
    hfov, vfov = camera_fov_deg(info)
    short = []
    if hfov + FOV_TOLERANCE_DEG < spec.hfov_deg:
        short.append(f"horizontal {hfov:.0f} < {spec.hfov_deg:.0f} degrees")
    if vfov + FOV_TOLERANCE_DEG < spec.vfov_deg:
        short.append(f"vertical {vfov:.0f} < {spec.vfov_deg:.0f} degrees")
    if not short:
        return None
    return (f"camera '{info.name}' is narrower than the model's training camera ({', '.join(short)}): "
            f"the model sees a narrower view than it was trained on")


def crop_box(info: CameraInfo, spec: TrainingCamera) -> tuple[float, float, float, float]:
    """The region (x0, y0, x1, y1), pixel edges, of ``info``'s image that shows the training camera's view:
    centred on the principal point, the training field of view, the training aspect. When the camera
    is narrower the box is the largest one of the training aspect that fits around the principal point."""
    fx, fy, cx, cy = info.intrinsics
    half_w = fx * math.tan(math.radians(spec.hfov_deg) / 2)
    half_h = fy * math.tan(math.radians(spec.vfov_deg) / 2)
    avail_w = min(cx + 0.5, info.width - cx - 0.5)
    avail_h = min(cy + 0.5, info.height - cy - 0.5)
    scale = min(1.0, avail_w / half_w, avail_h / half_h)  # shrink both sides alike: keep the aspect
    half_w, half_h = half_w * scale, half_h * scale
    return (cx + 0.5 - half_w, cy + 0.5 - half_h, cx + 0.5 + half_w, cy + 0.5 + half_h)


def _resample(image: np.ndarray, box: tuple[float, float, float, float], size: tuple[int, int], nearest: bool) -> np.ndarray:
    """Crop ``box`` (sub-pixel edges) and resize to ``size`` = (height, width) with PIL (antialiased)."""
    from PIL import Image

    h, w = int(size[0]), int(size[1])
    arr = np.ascontiguousarray(image)
    if arr.dtype == np.float32 or nearest:
        # depth and labels: no blending across edges
        ys = np.clip(np.floor(box[1] + (np.arange(h) + 0.5) * (box[3] - box[1]) / h), 0, arr.shape[0] - 1).astype(int)
        xs = np.clip(np.floor(box[0] + (np.arange(w) + 0.5) * (box[2] - box[0]) / w), 0, arr.shape[1] - 1).astype(int)
        return arr[ys][:, xs]
    img = Image.fromarray(arr)
    x0, y0, x1, y1 = (float(v) for v in box)
    out = img.resize((w, h), Image.Resampling.BILINEAR, box=(x0, y0, x1, y1))
    return np.asarray(out)


def match_camera(frame: CameraFrame, spec: TrainingCamera) -> CameraFrame:
    """A robot camera's frame as the training camera would have taken it: cropped to the training field of
    view and aspect around the principal point, resized to ``spec.frame_size``. The returned frame's
    ``info`` describes the new image (a narrower camera's warning is in ``fov_shortfall``)."""
    info = frame.info
    img = frame.image
    if img.shape[0] != info.height or img.shape[1] != info.width:
        raise ValueError(f"camera '{info.name}': image is {img.shape[1]}x{img.shape[0]} but its info says {info.width}x{info.height}")
    box = crop_box(info, spec)
    size = spec.frame_size
    rgb = _resample(img, box, size, nearest=False)
    depth = None if frame.depth is None else _resample(frame.depth.astype(np.float32), box, size, nearest=True)
    sx, sy = size[1] / (box[2] - box[0]), size[0] / (box[3] - box[1])
    fx, fy, cx, cy = info.intrinsics
    new_info = replace(info, height=int(size[0]), width=int(size[1]),
                       intrinsics=(fx * sx, fy * sy, (cx + 0.5 - box[0]) * sx - 0.5, (cy + 0.5 - box[1]) * sy - 0.5))
    return CameraFrame(rgb, new_info, frame.stamp, depth)


_warned: set[tuple[str, float, float, float, float]] = set()


def warn_if_narrow(info: CameraInfo, spec: TrainingCamera, model: str = "the model") -> str | None:
    """Log (once per camera and spec) when ``info`` is narrower than the training camera; the message or None."""
    why = fov_shortfall(info, spec)
    hfov, vfov = camera_fov_deg(info)
    key = (info.name, round(hfov, 1), round(vfov, 1), spec.hfov_deg, spec.aspect)
    if why and key not in _warned:
        _warned.add(key)
        LOG.warning("%s: %s", model, why)
    return why


def model_input(image: np.ndarray, spec: TrainingCamera) -> np.ndarray:
    """A training-camera frame brought to the network input as ``spec.resize`` says (the reference geometry
    of the wrappers' own upstream resizers): ``squash`` stretches to ``input_size``; ``letterbox`` fits
    it inside keeping the aspect and pads with black; ``center_crop`` crops the centre to the input's
    aspect then resizes."""
    from PIL import Image

    th, tw = (int(n) for n in spec.input_size)
    arr = np.ascontiguousarray(image)
    h, w = arr.shape[:2]
    img = Image.fromarray(arr)
    if spec.resize == "squash":
        return np.asarray(img.resize((tw, th), Image.Resampling.BILINEAR))
    if spec.resize == "center_crop":
        scale = max(tw / w, th / h)
        cw, ch = tw / scale, th / scale
        box = ((w - cw) / 2, (h - ch) / 2, (w + cw) / 2, (h + ch) / 2)
        return np.asarray(img.resize((tw, th), Image.Resampling.BILINEAR, box=box))
    scale = min(tw / w, th / h)
    nw, nh = max(1, round(w * scale)), max(1, round(h * scale))
    out = np.zeros((th, tw) + arr.shape[2:], dtype=arr.dtype)
    y0, x0 = (th - nh) // 2, (tw - nw) // 2
    out[y0:y0 + nh, x0:x0 + nw] = np.asarray(img.resize((nw, nh), Image.Resampling.BILINEAR))
    return out


def projected_extent_px(size_m: float, distance_m: float, focal_px: float) -> float:
    """Pixels an object ``size_m`` wide covers at ``distance_m`` in front of a pinhole camera (fronto-parallel)."""
    return focal_px * size_m / distance_m


__all__ = ["TrainingCamera", "RESIZE_METHODS", "camera_fov_deg", "crop_box", "fov_shortfall", "match_camera", "model_input",
           "projected_extent_px", "vfov_from_hfov", "warn_if_narrow"]
