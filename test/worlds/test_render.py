"""Rendering of the embedded home: MJCF, cameras, depth, segmentation, doors and drawers."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import mujoco
import numpy as np
import pytest

from homiebot.worlds.home.catalog import CAMERA_HEIGHT, CAMERA_PITCH_DEG, DRAWER_TRAVEL, GRIPPER_OFFSET, VIEWS
from homiebot.worlds.home.layout import Layout, build_layout
from homiebot.worlds.home.mjcf import build_mjcf, door_joint, drawer_joint, object_joint
from homiebot.worlds.home.render import HomeRenderer
from homiebot.worlds.home.robot import ROBOT_JOINTS
from homiebot.worlds.home.scene import parse_scene

SIZE = 128

SCENE = {
    "name": "render_test",
    "rooms": [
        {"name": "kitchen", "type": "kitchen", "origin": [0, 0], "size": [5, 4]},
        {"name": "living", "type": "living_room", "origin": [5, 0], "size": [4, 4]},
    ],
    "receptacles": [
        {"name": "table", "type": "table", "room": "kitchen", "position": [3.6, 2.0], "yaw": 180},
        {"name": "fridge", "type": "fridge", "room": "kitchen", "position": [0.5, 3.0], "yaw": 0},
        {"name": "chest", "type": "drawer", "room": "kitchen", "position": [2.0, 0.4], "yaw": 90},
        {"name": "sofa", "type": "sofa", "room": "living", "position": [8.4, 2.0], "yaw": 180},
    ],
    "objects": [
        {"name": "apple", "class": "apple", "color": "red", "on": "table", "offset": [0.1, 0.25]},
        {"name": "bowl", "class": "bowl", "color": "blue", "on": "table", "offset": [0.1, -0.3]},
        {"name": "milk", "class": "bottle", "color": "white", "in": "fridge", "offset": [0.0, 0.0]},
        {"name": "sponge", "class": "sponge", "color": "yellow", "in": "chest", "offset": [0.0, -0.2]},
        {"name": "mug", "class": "mug", "color": "blue", "on": "sofa", "offset": [0.1, 0.0]},
    ],
    "robot": {"position": [2.65, 2.0], "yaw": 0},
}

TABLE_VIEW = (2.65, 2.0, 0.0)  # facing the table's front, 0.25 m from it
FRIDGE_VIEW = (1.4, 3.0, math.pi)
CHEST_VIEW = (2.0, 0.4 + 0.25 + DRAWER_TRAVEL + 0.55, -math.pi / 2)


@dataclass
class Robot:
    x: float
    y: float
    yaw: float


@dataclass
class FakeState:
    """The attributes of HomeState that the renderer reads."""

    layout: Layout
    robot: Robot
    object_poses: dict[str, tuple[float, float, float, float]] = field(default_factory=dict)
    is_open: dict[str, bool] = field(default_factory=dict)
    held: str | None = None


def _place(state: FakeState, obj: str) -> None:
    spec = next(o for o in state.layout.spec.objects if o.name == obj)
    rec = state.layout.receptacles[spec.receptacle]
    lx = spec.offset[0] + rec.slide_offset(state.is_open.get(rec.name, False))
    x, y = rec.to_world(lx, spec.offset[1])
    state.object_poses[obj] = (x, y, rec.rest_height() + state.layout.objects[obj].cls.size[2] / 2, rec.yaw)


def make_state(layout: Layout, robot: tuple[float, float, float] = TABLE_VIEW, **is_open: bool) -> FakeState:
    state = FakeState(layout, Robot(*robot), is_open={"fridge": False, "chest": False, **is_open})
    for obj in layout.objects:
        _place(state, obj)
    return state


@pytest.fixture(scope="module")
def layout() -> Layout:
    return build_layout(parse_scene(SCENE))


@pytest.fixture(scope="module")
def renderer(layout: Layout):
    with HomeRenderer(layout, SIZE, SIZE) as r:
        yield r


def assert_same_views(got: dict, want: dict) -> None:
    """Every view's RGB, depth and segmentation equal, pixel for pixel."""
    for view in VIEWS:
        assert np.array_equal(got[view].rgb, want[view].rgb)
        assert np.array_equal(got[view].depth, want[view].depth)
        assert np.array_equal(got[view].segmentation, want[view].segmentation)


def pixels(renderer: HomeRenderer, state: FakeState, name: str, view: str = "front") -> int:
    renderer.sync(state)
    seg = renderer.render([view])[view].segmentation
    return int((seg == renderer.instance_ids[name]).sum())


def test_mjcf_loads_with_named_joints_and_cameras(layout: Layout) -> None:
    model = mujoco.MjModel.from_xml_string(build_mjcf(layout, 64, 48, fovy=70.0))
    for joint in (*ROBOT_JOINTS, door_joint("fridge"), drawer_joint("chest"), *map(object_joint, layout.objects)):
        assert mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, joint) >= 0, joint
    for view in VIEWS:
        cam = model.camera(view)
        assert cam.fovy[0] == pytest.approx(70.0)
    assert model.vis.global_.offwidth == 64 and model.vis.global_.offheight == 48
    assert model.jnt_range[model.joint(door_joint("fridge")).id].tolist() == pytest.approx([0, math.pi / 2])
    assert model.jnt_range[model.joint(drawer_joint("chest")).id].tolist() == pytest.approx([0, DRAWER_TRAVEL])


