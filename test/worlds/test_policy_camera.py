"""Each model sees its training camera: rendered by the home, or cropped from a robot camera of another
shape. Known geometry: a fridge front (0.8 m wide) at a known distance straight ahead; its width in the
centre row must be ``f * W / z`` pixels with the training camera's focal length ``f``."""

from __future__ import annotations

import math

import numpy as np
import pytest

from homiebot.core.camera_geometry import TrainingCamera, camera_fov_deg, model_input
from homiebot.core.contracts import Action, Subtask
from homiebot.core.robot import CameraFrame, CameraInfo, Robot
from homiebot.policies.nomad import NoMaDPolicy
from homiebot.policies.octo import OctoPolicy
from homiebot.policies.pixnav import PixNavPolicy
from homiebot.policies.rt1x import RT1XPolicy, prepare_tf_image
from homiebot.skills.policy_skill import PolicySkill
from homiebot.worlds.home.catalog import CAMERA_PITCH_DEG
from homiebot.worlds.home.control import HomeControl
from homiebot.worlds.home.scene import parse_scene
from homiebot.worlds.home.state import RobotPose
from homiebot.worlds.home.world import EmbeddedHome

SCENE = {"name": "camera_geometry", "rooms": [{"name": "kitchen", "type": "kitchen", "origin": [0, 0], "size": [6, 4]}],
         "receptacles": [{"name": "fridge", "type": "fridge", "room": "kitchen", "position": [0.5, 2.0], "yaw": 0}],
         "objects": [], "robot": {"position": [3.0, 2.0], "yaw": 180}}
ROBOT_X = 3.0
DOOR = 0.03  # the fridge door stands proud of its body's front face


def policies() -> dict:
    return {"NoMaD": NoMaDPolicy(model=object()), "PixNav": PixNavPolicy(model=object()),
            "Octo": OctoPolicy(model=object()), "RT-1-X": RT1XPolicy(embedder=lambda texts: np.zeros((len(texts), 512)))}


@pytest.fixture(scope="module")
def home():
    world = EmbeddedHome(parse_scene(SCENE), width=32, height=32, depth=False, segmentation=False)
    ctl = HomeControl(world, rate_hz=5.0)
    ctl.state.robot = RobotPose(ROBOT_X, 2.0, math.pi)
    rec = world.state.layout.receptacles["fridge"]
    front = rec.to_world(rec.half[0], 0.0)[0] + DOOR
    yield ctl, 2 * rec.half[1], ROBOT_X - front
    ctl.close()
    world.close()


