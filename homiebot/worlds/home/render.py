"""Headless CPU rendering of the home from the robot's four head cameras (MuJoCo + OSMesa).

``HomeRenderer`` compiles the MJCF of a layout once, then for every frame: ``sync(state)`` writes
the robot pose, object poses and door/drawer states into ``qpos`` and runs kinematics only;
``render()`` draws RGB and, optionally, depth and instance segmentation for each view.

Conventions:

* ``depth`` is z-depth along the optical axis in metres (float32); 0 where nothing was hit.
* ``segmentation`` holds instance ids from ``instance_ids`` (0 = background / sky).
* There is no ceiling and no skybox: pixels where nothing is hit are painted ``SKY_RGB``.
* ``camera_intrinsics()`` is a pinhole ``(fx, fy, cx, cy)`` in pixels, OpenCV convention: integer
  pixel coordinates are pixel centres, row 0 is the top of the image.
* ``camera_pose(view)`` is the 4x4 world-from-camera transform in the OpenCV camera convention
  (x right, y down, z forward), so ``p_world = T @ [(u - cx) * d / fx, (v - cy) * d / fy, d, 1]``.

The renderer drives MuJoCo's low-level API (``MjvScene``/``MjrContext``) directly instead of
``mujoco.Renderer`` so that one draw call yields RGB and depth together, and a second one yields
segmentation, with no per-frame allocations beyond the output arrays.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import math
import os
import threading
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

os.environ.setdefault("MUJOCO_GL", "osmesa")

import mujoco  # noqa: E402
import numpy as np  # noqa: E402

from homiebot.worlds.home.catalog import DRAWER_TRAVEL, VIEWS  # noqa: E402
from homiebot.worlds.home.layout import Layout  # noqa: E402
from homiebot.worlds.home.mjcf import (  # noqa: E402
    HIDDEN_Z,
    ROBOT_ENTITY,
    WALL_ENTITY,
    build_mjcf,
    door_joint,
    drawer_joint,
    entity_of,
    object_joint,
    scene_extent,
)
from homiebot.worlds.home.person import figure_joints  # noqa: E402
from homiebot.worlds.home.person_figure import limb_joints, root_joints  # noqa: E402
from homiebot.worlds.home.robot import (  # noqa: E402
    ARM_JOINTS,
    FINGER_JOINTS,
    HEAD_TILT_JOINT,
    ROBOT_JOINTS,
    SELF_HIDDEN_GROUP,
    ArmPose,
    finger_offset,
)


def _gl_context_class() -> Any:
    """The GL context class for ``MUJOCO_GL``, chosen here so that it is right even when ``mujoco``
    was imported (and picked its own default backend) before this module set ``MUJOCO_GL``."""
    backend = os.environ.get("MUJOCO_GL", "").strip().lower()
    if backend == "osmesa":
        from mujoco.osmesa import GLContext
    elif backend == "egl":
        from mujoco.egl import GLContext
    else:
        GLContext = mujoco.GLContext
    return GLContext


_LIVE: weakref.WeakSet[HomeRenderer] = weakref.WeakSet()
# Spare GL contexts by (class, width, height): a closed renderer's context serves the next one of the
# same size (a new context costs about as much as a quarter of an episode's rendering). Only the main
# thread keeps spares: a GL context is current in one thread at a time.
_SPARE_GL: dict[tuple[Any, int, int], list[Any]] = {}
_MAX_SPARE_GL = 2
# Compiled homes by MJCF text: a process that runs many episodes in one home compiles it once.
# MjModel is only read after compilation (every renderer has its own MjData and GL context).
_compiled = functools.lru_cache(maxsize=4)(mujoco.MjModel.from_xml_string)


def _take_gl(width: int, height: int) -> Any:
    cls = _gl_context_class()
    spare = _SPARE_GL.get((cls, width, height)) if threading.current_thread() is threading.main_thread() else None
    return spare.pop() if spare else cls(width, height)


def _give_back_gl(gl: Any, width: int, height: int) -> None:
    spare = _SPARE_GL.setdefault((type(gl), width, height), [])
    if threading.current_thread() is threading.main_thread() and len(spare) < _MAX_SPARE_GL:
        spare.append(gl)
    else:
        gl.free()


@atexit.register
def _close_all() -> None:
    """Free renderers and spare contexts still open at exit, before interpreter teardown makes that fail noisily."""
    for renderer in list(_LIVE):
        renderer.close()
    for spare in _SPARE_GL.values():
        while spare:
            with contextlib.suppress(Exception):
                spare.pop().free()


SKY_RGB = (206, 222, 240)  # painted where a ray hits nothing (there is no ceiling)
_CV_FROM_MJ = np.diag([1.0, -1.0, -1.0])  # MuJoCo camera axes (x right, y up, -z forward) -> OpenCV


class _Pose(Protocol):
    @property
    def x(self) -> float: ...

    @property
    def y(self) -> float: ...

    @property
    def yaw(self) -> float: ...


class RenderableState(Protocol):
    """What ``sync`` reads; ``HomeState`` satisfies it. Optional extras read when present:
    ``joint_open`` (door/drawer opening fractions in [0, 1], preferred over ``is_open``),
    ``arm`` (an ``ArmPose``; default the carry pose), ``head_tilt`` (radians, + = up) and ``person`` (a
    ``PersonState``; without one the figure, if the home has one, is parked out of sight)."""

    @property
    def robot(self) -> _Pose: ...

    object_poses: dict[str, tuple[float, float, float, float]]
    is_open: dict[str, bool]


@dataclass(frozen=True)
class RenderedView:
    """One camera image: RGB (H, W, 3) uint8, depth (H, W) float32 metres, segmentation (H, W) int32."""

    rgb: np.ndarray
    depth: np.ndarray | None
    segmentation: np.ndarray | None


class HomeRenderer:
    """Renders a ``Layout`` as seen from the robot's head cameras; build once, then sync/render."""

    def __init__(self, layout: Layout, width: int = 256, height: int = 256, fovy: float = 90.0,
                 depth: bool = True, segmentation: bool = True, antialias: bool = False) -> None:
        """Compile the home; ``antialias`` turns on 4x multisampling of RGB (about 1.7x slower)."""
        self.layout = layout
        self.width, self.height, self.fovy = int(width), int(height), float(fovy)
        self.depth_enabled, self.segmentation_enabled = depth, segmentation
        xml = build_mjcf(layout, self.width, self.height, self.fovy, samples=4 if antialias else 0)
        self.model = _compiled(xml)
        self.data = mujoco.MjData(self.model)
        m = self.model
        self._robot_adr = np.array([m.joint(j).qposadr[0] for j in ROBOT_JOINTS])
        self._object_adr = {name: int(m.joint(object_joint(name)).qposadr[0]) for name in layout.objects}
        self._hinge_adr: dict[str, int] = {}
        self._slide_adr: dict[str, int] = {}
        for rec in layout.receptacles.values():
            if rec.type.articulation == "hinge":
                self._hinge_adr[rec.name] = int(m.joint(door_joint(rec.name)).qposadr[0])
            elif rec.type.articulation == "slide":
                self._slide_adr[rec.name] = int(m.joint(drawer_joint(rec.name)).qposadr[0])
        self._arm_adr = np.array([m.joint(j).qposadr[0] for j in ARM_JOINTS])
        self._finger_adr = np.array([m.joint(j).qposadr[0] for j in FINGER_JOINTS])
        self._head_adr = int(m.joint(HEAD_TILT_JOINT).qposadr[0])
        person = layout.person.name if layout.person is not None else None
        self._person_adr = np.array([m.joint(j).qposadr[0] for j in root_joints(person)]) if person else None
        self._limb_adr = np.array([m.joint(j).qposadr[0] for j in limb_joints(person)]) if person else None
        self._carry = ArmPose.carry()
        self._cam_ids = {v: int(m.camera(v).id) for v in VIEWS}
        self.instance_ids = self._make_instance_ids()
        self._geom_instance = self._make_geom_lut()
        ext = float(m.stat.extent)
        self._near, self._far = float(m.vis.map.znear) * ext, float(m.vis.map.zfar) * ext
        self._seg_lut: np.ndarray | None = None
        self._seg_lut_key: tuple[int, ...] = ()
        self._gl: Any = None
        self._gl_left_current_elsewhere = False  # made current in a thread other than the main one
        self._ctx: Any = None
        self._open_gl()
        _LIVE.add(self)
        self._synced = False

    # ---- setup ---------------------------------------------------------------------------
    def _make_instance_ids(self) -> dict[str, int]:
        """Stable ids: wall 1, robot 2, then rooms, receptacles and objects in layout order, then the person."""
        person = [self.layout.person.name] if self.layout.person is not None else []
        names = [WALL_ENTITY, ROBOT_ENTITY, *self.layout.rooms, *self.layout.receptacles, *self.layout.objects, *person]
        return {name: i + 1 for i, name in enumerate(names)}

    def _make_geom_lut(self) -> np.ndarray:
        m = self.model
        lut = np.zeros(m.ngeom, dtype=np.int32)
        for g in range(m.ngeom):
            entity = entity_of(m.body(int(m.geom_bodyid[g])).name, m.geom(g).name)
            lut[g] = self.instance_ids.get(entity, 0) if entity else 0
        return lut

    def _make_current(self) -> None:
        self._gl.make_current()
        if threading.current_thread() is not threading.main_thread():
            self._gl_left_current_elsewhere = True  # never handed to another renderer (see _give_back_gl)

    def _open_gl(self) -> None:
        self._gl = _take_gl(self.width, self.height)
        self._make_current()
        self._ctx = mujoco.MjrContext(self.model, mujoco.mjtFontScale.mjFONTSCALE_100.value)
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN.value, self._ctx)
        self._ctx.readDepthMap = mujoco.mjtDepthMap.mjDEPTH_ZEROFAR
        self._scene = mujoco.MjvScene(self.model, maxgeom=self.model.ngeom + 100)
        self._option = mujoco.MjvOption()
        self._option.geomgroup[SELF_HIDDEN_GROUP] = 0
        self._rect = mujoco.MjrRect(0, 0, self.width, self.height)
        self._cameras: dict[str, mujoco.MjvCamera] = {}
        for view, cid in self._cam_ids.items():
            cam = mujoco.MjvCamera()
            cam.type = mujoco.mjtCamera.mjCAMERA_FIXED
            cam.fixedcamid = cid
            self._cameras[view] = cam
        self._rgb_buf = np.empty((self.height, self.width, 3), dtype=np.uint8)
        self._seg_buf = np.empty((self.height, self.width, 3), dtype=np.uint8)
        self._depth_buf = np.empty((self.height, self.width), dtype=np.float32)

    # ---- state ---------------------------------------------------------------------------
    def sync(self, state: RenderableState) -> None:
        """Copy the dynamic state (robot, arm, head, objects, doors, drawers) into the model and run kinematics."""
        qpos = self.data.qpos
        qpos[self._robot_adr] = (state.robot.x, state.robot.y, state.robot.yaw)
        arm = getattr(state, "arm", None) or self._carry
        qpos[self._arm_adr] = (arm.lift, arm.shoulder, arm.elbow, arm.wrist)
        qpos[self._finger_adr] = finger_offset(arm.gripper)
        qpos[self._head_adr] = float(getattr(state, "head_tilt", 0.0) or 0.0)
        fractions = getattr(state, "joint_open", None) or {}
        for name, adr in self._object_adr.items():
            pose = state.object_poses.get(name)
            x, y, z, yaw = pose if pose is not None else (0.0, 0.0, HIDDEN_Z, 0.0)
            qpos[adr:adr + 7] = (x, y, z, math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2))
        for name, adr in self._hinge_adr.items():
            qpos[adr] = math.pi / 2 * fractions.get(name, 1.0 if state.is_open.get(name, False) else 0.0)
        for name, adr in self._slide_adr.items():
            qpos[adr] = DRAWER_TRAVEL * fractions.get(name, 1.0 if state.is_open.get(name, False) else 0.0)
        if self._person_adr is not None and self._limb_adr is not None:
            person = getattr(state, "person", None)  # absent from states that know of no person: park the figure
            qpos[self._person_adr] = (person.x, person.y, 0.0, person.yaw) if person is not None else (0.0, 0.0, HIDDEN_Z, 0.0)
            qpos[self._limb_adr] = figure_joints(person) if person is not None else (0.0, 0.0, 0.0, 0.0)
        mujoco.mj_kinematics(self.model, self.data)
        mujoco.mj_camlight(self.model, self.data)
        self._synced = True

    # ---- cameras -------------------------------------------------------------------------
    def camera_intrinsics(self) -> tuple[float, float, float, float]:
        """Pinhole ``(fx, fy, cx, cy)`` in pixels (square pixels; ``fovy`` is the vertical field of view)."""
        f = 0.5 * self.height / math.tan(math.radians(self.fovy) / 2)
        return (f, f, (self.width - 1) / 2, (self.height - 1) / 2)

    def camera_pose(self, view: str) -> np.ndarray:
        """4x4 world-from-camera matrix (OpenCV axes: x right, y down, z forward) after ``sync``."""
        cid = self._cam_ids[view]
        pose = np.eye(4)
        pose[:3, :3] = self.data.cam_xmat[cid].reshape(3, 3) @ _CV_FROM_MJ
        pose[:3, 3] = self.data.cam_xpos[cid]
        return pose

    # ---- rendering -----------------------------------------------------------------------
    def render(self, views: Iterable[str] = VIEWS) -> dict[str, RenderedView]:
        """Render the requested views of the last synced state."""
        if self._ctx is None:
            raise RuntimeError("HomeRenderer.render called after close()")
        if not self._synced:
            raise RuntimeError("HomeRenderer.render called before sync(state)")
        self._make_current()
        return {view: self._render_view(view) for view in views}

    def render_overview(self, lookat: tuple[float, float, float] | None = None, distance: float | None = None,
                        azimuth: float = 90.0, elevation: float = -60.0) -> np.ndarray:
        """RGB image from a free orbit camera (degrees), robot fully drawn; for debugging and videos."""
        if self._ctx is None or not self._synced:
            raise RuntimeError("HomeRenderer.render_overview needs a synced, open renderer")
        cx, cy, extent, _ = scene_extent(self.layout)
        cam = mujoco.MjvCamera()
        cam.type = mujoco.mjtCamera.mjCAMERA_FREE
        cam.lookat[:] = lookat if lookat is not None else (cx, cy, 0.0)
        cam.distance = distance if distance is not None else 2.2 * extent
        cam.azimuth, cam.elevation = azimuth, elevation
        option = mujoco.MjvOption()
        option.geomgroup[SELF_HIDDEN_GROUP] = 1
        self._make_current()
        mujoco.mjv_updateScene(self.model, self.data, option, None, cam, mujoco.mjtCatBit.mjCAT_ALL.value, self._scene)
        return self._draw_rgb()[0]

    def _render_view(self, view: str) -> RenderedView:
        scene, ctx, rect = self._scene, self._ctx, self._rect
        mujoco.mjv_updateScene(self.model, self.data, self._option, None, self._cameras[view],
                               mujoco.mjtCatBit.mjCAT_ALL.value, scene)
        rgb, zbuf = self._draw_rgb()
        seg = None
        if self.segmentation_enabled:
            flags = scene.flags
            flags[mujoco.mjtRndFlag.mjRND_SEGMENT] = 1
            flags[mujoco.mjtRndFlag.mjRND_IDCOLOR] = 1
            try:
                mujoco.mjr_render(rect, scene, ctx)
                mujoco.mjr_readPixels(self._seg_buf, None, rect, ctx)
            finally:
                flags[mujoco.mjtRndFlag.mjRND_SEGMENT] = 0
                flags[mujoco.mjtRndFlag.mjRND_IDCOLOR] = 0
            seg = self._segmentation()
        depth = self._linear_depth(zbuf) if self.depth_enabled else None
        return RenderedView(rgb, depth, seg)

    def _draw_rgb(self) -> tuple[np.ndarray, np.ndarray]:
        """Draw the current scene; return RGB (sky painted where nothing was hit) and the raw depth buffer."""
        mujoco.mjr_render(self._rect, self._scene, self._ctx)
        mujoco.mjr_readPixels(self._rgb_buf, self._depth_buf, self._rect, self._ctx)
        rgb = self._rgb_buf[::-1].copy()
        zbuf = self._depth_buf[::-1]
        rgb[zbuf <= 0.0] = SKY_RGB
        return rgb, zbuf

    def _segmentation(self) -> np.ndarray:
        """Instance ids from the ID-colour buffer: colour -> scene geom index -> model geom -> instance."""
        buf = self._seg_buf[::-1].astype(np.int32)
        segid = buf[..., 0] | (buf[..., 1] << 8) | (buf[..., 2] << 16)
        lut = self._scene_lut()
        return lut[np.minimum(segid, lut.shape[0] - 1)]

    def _scene_lut(self) -> np.ndarray:
        """Lookup from scene colour id (scene geom index + 1; 0 = background) to instance id."""
        scene = self._scene
        n = scene.ngeom
        key = (n, *(scene.geoms[i].objid for i in (0, n // 2, n - 1))) if n else (0,)
        if self._seg_lut is None or key != self._seg_lut_key:
            lut = np.zeros(n + 2, dtype=np.int32)
            geom_type = int(mujoco.mjtObj.mjOBJ_GEOM)
            for i in range(n):
                g = scene.geoms[i]
                if g.segid >= 0 and g.objtype == geom_type and 0 <= g.objid < len(self._geom_instance):
                    lut[g.segid + 1] = self._geom_instance[g.objid]
            self._seg_lut, self._seg_lut_key = lut, key
        return self._seg_lut

    def _linear_depth(self, zbuf: np.ndarray) -> np.ndarray:
        """Metric z-depth from the reversed-Z buffer (1 at the near plane, 0 at the far plane)."""
        b = zbuf.astype(np.float64)
        n, f = self._near, self._far
        depth = (n * f) / (b * (f - n) + n)
        depth[b <= 0.0] = 0.0
        return depth.astype(np.float32)

    # ---- lifetime ------------------------------------------------------------------------
    def close(self) -> None:
        """Free the GL resources; the renderer cannot render afterwards."""
        if self._ctx is not None:
            self._make_current()
            self._ctx.free()
            self._ctx = None
        if self._gl is not None:
            if self._gl_left_current_elsewhere:
                self._gl.free()
            else:
                _give_back_gl(self._gl, self.width, self.height)
            self._gl = None

    def __enter__(self) -> HomeRenderer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()
