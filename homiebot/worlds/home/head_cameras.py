"""The embedded home robot's head cameras, rendered at any resolution a policy asks for.

One renderer is cached per (height, width, field of view); the world's own renderer serves its native
size. Camera poses are given in the robot's base frame, as a real driver's camera info would be.
"""

from __future__ import annotations

import copy
import math
from typing import TYPE_CHECKING, Protocol

import numpy as np

from homiebot.core.robot import CameraFrame, CameraInfo
from homiebot.worlds.home.catalog import VIEWS
from homiebot.worlds.home.state import HomeState

if TYPE_CHECKING:
    from homiebot.core.camera_geometry import TrainingCamera
    from homiebot.worlds.home.render import HomeRenderer, RenderedView


class HomeWorld(Protocol):
    """What the robot needs of its world: the current state (replaced on reset) and the native renderer."""

    state: HomeState
    renderer: HomeRenderer


class HeadCameras:
    """Renders the head camera views of a home's current state."""

    def __init__(self, world: HomeWorld) -> None:
        self._world = world
        self._renderers: dict[tuple[int, int, float], HomeRenderer] = {}

    def native_size(self) -> tuple[int, int]:
        """(height, width) of the world's own renderer."""
        return (self._world.renderer.height, self._world.renderer.width)

    def renderer(self, size: tuple[int, int], fovy: float = 90.0) -> HomeRenderer:
        """A renderer (cached) with ``size`` = (height, width), depth and segmentation enabled."""
        from homiebot.worlds.home.render import HomeRenderer  # imports MuJoCo

        key = (int(size[0]), int(size[1]), float(fovy))
        if key not in self._renderers:
            self._renderers[key] = HomeRenderer(self._world.state.layout, width=key[1], height=key[0], fovy=fovy)
        return self._renderers[key]

    def camera_info(self, camera: str, size: tuple[int, int] | None = None) -> CameraInfo:
        """Intrinsics and base-frame pose of a head camera at ``size`` (default: the native size)."""
        size = size or self.native_size()
        native = self._world.renderer
        # the world's own renderer at its size (its field of view may be configured), else one of ours
        r = native if (native.height, native.width) == tuple(size) else self.renderer(size, native.fovy)
        return self.camera_info_of(camera, r)

    def camera_info_of(self, camera: str, r: HomeRenderer) -> CameraInfo:
        """Intrinsics and base-frame pose of a head camera as renderer ``r`` draws it."""
        size = (r.height, r.width)
        state = self._world.state
        r.sync(state)
        base = state.robot
        c, s = math.cos(base.yaw), math.sin(base.yaw)
        world_from_base = np.array([[c, -s, 0, base.x], [s, c, 0, base.y], [0, 0, 1, 0], [0, 0, 0, 1.0]])
        if camera not in VIEWS:
            raise ValueError(f"unknown camera '{camera}'; the embedded home's robot has {list(VIEWS)}")
        return CameraInfo(camera, int(size[0]), int(size[1]), r.camera_intrinsics(),
                          np.linalg.inv(world_from_base) @ r.camera_pose(camera), "rgb8", True)

    def read(self, camera: str, stamp: float, size: tuple[int, int] | None = None, depth: bool = False) -> CameraFrame:
        """A head camera's frame at ``size`` (default: the native size), stamped ``stamp``."""
        size = size or self.native_size()
        view = self.render(size, (camera,), fovy=self._world.renderer.fovy)[camera]
        return CameraFrame(view.rgb, self.camera_info(camera, size), stamp, view.depth if depth else None)

    def read_policy(self, camera: str, spec: TrainingCamera, stamp: float, depth: bool = False) -> CameraFrame:
        """The model's training camera rendered directly: its field of view and aspect at ``spec.frame_size``
        (the head camera's pose; nothing is cropped, so no resolution is lost)."""
        size = spec.frame_size
        fovy = round(spec.vfov_deg, 6)  # one cached renderer per spec
        view = self.render(size, (camera,), fovy=fovy, segmentation=False)[camera]  # a policy sees no labels
        return CameraFrame(view.rgb, self.camera_info_of(camera, self.renderer(size, fovy)), stamp,
                           view.depth if depth else None)

    def render(self, size: tuple[int, int], views: tuple[str, ...] = ("front",), robot_pose: tuple[float, float, float] | None = None,
               fovy: float = 90.0, segmentation: bool = True) -> dict[str, RenderedView]:
        """Render head camera views at ``size`` (height, width); ``robot_pose`` renders as if the
        base stood there (e.g. a goal view) without changing the state; ``segmentation=False`` skips
        the instance-id pass (half the cost)."""
        bad = [v for v in views if v not in VIEWS]
        if bad:
            raise ValueError(f"unknown views {bad}; expected some of {list(VIEWS)}")
        r = self.renderer(size, fovy)
        state = self._world.state
        if robot_pose is not None:
            state = copy.copy(state)
            state.robot = type(self._world.state.robot)(*robot_pose)
        r.sync(state)
        if segmentation:
            return r.render(views)
        r.segmentation_enabled = False
        try:
            return r.render(views)
        finally:
            r.segmentation_enabled = True

    def close(self) -> None:
        """Close every cached renderer (not the world's own)."""
        for r in self._renderers.values():
            r.close()
        self._renderers.clear()