def test_output_shapes_and_ids(renderer: HomeRenderer, layout: Layout) -> None:
    renderer.sync(make_state(layout))
    out = renderer.render()
    assert set(out) == set(VIEWS)
    for view in out.values():
        assert view.rgb.shape == (SIZE, SIZE, 3) and view.rgb.dtype == np.uint8
        assert view.depth is not None and view.depth.shape == (SIZE, SIZE) and view.depth.dtype == np.float32
        assert view.segmentation is not None and view.segmentation.dtype == np.int32
        assert view.rgb.std() > 5.0  # not a constant image
    ids = renderer.instance_ids
    assert {*layout.rooms, *layout.receptacles, *layout.objects} <= set(ids)
    assert 0 not in ids.values() and len(set(ids.values())) == len(ids)


def test_object_on_table_seen_in_front_view_only(renderer: HomeRenderer, layout: Layout) -> None:
    state = make_state(layout)
    renderer.sync(state)
    out = renderer.render()
    apple, table = renderer.instance_ids["apple"], renderer.instance_ids["table"]
    assert (out["front"].segmentation == apple).sum() > 10
    assert (out["front"].segmentation == table).sum() > 500
    for view in ("back", "left", "right"):
        assert not (out[view].segmentation == apple).any(), view


def test_camera_pose_matches_robot_pose(renderer: HomeRenderer, layout: Layout) -> None:
    x, y, yaw = 1.7, 2.3, 0.6
    renderer.sync(make_state(layout, (x, y, yaw)))
    pitch = math.radians(CAMERA_PITCH_DEG)
    for view, offset in (("front", 0.0), ("left", math.pi / 2), ("back", math.pi), ("right", -math.pi / 2)):
        pose = renderer.camera_pose(view)
        assert pose[:3, 3] == pytest.approx([x, y, CAMERA_HEIGHT], abs=1e-6)
        forward = pose[:3, 2]
        a = yaw + offset
        assert forward == pytest.approx([math.cos(a) * math.cos(pitch), math.sin(a) * math.cos(pitch), math.sin(pitch)], abs=1e-6)
        assert pose[:3, 1] @ np.array([0, 0, 1.0]) < 0  # image y points down
        assert np.linalg.det(pose[:3, :3]) == pytest.approx(1.0)


def test_projection_and_depth_agree_with_geometry(renderer: HomeRenderer, layout: Layout) -> None:
    state = make_state(layout)
    renderer.sync(state)
    view = renderer.render(["front"])["front"]
    fx, fy, cx, cy = renderer.camera_intrinsics()
    world_from_cam = renderer.camera_pose("front")
    centre = np.array(state.object_poses["apple"][:3])
    p = np.linalg.inv(world_from_cam) @ np.append(centre, 1.0)
    u, v = fx * p[0] / p[2] + cx, fy * p[1] / p[2] + cy
    apple = renderer.instance_ids["apple"]
    assert view.segmentation[round(v), round(u)] == apple
    mask = view.segmentation == apple
    assert view.depth is not None
    depth = float(np.median(view.depth[mask]))
    radius = layout.objects["apple"].cls.size[0] / 2
    assert p[2] - radius - 0.02 < depth < p[2] + 0.02  # the visible surface is nearer than the centre
    vs, us = np.nonzero(mask)
    d = view.depth[mask]
    cam_pts = np.stack([(us - cx) * d / fx, (vs - cy) * d / fy, d, np.ones_like(d)])
    world = (world_from_cam @ cam_pts)[:3]
    assert np.linalg.norm(np.median(world, axis=1) - centre) < radius + 0.02
    assert np.all(np.linalg.norm(world - centre[:, None], axis=0) < radius + 0.03)


def test_background_depth_is_zero_and_walls_have_depth(renderer: HomeRenderer, layout: Layout) -> None:
    renderer.sync(make_state(layout))
    view = renderer.render(["front"])["front"]
    assert view.depth is not None and view.segmentation is not None
    sky = view.segmentation == 0
    assert np.all(view.depth[sky] == 0.0)
    assert np.all(view.depth[~sky] > 0.05) and view.depth.max() < 15.0


def test_depth_without_segmentation_is_the_same(renderer: HomeRenderer, layout: Layout) -> None:
    state = make_state(layout)
    renderer.sync(state)
    full = renderer.render(["front"])["front"]
    with HomeRenderer(layout, SIZE, SIZE, segmentation=False) as depth_only:
        depth_only.sync(state)
        view = depth_only.render(["front"])["front"]
    assert view.segmentation is None
    assert np.array_equal(view.depth, full.depth) and np.array_equal(view.rgb, full.rgb)


