"""Camera geometry, occupancy and frontiers, colour names and room priors on synthetic data."""

from __future__ import annotations

import math

import numpy as np
import pytest

from homiebot.core.rooms import RoomPrior, RoomPriorError, room_at, rooms_from
from homiebot.perception.colour import colour_name
from homiebot.perception.occupancy import FREE, OCCUPIED, UNKNOWN, GridError, OccupancyGrid
from homiebot.perception.projection import CameraError, CameraRig, backproject, project


def _camera(x: float, y: float, z: float, yaw: float, pitch: float) -> np.ndarray:
    """World-from-camera (OpenCV axes) for a camera at (x, y, z) looking along yaw, pitched down by ``pitch``."""
    fwd = np.array([math.cos(yaw) * math.cos(pitch), math.sin(yaw) * math.cos(pitch), -math.sin(pitch)])
    right = np.array([math.sin(yaw), -math.cos(yaw), 0.0])
    down = np.cross(fwd, right)
    pose = np.eye(4)
    pose[:3, :3] = np.stack([right, down, fwd], axis=1)
    pose[:3, 3] = (x, y, z)
    return pose


def test_backprojection_round_trip() -> None:
    intr = (128.0, 128.0, 127.5, 127.5)
    pose = _camera(1.0, 2.0, 1.25, 0.7, math.radians(25))
    points = np.array([[2.5, 3.0, 0.4], [1.8, 2.9, 0.0], [3.0, 2.2, 1.0]])
    r, c, z = project(points, intr, pose)
    assert np.all(z > 0) and np.all((r >= 0) & (r < 256) & (c >= 0) & (c < 256))
    back = backproject(r, c, z, intr, pose)
    np.testing.assert_allclose(back, points, atol=1e-9)
    # the optical centre pixel at depth d lies d metres along the viewing direction
    centre = backproject(np.array([127.5]), np.array([127.5]), np.array([2.0]), intr, pose)[0]
    np.testing.assert_allclose(centre, pose[:3, 3] + 2.0 * pose[:3, 2], atol=1e-9)


def test_camera_rig_rejects_bad_input() -> None:
    with pytest.raises(CameraError, match="intrinsics"):
        CameraRig((0.0, 1.0, 2.0, 3.0), {})
    with pytest.raises(CameraError, match="4x4"):
        CameraRig((1.0, 1.0, 0.0, 0.0), {"front": np.eye(3)})
    with pytest.raises(CameraError, match="no camera pose for view 'left'"):
        CameraRig((1.0, 1.0, 0.0, 0.0), {"front": np.eye(4)}).pose("left")


def test_occupancy_marks_floor_free_obstacles_occupied_and_carves_rays() -> None:
    grid = OccupancyGrid((0.0, 0.0, 4.0, 4.0), resolution=0.1)
    cam = np.array([0.5, 2.0, 1.25])
    floor = np.array([[x, 2.0, 0.0] for x in np.arange(2.0, 3.0, 0.05)])
    wall = np.array([[3.55, y, z] for y in np.arange(1.0, 3.0, 0.05) for z in (0.5, 1.0)])
    grid.integrate(np.concatenate([floor, wall]), cam)
    assert grid.state_at(2.5, 2.0) == FREE
    assert grid.state_at(3.55, 2.0) == OCCUPIED
    assert grid.state_at(0.5, 0.5) == UNKNOWN
    # the low end of the rays to the floor is carved free before the floor hits start
    assert grid.state_at(1.9, 2.0) == FREE
    # seeing the floor where an obstacle was (it moved) frees the cell again over a few updates
    for _ in range(4):
        grid.integrate(np.array([[3.55, 2.0, 0.0]]), cam)
    assert grid.state_at(3.55, 2.0) == FREE
    msg = grid.to_msg_fields()
    assert msg["info"]["width"] == 40 and msg["info"]["height"] == 40 and len(msg["data"]) == 1600
    assert set(msg["data"]) <= {FREE, OCCUPIED, UNKNOWN}
    iy, ix = int(2.0 / 0.1), int(2.5 / 0.1)
    assert msg["data"][ix + iy * 40] == FREE  # row-major, index = x + y * width


def test_frontiers_are_free_cells_next_to_unknown() -> None:
    grid = OccupancyGrid((0.0, 0.0, 4.0, 4.0), resolution=0.1)
    # a free square [1, 2] x [1, 2] in unknown space: its border is one frontier
    pts = np.array([[x, y, 0.0] for x in np.arange(1.0, 2.0, 0.05) for y in np.arange(1.0, 2.0, 0.05)])
    grid.integrate(pts, np.array([1.5, 1.5, 1.25]))
    fronts = grid.frontiers(min_size=4)
    assert len(fronts) == 1
    assert math.dist(fronts[0].centroid, (1.5, 1.5)) < 0.1
    assert grid.state_at(*fronts[0].goal) == FREE
    assert grid.frontiers(region=(3.0, 3.0, 4.0, 4.0)) == []
    assert grid.explored_area() == pytest.approx(1.0, abs=0.05)
    with pytest.raises(GridError, match="x1 > x0"):
        OccupancyGrid((1.0, 0.0, 0.0, 1.0))


def test_colour_names_from_shaded_pixels() -> None:
    rng = np.random.default_rng(0)
    for name, rgb in {"red": (130, 20, 20), "green": (25, 110, 35), "blue": (28, 55, 150), "black": (14, 15, 15)}.items():
        pixels = np.clip(np.array(rgb) + rng.normal(0, 4, (50, 3)), 0, 255)
        assert colour_name(pixels) == name
    assert colour_name(np.empty((0, 3))) is None


def test_room_priors() -> None:
    rooms = rooms_from([("kitchen", 0, 0, 4, 4), {"name": "hall", "x0": 4, "y0": 0, "x1": 6, "y1": 4}])
    assert [r.name for r in rooms] == ["kitchen", "hall"]
    assert room_at(rooms, 1, 1) == "kitchen" and room_at(rooms, 5, 1) == "hall"
    assert room_at(rooms, 2, 4.2) == "kitchen" and room_at(rooms, 20, 20) is None
    with pytest.raises(RoomPriorError, match="x1 > x0"):
        RoomPrior("bad", 1, 0, 0, 1)
    with pytest.raises(RoomPriorError, match="repeated"):
        rooms_from([("a", 0, 0, 1, 1), ("a", 1, 0, 2, 1)])