def centre_row_width(depth: np.ndarray, z: float) -> int:
    """The run of centre-row pixels around the centre column whose depth is the fridge front's ``z``."""
    row = depth[depth.shape[0] // 2]
    on = np.abs(row - z) < 0.06
    mid = len(row) // 2
    assert on[mid], "the fridge is straight ahead"
    left = mid - int(np.argmin(on[mid::-1])) if not on[:mid + 1].all() else -1
    right = mid + int(np.argmin(on[mid:])) if not on[mid:].all() else len(row)
    return right - left - 1


class WideRobot(Robot):
    """A robot-style camera of another shape: the home rendered through a 16:9 camera with a 140 degree
    horizontal field of view (or ``hfov``); policy views come from the core's crop (Robot's default)."""

    def __init__(self, ctl: HomeControl, size: tuple[int, int] = (270, 480), hfov: float = 140.0) -> None:
        self.ctl, self.size = ctl, size
        self.fovy = math.degrees(2 * math.atan(math.tan(math.radians(hfov) / 2) * size[0] / size[1]))

    capabilities = property(lambda self: self.ctl.capabilities)
    limits = property(lambda self: self.ctl.limits)

    def camera_info(self, camera: str, size: tuple[int, int] | None = None) -> CameraInfo:
        return self.ctl._camera_info(camera, self.ctl.renderer(self.size, self.fovy))

    def read_camera(self, camera: str, size: tuple[int, int] | None = None, depth: bool = False) -> CameraFrame:
        assert size is None, "the policy view is cropped from the native image"
        view = self.ctl.render(self.size, (camera,), fovy=self.fovy)[camera]
        return CameraFrame(view.rgb, self.camera_info(camera), 0.0, view.depth if depth else None)

    def odometry(self):
        return self.ctl.odometry()

    def drive(self, linear: float, angular: float, duration: float):
        return self.ctl.drive(linear, angular, duration)

    def stop(self) -> None:
        self.ctl.stop()


def front_depth(distance_m: float) -> float:
    """Camera depth of the centre row's point on a vertical face ``distance_m`` ahead (the head looks down)."""
    return distance_m / math.cos(math.radians(-CAMERA_PITCH_DEG))


def expected_width(spec: TrainingCamera, frame_w: int, width_m: float, distance_m: float) -> float:
    """Width in pixels of a fronto-parallel object ``width_m`` wide, ``distance_m`` ahead, in the centre row."""
    return spec.focal_px((0, frame_w)) * width_m / front_depth(distance_m)


@pytest.mark.parametrize("name", ["NoMaD", "PixNav", "Octo", "RT-1-X"])
def test_each_model_gets_its_training_camera_from_the_home(home, name):
    ctl, width_m, distance = home
    policy = policies()[name]
    spec = policy.camera
    assert spec is not None and spec.aspect == pytest.approx(4 / 3)
    skill = PolicySkill(name, policy=policy)
    assert skill.training_camera == spec
    obs = skill._observe(ctl, Subtask(action=Action.GO_TO, target="fridge"), 0, None, None)
    assert obs.rgb.shape == (*spec.frame_size, 3)
    frame = ctl.read_policy_camera("front", spec, depth=True)
    hfov, vfov = camera_fov_deg(frame.info)
    assert hfov == pytest.approx(spec.hfov_deg, abs=0.3) and vfov == pytest.approx(spec.vfov_deg, abs=0.3)
    np.testing.assert_array_equal(frame.rgb, obs.rgb)
    assert frame.depth is not None
    want = expected_width(spec, spec.frame_size[1], width_m, distance)
    got = centre_row_width(frame.depth, front_depth(distance))
    assert abs(got - want) <= max(1.5, 0.03 * want), (name, got, want)
    model = model_input(obs.rgb, spec)
    assert model.shape[:2] == tuple(spec.input_size)


@pytest.mark.parametrize("name", ["NoMaD", "PixNav", "Octo", "RT-1-X"])
def test_a_robot_camera_of_another_shape_is_cropped_to_the_same_view(home, name):
    ctl, width_m, distance = home
    spec = policies()[name].camera
    wide = WideRobot(ctl)
    frame = wide.read_policy_camera("front", spec, depth=True, model=name)
    assert frame.rgb.shape == (*spec.frame_size, 3) and frame.depth is not None
    hfov, vfov = camera_fov_deg(frame.info)
    assert hfov == pytest.approx(spec.hfov_deg, abs=0.3) and vfov == pytest.approx(spec.vfov_deg, abs=0.3)
    want = expected_width(spec, spec.frame_size[1], width_m, distance)
    got = centre_row_width(frame.depth, front_depth(distance))
    assert abs(got - want) <= max(2.0, 0.05 * want), (name, got, want)
    # the crop matches the home's direct render of the training camera
    direct = ctl.read_policy_camera("front", spec).rgb.astype(float)
    assert np.abs(direct.mean(axis=(0, 1)) - frame.rgb.astype(float).mean(axis=(0, 1))).max() < 8.0


def test_a_narrow_robot_camera_warns_and_still_gives_the_declared_shape(home, caplog):
    ctl, _, _ = home
    spec = policies()["NoMaD"].camera  # 120 degrees wide
    narrow = WideRobot(ctl, size=(240, 320), hfov=80.0)
    with caplog.at_level("WARNING", logger="homiebot.camera"):
        frame = narrow.read_policy_camera("front", spec, model="NoMaD")
    assert frame.rgb.shape == (*spec.frame_size, 3)
    assert any("narrower than the model's training camera" in r.getMessage() for r in caplog.records)
    assert camera_fov_deg(frame.info)[0] == pytest.approx(80.0, abs=0.5)


def test_rt1x_letterboxes_its_4_3_frame_as_upstream(home):
    ctl, _, _ = home
    policy = policies()["RT-1-X"]
    frame = ctl.read_policy_camera("front", policy.camera)
    padded = prepare_tf_image(frame.rgb)
    assert padded.shape == (256, 320, 3)
    assert padded[:8].max() == 0 and padded[-8:].max() == 0 and padded[8:248].max() > 0
    np.testing.assert_array_equal(padded[:8], model_input(frame.rgb, policy.camera)[:8])


def test_goal_view_uses_the_training_camera(home):
    from homiebot.worlds.home.checks import SimTruthCheck

    ctl, _, _ = home
    spec = policies()["PixNav"].camera
    check = SimTruthCheck()
    image, mask = check.goal_view(Subtask(action=Action.GO_TO, target="fridge"), ctl, (224, 224), spec)
    assert image is not None and image.shape == (*spec.frame_size, 3)
    assert mask is not None and mask.shape == spec.frame_size and mask.any()


def test_the_safety_wrapper_passes_the_training_camera_through(home):
    from homiebot.safety import SafeRobot, SafetySettings, SafetyState

    ctl, width_m, distance = home
    spec = policies()["PixNav"].camera
    safe = SafeRobot(ctl, SafetySettings(), SafetyState())
    try:
        frame = safe.read_policy_camera("front", spec, depth=True)
        np.testing.assert_array_equal(frame.rgb, ctl.read_policy_camera("front", spec).rgb)  # rendered, not cropped
        assert camera_fov_deg(frame.info)[0] == pytest.approx(79.0, abs=0.3)
    finally:
        safe.close()


def test_nomad_follows_a_topological_map_built_from_the_homes_views(home):
    """A map of views rendered along a path through the training camera; a stand-in network whose
    predicted distance is the images' mean difference localises the robot at the node it stands on."""
    import torch

    from homiebot.policies.base import PolicyObservation
    from homiebot.policies.nomad import NoMaDPolicy, TopoMap

    ctl, _, _ = home
    spec = policies()["NoMaD"].camera
    fovy = round(spec.vfov_deg, 6)
    path = [(3.0, 2.0, math.pi), (2.5, 2.0, math.pi), (2.0, 2.0, math.pi), (1.5, 2.0, math.pi)]
    topo = TopoMap.from_views(lambda pose: ctl.render(spec.frame_size, robot_pose=pose, fovy=fovy, segmentation=False)["front"].rgb, path)

    class ImageDistance(torch.nn.Module):
        def forward(self, func_name, **kw):
            if func_name == "vision_encoder":
                d = (kw["obs_img"][:, -3:] - kw["goal_img"]).abs().mean(dim=(1, 2, 3))
                return torch.stack([d, torch.zeros_like(d)], dim=1)
            if func_name == "dist_pred_net":
                return kw["obsgoal_cond"][:, :1]
            return torch.zeros_like(kw["sample"])

    pol = NoMaDPolicy(model=ImageDistance(), num_samples=1, prefer_diffusers=False, context_pad="repeat", topomap=topo,
                      close_threshold=0.0)
    pol.reset()
    ctl.state.robot = RobotPose(*path[2])
    try:
        pol.act(PolicyObservation(rgb=ctl.read_policy_camera("front", spec).rgb))
    finally:
        ctl.state.robot = RobotPose(ROBOT_X, 2.0, math.pi)
    assert pol.last_info["closest_node"] == 2 and pol.last_info["subgoal_node"] == 2
    assert float(pol.last_info["node_distances"][2]) < 1e-6 < float(min(np.delete(pol.last_info["node_distances"], 2)))