def test_closed_fridge_hides_contents_open_fridge_shows_them(renderer: HomeRenderer, layout: Layout) -> None:
    closed = make_state(layout, FRIDGE_VIEW, fridge=False)
    assert pixels(renderer, closed, "milk") == 0
    assert pixels(renderer, closed, "fridge") > 0.5 * SIZE * SIZE
    opened = make_state(layout, FRIDGE_VIEW, fridge=True)
    assert pixels(renderer, opened, "milk") > 30
    door = renderer.data.body("fridge/door")
    # the open door stands perpendicular to the front, on the fridge's +y side, pointing out (+x)
    assert door.xmat.reshape(3, 3)[:, 1] @ np.array([-1.0, 0.0, 0.0]) == pytest.approx(1.0, abs=1e-6)


def test_drawer_slides_out_and_reveals_contents(renderer: HomeRenderer, layout: Layout) -> None:
    assert pixels(renderer, make_state(layout, CHEST_VIEW, chest=False), "sponge") == 0
    drawer_closed = renderer.data.body("chest/drawer").xpos.copy()
    assert pixels(renderer, make_state(layout, CHEST_VIEW, chest=True), "sponge") > 10
    moved = renderer.data.body("chest/drawer").xpos - drawer_closed
    assert moved == pytest.approx([0.0, DRAWER_TRAVEL, 0.0], abs=1e-6)  # chest yaw 90: local +x is world +y


def test_held_object_drawn_at_gripper(renderer: HomeRenderer, layout: Layout) -> None:
    state = make_state(layout, (2.0, 2.0, 0.3))
    gx, gy, gz = GRIPPER_OFFSET
    c, s = math.cos(0.3), math.sin(0.3)
    state.held = "apple"
    state.object_poses["apple"] = (2.0 + c * gx - s * gy, 2.0 + s * gx + c * gy, gz, 0.3)
    renderer.sync(state)
    out = renderer.render()
    apple = renderer.instance_ids["apple"]
    assert (out["front"].segmentation == apple).sum() > 20
    assert not (out["back"].segmentation == apple).any()


def test_own_head_and_torso_hidden(renderer: HomeRenderer, layout: Layout) -> None:
    renderer.sync(make_state(layout, (2.0, 2.0, 0.0)))
    out = renderer.render()
    robot = renderer.instance_ids["robot"]
    for view in VIEWS:  # no head from inside, no torso: only the arm, low in the image
        assert not (out[view].segmentation[: SIZE // 2] == robot).any(), view
    for view in ("left", "back"):
        assert not (out[view].segmentation == robot).any(), view
    assert 0 < (out["front"].segmentation == robot).mean() < 0.2  # the arm and gripper


def test_renders_are_deterministic(renderer: HomeRenderer, layout: Layout) -> None:
    state = make_state(layout)
    renderer.sync(state)
    first = renderer.render()
    renderer.sync(make_state(layout, FRIDGE_VIEW, fridge=True))
    renderer.render()
    renderer.sync(state)
    second = renderer.render()
    assert_same_views(first, second)


def test_rgb_only_and_close(layout: Layout) -> None:
    r = HomeRenderer(layout, 64, 48, fovy=60.0, depth=False, segmentation=False)
    r.sync(make_state(layout))
    view = r.render(["left"])["left"]
    assert view.rgb.shape == (48, 64, 3) and view.depth is None and view.segmentation is None
    fx, fy, cx, cy = r.camera_intrinsics()
    assert fy == pytest.approx(24 / math.tan(math.radians(30))) and fx == fy and (cx, cy) == (31.5, 23.5)
    r.close()
    r.close()
    with pytest.raises(RuntimeError):
        r.render()


def test_with_home_state(layout: Layout) -> None:
    from homiebot.worlds.home.state import HomeState, RobotPose

    state = HomeState.from_spec(parse_scene(SCENE))
    with HomeRenderer(state.layout, SIZE, SIZE) as r:
        state.robot = RobotPose(*CHEST_VIEW)
        r.sync(state)
        assert (r.render(["front"])["front"].segmentation == r.instance_ids["sponge"]).sum() == 0
        assert state.articulate("chest", True).ok
        r.sync(state)
        assert (r.render(["front"])["front"].segmentation == r.instance_ids["sponge"]).sum() > 10


def test_a_renderer_on_a_reused_gl_context_and_model_draws_the_same_pixels(layout: Layout) -> None:
    """A closed renderer's GL context and compiled model serve the next renderer of the same home and
    size; what it draws equals what a renderer with a context of its own draws."""
    from homiebot.worlds.home import render

    state = make_state(layout, fridge=True)
    with HomeRenderer(layout, SIZE, SIZE) as own, HomeRenderer(layout, SIZE, SIZE) as other:
        own.sync(state)
        want = own.render()
        contexts, model = [own._gl, other._gl], other.model
    spares = render._SPARE_GL.get((type(contexts[0]), SIZE, SIZE), [])
    assert any(gl is spare for gl in contexts for spare in spares)
    with HomeRenderer(layout, SIZE, SIZE) as reused:
        assert any(reused._gl is gl for gl in contexts)  # a spare context, not a new one
        assert reused.model is model
        reused.sync(state)
        got = reused.render()
    assert_same_views(got, want)
