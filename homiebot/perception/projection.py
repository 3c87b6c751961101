"""Pinhole camera geometry: back-projection of pixels with depth to world points, and projection.

Conventions follow the embedded home's renderer (and OpenCV): intrinsics ``(fx, fy, cx, cy)`` in
pixels, integer pixel coordinates are pixel centres, depth is z-depth along the optical axis in
metres (0 = no return), and a camera pose is the 4x4 world-from-camera matrix with x right, y down,
z forward.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np


class CameraError(ValueError):
    """Camera parameters are missing or malformed."""


@dataclass(frozen=True)
class CameraRig:
    """The robot's cameras for one observation: shared intrinsics and each view's world pose."""

    intrinsics: tuple[float, float, float, float]
    poses: Mapping[str, np.ndarray]

    def __post_init__(self) -> None:
        if len(self.intrinsics) != 4 or min(self.intrinsics[0], self.intrinsics[1]) <= 0:
            raise CameraError(f"intrinsics must be (fx, fy, cx, cy) with positive focal lengths, got {self.intrinsics}")
        for view, pose in self.poses.items():
            if np.shape(pose) != (4, 4):
                raise CameraError(f"camera pose of view '{view}' must be a 4x4 world-from-camera matrix, got shape {np.shape(pose)}")

    def pose(self, view: str) -> np.ndarray:
        """World-from-camera matrix of a view (CameraError if the rig has no such view)."""
        if view not in self.poses:
            raise CameraError(f"no camera pose for view '{view}'; the rig has {sorted(self.poses)}")
        return np.asarray(self.poses[view], dtype=np.float64)


def backproject(rows: np.ndarray, cols: np.ndarray, depth: np.ndarray, intrinsics: tuple[float, float, float, float],
                pose: np.ndarray) -> np.ndarray:
    """World points (N x 3) of pixels (rows, cols) with z-depths ``depth`` (all length N)."""
    fx, fy, cx, cy = intrinsics
    d = depth.astype(np.float64)
    cam = np.stack([(cols - cx) * d / fx, (rows - cy) * d / fy, d], axis=1)
    return cam @ pose[:3, :3].T + pose[:3, 3]


def project(points: np.ndarray, intrinsics: tuple[float, float, float, float], pose: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pixel (rows, cols) as floats and z-depth of world points (N x 3); depth <= 0 means behind."""
    fx, fy, cx, cy = intrinsics
    rot, t = pose[:3, :3], pose[:3, 3]
    cam = (np.atleast_2d(points) - t) @ rot  # camera-from-world = R^T (p - t)
    z = cam[:, 2]
    safe = np.where(np.abs(z) < 1e-9, 1e-9, z)
    return cam[:, 1] * fy / safe + cy, cam[:, 0] * fx / safe + cx, z


def pixel_grid(height: int, width: int, stride: int) -> tuple[np.ndarray, np.ndarray]:
    """Row and column indices of every ``stride``-th pixel, flattened (offset by half a stride)."""
    r = np.arange(stride // 2, height, stride)
    c = np.arange(stride // 2, width, stride)
    rr, cc = np.meshgrid(r, c, indexing="ij")
    return rr.ravel(), cc.ravel()
